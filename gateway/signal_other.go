//go:build !unix

// This file defines how a child is started and stopped on systems without
// Unix process groups: the child alone.

package gateway

import (
	"os"
	"os/exec"
)

func setProcAttr(*exec.Cmd) {}

// terminate kills the child: there is no gentler signal here.
func terminate(p *os.Process) { _ = p.Kill() }

// kill kills the child.
func kill(p *os.Process) { _ = p.Kill() }
