package gate_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMCPDependency checks that the core (packages gate and
// internal/core), the stores, and the front doors that are not MCP
// servers (the hooks, the workflow files, the shell policy) link no MCP
// SDK: `go list -deps` names none of its packages.
func TestNoMCPDependency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	cmd := exec.Command(goBin, "list", "-deps", "./gate", "./internal/core", "./hook", "./workflow", "./shellpolicy",
		"./mcpbind/sqlitestore", "./mcpbind/redisstore", "./mcpbind/pgstore")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list named only %d packages: %s", len(pkgs), out)
	}
	for _, p := range pkgs {
		if strings.Contains(p, "modelcontextprotocol") || strings.HasSuffix(p, "/mcpbind") || strings.HasSuffix(p, "/statesync") {
			t.Errorf("the core, the stores, hook, workflow and shellpolicy must not depend on MCP; they depend on %s", p)
		}
	}
}
