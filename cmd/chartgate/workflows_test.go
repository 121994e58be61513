package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// releaseWorkflow is a Statewright workflow whose deploy needs approval.
const releaseWorkflow = `{
  "id": "release", "initial": "build",
  "states": {
    "build": {"allowed_tools": ["Read", "Bash"], "on": {"BUILT": {"target": "deploy", "requires_approval": true, "approval_message": "ship it?"}}},
    "deploy": {"on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// TestOutOfBandCommands: status lists the workflows of a SQLite store with
// the approval they wait for, approve approves it (recording who), history
// prints the run history.
func TestOutOfBandCommands(t *testing.T) {
	outOfBand(t, filepath.Join(t.TempDir(), "state.db"))
}

// outOfBand runs TestOutOfBandCommands on a store (a --store value).
func outOfBand(t *testing.T, store string) {
	wf := writeFile(t, "workflow.json", releaseWorkflow)
	flags := []string{"--workflow", wf, "--store", store}

	// An agent session moved the workflow to where BUILT waits for approval.
	p, err := openProject(projectFlagsOf(wf, store))
	require.NoError(t, err)
	g, err := p.gate()
	require.NoError(t, err)
	_, err = g.Send(context.Background(), mcpbind.Ref{Name: "s1"}, statechart.Event{Type: "BUILT", Data: map[string]any{"input": map[string]any{"rationale": "tests pass"}}}, "agent")
	require.NoError(t, err)
	require.NoError(t, p.close())

	code, out, errOut := chartgate(append([]string{"status"}, flags...)...)
	assert.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, regexp.MustCompile(`^name:s1  build:BUILT:approval \(active\)  last moved \S+  waits for approval: build -> deploy on BUILT: ship it\?\n$`), out)

	code, out, errOut = chartgate(append([]string{"approve", "name:s1", "--by", "ada"}, flags...)...)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "approved: build:BUILT:approval -> deploy\n", out)

	code, _, errOut = chartgate(append([]string{"approve", "name:s1"}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, "chartgate approve: workflow name:s1 waits for no approval\n", errOut)

	code, out, errOut = chartgate(append([]string{"history", "name:s1"}, flags...)...)
	assert.Equal(t, exitOK, code, errOut)
	got := lines(out)
	require.Len(t, got, 3, out)
	assert.Regexp(t, `  BUILT: build -> build:BUILT:approval \(by agent\)  rationale: "tests pass"$`, got[0])
	assert.Regexp(t, `  chartgate.approve: build:BUILT:approval -> deploy \(by ada\)$`, got[1])
	assert.Equal(t, "now: deploy (active)", got[2])

	code, out, _ = chartgate(append([]string{"history", "name:s1", "--json"}, flags...)...)
	assert.Equal(t, exitOK, code)
	var last mcpbind.Transition
	require.NoError(t, json.Unmarshal([]byte(lines(out)[1]), &last))
	assert.Equal(t, "ada", last.By)

	code, _, errOut = chartgate("history", "--workflow", filepath.Join(t.TempDir(), "missing.json"), "x")
	assert.Equal(t, exitFail, code)
	assert.True(t, strings.Contains(errOut, "reading the workflow"), errOut)
}

func projectFlagsOf(wf, store string) projectFlags {
	format, subflows, durable := "auto", "", false
	return projectFlags{workflow: &wf, store: &store, format: &format, subflows: &subflows, durable: &durable}
}

// TestProjectCommandsRefuseWarnings: a workflow is loaded strictly (what
// XState would ignore may leave tools ungated): status, history and approve
// refuse one with warnings, naming every problem.
func TestProjectCommandsRefuseWarnings(t *testing.T) {
	wf := writeFile(t, "workflow.json", `{"id": "w", "initial": "a", "tsTypes": {},
  "states": {"a": {"on": {"GO": {"target": "b", "cond": "ready"}}}, "b": {"type": "final"}}}`)
	flags := []string{"--workflow", wf, "--store", "memory"}
	for _, args := range [][]string{{"status"}, {"history", "w:1"}} {
		code, _, errOut := chartgate(append(args, flags...)...)
		assert.Equal(t, exitFail, code, args)
		assert.Equal(t, []string{
			"chartgate: " + wf + ": 2 errors:",
			"\ttsTypes: \"tsTypes\" is ignored: XState v4's typegen, for TypeScript only",
			"\tstates.a.on.GO.cond: \"cond\" is ignored: it is XState v4's name of \"guard\", so the transition is unguarded (XState's development build refuses it)",
		}, lines(errOut), args)
	}
}
