// This file tests chartgate hook and chartgate serve together, as an agent
// host runs them: the test process is the host, which runs the hook
// processes and the gateway process (serve --session auto over stdio, in
// front of a Go upstream) on one project; they find the same workflow.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostWorkflow gates the agent host's own tools (Read, Edit, Write) and the
// upstream's (pid, echo) in one workflow.
const hostWorkflow = `{
  "id": "host", "initial": "plan",
  "interrupts": {"env": {"trigger": {"file_pattern": "**/*.env*"}, "target": "env_check"}},
  "states": {
    "plan": {"allowed_tools": ["Read", "pid"], "instructions": "Read, then send PLANNED.", "on": {"PLANNED": "implement"}},
    "implement": {"allowed_tools": ["Read", "Edit", "Write", "pid", "echo"], "on": {"DONE": "done"}},
    "env_check": {"allowed_tools": ["Read", "pid"], "instructions": "A .env file changed: check it.", "on": {"CHECKED": "$return"}},
    "done": {"type": "final"}
  }
}`

// TestHookAndServeShareTheSessionsWorkflow: a transition made through the
// gateway's workflow_transition changes what the hook allows, and an
// interrupt the hook fires changes what the gateway lists.
func TestHookAndServeShareTheSessionsWorkflow(t *testing.T) {
	project := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, ".chartgate"), 0o755))
	wf := filepath.Join(project, ".chartgate", "workflow.json")
	require.NoError(t, os.WriteFile(wf, []byte(hostWorkflow), 0o644))
	store := filepath.Join(project, ".chartgate", "state.db")
	const session = "11111111-2222-4333-8444-555555555555"

	// The host's hooks: chartgate hook claude-code processes.
	hookRun := func(event map[string]any) string {
		t.Helper()
		event["session_id"], event["cwd"], event["transcript_path"], event["permission_mode"] = session, project, "/tmp/t.jsonl", "default"
		in, err := json.Marshal(event)
		require.NoError(t, err)
		cmd := exec.Command(testExe(t), "hook", "claude-code")
		cmd.Env = append(hostlessEnv(), envMain+"=1")
		cmd.Stdin = bytes.NewReader(in)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), errOut.String())
		return out.String()
	}
	edit := func() string {
		return hookRun(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "toolu_1",
			"tool_input": map[string]any{"file_path": filepath.Join(project, "main.go"), "old_string": "a", "new_string": "b"}})
	}

	assert.Contains(t, hookRun(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}), "Phase: plan.")

	// The host's gateway: chartgate serve over stdio, finding the session.
	cs := serveClient{dir: project, base: hostlessEnv(), name: "claude-code"}.start(t,
		"serve", "--log-level", "warn", "--workflow", wf, "--store", store, "--session", "auto", "--config", upstreamConfig(t))
	ctx := context.Background()
	tools := func() []string { return listed(t, cs) }

	assert.Equal(t, []string{"pid", "workflow_status", "workflow_transition"}, tools(), "plan")
	assert.Contains(t, edit(), `Tool \"Edit\" is not available in the current workflow state (\"plan\")`)

	// The agent moves on through the gateway: the hook allows Edit.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "PLANNED", "data": map[string]any{"rationale": "read it"}}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	assert.Empty(t, edit(), "the hook allows what the gateway's transition allows")
	assert.Equal(t, []string{"echo", "pid", "workflow_status", "workflow_transition"}, tools(), "implement")

	// The hook sees a Write of a .env file: its interrupt changes what the
	// gateway lists.
	post := hookRun(map[string]any{"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "toolu_2",
		"tool_input":    map[string]any{"file_path": filepath.Join(project, "deploy", "prod.env"), "content": "K=1"},
		"tool_response": map[string]any{"filePath": filepath.Join(project, "deploy", "prod.env"), "success": true}})
	assert.Contains(t, post, `triggered interrupt \"env\": the workflow moved from implement to env_check`)
	assert.Equal(t, []string{"pid", "workflow_status", "workflow_transition"}, tools(), "env_check")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "the gateway refuses echo in env_check")

	// Both wrote one workflow, named by the session: its history holds the
	// gateway's transition and the hook's interrupt.
	code, out, errOut := chartgate("history", "name:"+session, "--workflow", wf, "--store", store)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "PLANNED: plan -> implement (workflow_transition)")
	assert.Contains(t, out, "chartgate.interrupt.env: implement -> env_check (by hook)")
	assert.True(t, strings.HasSuffix(out, "now: env_check (active)\n"), out)
}
