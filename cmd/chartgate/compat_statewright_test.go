// This file ports what Statewright's own tests check (crates/mcp-gateway:
// custom_tools.rs, enforcement.rs, session.rs, interceptors.rs, gateway.rs;
// crates/engine: transition.rs) to chartgate serve --compat statewright,
// run as a process in front of an MCP upstream served in this process
// over loopback HTTP, driven by a go-sdk client as an agent would. Each
// test names the Statewright tests it ports.

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pathArgs are the arguments of the upstream's file tools.
type pathArgs struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
}

// fileUpstream serves read_file, grep, edit_file and write_file over
// Streamable HTTP on loopback; it returns a configuration naming it.
func fileUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	tool := func(name string) {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(_ context.Context, _ *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + in.Path}}}, nil, nil
		})
	}
	for _, name := range []string{"read_file", "grep", "edit_file", "write_file"} {
		tool(name)
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return writeFile(t, "servers.json", `{"mcpServers": {"files": {"url": `+strconv.Quote(srv.URL)+`}}}`)
}

// swAgent is an MCP client of chartgate serve --compat statewright.
type swAgent struct {
	t       *testing.T
	cs      *mcp.ClientSession
	store   string // the SQLite store chartgate approve and history share
	project []string
}

// serveCompat starts chartgate serve --compat statewright with the
// workflow in front of fileUpstream, as session s1, with extra flags.
func serveCompat(t *testing.T, workflowJSON string, extra ...string) *swAgent {
	t.Helper()
	wf := writeFile(t, "workflow.json", workflowJSON)
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", wf, "--store", store}
	args := append([]string{"serve", "--log-level", "warn", "--compat", "statewright", "--session", "s1", "--config", fileUpstream(t)}, project...)
	cmd := exec.Command(testExe(t), append(args, extra...)...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	cmd.Stderr = testWriter{t}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return &swAgent{t: t, cs: cs, store: store, project: project}
}

// call calls a tool and returns its text and whether it is an error.
func (a *swAgent) call(name string, args map[string]any) (string, bool) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(a.t, err)
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// json calls a Statewright tool that answers JSON and decodes it.
func (a *swAgent) json(name string, args map[string]any) map[string]any {
	a.t.Helper()
	text, isErr := a.call(name, args)
	require.False(a.t, isErr, "%s: %s", name, text)
	var out map[string]any
	require.NoError(a.t, json.Unmarshal([]byte(text), &out), text)
	return out
}

// transition sends an event with statewright_transition.
func (a *swAgent) transition(event string, data map[string]any) (string, bool) {
	a.t.Helper()
	args := map[string]any{"event": event}
	if data != nil {
		args["data"] = data
	}
	return a.call("statewright_transition", args)
}

// tools lists the tools' names.
func (a *swAgent) tools() []string {
	a.t.Helper()
	res, err := a.cs.ListTools(context.Background(), nil)
	require.NoError(a.t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// approvalWorkflow is custom_tools.rs's approval_definition.
const approvalWorkflow = `{
  "id": "approval-test", "initial": "working", "meta": {"approval_mode": "ui"},
  "interrupts": {"secrets": {"trigger": {"file_pattern": "**/*.env"}, "target": "check"}},
  "states": {
    "working": {"allowed_tools": ["read_file", "edit_file"], "on": {
      "DEPLOY": {"target": "deployed", "requires_approval": true, "approval_message": "Review changes before deploy"},
      "DONE": "completed"}},
    "check": {"allowed_tools": ["read_file"], "on": {"CHECKED": "$return"}},
    "deployed": {"on": {"VERIFIED": "completed"}},
    "completed": {"type": "final"}
  }
}`

// TestStatewrightCompatApproval ports custom_tools.rs
// transition_with_requires_approval_returns_flag,
// get_state_includes_pending_approval_when_set and
// get_state_no_pending_approval_field_when_none; session.rs's pending
// approval: the session stays in the state it leaves while it waits.
func TestStatewrightCompatApproval(t *testing.T) {
	a := serveCompat(t, approvalWorkflow)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "working", st["state"])
	assert.NotContains(t, st, "pending_approval")
	assert.Equal(t, []any{
		map[string]any{"event": "DEPLOY", "target": "deployed"},
		map[string]any{"event": "DONE", "target": "completed"},
	}, st["transitions"])
	assert.Equal(t, map[string]any{"secrets": map[string]any{"file_pattern": "**/*.env", "target": "check"}}, st["interrupts"])

	res := a.json("statewright_transition", map[string]any{"event": "DEPLOY"})
	assert.Equal(t, true, res["requires_approval"])
	assert.Equal(t, "pending_approval", res["status"])
	assert.Equal(t, "Review changes before deploy", res["approval_message"])
	id, _ := res["approval_id"].(string)
	assert.Regexp(t, `^[0-9a-f]{40}$`, id)

	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "working", st["state"], "the plain state while the approval waits")
	assert.Equal(t, map[string]any{
		"approval_id": id, "event": "DEPLOY", "from_state": "working", "to_state": "deployed",
		"message": "Review changes before deploy",
	}, st["pending_approval"])

	text, isErr := a.transition("DONE", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "A transition is pending approval")
}

// TestStatewrightCompatInterruptHandler ports custom_tools.rs
// get_state_shows_interrupt_handler_when_in_context and
// get_state_no_interrupt_handler_when_not_in_context: an edit of a file
// an interrupt watches moves to its handler, which get_state shows as
// {return_state, message}.
func TestStatewrightCompatInterruptHandler(t *testing.T) {
	a := serveCompat(t, approvalWorkflow)
	assert.NotContains(t, a.json("statewright_get_state", nil), "interrupt_handler")
	text, isErr := a.call("edit_file", map[string]any{"path": "conf/prod.env"})
	require.False(t, isErr, text)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "check", st["state"])
	assert.Equal(t, map[string]any{
		"return_state": "working",
		"message":      "You are in an interrupt handler. Complete validation and transition to return.",
	}, st["interrupt_handler"])
	res := a.json("statewright_transition", map[string]any{"event": "CHECKED"})
	assert.Equal(t, "working", res["to"])
	assert.NotContains(t, a.json("statewright_get_state", nil), "interrupt_handler")
}
