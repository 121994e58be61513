// This file tests serve with a workflow, end to end: chartgate serve as a
// process, in front of MCP's reference filesystem server (npm), enforcing
// a Statewright workflow with an interrupt and an approval on a SQLite
// store that chartgate approve and history, in this process, share.

package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
)

// codingWorkflow is a Statewright coding workflow over the reference
// filesystem server's tools.
const codingWorkflow = `{
  "id": "coding", "initial": "plan",
  "interrupts": {"secrets": {"trigger": {"file_pattern": "**/*.env*"}, "target": "review_secrets"}},
  "states": {
    "plan": {"allowed_tools": ["read_text_file", "list_directory"], "instructions": "Read the code and plan.", "on": {"PLANNED": "implement"}},
    "implement": {"allowed_tools": ["read_text_file", "list_directory", "write_file"], "max_iterations": 10,
                  "on": {"DONE": {"target": "released", "requires_approval": true, "approval_message": "ship it?"}}},
    "review_secrets": {"allowed_tools": ["read_text_file"], "instructions": "A secrets file changed: check it.", "on": {"CHECKED": "$return"}},
    "released": {"type": "final"}
  }
}`

func filesystemServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH; to run this test: cd gateway/testdata/upstreams && npm ci")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "gateway", "testdata", "upstreams", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	require.NoError(t, err)
	if _, err := os.Stat(script); err != nil {
		t.Skipf("@modelcontextprotocol/server-filesystem is not installed; to run this test: cd gateway/testdata/upstreams && npm ci")
	}
	return script
}

func TestServeWorkflowFilesystem(t *testing.T) {
	script := filesystemServer(t)
	root := t.TempDir()
	wf := writeFile(t, "workflow.json", codingWorkflow)
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", wf, "--store", store}

	opts, changed := listChanged()
	cs := serveClient{options: opts}.start(t, append([]string{"serve", "--log-level", "warn", "--compat", "statewright", "--session", "s1"},
		append(project, "--", "node", script, root)...)...)
	ctx := context.Background()

	tools := func() []string { return listed(t, cs) }
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res
	}
	text := textOf
	expectChanged := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no list_changed", what)
		}
	}
	workflowTools := []string{"statewright_get_state", "statewright_transition", "workflow_status", "workflow_transition",
		"statewright_create_workflow", "statewright_deactivate", "statewright_get_status",
		"statewright_list_workflows", "statewright_load_workflow", "statewright_pause"}

	assert.ElementsMatch(t, append([]string{"list_directory", "read_text_file"}, workflowTools...), tools(), "plan")

	// Writing while planning is refused, and nothing is written.
	a := filepath.Join(root, "a.txt")
	res := call("write_file", map[string]any{"path": a, "content": "x"})
	ref, ok := mcpbind.RefusalOf(res)
	require.True(t, ok, text(res))
	assert.Equal(t, mcpbind.CodeForbidden, ref.Code)
	assert.Contains(t, text(res), `To make it available, call statewright_transition with event "PLANNED".`, "compat mode names Statewright's tool")
	assert.NoFileExists(t, a)

	res = call("workflow_transition", map[string]any{"event": "PLANNED", "data": map[string]any{"rationale": "read main.go"}})
	require.False(t, res.IsError, text(res))
	expectChanged("plan -> implement")
	assert.ElementsMatch(t, append([]string{"list_directory", "read_text_file", "write_file"}, workflowTools...), tools(), "implement")
	res = call("write_file", map[string]any{"path": a, "content": "x"})
	require.False(t, res.IsError, text(res))
	assert.FileExists(t, a)

	// Writing a secrets file fires the interrupt.
	res = call("write_file", map[string]any{"path": filepath.Join(root, "prod.env"), "content": "KEY=1"})
	require.False(t, res.IsError, text(res))
	// In compat mode the notice carries Statewright's marker and wording.
	assert.Contains(t, text(res), `[STATEWRIGHT INTERRUPT] File '`+filepath.Join(root, "prod.env")+`', written by write_file, triggered interrupt 'secrets' (**/*.env*), so the workflow moved from "implement" to "review_secrets"`)
	expectChanged("the interrupt")
	assert.ElementsMatch(t, append([]string{"read_text_file"}, workflowTools...), tools(), "review_secrets")
	res = call("workflow_transition", map[string]any{"event": "CHECKED"})
	require.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), `to "implement"`)
	expectChanged("back from the interrupt")

	// Done waits for approval: Statewright's shapes say so.
	res = call("statewright_transition", map[string]any{"event": "DONE", "data": map[string]any{"rationale": "tests pass"}})
	require.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), `"status": "pending_approval"`)
	assert.Contains(t, text(res), `"approval_message": "ship it?"`)
	assert.Regexp(t, `"approval_id": "[0-9a-f]{40}"`, text(res))
	res = call("statewright_get_state", nil)
	assert.Contains(t, text(res), `"pending_approval": {`)
	res = call("workflow_transition", map[string]any{"event": "CHECKED"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "A transition is pending approval")
	assert.Regexp(t, `pending approval [0-9a-f]{40}: "implement" to "released" on DONE`, text(res))

	// A person approves it from another process sharing the store, with
	// the approver key.
	key := filepath.Join(t.TempDir(), "approver.key")
	code, _, errOut := chartgate("approve", "--init", "--key", key)
	require.Equal(t, exitOK, code, errOut)
	code, out, errOut := chartgate(append([]string{"approve", "name:s1", "--by", "ada", "--yes", "--key", key}, project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `^approved approval [0-9a-f]{40} of workflow name:s1: implement:DONE:approval -> released on DONE \(by ada, not authenticated\)\n$`, out)
	res = call("workflow_status", nil)
	assert.Contains(t, text(res), `Workflow state: "released" (done).`)
	// With --compat statewright a final state blocks every tool, as
	// Statewright's gateway does (by default it ends enforcement).
	res = call("write_file", map[string]any{"path": filepath.Join(root, "b.txt"), "content": "y"})
	require.True(t, res.IsError, text(res))
	assert.NoFileExists(t, filepath.Join(root, "b.txt"))

	code, out, errOut = chartgate(append([]string{"history", "name:s1"}, project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `PLANNED: plan -> implement (workflow_transition)  rationale: "read main.go"`)
	assert.Contains(t, out, "call write_file: forbidden (in plan)")
	assert.Contains(t, out, "triggered interrupt 'secrets'")
	assert.Regexp(t, `\(approval [0-9a-f]{40} by ada through command, not authenticated\)`, out)
	assert.Contains(t, out, "now: released (done)")
}

// TestServeWorkflowStatelessHandles: serve --http --stateless with a
// workflow serves every protocol through workflow handles (a stateless
// server has no sessions): workflow_start, then calls that name the
// workflow; two clients share it by its id only.
func TestServeWorkflowStatelessHandles(t *testing.T) {
	wf := writeFile(t, "workflow.json", `{"id": "w", "initial": "locked", "states": {
		"locked": {"on": {"UNLOCK": "open"}, "meta": {"mcp": {"tools": ["pid"], "events": {"pid": "UNLOCK"}}}},
		"open": {"meta": {"mcp": {"tools": ["echo"]}}}}}`)
	url, _ := startServeHTTP(t, "--stateless", "--log-level", "warn", "--workflow", wf, "--store", filepath.Join(t.TempDir(), "state.db"),
		"--", "env", envUpstream+"=1", testExe(t))
	ctx := context.Background()
	for _, protocol := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(protocol, func(t *testing.T) {
			connect := func() *mcp.ClientSession {
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx,
					&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
				require.NoError(t, err)
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			a, b := connect(), connect()
			res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			require.NoError(t, err)
			ref, ok := mcpbind.RefusalOf(res)
			require.True(t, ok)
			assert.Equal(t, mcpbind.CodeWorkflowRequired, ref.Code)
			res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
			require.NoError(t, err)
			require.False(t, res.IsError)
			id := res.StructuredContent.(map[string]any)["workflow_id"].(string)
			res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x", "workflow_id": id}})
			require.NoError(t, err)
			ref, ok = mcpbind.RefusalOf(res)
			require.True(t, ok)
			assert.Equal(t, "locked", ref.State)
			res, err = a.CallTool(ctx, &mcp.CallToolParams{Name: "pid", Arguments: map[string]any{"workflow_id": id}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			res, err = b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through the handle", "workflow_id": id}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%v", res.Content)
			assert.Equal(t, "through the handle", res.Content[0].(*mcp.TextContent).Text)
		})
	}
}
