//go:build unix

package stdio_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/internal/stdio"
)

// A read of a pipe through Pollable waits in the poller ([IO wait]), not
// in read(2) ([syscall]), reads what comes and the end of the input; Close
// leaves the pipe's own descriptor open and blocking.
func TestPollableWaitsInThePoller(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	defer r.Close()
	// As a parent process hands it over: blocking.
	rc, err := r.SyscallConn()
	require.NoError(t, err)
	require.NoError(t, rc.Control(func(fd uintptr) { require.NoError(t, syscall.SetNonblock(int(fd), false)) }))

	in := stdio.Pollable(r)
	require.NotSame(t, r, in, "a pipe is read through a duplicate")
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(in)
		got <- string(b)
	}()
	require.Eventually(t, func() bool { s := readerState(t); return s == "IO wait" || s == "syscall" }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, "IO wait", readerState(t), "the reader waits in the poller, holding no thread in read(2)")

	_, err = w.WriteString("line\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, "line\n", <-got)

	require.NoError(t, in.Close())
	require.NoError(t, rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		require.NoError(t, syscall.Fstat(int(fd), &st), "the original descriptor is still open")
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		require.Zero(t, errno)
		require.Zero(t, flags&syscall.O_NONBLOCK, "blocking again once closed")
	}))
}

// readerState is the state of the goroutine of this file's test reading
// the pipe, as a goroutine dump shows it ("" if none is reading yet).
func readerState(t *testing.T) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if !strings.Contains(g, "io.ReadAll") || !strings.Contains(g, "TestPollableWaitsInThePoller") {
			continue
		}
		head, _, _ := strings.Cut(g, "\n")
		state := head[strings.Index(head, "[")+1 : strings.Index(head, "]")]
		state, _, _ = strings.Cut(state, ",") // "IO wait, 2 minutes"
		return state
	}
	return ""
}

// A regular file is not a pipe: Pollable returns it as it is.
func TestPollableLeavesFilesAlone(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	require.NoError(t, err)
	defer f.Close()
	require.Same(t, f, stdio.Pollable(f))
}
