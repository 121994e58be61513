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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
	return writeFile(t, "servers.json", `{"mcpServers": {"files": {"url": `+strconv.Quote(fileUpstreamURL(t))+`}}}`)
}

// fileUpstreamURL serves fileUpstream's tools and returns their URL.
func fileUpstreamURL(t *testing.T) string {
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
	return srv.URL
}

// swAgent is an MCP client of chartgate serve --compat statewright.
type swAgent struct {
	t       *testing.T
	cs      *mcp.ClientSession
	store   string // the SQLite store chartgate approve and history share
	project []string
	args    []string // chartgate's arguments
}

// serveCompat starts chartgate serve --compat statewright with the
// workflow in front of fileUpstream, as session s1, with extra flags.
func serveCompat(t *testing.T, workflowJSON string, extra ...string) *swAgent {
	t.Helper()
	wf := writeFile(t, "workflow.json", workflowJSON)
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", wf, "--store", store}
	args := append([]string{"serve", "--log-level", "warn", "--compat", "statewright", "--session", "s1", "--config", fileUpstream(t)}, project...)
	return startCompat(t, store, project, append(args, extra...))
}

// join starts another chartgate serve on a's workflow and store, as the
// gateway of a sub-agent that works in the same named workflow.
func (a *swAgent) join() *swAgent {
	a.t.Helper()
	return startCompat(a.t, a.store, a.project, a.args)
}

func startCompat(t *testing.T, store string, project, args []string) *swAgent {
	t.Helper()
	// Statewright's clients speak the protocol of 2025-11-25, whose
	// sessions have their tools listed by state.
	cs := serveClient{}.start(t, args...)
	return &swAgent{t: t, cs: cs, store: store, project: project, args: args}
}

// call calls a tool and returns its text and whether it is an error.
func (a *swAgent) call(name string, args map[string]any) (string, bool) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(a.t, err)
	return textOf(res), res.IsError
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
// transition_without_approval_has_false_flag,
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
	assert.Equal(t, map[string]any{"approval_mode": "ui"}, st["meta"], "the workflow's meta")

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
	// custom_tools.rs transition_without_approval_has_false_flag.
	res = serveCompat(t, approvalWorkflow).json("statewright_transition", map[string]any{"event": "DONE"})
	assert.Equal(t, false, res["requires_approval"])
	assert.Equal(t, "completed", res["to"])
	assert.NotContains(t, res, "status")
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

// customToolsWorkflow is custom_tools.rs's test_definition.
const customToolsWorkflow = `{
  "id": "test", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["read_file", "grep"], "instructions": "Read files and plan your approach.",
                 "max_iterations": 5, "safe_next": "implementing", "on": {"READY": "implementing", "FAIL": "failed"}},
    "implementing": {"allowed_tools": ["read_file", "edit_file"], "max_iterations": 10, "on": {"DONE": "completed", "FAIL": "failed"}},
    "completed": {"type": "final"},
    "failed": {"type": "final"}
  },
  "guards": {}
}`

// TestStatewrightCompatSafeNext ports custom_tools.rs
// unrecognized_event_uses_safe_next and
// unrecognized_event_without_safe_next_errors, transition.rs
// safe_next_fires_on_unrecognized_event (a model's invented event),
// safe_next_does_not_override_valid_transitions and
// no_safe_next_still_errors_on_unrecognized.
func TestStatewrightCompatSafeNext(t *testing.T) {
	a := serveCompat(t, customToolsWorkflow)
	res := a.json("statewright_transition", map[string]any{"event": "UNKNOWN_EVENT", "data": map[string]any{"note": "x"}})
	assert.Equal(t, true, res["transitioned"])
	assert.Equal(t, "planning", res["from"])
	assert.Equal(t, "implementing", res["to"])
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "implementing", st["state"])
	assert.Equal(t, map[string]any{"note": "x"}, st["context"], "safe_next merges the data")

	text, isErr := a.transition("UNKNOWN_EVENT", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, `No transition for event "UNKNOWN_EVENT" in state "implementing".`)

	// A reserved event never takes safe_next.
	b := serveCompat(t, customToolsWorkflow)
	text, isErr = b.transition("chartgate.approve", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "reserved")
	// A valid event is not taken over by safe_next.
	res = b.json("statewright_transition", map[string]any{"event": "FAIL"})
	assert.Equal(t, "failed", res["to"])
}

// TestServeSafeNextDefault: without --compat, safe_next covers only the
// workflow's own events, so a misspelt event is refused with the events
// that are accepted (the table in the workflow package's docs).
func TestServeSafeNextDefault(t *testing.T) {
	wf := writeFile(t, "workflow.json", customToolsWorkflow)
	cs := serveClient{protocol: "latest"}.start(t, "serve", "--log-level", "warn", "--workflow", wf, "--store", "memory", "--config", fileUpstream(t))
	a := &swAgent{t: t, cs: cs}
	text, isErr := a.call("workflow_transition", map[string]any{"event": "COMPLETE"})
	assert.True(t, isErr)
	assert.Contains(t, text, `Event "COMPLETE" cannot be sent with workflow_transition. Events it accepts now: READY, FAIL, DONE.`)
	text, isErr = a.call("workflow_transition", map[string]any{"event": "DONE"})
	assert.False(t, isErr, text)
	assert.Contains(t, text, `to "implementing"`, "DONE, an event of the workflow, takes safe_next")
}

// TestStatewrightCompatFinal ports custom_tools.rs
// transition_to_final_state and transition_from_final_state_errors: any
// event in a final state says the workflow is final.
func TestStatewrightCompatFinal(t *testing.T) {
	a := serveCompat(t, customToolsWorkflow)
	a.json("statewright_transition", map[string]any{"event": "READY"})
	a.json("statewright_transition", map[string]any{"event": "DONE"})
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "completed", st["state"])
	assert.Equal(t, true, st["is_final"])
	for _, ev := range []string{"RESTART", "READY", "DONE"} {
		text, isErr := a.transition(ev, nil)
		assert.True(t, isErr, ev)
		assert.Contains(t, text, `Cannot transition: the workflow is in final state "completed".`, ev)
	}
}

// orderWorkflow is transition.rs's order_machine.
const orderWorkflow = `{
  "id": "order", "initial": "draft", "context": {"item_count": 0, "items": []},
  "states": {
    "draft": {"on": {"ADD_ITEM": "draft", "SUBMIT": {"target": "pending_payment", "guards": ["has_items", "has_payment"]}, "CANCEL": "cancelled"}},
    "pending_payment": {"on": {"CONFIRM_PAYMENT": "confirmed", "CANCEL": "cancelled"}},
    "confirmed": {"on": {"SHIP": "shipped"}},
    "shipped": {"on": {"DELIVER": "delivered"}},
    "delivered": {"type": "final"},
    "cancelled": {"type": "final"}
  },
  "guards": {
    "has_items": {"field": "item_count", "op": "gt", "value": 0},
    "has_payment": {"field": "payment_method", "op": "exists"}
  }
}`

// TestStatewrightCompatGuardRefusal ports custom_tools.rs
// get_state_returns_correct_info (transitions: every "on" entry, and the
// guards they name), transition.rs
// guarded_transition_fails_when_guard_not_met (GuardFailed names
// has_items) and guarded_transition_passes_when_guards_satisfied: the
// refusal names the guard, its condition and the value it saw, and says
// that data sent with the event is not seen by it.
func TestStatewrightCompatGuardRefusal(t *testing.T) {
	a := serveCompat(t, orderWorkflow)
	// get_state lists every "on" entry of the state, sorted by event,
	// whether or not its guards pass now, and the guards they name
	// (custom_tools.rs handle_get_state).
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, []any{
		map[string]any{"event": "ADD_ITEM", "target": "draft"},
		map[string]any{"event": "CANCEL", "target": "cancelled"},
		map[string]any{"event": "SUBMIT", "target": "pending_payment"},
	}, st["transitions"])
	assert.Equal(t, map[string]any{
		"has_items":   map[string]any{"field": "item_count", "op": "gt", "value": 0.0},
		"has_payment": map[string]any{"field": "payment_method", "op": "exists", "value": nil},
	}, st["guards"])
	text, isErr := a.transition("SUBMIT", map[string]any{"item_count": 2})
	assert.True(t, isErr)
	assert.Contains(t, text, `Event "SUBMIT" was refused by a guard in state "draft". guard 'has_items' failed: item_count gt 0, and item_count is 0.`)
	assert.Contains(t, text, "the data sent with it (item_count) is merged into the context only after the transition, so the guard does not see it")
	assert.Equal(t, "draft", a.json("statewright_get_state", nil)["state"])

	// Sent with an earlier transition, the data is seen.
	a.json("statewright_transition", map[string]any{"event": "ADD_ITEM", "data": map[string]any{"item_count": 2}})
	text, isErr = a.transition("SUBMIT", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "guard 'has_payment' failed: payment_method exists, and payment_method is not set.")
	assert.Contains(t, text, "data sent with an event is merged into the context only after the transition, so a guard does not see it")
	a.json("statewright_transition", map[string]any{"event": "ADD_ITEM", "data": map[string]any{"payment_method": "card_4242"}})
	res := a.json("statewright_transition", map[string]any{"event": "SUBMIT"})
	assert.Equal(t, "pending_payment", res["to"])

	// workflow_transition explains it the same way.
	b := serveCompat(t, orderWorkflow)
	text, isErr = b.call("workflow_transition", map[string]any{"event": "SUBMIT"})
	assert.True(t, isErr)
	assert.Contains(t, text, "guard 'has_items' failed: item_count gt 0, and item_count is 0.")
}

// enforcementWorkflow is enforcement.rs's test_definition.
const enforcementWorkflow = `{
  "id": "test", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["read_file", "grep"], "max_iterations": 3, "on": {"READY": "implementing", "AGAIN": "planning", "FAIL": "failed"}},
    "implementing": {"allowed_tools": ["read_file", "edit_file", "write_file"], "max_iterations": 6, "on": {"DONE": "testing", "FAIL": "failed"}},
    "testing": {"allowed_tools": ["read_file"], "on": {"PASS": "completed", "FAIL_TEST": "implementing"}},
    "completed": {"type": "final"},
    "failed": {"type": "final"}
  },
  "guards": {}
}`

// compatTools are the tools compat mode always lists.
var compatTools = []string{
	"statewright_get_state", "statewright_transition", "statewright_list_workflows", "statewright_load_workflow",
	"statewright_deactivate", "statewright_get_status", "statewright_pause", "statewright_create_workflow",
	"workflow_status", "workflow_transition",
}

// TestStatewrightCompatCheckpointAndFinal ports enforcement.rs
// checkpoint_reached_at_max_iterations and final_state_blocks_all_tools,
// session.rs's checkpoint and final, and gateway.rs's tools/list at a
// checkpoint (only Statewright's tools) and in a final state; custom_tools.rs
// transition_resets_iteration_count and transition.rs
// self_transition_stays_in_same_state (counted, and the iteration count
// reset).
func TestStatewrightCompatCheckpointAndFinal(t *testing.T) {
	a := serveCompat(t, enforcementWorkflow)
	assert.ElementsMatch(t, append([]string{"read_file", "grep"}, compatTools...), a.tools())
	for i := 1; i <= 3; i++ {
		text, isErr := a.call("read_file", map[string]any{"path": "a.go"})
		require.False(t, isErr, text)
	}
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, 3.0, st["iteration"])
	assert.Equal(t, 3.0, st["max_iterations"])
	assert.ElementsMatch(t, compatTools, a.tools(), "at the checkpoint only Statewright's tools are listed")
	text, isErr := a.call("read_file", map[string]any{"path": "a.go"})
	require.False(t, isErr, "a call at the checkpoint still runs (soft)")
	assert.Contains(t, text, "[STATEWRIGHT CHECKPOINT: iteration 3/3 in state 'planning'.")

	// A self-transition is a transition: counted, and the iteration count
	// starts again.
	res := a.json("statewright_transition", map[string]any{"event": "AGAIN"})
	assert.Equal(t, true, res["transitioned"])
	assert.Equal(t, "planning", res["from"])
	assert.Equal(t, "planning", res["to"])
	assert.Equal(t, 1.0, res["transition_count"])
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, 0.0, st["iteration"])
	assert.Equal(t, 1.0, st["transition_count"])
	assert.Equal(t, map[string]any{}, st["context"], "the count of re-entries is the workflow's own")
	assert.ElementsMatch(t, append([]string{"read_file", "grep"}, compatTools...), a.tools())

	// A final state blocks every tool, named by the workflow or not.
	a.json("statewright_transition", map[string]any{"event": "FAIL"})
	assert.ElementsMatch(t, compatTools, a.tools(), "a final state lists only Statewright's tools")
	for _, tool := range []string{"read_file", "edit_file", "write_file", "grep"} {
		text, isErr := a.call(tool, map[string]any{"path": "a.go"})
		assert.True(t, isErr, "%s in a final state: %s", tool, text)
	}
	assert.Equal(t, true, a.json("statewright_get_state", nil)["is_final"])
}

// TestStatewrightCompatTools ports custom_tools.rs
// custom_tool_definitions_has_all_tools and
// is_custom_tool_identifies_correctly (all eight tools, whatever the
// state allows), and gateway.rs's list_workflows, get_status,
// load_workflow, pause, deactivate and create_workflow answers, with what
// compat mode keeps from the agent: it cannot switch enforcement off,
// reset its workflow, or load or replace another.
func TestStatewrightCompatTools(t *testing.T) {
	a := serveCompat(t, enforcementWorkflow)
	assert.ElementsMatch(t, append([]string{"read_file", "grep"}, compatTools...), a.tools())

	assert.Equal(t, map[string]any{"workflows": []any{"test"}, "active": "test"}, a.json("statewright_list_workflows", nil))
	a.json("statewright_transition", map[string]any{"event": "READY"})
	_, isErr := a.call("edit_file", map[string]any{"path": "a.go"})
	require.False(t, isErr)
	assert.Equal(t, map[string]any{
		"active_workflow": "test", "current_state": "implementing", "iteration": 1.0, "transition_count": 1.0,
		"is_final": false, "available_workflows": []any{"test"},
		"usage": map[string]any{"transitions": 1.0, "limit": nil, "remaining": nil, "warning": nil},
	}, a.json("statewright_get_status", nil))

	// load_workflow joins the session's workflow where it is.
	loaded := a.json("statewright_load_workflow", map[string]any{"name": "test", "session_id": "sub-agent-1"})
	assert.Equal(t, "test", loaded["loaded"])
	assert.Equal(t, "implementing", loaded["initial_state"], "joined, not reset")
	assert.Equal(t, []any{"completed", "failed", "implementing", "planning", "testing"}, loaded["states"], "sorted, as Statewright's BTreeMap")
	assert.Equal(t, false, loaded["resumed"])
	// gateway.rs load_workflow_returns_authoritative_snapshot_without_
	// session_key_growth: the answer carries get_state's, and loading
	// again joins the same session.
	assert.Equal(t, a.json("statewright_get_state", nil), loaded["state_snapshot"])
	again := a.json("statewright_load_workflow", map[string]any{"name": "test", "session_id": "sub-agent-1"})
	assert.Equal(t, loaded["state_snapshot"], again["state_snapshot"])
	assert.Equal(t, "implementing", again["initial_state"])
	text, isErr := a.call("statewright_load_workflow", map[string]any{"name": "nope"})
	assert.True(t, isErr)
	assert.Equal(t, "Workflow 'nope' not found. Available: test", text)

	// create_workflow validates before it keeps a workflow.
	text, isErr = a.call("statewright_create_workflow", map[string]any{"name": "broken", "definition": map[string]any{
		"initial": "a", "states": map[string]any{"a": map[string]any{"on": map[string]any{"GO": "nowhere"}}},
	}})
	assert.True(t, isErr)
	assert.Contains(t, text, "Workflow validation failed: ")
	assert.Contains(t, text, `states.a.on.GO: "nowhere" is not a state`)
	good := map[string]any{"initial": "a", "states": map[string]any{"a": map[string]any{"on": map[string]any{"GO": "b"}}, "b": map[string]any{"type": "final"}}}
	text, isErr = a.call("statewright_create_workflow", map[string]any{"name": "data-pipeline", "definition": good})
	require.False(t, isErr, text)
	assert.Contains(t, text, "Workflow 'data-pipeline' created. It is stored, not enforced")
	text, isErr = a.call("statewright_create_workflow", map[string]any{"name": "data-pipeline", "definition": good})
	assert.True(t, isErr)
	assert.Equal(t, "Workflow 'data-pipeline' already exists. Use overwrite=true to replace it.", text)
	text, isErr = a.call("statewright_create_workflow", map[string]any{"name": "test", "definition": good, "overwrite": true})
	assert.True(t, isErr)
	assert.Contains(t, text, "the agent cannot replace it")
	assert.Equal(t, map[string]any{"workflows": []any{"test", "data-pipeline"}, "active": "test"}, a.json("statewright_list_workflows", nil))
	text, isErr = a.call("statewright_load_workflow", map[string]any{"name": "data-pipeline"})
	assert.True(t, isErr)
	assert.Contains(t, text, "the agent cannot switch it")
	assert.Equal(t, "implementing", a.json("statewright_get_state", nil)["state"])
	text, isErr = a.call("statewright_create_workflow", map[string]any{"name": "../etc", "definition": good})
	assert.True(t, isErr)
	assert.Contains(t, text, `Invalid workflow name "../etc"`)
	text, isErr = a.call("statewright_create_workflow", map[string]any{"name": "list", "definition": []any{1}})
	assert.True(t, isErr)
	assert.Contains(t, text, "definition must be a JSON object")

	// Stored: another gateway on the store (a restart, or a sub-agent's)
	// lists it, and updates it with overwrite; the workflow in force and
	// the store's workflows stay as they were.
	b := a.join()
	assert.Equal(t, map[string]any{"workflows": []any{"test", "data-pipeline"}, "active": "test"}, b.json("statewright_list_workflows", nil))
	assert.Equal(t, []any{"test", "data-pipeline"}, b.json("statewright_get_status", nil)["available_workflows"])
	text, isErr = b.call("statewright_create_workflow", map[string]any{"name": "data-pipeline", "definition": good, "overwrite": true})
	require.False(t, isErr, text)
	assert.Contains(t, text, "Workflow 'data-pipeline' updated.")
	assert.Equal(t, "implementing", b.json("statewright_get_state", nil)["state"])
	assert.Equal(t, []any{"read_file", "edit_file", "write_file"}, b.json("statewright_get_state", nil)["allowed_tools"])
	code, out, errOut := chartgate(append([]string{"status", "--json"}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 1, strings.Count(out, "\n"), out)
	assert.NotContains(t, out, "data-pipeline")
}

// TestStatewrightTemplates ports config.rs parse_config_with_upstreams and
// what Statewright's templates need: a gateway configuration
// ({"definition", "upstream_servers"}) validates as its workflow and
// serves its upstreams when no other is given; subflows are found by
// their manifest.json names; a file both formats read asks for its
// format.
func TestStatewrightTemplates(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	config := write("config.json", `{
  "definition": {"id": "bug-fix", "initial": "planning", "states": {
    "planning": {"allowed_tools": ["echo"], "safe_next": "testing", "on": {"PLAN_READY": "testing", "FAIL": "failed"}},
    "testing": {"allowed_tools": ["pid"], "on": {"TESTS_PASS": "completed", "TESTS_FAIL": {"invoke": "[stitch] debug-triage v1", "on_complete": "testing", "on_fail": "failed"}}},
    "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}},
  "upstream_servers": [{"name": "up", "command": `+strconv.Quote(testExe(t))+`, "args": [], "env": {"`+envUpstream+`": "1"}}]
}`)
	write("manifest.json", `{"version": 1, "workflows": [{"name": "[stitch] debug-triage v1", "file": "debug-triage.json"}]}`)
	write("debug-triage.json", `{"id": "debug", "initial": "triage", "states": {
    "triage": {"allowed_tools": ["echo"], "on": {"FIXED": "done", "GIVE_UP": "failed"}},
    "done": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`)

	code, out, _ := chartgate("validate", config)
	assert.Equal(t, exitOK, code, out)
	assert.Equal(t, config+": ok (Statewright workflow, 4 states)\n", out)
	bad := write("bad-config.json", `{"definition": {"id": "x", "initial": "a", "states": {"a": {"on": {"GO": "nowhere"}}, "b": {"type": "final"}}}, "upstream_servers": [{"name": "up"}], "extra": 1}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, `extra: unknown key "extra" of a Statewright gateway configuration`)
	assert.Contains(t, out, "upstream_servers[0].command: required: a non-empty string")

	// serve takes the configuration's upstreams.
	cs := serveClient{}.start(t, "serve", "--log-level", "warn", "--compat", "statewright", "--workflow", config, "--store", "memory")
	a := &swAgent{t: t, cs: cs}
	assert.ElementsMatch(t, append([]string{"echo"}, compatTools...), a.tools())
	text, isErr := a.call("echo", map[string]any{"text": "hi"})
	require.False(t, isErr, text)
	assert.Equal(t, "hi", text)
	// The subflow named through manifest.json runs.
	a.json("statewright_transition", map[string]any{"event": "PLAN_READY"})
	res := a.json("statewright_transition", map[string]any{"event": "TESTS_FAIL"})
	assert.Equal(t, true, res["transitioned"])
	_, isErr = a.call("echo", map[string]any{"text": "in the subflow"})
	assert.False(t, isErr, "the subflow allows echo")
	a.json("statewright_transition", map[string]any{"event": "FIXED"})
	assert.Equal(t, "testing", a.json("statewright_get_state", nil)["state"])

	// A file both formats read, differently, needs its format.
	both := write("both.json", `{"id": "x", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}`)
	code, _, errOut := chartgate("status", "--workflow", both, "--store", "memory")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, `give the format (--format statewright or --format xstate), or a "$schema" naming it`)
	code, _, errOut = chartgate("status", "--workflow", both, "--store", "memory", "--format", "statewright")
	assert.Equal(t, exitOK, code, errOut)
}

// forkWorkflow is transition.rs's fork definition (fork_deserialize,
// fork_transition_returns_fork_result), with the branches' states.
const forkWorkflow = `{
  "id": "ci", "initial": "building",
  "states": {
    "building": {"on": {"BUILD_DONE": {"fork": {
      "branches": {"lint": {"initial": "lint_run", "terminal": "lint_done"}, "types": {"initial": "types_run", "terminal": "types_done"}},
      "join": "all", "on_complete": "deploying", "on_fail": "failed"}}}},
    "lint_run": {"allowed_tools": ["read_file"], "on": {"PASS": "lint_done", "FAIL": "failed"}},
    "lint_done": {"type": "final"},
    "types_run": {"allowed_tools": ["grep"], "on": {"PASS": "types_done", "FAIL": "failed"}},
    "types_done": {"type": "final"},
    "deploying": {"on": {"SHIPPED": "done"}},
    "done": {"type": "final"},
    "failed": {"type": "final"}
  },
  "guards": {}
}`

// TestStatewrightCompatFork ports transition.rs
// fork_transition_returns_fork_result and fork_join_default_all, and
// gateway.rs's fork object in get_state and load_workflow with a branch:
// the result and get_state carry the fork; a sub-agent's load joins a
// branch. Here branches are regions of one workflow, moved by
// "<branch>.<EVENT>" (the table in the workflow package's docs).
func TestStatewrightCompatFork(t *testing.T) {
	a := serveCompat(t, forkWorkflow)
	res := a.json("statewright_transition", map[string]any{"event": "BUILD_DONE"})
	assert.Equal(t, true, res["transitioned"])
	fork, _ := res["fork"].(map[string]any)
	require.NotNil(t, fork, "the transition result carries the fork: %v", res)
	assert.Equal(t, "all", fork["join"])
	assert.Equal(t, "deploying", fork["on_complete"])
	assert.Equal(t, "failed", fork["on_fail"])
	assert.Equal(t, map[string]any{"initial": "lint_run", "terminal": "lint_done", "state": "lint_run", "status": "running"},
		fork["branches"].(map[string]any)["lint"])

	// gateway.rs get_state_during_fork_returns_branch_state: the parent
	// is shown its current branch's state, with the fork's progress.
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "lint_run", st["state"])
	assert.Equal(t, []any{"read_file"}, st["allowed_tools"])
	assert.Equal(t, []any{map[string]any{"event": "FAIL", "target": "failed"}, map[string]any{"event": "PASS", "target": "lint_done"}}, st["transitions"])
	assert.Equal(t, map[string]any{"active": true, "current_branch": "lint", "join": "all", "branches": map[string]any{
		"lint":  map[string]any{"status": "running", "initial": "lint_run", "terminal": "lint_done"},
		"types": map[string]any{"status": "running", "initial": "types_run", "terminal": "types_done"},
	}}, st["fork"])
	assert.NotContains(t, st, "run_id")
	assert.NotContains(t, st, "capture_output")
	assert.Nil(t, st["meta"], "no meta")
	for _, key := range []string{"is_final", "iteration", "max_iterations", "instructions", "model", "default_model", "thinking_level",
		"transition_count", "blocked_env", "env_overrides", "context", "guards", "meta", "allowed_commands", "disallowed_tools", "direct_execution", "model_ladder"} {
		assert.Contains(t, st, key)
	}

	// A sub-agent joins a branch.
	b := a.json("statewright_load_workflow", map[string]any{"name": "ci", "branch": "lint"})
	assert.Equal(t, "lint", b["branch"])
	assert.Equal(t, "lint_run", b["initial_state"])
	assert.Equal(t, "lint_run", b["state_snapshot"].(map[string]any)["state"], "the branch's state, as get_state in the branch")
	assert.Equal(t, a.json("statewright_get_state", nil), b["state_snapshot"])
	text, isErr := a.call("statewright_load_workflow", map[string]any{"name": "ci", "branch": "docs"})
	assert.True(t, isErr)
	assert.Contains(t, text, "Branch 'docs' not found. Is a fork active?")

	a.json("statewright_transition", map[string]any{"event": "lint.PASS"})
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "completed", st["fork"].(map[string]any)["branches"].(map[string]any)["lint"].(map[string]any)["status"])
	res = a.json("statewright_transition", map[string]any{"event": "types.PASS"})
	assert.Equal(t, "deploying", res["to"], "join all: every branch done")
	assert.NotContains(t, a.json("statewright_get_state", nil), "fork")
}

// TestStatewrightCompatBranchDone ports Statewright's BRANCH_DONE
// protocol: a sub-agent ends its branch with BRANCH_DONE:<branch>, the
// branch shows completed, and the join runs when every branch is done.
func TestStatewrightCompatBranchDone(t *testing.T) {
	a := serveCompat(t, forkWorkflow)
	a.json("statewright_transition", map[string]any{"event": "BUILD_DONE"})
	res := a.json("statewright_transition", map[string]any{"event": "BRANCH_DONE:lint"})
	assert.Equal(t, true, res["transitioned"], "%v", res)
	st := a.json("statewright_get_state", nil)
	lint := st["fork"].(map[string]any)["branches"].(map[string]any)["lint"].(map[string]any)
	assert.Equal(t, "completed", lint["status"])
	// gateway.rs fork_full_sequential_roundtrip: the parent now sees the
	// next branch.
	assert.Equal(t, "types_run", st["state"])
	assert.Equal(t, "types", st["fork"].(map[string]any)["current_branch"])
	res = a.json("statewright_transition", map[string]any{"event": "BRANCH_DONE:types"})
	assert.Equal(t, "deploying", res["to"], "join all: every branch done")
	assert.NotContains(t, a.json("statewright_get_state", nil), "fork")
}

// TestStatewrightCompatHookAllowedCommands ports interceptors.rs
// test_allowed_commands through chartgate hook claude-code --compat
// statewright, as installed by chartgate install --compat statewright:
// an allowed command without a glob allows further arguments, word by
// word, and every simple command of a line must be allowed.
func TestStatewrightCompatHookAllowedCommands(t *testing.T) {
	project := projectWith(t, `{
  "id": "tests", "initial": "testing",
  "states": {
    "testing": {"allowed_tools": ["Bash", "Read"], "allowed_commands": ["pytest", "git status"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  },
  "guards": {}
}`)
	chartgateOnPath(t)
	code, out, errOut := chartgate("install", "claude-code", "--dir", project, "--compat", "statewright", "--dry-run")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "chartgate hook claude-code --compat statewright")
	assert.Contains(t, out, `"--compat",`)

	bash := func(command string) string {
		in, err := json.Marshal(map[string]any{
			"session_id": "s1", "cwd": project, "hook_event_name": "PreToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": command},
		})
		require.NoError(t, err)
		code, out, errOut := chartgateIn(string(in), "hook", "claude-code", "--compat", "statewright")
		require.Equal(t, 0, code, errOut)
		return out
	}
	for _, allowed := range []string{"pytest", "pytest -x tests/", "git status --short", "pytest -q && git status"} {
		assert.Empty(t, bash(allowed), allowed)
	}
	for _, refused := range []string{"pytester", "pytest -x; rm -rf /", "git stash", "pytest $(curl -s x.sh)"} {
		assert.Contains(t, bash(refused), `"permissionDecision":"deny"`, refused)
	}
	code, _, errOut = chartgateIn("{}", "hook", "claude-code", "--compat", "xstate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--compat "xstate": the one compatibility is statewright`)
}

// TestStatewrightCompatBranchSessions ports gateway.rs's branch sessions
// (the fork's "forked" answer, statewright_load_workflow {branch}, the
// fork object of get_state, BRANCH_DONE:<branch> with its "Unknown
// branch" and "No active fork" refusals) with sub-agents that are other
// gateway processes on the same store and named workflow: each joins a
// branch, sees its state, tools and transitions, and finishes it.
func TestStatewrightCompatBranchSessions(t *testing.T) {
	a := serveCompat(t, forkWorkflow)
	lint, types := a.join(), a.join()

	text, isErr := lint.call("statewright_load_workflow", map[string]any{"name": "ci", "branch": "lint"})
	assert.True(t, isErr)
	assert.Equal(t, "Branch 'lint' not found. Is a fork active? No fork is running: the workflow is in state 'building'.", text)
	text, isErr = a.transition("BRANCH_DONE:lint", nil)
	assert.True(t, isErr, "not taken by anything: %s", text)
	assert.Equal(t, "No active fork. Cannot complete branch 'lint'. No fork is running: the workflow is in state 'building'.", text)

	res := a.json("statewright_transition", map[string]any{"event": "BUILD_DONE"})
	assert.Equal(t, true, res["forked"])
	assert.Equal(t, "lint", res["current_branch"])
	assert.Equal(t, "deploying", res["on_complete"])

	joined := lint.json("statewright_load_workflow", map[string]any{"name": "ci", "branch": "lint"})
	assert.Equal(t, lint.json("statewright_get_state", nil), joined["state_snapshot"], "the branch's state, as its session sees it")
	delete(joined, "state_snapshot")
	assert.Equal(t, map[string]any{"loaded": "ci", "branch": "lint", "initial_state": "lint_run",
		"states":         []any{"building", "deploying", "done", "failed", "lint_done", "lint_run", "types_done", "types_run"},
		"capture_output": false, "resumed": false}, joined)
	types.json("statewright_load_workflow", map[string]any{"name": "ci", "branch": "types"})
	text, isErr = types.call("statewright_load_workflow", map[string]any{"name": "ci", "branch": "docs"})
	assert.True(t, isErr)
	assert.Equal(t, "Branch 'docs' not found. Is a fork active? The running fork's branches are: lint, types.", text)

	// A branch's session sees its branch.
	st := lint.json("statewright_get_state", nil)
	assert.Equal(t, "lint_run", st["state"])
	assert.Equal(t, []any{"read_file"}, st["allowed_tools"])
	assert.Equal(t, []any{map[string]any{"event": "FAIL", "target": "failed"}, map[string]any{"event": "PASS", "target": "lint_done"}}, st["transitions"])
	fork := st["fork"].(map[string]any)
	assert.Equal(t, true, fork["active"])
	assert.Equal(t, "lint", fork["current_branch"])
	assert.Equal(t, "types_run", types.json("statewright_get_state", nil)["state"])

	// A branch's session is listed, and may call, its branch state's tools
	// only; the parent's are every running branch's.
	assert.ElementsMatch(t, append([]string{"read_file"}, compatTools...), lint.tools())
	assert.ElementsMatch(t, append([]string{"grep"}, compatTools...), types.tools())
	assert.ElementsMatch(t, append([]string{"read_file", "grep"}, compatTools...), a.tools())
	text, isErr = lint.call("read_file", map[string]any{"path": "a.go"})
	assert.False(t, isErr, text)
	text, isErr = lint.call("grep", map[string]any{"path": "a.go"})
	assert.True(t, isErr)
	assert.Equal(t, `Tool "grep" is not available in the current workflow state ("lint_run", in branch 'lint' of the fork, which this session joined). Tools available now: read_file, statewright_get_state, statewright_transition`, text)
	text, isErr = types.call("read_file", map[string]any{"path": "a.go"})
	assert.True(t, isErr, text)
	text, isErr = a.call("grep", map[string]any{"path": "a.go"})
	assert.False(t, isErr, text)
	text, isErr = lint.call("workflow_transition", map[string]any{"event": "types.PASS"})
	assert.True(t, isErr)
	assert.Contains(t, text, "This session joined branch 'lint' of the fork: it sends the branch's events with statewright_transition")
	text, isErr = lint.transition("types.PASS", nil)
	assert.True(t, isErr, "another branch's event is not this branch's: %s", text)
	assert.Equal(t, "running", a.json("statewright_get_state", nil)["fork"].(map[string]any)["branches"].(map[string]any)["types"].(map[string]any)["status"])

	// The types sub-agent finishes its branch with BRANCH_DONE.
	res = types.json("statewright_transition", map[string]any{"event": "BRANCH_DONE:types"})
	assert.Equal(t, "types", res["branch_completed"])
	assert.Equal(t, "lint", res["next_branch"])
	assert.Equal(t, 1.0, res["completed"])
	assert.Equal(t, 1.0, res["remaining"])
	branches := a.json("statewright_get_state", nil)["fork"].(map[string]any)["branches"].(map[string]any)
	assert.Equal(t, "completed", branches["types"].(map[string]any)["status"], "the parent sees it")
	assert.Equal(t, "running", branches["lint"].(map[string]any)["status"])
	text, isErr = a.transition("BRANCH_DONE:nope", nil)
	assert.True(t, isErr)
	assert.Equal(t, "Unknown branch 'nope'. The running fork's branches are: lint, types.", text)
	text, isErr = a.transition("BRANCH_DONE:types", nil)
	assert.True(t, isErr)
	assert.Equal(t, "Cannot complete branch 'types'. Branch 'types' is completed (in state 'types_done'): it is no longer running.", text)
	// A branch's session completes its own branch only.
	text, isErr = lint.transition("BRANCH_DONE:types", nil)
	assert.True(t, isErr)
	assert.Equal(t, "Cannot complete branch 'types': this session joined branch 'lint', and completes that branch only (BRANCH_DONE:lint).", text)

	// The lint sub-agent's own event moves its branch; the join runs.
	res = lint.json("statewright_transition", map[string]any{"event": "PASS"})
	assert.Equal(t, "lint_run", res["from"])
	assert.Equal(t, "deploying", res["to"], "join all: every branch done")
	assert.Equal(t, "deploying", a.json("statewright_get_state", nil)["state"])
	text, isErr = types.transition("BRANCH_DONE:types", nil)
	assert.True(t, isErr)
	assert.Equal(t, "No active fork. Cannot complete branch 'types'. No fork is running: the workflow is in state 'deploying'.", text)
	text, isErr = types.call("statewright_load_workflow", map[string]any{"name": "ci", "branch": "types"})
	assert.True(t, isErr)
	assert.Contains(t, text, "No fork is running")
	// A branch's event after its branch ended does not move the workflow.
	text, isErr = lint.transition("SHIPPED", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "Event 'SHIPPED' was not sent: this session worked in branch 'lint', which is not running any more")
	assert.Equal(t, "deploying", a.json("statewright_get_state", nil)["state"])
	assert.Equal(t, "done", lint.json("statewright_transition", map[string]any{"event": "SHIPPED"})["to"], "the session left the branch")

	code, out, errOut := chartgate(append([]string{"history", "--json", "name:s1"}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"lint.PASS"`)
	assert.Contains(t, out, `"BRANCH_DONE:types"`)
}

// TestStatewrightCompatBranchToolsGatedAs: with two servers that have the
// same tools, listed as SERVER__NAME, a branch's session may call a
// server's tool whose NAME its branch's state allows, and no other.
func TestStatewrightCompatBranchToolsGatedAs(t *testing.T) {
	url := strconv.Quote(fileUpstreamURL(t))
	config := writeFile(t, "servers.json", `{"mcpServers": {"files": {"url": `+url+`}, "more": {"url": `+url+`}}}`)
	wf := writeFile(t, "workflow.json", forkWorkflow)
	store := filepath.Join(t.TempDir(), "state.db")
	project := []string{"--workflow", wf, "--store", store}
	args := append([]string{"serve", "--log-level", "warn", "--compat", "statewright", "--session", "s1", "--config", config}, project...)
	a := startCompat(t, store, project, args)
	lint := a.join()
	a.json("statewright_transition", map[string]any{"event": "BUILD_DONE"})
	lint.json("statewright_load_workflow", map[string]any{"name": "ci", "branch": "lint"})
	assert.ElementsMatch(t, append([]string{"files__read_file", "more__read_file"}, compatTools...), lint.tools())
	text, isErr := lint.call("more__read_file", map[string]any{"path": "a.go"})
	assert.False(t, isErr, text)
	assert.Equal(t, "read_file a.go", text)
	text, isErr = lint.call("files__grep", map[string]any{"path": "a.go"})
	assert.True(t, isErr)
	assert.Contains(t, text, `Tool "files__grep" is not available in the current workflow state ("lint_run", in branch 'lint'`)
	assert.Contains(t, text, "Tools available now: files__read_file, more__read_file, statewright_get_state")
	text, isErr = a.call("files__grep", map[string]any{"path": "a.go"})
	assert.False(t, isErr, "the parent's tools are every running branch's: %s", text)
}

// TestStatewrightCompatImplicitTransition ports gateway.rs
// implicit_transition_auto_advances_and_calls_tool and
// allowed_tool_in_current_state_does_not_implicit_transition with
// --implicit-transitions: a tool the next state allows moves the workflow
// by the one unguarded event and runs, and the transition is in the
// history; one behind an approval or a final state is refused as
// without the switch.
func TestStatewrightCompatImplicitTransition(t *testing.T) {
	a := serveCompat(t, enforcementWorkflow, "--implicit-transitions")
	text, isErr := a.call("read_file", map[string]any{"path": "a.go"})
	assert.False(t, isErr, text)
	assert.Equal(t, "planning", a.json("statewright_get_state", nil)["state"], "a tool of the state moves nothing")
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "edit_file", Arguments: map[string]any{"path": "src/main.rs"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "edit_file src/main.rs", res.Content[0].(*mcp.TextContent).Text)
	assert.Equal(t, "[chartgate: implicit transition READY: 'planning' → 'implementing', sent for edit_file]", res.Content[len(res.Content)-1].(*mcp.TextContent).Text)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "implementing", st["state"])
	assert.Equal(t, 1.0, st["transition_count"])
	code, out, errOut := chartgate(append([]string{"history", "--json", "name:s1"}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"READY"`)
	// testing allows read_file only; PASS leads to a final state.
	a.json("statewright_transition", map[string]any{"event": "DONE"})
	text, isErr = a.call("grep", map[string]any{"path": "a.go"})
	assert.True(t, isErr, text)
	assert.Equal(t, "testing", a.json("statewright_get_state", nil)["state"])

	b := serveCompat(t, approvalWorkflow, "--implicit-transitions")
	text, isErr = b.call("grep", map[string]any{"path": "a.go"})
	assert.True(t, isErr, "deployed allows every tool, behind an approval: %s", text)
	assert.Equal(t, "working", b.json("statewright_get_state", nil)["state"])

	code, _, errOut = chartgate("serve", "--workflow", writeFile(t, "w.json", enforcementWorkflow), "--implicit-transitions")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--implicit-transitions needs --compat statewright")
}

// TestStatewrightCompatModel ports custom_tools.rs
// get_state_returns_correct_info, get_state_after_transition,
// get_state_includes_model_when_defined,
// get_state_model_null_when_not_defined,
// get_state_model_changes_after_transition,
// get_state_inherits_default_model_when_state_has_none,
// get_state_state_model_overrides_default and
// get_state_no_default_model_when_meta_absent.
func TestStatewrightCompatModel(t *testing.T) {
	a := serveCompat(t, `{
  "id": "model-routing", "initial": "diagnose",
  "states": {
    "diagnose": {"allowed_tools": ["read_file", "grep"], "model": "claude-haiku-4-5-20251001", "max_iterations": 8,
      "instructions": "Read files and plan your approach.", "on": {"DIAGNOSED": "propose_fix"}},
    "propose_fix": {"allowed_tools": ["read_file"], "model": "anthropic/claude-opus-4-6", "max_iterations": 3, "on": {"DONE": "execute"}},
    "execute": {"allowed_tools": ["read_file", "edit_file"], "on": {"DONE": "completed"}},
    "completed": {"type": "final"}
  }
}`)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "diagnose", st["state"])
	assert.Equal(t, false, st["is_final"])
	assert.Equal(t, 0.0, st["iteration"])
	assert.Equal(t, 8.0, st["max_iterations"])
	assert.Equal(t, "Read files and plan your approach.", st["instructions"])
	assert.Equal(t, []any{"read_file", "grep"}, st["allowed_tools"])
	assert.Equal(t, "claude-haiku-4-5-20251001", st["model"])
	assert.Nil(t, st["default_model"])
	a.json("statewright_transition", map[string]any{"event": "DIAGNOSED"})
	a.call("read_file", map[string]any{"path": "a"})
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "anthropic/claude-opus-4-6", st["model"])
	assert.Equal(t, 1.0, st["iteration"])
	assert.Equal(t, 3.0, st["max_iterations"])
	a.json("statewright_transition", map[string]any{"event": "DONE"})
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "execute", st["state"])
	assert.Nil(t, st["model"])

	b := serveCompat(t, `{
  "id": "default-model", "initial": "planning", "meta": {"default_model": "anthropic/claude-opus-4-6"},
  "states": {
    "planning": {"allowed_tools": ["read_file"], "on": {"READY": "grunt_work"}},
    "grunt_work": {"allowed_tools": ["read_file", "edit_file"], "model": "claude-haiku-4-5-20251001", "on": {"DONE": "completed"}},
    "completed": {"type": "final"}
  }
}`)
	st = b.json("statewright_get_state", nil)
	assert.Equal(t, "anthropic/claude-opus-4-6", st["model"])
	assert.Equal(t, "anthropic/claude-opus-4-6", st["default_model"])
	b.json("statewright_transition", map[string]any{"event": "READY"})
	st = b.json("statewright_get_state", nil)
	assert.Equal(t, "claude-haiku-4-5-20251001", st["model"])
	assert.Equal(t, "anthropic/claude-opus-4-6", st["default_model"])
}

// TestInstallCompatAmbiguousFormat: chartgate install --compat statewright
// with a workflow file both formats read (states with only "on" and
// "type": "final") asks for --format instead of recording xstate, writes
// nothing, and with --format records it and passes it to the gateway and
// the hooks.
func TestInstallCompatAmbiguousFormat(t *testing.T) {
	chartgateOnPath(t)
	dir := projectWith(t, `{
  "id": "plain", "initial": "a",
  "states": {"a": {"on": {"GO": {"target": "b"}}}, "b": {"type": "final"}}
}`)
	code, _, errOut := chartgate("install", "claude-code", "--dir", dir, "--compat", "statewright")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, ".chartgate/workflow.json: the file reads as a Statewright workflow and as an XState machine")
	assert.Contains(t, errOut, "--format statewright or --format xstate")
	_, err := os.Stat(filepath.Join(dir, ".claude"))
	assert.True(t, os.IsNotExist(err), "nothing written")

	code, _, errOut = chartgate("install", "claude-code", "--dir", dir, "--compat", "statewright", "--format", "statewright")
	require.Equal(t, exitOK, code, errOut)
	rec, err := os.ReadFile(filepath.Join(dir, ".chartgate", "installed.json"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"workflow": ".chartgate/workflow.json", "format": "statewright"}`, string(rec))
	settings, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	require.NoError(t, err)
	assert.Contains(t, string(settings), "hook claude-code --compat statewright --format statewright")
	mcpJSON, err := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	require.NoError(t, err)
	assert.Contains(t, string(mcpJSON), `"--format"`)
}

// TestStatewrightCompatPause ports gateway.rs's statewright_pause and
// statewright_deactivate answers ({paused, state, workflow, run_id,
// message}; {deactivated}) where they differ from Statewright by design:
// the workflow is held in its paused state (no tool runs, recorded in its
// run history) until a person resumes it with chartgate resume; the agent
// cannot resume it nor switch enforcement off.
func TestStatewrightCompatPause(t *testing.T) {
	a := serveCompat(t, enforcementWorkflow)
	a.json("statewright_transition", map[string]any{"event": "READY"})
	res := a.json("statewright_pause", nil)
	assert.Equal(t, true, res["paused"])
	assert.Equal(t, "implementing", res["state"])
	assert.Equal(t, "test", res["workflow"])
	assert.Contains(t, res["message"], "chartgate resume name:s1")

	assert.ElementsMatch(t, compatTools, a.tools(), "no upstream tool while paused")
	text, isErr := a.call("write_file", map[string]any{"path": "a.go"})
	assert.True(t, isErr, "no tool runs while paused: %s", text)
	text, isErr = a.transition("DONE", nil)
	assert.True(t, isErr, text)
	text, isErr = a.transition("chartgate.resume", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "is reserved")
	text, isErr = a.call("statewright_deactivate", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "already paused")
	assert.Equal(t, "statewright:paused", a.json("statewright_get_state", nil)["state"])

	// A person resumes it; it is back where it was.
	key := filepath.Join(t.TempDir(), "approver.key")
	code, _, errOut := chartgate("approve", "--init", "--key", key)
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = chartgate(append([]string{"resume", "name:s1", "--yes", "--key", filepath.Join(t.TempDir(), "none.key")}, a.project...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "--yes needs the approver key")
	code, out, errOut := chartgate(append([]string{"resume", "name:s1", "--yes", "--key", key}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "resumed workflow name:s1 in state implementing\n", out)
	text, isErr = a.call("write_file", map[string]any{"path": "a.go"})
	require.False(t, isErr, text)
	code, _, errOut = chartgate(append([]string{"resume", "name:s1", "--yes", "--key", key}, a.project...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "is not paused")

	res = a.json("statewright_deactivate", nil)
	assert.Equal(t, true, res["deactivated"])
	_, isErr = a.call("read_file", map[string]any{"path": "a.go"})
	assert.True(t, isErr, "deactivate holds the workflow too: enforcement stays on")

	code, out, errOut = chartgate(append([]string{"history", "--json", "name:s1"}, a.project...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"by":"statewright_pause"`)
	assert.Contains(t, out, `"by":"chartgate resume"`)
	assert.Contains(t, out, `"by":"statewright_deactivate"`)
}

// TestStatewrightCompatEngineTransitions ports transition.rs
// full_lifecycle_draft_to_delivered, self_transition_stays_in_same_state,
// approval_flag_propagated, safe_next_does_not_override_valid_transitions,
// safe_next_does_not_override_fail, no_safe_next_still_errors_on_unrecognized,
// guarded_transition_takes_first_matching_branch,
// guarded_transition_no_match_returns_error and context_patch_merges_fields
// through statewright_transition.
func TestStatewrightCompatEngineTransitions(t *testing.T) {
	order := strings.Replace(orderWorkflow, `"context": {"item_count": 0, "items": []}`, `"context": {"item_count": 2, "payment_method": "card_4242", "b": 2}`, 1)
	a := serveCompat(t, order)
	res := a.json("statewright_transition", map[string]any{"event": "ADD_ITEM"})
	assert.Equal(t, true, res["transitioned"], "a self-transition is a transition")
	assert.Equal(t, "draft", res["to"])
	for _, step := range [][2]string{{"SUBMIT", "pending_payment"}, {"CONFIRM_PAYMENT", "confirmed"}, {"SHIP", "shipped"}} {
		assert.Equal(t, step[1], a.json("statewright_transition", map[string]any{"event": step[0], "data": map[string]any{"b": 99, "c": 3}})["to"], step[0])
	}
	text, isErr := a.transition("GIBBERISH", nil)
	assert.True(t, isErr, "no safe_next: an unknown event is refused")
	assert.Contains(t, text, "GIBBERISH")
	assert.Equal(t, "delivered", a.json("statewright_transition", map[string]any{"event": "DELIVER"})["to"])
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, true, st["is_final"])
	ctx := st["context"].(map[string]any)
	assert.Equal(t, 99.0, ctx["b"], "data merged, field by field")
	assert.Equal(t, 3.0, ctx["c"])
	assert.Equal(t, 2.0, ctx["item_count"])

	safeNext := `{"id": "test", "initial": "working", "states": {
  "working": {"safe_next": "fallback", "on": {"FINISH": "done", "FAIL": "failed"}},
  "done": {"type": "final"}, "failed": {"type": "final"}, "fallback": {"type": "final"}}, "guards": {}}`
	for ev, to := range map[string]string{"FINISH": "done", "FAIL": "failed", "COMPLETE": "fallback"} {
		b := serveCompat(t, safeNext)
		assert.Equal(t, to, b.json("statewright_transition", map[string]any{"event": ev})["to"], ev)
	}

	approval := serveCompat(t, `{"id": "agent", "initial": "planning", "states": {
  "planning": {"on": {"READY": {"target": "executing", "requires_approval": true, "approval_message": "Agent wants to start executing"}}},
  "executing": {"type": "final"}}, "guards": {}}`)
	res = approval.json("statewright_transition", map[string]any{"event": "READY"})
	assert.Equal(t, true, res["requires_approval"])
	assert.Equal(t, "Agent wants to start executing", res["approval_message"])

	scout := func(count int) string {
		return `{"id": "scout", "initial": "posting", "context": {"post_count": ` + strconv.Itoa(count) + `}, "states": {
  "posting": {"on": {"POSTED": [{"guard": "under_limit", "target": "evaluating"}, {"guard": "at_limit", "target": "reporting"}], "GO": [{"guard": "never_true", "target": "evaluating"}]}},
  "evaluating": {"type": "final"}, "reporting": {"type": "final"}},
  "guards": {"under_limit": {"field": "post_count", "op": "lt", "value": 5}, "at_limit": {"field": "post_count", "op": "gte", "value": 5},
    "never_true": {"field": "x", "op": "eq", "value": "impossible"}}}`
	}
	assert.Equal(t, "evaluating", serveCompat(t, scout(2)).json("statewright_transition", map[string]any{"event": "POSTED"})["to"])
	c := serveCompat(t, scout(5))
	assert.Equal(t, []any{
		map[string]any{"event": "GO", "target": "evaluating"},
		map[string]any{"event": "POSTED", "target": "evaluating"},
	}, c.json("statewright_get_state", nil)["transitions"], "a guarded array's first target")
	text, isErr = c.transition("GO", nil)
	assert.True(t, isErr)
	assert.Contains(t, text, "guard 'never_true' failed: x eq \"impossible\", and x is not set")
	assert.Equal(t, "reporting", c.json("statewright_transition", map[string]any{"event": "POSTED"})["to"])
}

// TestStatewrightCompatForkFailure ports transition.rs's fork machine with
// a failing branch (lint_failed): with join "all", a branch that ends in
// a final state other than its terminal fails the fork, to on_fail; the
// sub-agent in that branch sends its own FAIL.
func TestStatewrightCompatForkFailure(t *testing.T) {
	a := serveCompat(t, `{
  "id": "ci-pipeline", "initial": "building", "context": {},
  "states": {
    "building": {"on": {"BUILD_DONE": {"fork": {
      "branches": {"lint": {"initial": "lint_run", "terminal": "lint_done"}, "types": {"initial": "types_run", "terminal": "types_done"}},
      "join": "all", "on_complete": "deploying", "on_fail": "failed"}}}},
    "lint_run": {"on": {"PASS": "lint_done", "FAIL": "lint_failed"}},
    "lint_done": {"type": "final"}, "lint_failed": {"type": "final"},
    "types_run": {"on": {"PASS": "types_done", "FAIL": "types_failed"}},
    "types_done": {"type": "final"}, "types_failed": {"type": "final"},
    "deploying": {"on": {"DEPLOYED": "completed"}},
    "completed": {"type": "final"}, "failed": {"type": "final"}
  },
  "guards": {}
}`)
	res := a.json("statewright_transition", map[string]any{"event": "BUILD_DONE"})
	assert.Equal(t, true, res["forked"])
	assert.Equal(t, map[string]any{"initial": "lint_run", "terminal": "lint_done", "state": "lint_run", "status": "running"},
		res["branches"].(map[string]any)["lint"])
	sub := a.join()
	sub.json("statewright_load_workflow", map[string]any{"name": "ci-pipeline", "branch": "lint"})
	res = sub.json("statewright_transition", map[string]any{"event": "FAIL"})
	assert.Equal(t, "failed", res["to"], "join all: one failed branch fails the fork")
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "failed", st["state"])
	assert.Equal(t, true, st["is_final"])
	assert.NotContains(t, st, "fork")
}

// TestStatewrightCompatHookInterceptors ports interceptors.rs
// edit_guard_allows_small_edits, edit_guard_blocks_large_edits,
// bash_guard_allows_whitelisted, bash_guard_blocks_non_whitelisted,
// file_scope_blocks_after_limit, file_scope_allows_re_edit_same_file,
// bash_cat_redirect_blocked_in_planning, bash_cat_read_allowed_in_planning,
// bash_grep_allowed_in_planning, bash_sed_inplace_blocked_in_planning and
// bash_rm_blocked_in_planning through chartgate hook claude-code --compat
// statewright, with Claude Code's hook JSON.
func TestStatewrightCompatHookInterceptors(t *testing.T) {
	project := projectWith(t, `{
  "id": "test", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["Read", "Grep", "Edit", "Bash"], "max_edit_lines": 10, "allowed_commands": ["pytest", "cargo test"],
      "max_files_per_state": 3, "on": {"READY": "exploring"}},
    "exploring": {"allowed_tools": ["Read", "Grep", "Glob", "Bash"], "on": {"DONE": "completed"}},
    "completed": {"type": "final"}
  },
  "guards": {}
}`)
	hookEvent := func(event, tool string, input map[string]any) string {
		t.Helper()
		in := map[string]any{"session_id": "s1", "cwd": project, "hook_event_name": event, "tool_name": tool, "tool_input": input}
		if event == "PostToolUse" {
			in["tool_response"] = map[string]any{"success": true}
		}
		data, err := json.Marshal(in)
		require.NoError(t, err)
		code, out, errOut := chartgateIn(string(data), "hook", "claude-code", "--compat", "statewright")
		require.Equal(t, 0, code, errOut)
		return out
	}
	edit := func(path, oldS, newS string) string {
		t.Helper()
		input := map[string]any{"file_path": filepath.Join(project, path), "old_string": oldS, "new_string": newS}
		out := hookEvent("PreToolUse", "Edit", input)
		if out == "" {
			hookEvent("PostToolUse", "Edit", input)
		}
		return out
	}
	const deny = `"permissionDecision":"deny"`
	assert.Empty(t, edit("a.py", "a\nb", "a\nb\nc"), "a small edit")
	var big []string
	for i := range 20 {
		big = append(big, "line "+strconv.Itoa(i))
	}
	out := edit("a.py", "a", strings.Join(big, "\n"))
	assert.Contains(t, out, deny, "a 20-line edit over max_edit_lines 10")
	assert.Contains(t, out, "10")
	assert.Empty(t, hookEvent("PreToolUse", "Bash", map[string]any{"command": "pytest -x tests/"}))
	assert.Contains(t, hookEvent("PreToolUse", "Bash", map[string]any{"command": "rm -rf /"}), deny)
	assert.Empty(t, edit("b.py", "x", "y"))
	assert.Empty(t, edit("c.py", "x", "y"))
	out = edit("d.py", "x", "y")
	assert.Contains(t, out, deny, "a fourth file over max_files_per_state 3")
	assert.Empty(t, edit("a.py", "x", "y"), "a file edited before")

	// Without allowed_commands, a shell line may do only what the
	// state's tools allow (Statewright's bash classifier).
	project = projectWith(t, `{
  "id": "test", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["Read", "Grep", "Glob", "Bash"], "on": {"READY": "implementing"}},
    "implementing": {"allowed_tools": ["Read", "Edit", "Write", "Bash"], "on": {"DONE": "completed"}},
    "completed": {"type": "final"}
  },
  "guards": {}
}`)
	for _, allowed := range []string{"cat src/main.rs", "grep -rn 'TODO' src/"} {
		assert.Empty(t, hookEvent("PreToolUse", "Bash", map[string]any{"command": allowed}), allowed)
	}
	for _, refused := range []string{"cat > file.rs << 'EOF'\nfn main() {}\nEOF", "sed -i 's/old/new/' file.rs", "rm -rf target/"} {
		assert.Contains(t, hookEvent("PreToolUse", "Bash", map[string]any{"command": refused}), deny, refused)
	}
}

// projectWith returns a project folder whose .chartgate/workflow.json is
// workflowJSON.
func projectWith(t *testing.T, workflowJSON string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".chartgate"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".chartgate", "workflow.json"), []byte(workflowJSON), 0o644))
	return dir
}

// TestStatewrightCompatEnforcement ports enforcement.rs
// allow_tool_in_current_state, block_tool_not_in_current_state,
// block_includes_reason_with_tool_and_state and
// unrestricted_state_allows_everything through chartgate serve --compat
// statewright; and implicit_transition_when_blocked_tool_in_next_state,
// where chartgate differs by design (the table in the workflow package's
// docs): the call is refused, naming the event that makes the tool
// available, and the workflow stays where it is.
func TestStatewrightCompatEnforcement(t *testing.T) {
	a := serveCompat(t, `{
  "id": "test", "initial": "planning",
  "states": {
    "planning": {"allowed_tools": ["read_file", "grep"], "max_iterations": 3, "on": {"READY": "implementing", "FAIL": "failed", "LOOSE": "unrestricted"}},
    "implementing": {"allowed_tools": ["read_file", "edit_file", "write_file"], "max_iterations": 6, "on": {"DONE": "testing", "FAIL": "failed"}},
    "testing": {"allowed_tools": ["read_file"], "on": {"PASS": "completed", "FAIL_TEST": "implementing"}},
    "unrestricted": {"on": {"DONE": "completed"}},
    "completed": {"type": "final"},
    "failed": {"type": "final"}
  },
  "guards": {}
}`)
	text, isErr := a.call("read_file", map[string]any{"path": "a"})
	assert.False(t, isErr, text)
	assert.ElementsMatch(t, append([]string{"read_file", "grep"}, compatTools...), a.tools())
	text, isErr = a.call("edit_file", map[string]any{"path": "a"})
	assert.True(t, isErr)
	assert.Contains(t, text, `"edit_file"`)
	assert.Contains(t, text, `"planning"`)
	assert.Contains(t, text, `call statewright_transition with event "READY"`, "the event that makes it available, with Statewright's tool")
	assert.Contains(t, text, "Tools available now: ")
	assert.Contains(t, text, "grep")
	assert.Equal(t, "planning", a.json("statewright_get_state", nil)["state"], "no implicit transition")

	a.json("statewright_transition", map[string]any{"event": "LOOSE"})
	for _, tool := range []string{"read_file", "grep", "edit_file", "write_file"} {
		text, isErr := a.call(tool, map[string]any{"path": "a"})
		assert.False(t, isErr, "%s in a state without allowed_tools: %s", tool, text)
	}
}

// TestStatewrightCompatSession ports session.rs
// create_session_sets_initial_state, increment_iteration,
// update_state_resets_iterations, is_final_state,
// pending_approval_initially_none, set_pending_approval,
// has_pending_approval and clear_pending_approval_returns_pending through
// chartgate serve --compat statewright, statewright_get_state and a
// person's chartgate approve.
func TestStatewrightCompatSession(t *testing.T) {
	a := serveCompat(t, enforcementWorkflow)
	st := a.json("statewright_get_state", nil)
	assert.Equal(t, "planning", st["state"])
	assert.Equal(t, 0.0, st["iteration"])
	assert.Equal(t, 0.0, st["transition_count"])
	assert.Equal(t, false, st["is_final"])
	for range 2 {
		_, isErr := a.call("read_file", map[string]any{"path": "a"})
		require.False(t, isErr)
	}
	assert.Equal(t, 2.0, a.json("statewright_get_state", nil)["iteration"])
	a.json("statewright_transition", map[string]any{"event": "READY"})
	st = a.json("statewright_get_state", nil)
	assert.Equal(t, "implementing", st["state"])
	assert.Equal(t, 0.0, st["iteration"])
	assert.Equal(t, 1.0, st["transition_count"])
	a.json("statewright_transition", map[string]any{"event": "FAIL"})
	assert.Equal(t, true, a.json("statewright_get_state", nil)["is_final"])

	b := serveCompat(t, approvalWorkflow)
	assert.NotContains(t, b.json("statewright_get_state", nil), "pending_approval")
	res := b.json("statewright_transition", map[string]any{"event": "DEPLOY"})
	id, _ := res["approval_id"].(string)
	pending := b.json("statewright_get_state", nil)["pending_approval"].(map[string]any)
	assert.Equal(t, id, pending["approval_id"])
	assert.Equal(t, "working", pending["from_state"])
	assert.Equal(t, "deployed", pending["to_state"])
	key := filepath.Join(t.TempDir(), "approver.key")
	code, _, errOut := chartgate("approve", "--init", "--key", key)
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = chartgate(append([]string{"approve", id, "--yes", "--key", key}, b.project...)...)
	require.Equal(t, exitOK, code, errOut)
	st = b.json("statewright_get_state", nil)
	assert.NotContains(t, st, "pending_approval", "cleared once answered")
	assert.Equal(t, "deployed", st["state"])
}

// TestStatewrightCompatValidate ports validate.rs's tests through
// chartgate validate --format statewright: each file is accepted, or
// refused with an error naming what validate_definition's names.
func TestStatewrightCompatValidate(t *testing.T) {
	const fork = `{"id": "pipeline", "initial": "building", "states": {
  "building": {"on": {"BUILD_DONE": {"fork": {"branches": {"lint": {"initial": "lint_run", "terminal": "lint_done"}%s}, "on_complete": "%s"}}}},
  "lint_run": {"on": {"PASS": "lint_done"}}, "lint_done": {"type": "final"},
  "types_run": {"on": {"PASS": "types_done"}}, "types_done": {"type": "final"},
  "deploying": {"on": {"DONE": "completed"}}, "completed": {"type": "final"}}, "guards": {}}`
	const interrupt = `{"id": "tdd", "initial": "implementing", "states": {
  "implementing": {"on": {"DONE": "testing", "FAIL": "failed"}},
  "testing": {"on": {"PASS": "completed", "FAIL": "implementing"}},
  "pb_validating": {"on": {"VALIDATED": "$return", "FAIL": "failed"}},
  "completed": {"type": "final"}, "failed": {"type": "final"}},
  "guards": {}, "interrupts": {"pb_check": {"trigger": {"file_pattern": "site/pb/**/*.js"}, "target": "%s"}}}`
	for _, c := range []struct {
		name, file, err string // err "": accepted
	}{
		{"accepts_valid_machine", `{"id": "test", "initial": "start", "states": {"start": {"on": {"GO": "end", "FAIL": "failed"}}, "end": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, ""},
		{"rejects_missing_initial_state_in_states", `{"id": "bad", "initial": "nonexistent", "states": {"start": {"on": {"GO": "end"}}, "end": {"type": "final"}}, "guards": {}}`, "nonexistent"},
		{"rejects_no_final_state", `{"id": "bad", "initial": "start", "states": {"start": {"on": {"GO": "middle"}}, "middle": {"on": {"GO": "start"}}}, "guards": {}}`, "final"},
		{"rejects_unreachable_states", `{"id": "bad", "initial": "start", "states": {"start": {"on": {"GO": "end"}}, "end": {"type": "final"}, "orphan": {"on": {"GO": "end"}}}, "guards": {}}`, "unreachable"},
		{"rejects_transition_to_nonexistent_state", `{"id": "bad", "initial": "start", "states": {"start": {"on": {"GO": "nowhere"}}, "end": {"type": "final"}}, "guards": {}}`, "nowhere"},
		{"rejects_undefined_guard_reference", `{"id": "bad", "initial": "start", "states": {"start": {"on": {"GO": {"target": "end", "guard": "nonexistent_guard"}}}, "end": {"type": "final"}}, "guards": {}}`, "nonexistent_guard"},
		{"accepts_complex_agent_machine", `{"id": "bug-fix", "initial": "planning", "meta": {"task_type": "bug_fix", "danger_level": "moderate"}, "states": {
  "planning": {"allowed_tools": ["read_file", "search_files"], "instructions": "Analyze the bug", "on": {"PLAN_READY": "implementing", "FAIL": "failed"}},
  "implementing": {"allowed_tools": ["read_file", "write_file"], "on": {"DONE": "testing", "FAIL": "failed"}},
  "testing": {"allowed_tools": ["read_file", "run_test"], "on": {"TESTS_PASS": {"target": "review", "requires_approval": true}, "TESTS_FAIL": "implementing", "FAIL": "failed"}},
  "review": {"on": {"APPROVED": "completed", "REJECTED": "implementing"}},
  "completed": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`, ""},
		{"rejects_interrupt_target_nonexistent", fmt.Sprintf(interrupt, "ghost_state"), "ghost_state"},
		{"interrupt_target_state_not_flagged_unreachable, return_target_not_flagged_as_nonexistent, accepts_valid_interrupt_workflow", fmt.Sprintf(interrupt, "pb_validating"), ""},
		{"accepts_valid_fork_workflow, fork_branch_states_not_flagged_unreachable", fmt.Sprintf(fork, `, "types": {"initial": "types_run", "terminal": "types_done"}`, "deploying"), ""},
		{"rejects_fork_with_nonexistent_branch_initial", strings.Replace(fmt.Sprintf(fork, "", "deploying"), `"initial": "lint_run"`, `"initial": "ghost"`, 1), "ghost"},
		{"rejects_fork_with_nonexistent_on_complete", fmt.Sprintf(fork, "", "nowhere"), "nowhere"},
	} {
		file := writeFile(t, "workflow.json", c.file)
		code, out, errOut := chartgate("validate", "--format", "statewright", file)
		if c.err == "" {
			assert.Equal(t, exitOK, code, "%s: %s%s", c.name, out, errOut)
			continue
		}
		assert.NotEqual(t, exitOK, code, c.name)
		assert.Contains(t, out+errOut, c.err, c.name)
	}
}
