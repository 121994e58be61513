package rawio_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/rawio"
)

// Through File, a megabyte written to a pipe (sixteen times its buffer:
// writes that find it full wait and go on) arrives whole, then the end of
// the input.
func TestFileCopiesThroughAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	in, out := rawio.File(r), rawio.File(w)
	require.NotSame(t, r, in, "a pipe's end is read raw")
	defer in.Close()
	copyThrough(t, in, out)
}

// copyThrough writes a megabyte to out, closes it, and checks that in
// reads it whole, then the end of the input.
func copyThrough(t *testing.T, in io.Reader, out io.WriteCloser) {
	t.Helper()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	wrote := make(chan error, 1)
	go func() {
		n, err := out.Write(data)
		if err == nil && n != len(data) {
			err = fmt.Errorf("wrote %d of %d bytes", n, len(data))
		}
		wrote <- errors.Join(err, out.Close())
	}()
	got, err := io.ReadAll(in)
	require.NoError(t, err)
	require.NoError(t, <-wrote)
	require.True(t, bytes.Equal(got, data), "read %d bytes, wrote %d", len(got), len(data))
}

// A read waiting on a raw pipe ends when the pipe is closed, with an
// error that matches os.ErrClosed; a write to a pipe whose reader is
// gone fails (EPIPE) instead of ending the process.
func TestFileClose(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	in := rawio.File(r)
	done := make(chan error, 1)
	go func() {
		_, err := in.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait
	require.NoError(t, in.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not end when its pipe was closed")
	}
	_, err = rawio.File(w).Write([]byte("x"))
	require.Error(t, err, "a write with no reader left")
}

// A file that is not non-blocking (a regular file) is left as it is.
func TestFileLeavesBlockingFiles(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	require.Same(t, f, rawio.File(f))
}

// dialed returns both ends of a loopback TCP connection, each a Conn:
// one accepted through Listener, one dialed through Dialer.
func dialed(t *testing.T) (accepted, dialed net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	ln := rawio.Listener(l)
	got := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	d, err := rawio.Dialer(&net.Dialer{})(context.Background(), "tcp", l.Addr().String())
	require.NoError(t, err)
	a := <-got
	require.NotNil(t, a)
	t.Cleanup(func() { a.Close(); d.Close() })
	return a, d
}

// Over a TCP connection, a megabyte written by one end arrives whole at
// the other, then the end of the input once the writer shuts its side.
func TestConnCopies(t *testing.T) {
	a, d := dialed(t)
	copyThrough(t, a, closeWriter{d})
}

// closeWriter closes a connection's writing side only.
type closeWriter struct{ net.Conn }

func (c closeWriter) Close() error { return c.Conn.(interface{ CloseWrite() error }).CloseWrite() }

// A read past its deadline fails with an error that is a timeout (what
// net/http's server waits on), and one waiting when its connection is
// closed fails with net.ErrClosed.
func TestConnDeadlineAndClose(t *testing.T) {
	a, d := dialed(t)
	require.NoError(t, a.SetReadDeadline(time.Now().Add(20*time.Millisecond)))
	_, err := a.Read(make([]byte, 10))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "%v is a timeout", err)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)

	done := make(chan error, 1)
	go func() {
		_, err := d.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, d.Close())
	select {
	case err := <-done:
		require.ErrorIs(t, err, net.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not end when its connection was closed")
	}
}

// An HTTP server on a Listener answers a client whose transport dials
// through Dialer, on kept-alive connections.
func TestHTTPRoundTrips(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(append([]byte("echo "), b...))
	})}
	go func() { _ = srv.Serve(rawio.Listener(l)) }()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DialContext: rawio.Dialer(&net.Dialer{})}}
	for i := range 3 {
		body := bytes.Repeat([]byte{'a' + byte(i)}, 100<<10)
		resp, err := client.Post("http://"+l.Addr().String(), "text/plain", bytes.NewReader(body))
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, append([]byte("echo "), body...), got)
	}
}
