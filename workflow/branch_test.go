package workflow_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// branchWorkflow forks into two branches whose states allow different
// tools; lint_run denies write_file.
const branchWorkflow = `{"id": "ci", "initial": "building", "states": {
  "building": {"on": {"BUILD_DONE": {"fork": {
    "branches": {"lint": {"initial": "lint_run", "terminal": "lint_done"}, "types": {"initial": "types_run", "terminal": "types_done"}},
    "join": "all", "on_complete": "deploying", "on_fail": "failed"}}}},
  "lint_run": {"allowed_tools": ["read_*", "write_file"], "disallowed_tools": ["write_file"], "on": {"PASS": "lint_done", "FAIL": "failed"}},
  "lint_done": {"type": "final"},
  "types_run": {"allowed_tools": ["grep"], "on": {"PASS": "types_done", "FAIL": "failed"}},
  "types_done": {"type": "final"},
  "deploying": {"on": {"SHIPPED": "done"}},
  "done": {"type": "final"}, "failed": {"type": "final"}}, "guards": {}}`

// TestBranchTools: a running branch allows its own state's tools, by
// either of a tool's names, less what it denies; a branch that is not
// running, or no fork, gives none.
func TestBranchTools(t *testing.T) {
	w := mustLoad(t, branchWorkflow, nil)
	r := start(t, w)
	_, _, ok := w.BranchTools(r.s, "lint")
	assert.False(t, ok, "no fork runs")
	require.True(t, r.send("BUILD_DONE", nil))

	lint, listed, ok := w.BranchTools(r.s, "lint")
	require.True(t, ok)
	assert.Equal(t, []string{"read_*", "write_file"}, listed)
	assert.True(t, lint("read_file"))
	assert.True(t, lint("files__read_file", "read_file"), "a gateway's SERVER__NAME is gated by NAME")
	assert.False(t, lint("grep"), "the other branch's tool")
	assert.False(t, lint("write_file"), "denied")
	types, _, ok := w.BranchTools(r.s, "types")
	require.True(t, ok)
	assert.True(t, types("grep"))
	assert.False(t, types("read_file"))
	_, _, ok = w.BranchTools(r.s, "docs")
	assert.False(t, ok, "no such branch")

	require.True(t, r.send("lint.PASS", nil))
	_, _, ok = w.BranchTools(r.s, "lint")
	assert.False(t, ok, "a completed branch is not running")
}

// TestImplicitEvent: the one unguarded event to a state that allows the
// tool, and none when the tool is allowed now, when two events lead to
// it, when the event is guarded, needs approval, or leads to a final
// state.
func TestImplicitEvent(t *testing.T) {
	w := mustLoad(t, `{"id": "t", "initial": "planning", "states": {
	  "planning": {"allowed_tools": ["read_file"], "on": {"READY": "implementing", "REVIEW": {"target": "review", "requires_approval": true},
	    "CHECK": {"target": "checking", "guard": "ok"}, "SHIP": "shipping", "ALSO": "shipping", "FAIL": "failed"}},
	  "implementing": {"allowed_tools": ["read_file", "edit_file"], "on": {"DONE": "failed"}},
	  "review": {"allowed_tools": ["approve_tool"], "on": {"DONE": "failed"}},
	  "checking": {"allowed_tools": ["check_tool"], "on": {"DONE": "failed"}},
	  "shipping": {"allowed_tools": ["ship_tool"], "on": {"DONE": "failed"}},
	  "failed": {"type": "final"}},
	  "guards": {"ok": {"field": "ok", "op": "eq", "value": true}}}`, nil)
	r := start(t, w)
	ev, ok := w.ImplicitEvent(r.s, "edit_file")
	assert.True(t, ok)
	assert.Equal(t, "READY", ev)
	ev, ok = w.ImplicitEvent(r.s, "files__edit_file", "edit_file")
	assert.True(t, ok, "by either name")
	assert.Equal(t, "READY", ev)
	for _, tool := range []string{"read_file", "approve_tool", "check_tool", "ship_tool", "nope"} {
		_, ok := w.ImplicitEvent(r.s, tool)
		assert.False(t, ok, tool)
	}
}
