package stdio

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Raw returns f read and written with raw system calls, if its
// descriptor is non-blocking (os.Pipe's ends, Pollable's duplicates),
// and f itself otherwise. A read or write that finds nothing to read or
// no room waits in the runtime's poller, as f's own would.
//
// A gateway wants this on the pipes of every message: a read or write
// of an os.File enters the scheduler's system-call state, and when the
// process's processors were all idle (a gateway waiting for the next
// message), that wakes the runtime's monitor thread (sysmon), which then
// checks the processors every 20 µs for a millisecond. On a virtual
// machine each of those wake-ups is a context switch the hypervisor makes
// costly: a chartgate serve process spent over a quarter of its CPU
// there. A raw call on a non-blocking descriptor returns at once, so it
// need not enter that state.
func Raw(f *os.File) io.ReadWriteCloser {
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
	return &rawFile{f: f, rc: rc}
}

// rawFile is a non-blocking file read and written with raw system calls.
type rawFile struct {
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool
}

// Read implements io.Reader: one read(2), waiting in the poller while
// there is nothing to read.
func (r *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(m), e
			return e != syscall.EAGAIN
		}
	})
	switch {
	case err != nil:
		return 0, r.error("read", err)
	case errno != 0:
		return 0, r.error("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write implements io.Writer: write(2) until p is written, waiting in
// the poller while the pipe is full.
func (r *rawFile) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		var m int
		var errno syscall.Errno
		err := r.rc.Write(func(fd uintptr) bool {
			for {
				w, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
				if e == syscall.EINTR {
					continue
				}
				m, errno = int(w), e
				return e != syscall.EAGAIN
			}
		})
		switch {
		case err != nil:
			return n, r.error("write", err)
		case errno != 0:
			return n, r.error("write", errno)
		}
		n += m
	}
	return n, nil
}

// Close closes the file; a read or write waiting on it ends.
func (r *rawFile) Close() error {
	r.closed.Store(true)
	return r.f.Close()
}

// error is err of op as os.File reports it: os.ErrClosed once the file
// was closed.
func (r *rawFile) error(op string, err error) error {
	if r.closed.Load() {
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: r.f.Name(), Err: err}
}
