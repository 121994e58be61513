//go:build unix

package main

import (
	"os"
	"syscall"
)

// execFull replaces the client with `chartgate hook` and the client's
// arguments: same process, so the same parent (the hook's ancestry), the
// same standard streams, the same environment.
func execFull(chartgate string, args []string) int {
	err := syscall.Exec(chartgate, hookArgv(chartgate, args), os.Environ())
	os.Stderr.WriteString("chartgate-hook: running chartgate: " + err.Error() + "\n")
	return 1
}
