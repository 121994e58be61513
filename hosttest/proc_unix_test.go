//go:build unix

package hosttest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs cmd in a process group of its own, killed whole
// when the command's context ends: a host's hooks and MCP servers go with
// it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
