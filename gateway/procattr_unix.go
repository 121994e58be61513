//go:build unix && !linux

// This file defines how a child is started on Unix systems other than
// Linux: in a process group of its own.

package gateway

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the child in a new process group, so that stopping it
// reaches what it started (npx starts node).
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
