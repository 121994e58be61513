// This file sends the event to the hook daemon, on Linux.

package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chartgate/chartgate/internal/hookwire"
)

// answerWait bounds the wait for the daemon's answer: past
// `chartgate hook`'s default deadline (30 s), below the 60 s chartgate
// install gives the hosts; a longer --deadline moves it.
const answerWait = 45 * time.Second

// run answers the event with the daemon when a trusted one listens, else
// with `chartgate hook` itself, and returns the exit code.
func run(chartgate string, args []string) int {
	dir := hookwire.SocketDir(os.Getenv)
	if dir == "" {
		return execFull(chartgate, args)
	}
	fd, err := dial(filepath.Join(dir, hookwire.SocketName))
	if err != nil {
		startDaemon(chartgate)
		return execFull(chartgate, args)
	}
	if !trusted(fd, chartgate) {
		_ = syscall.Close(fd)
		// A daemon of an older chartgate, which exits soon, or a socket
		// that is not chartgate's: a new daemon takes the socket over
		// when no daemon holds the folder's lock.
		startDaemon(chartgate)
		return execFull(chartgate, args)
	}
	conn := os.NewFile(uintptr(fd), "chartgate-hookd")
	defer conn.Close()
	stdin, err := io.ReadAll(io.LimitReader(os.Stdin, hookwire.MaxInput+1))
	if err != nil {
		// What `chartgate hook` answers when it cannot read the event.
		os.Stderr.WriteString("chartgate hook: reading stdin: " + err.Error() + "\n")
		return 1
	}
	wd, _ := os.Getwd()
	wait := answerWait
	if d := deadlineArg(args); d+15*time.Second > wait {
		wait = d + 15*time.Second
	}
	tv := syscall.NsecToTimeval(wait.Nanoseconds())
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	req := &hookwire.Request{Args: args, Stdin: stdin, Dir: wd, Env: os.Environ()}
	if err := hookwire.WriteRequest(conn, req); err != nil {
		return undecided(chartgate, args, stdin, err)
	}
	res, err := hookwire.ReadResponse(conn)
	if err != nil {
		return undecided(chartgate, args, stdin, err)
	}
	_, _ = os.Stderr.Write(res.Stderr)
	_, _ = os.Stdout.Write(res.Stdout)
	return res.Code
}

// dial connects to the Unix socket at path.
func dial(path string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// trusted reports whether the socket's peer, as the kernel reports it, is
// chartgate run by this user.
func trusted(fd int, chartgate string) bool {
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return false
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(int(cred.Pid)) + "/exe")
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(chartgate)
	if err != nil {
		return false
	}
	return trustPeer(int(cred.Uid), os.Getuid(), exe, want)
}

// trustPeer decides whether a daemon whose process runs as peerUID the
// executable peerExe may answer for a client of uid whose chartgate is
// the file chartgate: only the same user's process of that very file
// (an executable replaced since the daemon started reads as "FILE
// (deleted)", and is not trusted).
func trustPeer(peerUID, uid int, peerExe, chartgate string) bool {
	return peerUID == uid && chartgate != "" && peerExe == chartgate
}

// startDaemon starts `chartgate hook-daemon`, detached: in its own
// session, its standard streams on /dev/null, in the root folder. It
// exits at once when another daemon holds the folder.
func startDaemon(chartgate string) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer null.Close()
	p, err := os.StartProcess(chartgate, []string{chartgate, "hook-daemon"}, &os.ProcAttr{
		Dir:   "/",
		Files: []*os.File{null, null, null},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err == nil {
		_ = p.Release()
	}
}

// undecided answers an event sent to the daemon whose answer was lost:
// as `chartgate hook` answers one it could not decide, never deciding it
// again.
func undecided(chartgate string, args []string, stdin []byte, cause error) int {
	reason := "the answer of chartgate's hook daemon was lost: " + cause.Error()
	r, w, err := os.Pipe()
	if err != nil {
		os.Stderr.WriteString("chartgate-hook: " + reason + "\n")
		return 1
	}
	argv := append(hookArgv(chartgate, args), "--undecided", reason)
	p, err := os.StartProcess(chartgate, argv, &os.ProcAttr{Files: []*os.File{r, os.Stdout, os.Stderr}})
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		os.Stderr.WriteString("chartgate-hook: " + reason + "\n")
		return 1
	}
	_, _ = w.Write(stdin)
	_ = w.Close()
	st, err := p.Wait()
	if err != nil {
		return 1
	}
	return st.ExitCode()
}

// deadlineArg returns the value of a --deadline flag in args, 0 if none.
func deadlineArg(args []string) time.Duration {
	for i, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "deadline" {
			continue
		}
		if !hasVal && i+1 < len(args) {
			val = args[i+1]
		}
		if d, err := time.ParseDuration(val); err == nil {
			return d
		}
	}
	return 0
}
