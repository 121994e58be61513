// This file tests serve --list-all-tools: the gateway as a process, in
// front of the test upstream, for a client that never reads the tool list
// again (Codex).

package main

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
)

// TestServeListAllTools: with --list-all-tools a client of protocol
// 2025-11-25 is listed echo from the start, though only implement allows
// it, with the state it works in; called in plan it is refused as without
// the flag; after workflow_transition it runs, the list unchanged and no
// list_changed sent.
func TestServeListAllTools(t *testing.T) {
	code, _, errOut := chartgate("serve", "--list-all-tools", "--config", "x.json")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--list-all-tools needs --workflow")

	wf := writeFile(t, "workflow.json", `{"id": "w", "initial": "plan", "states": {
	  "plan": {"allowed_tools": ["pid"], "instructions": "Plan.", "on": {"PLANNED": "implement"}},
	  "implement": {"allowed_tools": ["pid", "echo"], "instructions": "Echo.", "on": {"DONE": "done"}},
	  "done": {"type": "final"}}}`)
	opts, changed := listChanged()
	cs := serveClient{options: opts}.start(t, "serve", "--log-level", "warn", "--workflow", wf, "--store", filepath.Join(t.TempDir(), "state.db"),
		"--list-all-tools", "--config", upstreamConfig(t))
	ctx := context.Background()

	list := func() map[string]string {
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		out := map[string]string{}
		for _, tool := range res.Tools {
			out[tool.Name] = tool.Description
		}
		return out
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res, textOf(res)
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case <-changed:
			t.Fatalf("%s: list_changed sent", what)
		case <-time.After(200 * time.Millisecond):
		}
	}

	tools := list()
	assert.ElementsMatch(t, []string{"echo", "pid", "workflow_status", "workflow_transition"}, slices.Collect(maps.Keys(tools)), "plan")
	// A final state ends enforcement: echo works there too.
	assert.Contains(t, tools["echo"], `It works only in states "implement", "done".`)

	res, text := call("echo", map[string]any{"text": "early"})
	ref, ok := mcpbind.RefusalOf(res)
	require.True(t, ok, text)
	assert.Equal(t, mcpbind.CodeForbidden, ref.Code)
	assert.Contains(t, text, `Tool "echo" is not available in the current workflow state ("plan")`)
	assert.Contains(t, text, `To make it available, call workflow_transition with event "PLANNED".`)
	assert.NotContains(t, text, "early")

	res, text = call("workflow_transition", map[string]any{"event": "PLANNED"})
	require.False(t, res.IsError, text)
	assert.Contains(t, text, `Transitioned from "plan" to "implement" on PLANNED.`)
	quiet("plan -> implement")
	res, text = call("echo", map[string]any{"text": "late"})
	require.False(t, res.IsError, text)
	assert.Equal(t, "late", text)
	assert.Equal(t, tools, list(), "the list does not change with the state")
	quiet("a call in implement")
}
