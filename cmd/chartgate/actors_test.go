// This file tests the commands on machines with actors: run runs the
// declarative actors of a case file, with its input, and prints children
// and emitted events; diagram shows what a state invokes; validate accepts
// invoke.

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const jobCase = `{
  "input": {"rev": "abc"},
  "machine": {"id": "job", "initial": "idle",
    "entry": {"type": "xstate.assign", "params": {"rev": {"$ref": "event.input.rev"}}},
    "states": {
      "idle": {"on": {"BUILD": "building"}},
      "building": {
        "entry": {"type": "xstate.emit", "params": {"event": {"type": "started", "rev": {"$ref": "context.rev"}}}},
        "invoke": {"src": "build", "id": "b", "input": {"rev": {"$ref": "context.rev"}},
          "onDone": {"target": "built", "actions": {"type": "xstate.assign", "params": {"artifact": {"$ref": "event.output"}}}},
          "onError": "broken"}},
      "built": {"type": "final"},
      "broken": {}}},
  "actors": {"build": {"promise": {"resolve": {"file": "app.tar", "rev": {"$ref": "input.rev"}}, "after": 100}}}
}`

func TestRunRunsTheActorsOfACaseFile(t *testing.T) {
	file := writeFile(t, "job.json", jobCase)
	code, out, errOut := chartgate("run", file, "--events", "BUILD,+60ms,+40ms")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `{"step":0,"event":null,"value":"idle","status":"active","context":{"rev":"abc"}}
{"step":1,"event":{"type":"BUILD"},"value":"building","status":"active","context":{"rev":"abc"},"children":{"b":{"src":"build","status":"active"}},"emitted":[{"type":"started","rev":"abc"}]}
{"step":2,"event":null,"advance":60,"value":"building","status":"active","context":{"rev":"abc"},"children":{"b":{"src":"build","status":"active"}}}
{"step":3,"event":null,"advance":40,"value":"built","status":"done","context":{"artifact":{"file":"app.tar","rev":"abc"},"rev":"abc"}}
`, out)

	// --input replaces the case's input.
	code, out, errOut = chartgate("run", file, "--clock", "eventloop", "--input", `{"rev": "def"}`, "--events", "BUILD,+100ms")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, lines(out)[2], `"artifact":{"file":"app.tar","rev":"def"}`)

	code, _, errOut = chartgate("run", file, "--input", `{nope`, "--events", "BUILD")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--input: not valid JSON")
}

func TestDiagramShowsInvokedActors(t *testing.T) {
	file := writeFile(t, "job.json", jobCase)
	code, out, errOut := chartgate("diagram", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `state "building / invoke build" as job_building`)
	assert.Contains(t, out, `job_building --> job_built : done#58; b`)
	assert.Contains(t, out, `job_building --> job_broken : error#58; b`)

	code, out, errOut = chartgate("diagram", file, "--format", "dot")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"s:job.building" [label="building / invoke build"];`)
}

func TestValidateAcceptsInvoke(t *testing.T) {
	file := writeFile(t, "job.json", jobCase)
	code, out, errOut := chartgate("validate", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "ok")
}
