//go:build !linux

package main

import (
	"fmt"
	"io"
)

// cmdHookDaemon: the hook daemon runs on Linux only, where its clients
// can check who it is (the socket's peer and /proc/PID/exe); elsewhere
// the client runs `chartgate hook` itself.
func cmdHookDaemon(_ []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "chartgate hook-daemon: only on Linux")
	return exitFail
}
