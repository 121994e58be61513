package stdio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/stdio"
)

// Through Raw, a megabyte written to a pipe (sixteen times its buffer:
// writes that find it full, wait and go on) arrives whole, then the end
// of the input.
func TestRawCopiesThroughAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	in, out := stdio.Raw(r), stdio.Raw(w)
	require.NotSame(t, r, in, "a pipe's end is read raw")
	defer in.Close()
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
func TestRawClose(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	in := stdio.Raw(r)
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
	_, err = stdio.Raw(w).Write([]byte("x"))
	require.Error(t, err, "a write with no reader left")
}

// A file that is not non-blocking (a regular file) is left as it is.
func TestRawLeavesBlockingFiles(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	require.Same(t, f, stdio.Raw(f))
}
