// This file checks examples/gateway: its files load, and its coding
// workflow, served by chartgate serve in front of MCP's reference
// filesystem server, goes from plan to done through an interrupt, a fork
// and an approval.

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
)

const exampleDir = "../../examples/gateway"

// TestExampleGatewayFiles: the example's configuration files are what
// serve and the hosts read.
func TestExampleGatewayFiles(t *testing.T) {
	code, out, errOut := chartgate("validate", filepath.Join(exampleDir, "workflow.json"))
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "ok (Statewright workflow")
	t.Setenv("PWD", "/repo")
	cfg, err := gateway.LoadConfig(filepath.Join(exampleDir, "servers.json"), nil)
	require.NoError(t, err)
	require.Len(t, cfg.Servers, 1)
	assert.Equal(t, []string{"-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/repo"}, cfg.Servers[0].Args)
	for host, key := range map[string]string{"claude-code/.mcp.json": "mcpServers", "cursor/mcp.json": "mcpServers", "vscode/mcp.json": "servers"} {
		data, err := os.ReadFile(filepath.Join(exampleDir, "hosts", host))
		require.NoError(t, err, host)
		var doc map[string]map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		require.NoError(t, json.Unmarshal(data, &doc), host)
		entry := doc[key]["workflow"]
		assert.Equal(t, "chartgate", entry.Command, host)
		args := []string{"serve", "--workflow", ".chartgate/workflow.json", "--config", ".chartgate/servers.json", "--compat", "statewright"}
		if host == "claude-code/.mcp.json" {
			// Claude Code's gateway shares the workflow of the agent session
			// with the hooks of hosts/claude-code/.claude/settings.json.
			args = append(args, "--session", "auto")
		}
		assert.Equal(t, args, entry.Args, host)
	}
	// The hooks are what chartgate install writes for a gateway named
	// "workflow": installing them again into the example changes nothing.
	dir := t.TempDir()
	settings, err := os.ReadFile(filepath.Join(exampleDir, "hosts", "claude-code", ".claude", "settings.json"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".claude"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), settings, 0o644))
	changes, err := hook.Plan(hook.ClaudeCode, dir, &hook.InstallOptions{ServerName: "workflow"})
	require.NoError(t, err)
	for _, c := range changes {
		assert.NotEqual(t, ".claude/settings.json", c.Path, "the example's hooks are not what install writes:\n%s", c.Diff())
	}
}

// TestExampleGatewayWalk walks the example's workflow end to end.
func TestExampleGatewayWalk(t *testing.T) {
	script := filesystemServer(t)
	root := t.TempDir()
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", filepath.Join(exampleDir, "workflow.json"), "--store", store}
	// The tools' lock goes to a temporary folder, not beside the example.
	lock := filepath.Join(t.TempDir(), "tools.lock.json")
	cs := serveClient{}.start(t, append(append([]string{"serve", "--log-level", "warn", "--session", "agent-1", "--tools-lock", lock}, project...), "--", "node", script, root)...)
	ctx := context.Background()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res
	}
	send := func(event string, data map[string]any) {
		t.Helper()
		res := call("workflow_transition", map[string]any{"event": event, "data": data})
		require.False(t, res.IsError, "%s: %v", event, res.Content[0].(*mcp.TextContent).Text)
	}
	state := func() any {
		t.Helper()
		res := call("workflow_status", nil)
		return res.StructuredContent.(map[string]any)["state"]
	}
	write := func(name string) *mcp.CallToolResult {
		return call("write_file", map[string]any{"path": filepath.Join(root, name), "content": "x"})
	}

	ref, ok := mcpbind.RefusalOf(write("main.go"))
	require.True(t, ok, "writing while planning")
	assert.Equal(t, "plan", ref.State)
	send("PLANNED", map[string]any{"rationale": "add a flag"})
	require.False(t, write("main.go").IsError)
	require.False(t, write(".env").IsError) // the interrupt
	assert.Equal(t, "env_check", state())
	send("CLEAN", nil)
	assert.Equal(t, "implement", state())
	send("IMPLEMENTED", nil)
	send("RESULT", map[string]any{"test_result": "fail"})
	send("NEXT", nil)
	assert.Equal(t, "implement", state(), "failed tests go back")
	send("IMPLEMENTED", nil)
	send("RESULT", map[string]any{"test_result": "pass"})
	send("NEXT", nil)
	assert.Equal(t, "verify", state())
	send("START", nil)
	send("lint.CLEAN", nil)
	send("review.APPROVE", nil)
	key := filepath.Join(t.TempDir(), "approver.key")
	require.NoError(t, createKey(key))
	code, _, errOut := chartgate(append([]string{"approve", "name:agent-1", "--by", "ada", "--yes", "--key", key}, project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "done", state())
}
