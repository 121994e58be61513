package rawio

import (
	"context"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// File returns f read and written with raw system calls, if its
// descriptor is non-blocking (os.Pipe's ends, a non-blocking duplicate
// made into an os.File), and f itself otherwise.
func File(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblock := false
	if rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}) != nil || !nonblock {
		return f
	}
	return &file{f: f, rc: rc}
}

// Conn returns c read and written with raw system calls, if it is a
// connection of package net (whose sockets are non-blocking), and c
// itself otherwise. Its deadlines, addresses and Close are c's.
func Conn(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &conn{Conn: c, rc: rc}
}

// Listener returns l, whose accepted connections are [Conn]s.
func Listener(l net.Listener) net.Listener { return listener{l} }

// Dialer returns d's DialContext, whose connections are [Conn]s (for
// http.Transport.DialContext).
func Dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Conn(c), nil
	}
}

// read makes one read(2) of fd into p through rc, waiting in the poller
// while there is nothing to read. n is 0 at the end of the input.
func read(rc syscall.RawConn, p []byte) (n int, errno syscall.Errno, err error) {
	if len(p) == 0 {
		return 0, 0, nil
	}
	err = rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(m), e
			return e != syscall.EAGAIN
		}
	})
	return n, errno, err
}

// write makes write(2) calls of fd through rc until p is written,
// waiting in the poller while there is no room.
func write(rc syscall.RawConn, p []byte) (n int, errno syscall.Errno, err error) {
	for n < len(p) {
		var m int
		err = rc.Write(func(fd uintptr) bool {
			for {
				w, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
				if e == syscall.EINTR {
					continue
				}
				m, errno = int(w), e
				return e != syscall.EAGAIN
			}
		})
		if err != nil || errno != 0 {
			return n, errno, err
		}
		n += m
	}
	return n, 0, nil
}

// file is a non-blocking file read and written with raw system calls.
type file struct {
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool
}

// Read implements io.Reader: one read(2).
func (r *file) Read(p []byte) (int, error) {
	n, errno, err := read(r.rc, p)
	switch {
	case err != nil:
		return 0, r.error("read", err)
	case errno != 0:
		return 0, r.error("read", errno)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write implements io.Writer: write(2) until p is written.
func (r *file) Write(p []byte) (int, error) {
	n, errno, err := write(r.rc, p)
	switch {
	case err != nil:
		return n, r.error("write", err)
	case errno != 0:
		return n, r.error("write", errno)
	}
	return n, nil
}

// Close closes the file; a read or write waiting on it ends.
func (r *file) Close() error {
	r.closed.Store(true)
	return r.f.Close()
}

// error is err of op as os.File reports it: os.ErrClosed once the file
// was closed.
func (r *file) error(op string, err error) error {
	if r.closed.Load() {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: r.f.Name(), Err: err}
}

// conn is a connection read and written with raw system calls. The
// errors of its poller waits (a deadline passed: os.ErrDeadlineExceeded;
// closed: net.ErrClosed) are net's own.
type conn struct {
	net.Conn
	rc syscall.RawConn
}

// Read implements net.Conn: one read(2).
func (c *conn) Read(p []byte) (int, error) {
	n, errno, err := read(c.rc, p)
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, c.error("read", errno)
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write implements net.Conn: write(2) until p is written.
func (c *conn) Write(p []byte) (int, error) {
	n, errno, err := write(c.rc, p)
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, c.error("write", errno)
	}
	return n, nil
}

// CloseWrite shuts down the writing side of a TCP or Unix connection
// (net/http's server does, before it closes one).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// error is errno of op as package net reports it.
func (c *conn) error(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
}

// listener accepts Conns.
type listener struct{ net.Listener }

// Accept implements net.Listener.
func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Conn(c), nil
}
