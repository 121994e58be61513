//go:build unix

package stdio

import (
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/chartgate/chartgate/internal/rawio"
)

// Pollable returns f for reading or writing through the runtime's poller
// when f is a pipe or a socket: a duplicate of its descriptor, made
// non-blocking (which the description f shares takes too), whose reads
// and writes park the goroutine instead of blocking its thread in
// read(2) or write(2), and on Linux are raw system calls (see package
// internal/rawio). Closing it closes the duplicate, not f, and makes the
// description blocking again. For any other f (a terminal, a regular
// file) or if the duplicate cannot be made, it returns f itself, which
// Close closes.
//
// A server's standard input wants this: on Go 1.26, a garbage collection
// that starts as a goroutine enters read(2) can wait for that read to
// return before it stops the world, and on a connection whose client
// waits for an answer before it writes again, nothing returns: the
// process hangs (a go-sdk stdio server was seen stopped this way, its GC
// "stopping the world" and its stdin reader in read(2), until the next
// line came). A goroutine parked in the poller holds no thread or P, so
// the collection never waits for it.
func Pollable(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	dup := -1
	_ = rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		if syscall.Fstat(int(fd), &st) != nil {
			return
		}
		if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
			return
		}
		// As os/exec does: no child started meanwhile inherits it.
		syscall.ForkLock.RLock()
		d, err := syscall.Dup(int(fd))
		if err == nil {
			syscall.CloseOnExec(d)
		}
		syscall.ForkLock.RUnlock()
		if err != nil {
			return
		}
		if syscall.SetNonblock(d, true) != nil {
			syscall.Close(d)
			return
		}
		dup = d
	})
	if dup < 0 {
		return f
	}
	// NewFile sees a non-blocking descriptor and waits for it in the
	// poller.
	return &pollable{ReadWriteCloser: rawio.File(os.NewFile(uintptr(dup), f.Name())), orig: f}
}

// pollable is a duplicate of orig's descriptor, read and written through
// the poller.
type pollable struct {
	io.ReadWriteCloser
	orig *os.File
}

// Close closes the duplicate (which ends a read waiting on it) and then
// makes the shared description blocking again, for whoever else reads
// it once this process is done.
func (p *pollable) Close() error {
	err := p.ReadWriteCloser.Close()
	if rc, rerr := p.orig.SyscallConn(); rerr == nil {
		_ = rc.Control(func(fd uintptr) { err = errors.Join(err, syscall.SetNonblock(int(fd), false)) })
	}
	return err
}

// PollableWriter is Pollable for a server's standard output: closing it
// never closes f (only its duplicate, if it made one).
func PollableWriter(f *os.File) io.WriteCloser {
	if p := Pollable(f); p != io.ReadWriteCloser(f) {
		return p
	}
	return nopCloser{f}
}
