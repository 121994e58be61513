package hook

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// TestMCPToolNamesPerHost: each host's name of an MCP tool, as the real
// hosts send it (hosttest/), is read as the tool of its server.
func TestMCPToolNamesPerHost(t *testing.T) {
	for _, c := range []struct {
		host         Host
		input        string
		server, tool string
	}{
		{ClaudeCode, `{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "mcp__chartgate__workflow_transition", "tool_input": {}}`, "chartgate", "workflow_transition"},
		{Codex, `{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "mcp__chartgate__workflow_transition", "tool_input": {}}`, "chartgate", "workflow_transition"},
		{Gemini, `{"session_id": "s", "hook_event_name": "BeforeTool", "tool_name": "mcp_chartgate_workflow_transition", "tool_input": {},
			"mcp_context": {"server_name": "chartgate", "tool_name": "workflow_transition"}}`, "chartgate", "workflow_transition"},
		{Gemini, `{"session_id": "s", "hook_event_name": "BeforeTool", "tool_name": "mcp_my_srv_ping", "tool_input": {},
			"mcp_context": {"server_name": "my_srv", "tool_name": "ping"}}`, "my_srv", "ping"},
		{Gemini, `{"session_id": "s", "hook_event_name": "BeforeTool", "tool_name": "mcp_chartgate_workflow_status", "tool_input": {}}`, "chartgate", "workflow_status"},
		{Gemini, `{"session_id": "s", "hook_event_name": "BeforeTool", "tool_name": "write_file", "tool_input": {}}`, "", "Write"},
		{Copilot, `{"sessionId": "s", "toolName": "chartgate-workflow_transition", "toolArgs": "{\"event\": \"GO\"}"}`, "chartgate", "workflow_transition"},
		{Copilot, `{"sessionId": "s", "toolName": "bash", "toolArgs": {"command": "ls"}}`, "", "Bash"},
	} {
		ev, err := Parse(c.host, []byte(c.input), "")
		require.NoError(t, err, c.input)
		assert.Equal(t, c.server, ev.Server, c.input)
		assert.Equal(t, c.tool, canonical(ev), c.input)
	}
	_, err := Parse(Gemini, []byte(`{"session_id": "s", "hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {},
		"mcp_context": {"server_name": "chartgate"}}`), "")
	assert.EqualError(t, err, `hook input: tool_name: "run_shell_command" is not a tool of the MCP server "chartgate" that mcp_context names`)
}

// TestGatewayTransitionOnEveryHost: the gateway's workflow_transition, as
// each host names it, is left to the gateway in every state, and its post
// tool answer carries the phase of the state it moved to.
func TestGatewayTransitionOnEveryHost(t *testing.T) {
	for _, c := range []struct {
		host  Host
		name  string
		input string
	}{
		{ClaudeCode, "mcp__chartgate__workflow_transition", `{"session_id": "s", "hook_event_name": "%s", "tool_name": "mcp__chartgate__workflow_transition", "tool_input": {"event": "PLAN_READY"}}`},
		{Gemini, "mcp_chartgate_workflow_transition", `{"session_id": "s", "hook_event_name": "%s", "tool_name": "mcp_chartgate_workflow_transition", "tool_input": {"event": "PLAN_READY"}, "mcp_context": {"server_name": "chartgate", "tool_name": "workflow_transition"}}`},
		{Copilot, "chartgate-workflow_transition", `{"sessionId": "s", "toolName": "chartgate-workflow_transition", "toolArgs": {"event": "PLAN_READY"}}`},
	} {
		f := newFixture(t, codingWorkflow, nil)
		pre, post := map[Host]string{ClaudeCode: "PreToolUse", Gemini: "BeforeTool", Copilot: "preToolUse"}[c.host], map[Host]string{ClaudeCode: "PostToolUse", Gemini: "AfterTool", Copilot: "postToolUse"}[c.host]
		parse := func(event string) Event {
			in := c.input
			name := event // Copilot CLI's camelCase payloads do not name it
			if c.host != Copilot {
				in, name = fmt.Sprintf(in, event), ""
			}
			ev, err := Parse(c.host, []byte(in), name)
			require.NoError(t, err)
			ev.Cwd = f.project
			return ev
		}
		r := f.handle(parse(pre))
		assert.Empty(t, r.Deny, "%s in plan", c.name)
		// The gateway's move, on the session's workflow.
		_, err := f.gate.Send(context.Background(), mcpbind.Ref{Name: "s"}, statechart.Event{Type: "PLAN_READY"}, "test")
		require.NoError(t, err)
		r = f.handle(parse(post))
		assert.Contains(t, r.Context, "Phase: implement", c.name)
		assert.Contains(t, r.Context, "Instructions: Implement the plan with small edits.", c.name)
	}
}

// TestCopilotFreeformApplyPatch: Copilot CLI with a GPT model sends
// apply_patch's arguments as the raw patch; it is read as Codex's patch
// (a Write when it only adds files), not refused as unreadable.
func TestCopilotFreeformApplyPatch(t *testing.T) {
	ev, err := Parse(Copilot, []byte(`{"sessionId": "s", "cwd": "/repo", "toolName": "apply_patch", "toolArgs": "*** Begin Patch\n*** Add File: notes.md\n+the plan\n*** End Patch\n"}`), "preToolUse")
	require.NoError(t, err)
	assert.Equal(t, "Write", canonical(ev))
	assert.Equal(t, []string{"notes.md"}, editedFiles(ev))
	assert.Equal(t, 1, editLines(ev))
	ev, err = Parse(Copilot, []byte(`{"sessionId": "s", "toolName": "apply_patch", "toolArgs": "*** Begin Patch\n*** Update File: a.go\n-x\n+y\n*** End Patch\n"}`), "preToolUse")
	require.NoError(t, err)
	assert.Equal(t, "Edit", canonical(ev))
}
