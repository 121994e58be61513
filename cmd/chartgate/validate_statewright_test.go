// This file tests validate on Statewright workflows: detection, --format,
// errors at their paths in the file, --tools and --subflows.

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const statewrightFile = `{
  "id": "fix",
  "initial": "plan",
  "states": {
    "plan": {"allowed_tools": ["Read", "Grep"], "max_iterations": 5, "on": {"READY": "work", "FAIL": "failed"}},
    "work": {"allowed_tools": ["Read", "Edit"], "on": {"DONE": {"fork": {
      "branches": {"lint": {"initial": "lint", "terminal": "lint_ok"}},
      "on_complete": "done"
    }}, "DEBUG": {"invoke": "debugger", "on_complete": "work"}}},
    "lint": {"allowed_tools": ["Bash", "Read"], "on": {"OK": "lint_ok"}},
    "lint_ok": {"type": "final"},
    "done": {"type": "final"},
    "failed": {"type": "final"}
  },
  "guards": {}
}`

const debuggerFile = `{"id": "debugger", "initial": "look", "states": {"look": {"allowed_tools": ["Read"], "on": {"FOUND": "found"}}, "found": {"type": "final"}}}`

func TestValidateStatewright(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "debugger.json"), []byte(debuggerFile), 0o644))
	file := writeFile(t, "fix.json", statewrightFile)

	code, out, errOut := chartgate("validate", file, "--subflows", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, file+": ok (Statewright workflow, 6 states)\n", out)

	// Without the subflow (by default, in the file's directory), the
	// invoke cannot be checked.
	code, out, _ = chartgate("validate", file)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, file+`: states.work.on.DEBUG.invoke: subflow "debugger": `+filepath.Join(filepath.Dir(file), "debugger.json")+": no such file or directory\n", out)
	code, out, _ = chartgate("validate", file, "--subflows", t.TempDir())
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, file+`: states.work.on.DEBUG.invoke: subflow "debugger": `)
	assert.Contains(t, out, "debugger.json: no such file or directory")

	// --tools: the names of the file are checked against the server's, at
	// their place in the file, once (lint is also copied into the fork).
	code, out, _ = chartgate("validate", file, "--subflows", dir, "--tools", "Read,Grep,Edit,Bsh")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, []string{file + `: states.lint.allowed_tools[0]: "Bash" matches no tool of the server (did you mean "Bsh"?)`}, lines(out))

	// Every error, with its path in the file.
	bad := writeFile(t, "bad.json", `{
  "id": "bad", "initial": "plan",
  "states": {
    "plan": {"allowed_tool": ["Read"], "on": {"GO": [{"target": "done"}, {"target": "dnoe", "guard": "ready"}]}},
    "done": {"type": "final"}
  },
  "guards": {}
}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, []string{
		bad + `: states.plan.allowed_tool: unknown key "allowed_tool" (did you mean "allowed_tools"?)`,
		bad + `: states.plan.on.GO[1].target: "dnoe" is not a state (did you mean "done"?)`,
		bad + `: states.plan.on.GO[1].guard: guard "ready" is not defined in "guards"`,
	}, lines(out))
}

func TestValidateFormatFlag(t *testing.T) {
	// A file both formats read, differently, validates as a statechart,
	// with a note that as a workflow it needs its format.
	both := writeFile(t, "both.json", `{"id": "x", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}`)
	code, out, _ := chartgate("validate", both)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, both+": ok (2 states)\n"+both+`: note: validated as an XState machine; as a workflow (serve, hook) it needs --format statewright or --format xstate, or a "$schema" naming one: both formats read it, differently (Statewright merges the data sent with an event into the context)`+"\n", out)
	schema := writeFile(t, "schema.json", `{"$schema": "https://statewright.ai/workflow-schema.json", "id": "x", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}`)
	code, out, _ = chartgate("validate", schema)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, schema+": ok (Statewright workflow, 2 states)\n", out)
	code, out, _ = chartgate("validate", both, "--format", "statewright")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, both+": ok (Statewright workflow, 2 states)\n", out)

	// A Statewright file read as XState: XState ignores the key it does
	// not know, with a warning; --strict makes it an error.
	sw := writeFile(t, "sw.json", `{"id": "x", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}, "guards": {}}`)
	code, out, _ = chartgate("validate", sw, "--format", "xstate")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, sw+`: guards: warning: unknown key "guards" (did you mean "states"?)`+"\n"+sw+": ok (2 states, 1 warning)\n", out)
	code, out, _ = chartgate("validate", sw, "--format", "xstate", "--strict")
	assert.Equal(t, exitFail, code)
	assert.Equal(t, sw+`: guards: unknown key "guards" (did you mean "states"?)`+"\n", out)

	code, _, errOut := chartgate("validate", sw, "--format", "yaml")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--format "yaml": use auto, xstate or statewright`)

	// Case files stay XState.
	code, out, _ = chartgate("validate", checkoutFile)
	assert.Equal(t, exitOK, code)
	assert.Equal(t, checkoutFile+": ok (4 states)\n", out)
}

// An XState machine with meta.chartgate is a workflow: validate loads it
// as serve and hook do, so the guards it declares are implemented and a
// misspelt policy key is an error at its path, not silently ignored.
func TestValidateXStateWorkflow(t *testing.T) {
	file := writeFile(t, "deploy.json", `{
  "id": "deploy", "initial": "test",
  "meta": {"chartgate": {"guards": {"green": {"field": "passed", "op": "eq", "value": true}}}},
  "context": {"passed": false},
  "states": {
    "test": {"meta": {"chartgate": {"allowed_commands": ["go test"]}}, "on": {"SHIP": {"target": "ship", "guard": "green"}}},
    "ship": {"type": "final"}
  }
}`)
	code, out, errOut := chartgate("validate", file)
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, file+": ok (workflow, 2 states)\n", out)

	bad := writeFile(t, "bad.json", `{
  "id": "deploy", "initial": "test",
  "states": {
    "test": {"meta": {"chartgate": {"alowed_commands": ["go test"]}}, "on": {"SHIP": "ship"}},
    "ship": {"type": "final"}
  }
}`)
	code, out, _ = chartgate("validate", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, bad+`: states.test.meta.chartgate.alowed_commands: `)
	assert.Contains(t, out, `"allowed_commands"`, "the message suggests the key meant")
}
