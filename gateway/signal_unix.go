//go:build unix

// This file defines the signals that stop a child's process group on Unix.

package gateway

import (
	"os"
	"syscall"
)

// terminate asks the child's process group to exit (SIGTERM).
func terminate(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill kills the child's process group (SIGKILL). After the child itself
// has exited, it reaches what the child left behind.
func kill(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
