// This file defines how a child is started on Linux: in a process group
// of its own, and killed by the kernel if the gateway dies.

package gateway

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the child in a new process group, so that stopping it
// reaches what it started (npx starts node), and asks the kernel to
// SIGKILL it when the thread that started it dies, so that it does not
// outlive a gateway that was killed.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
