package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Statewright workflow runs as serve enforces it: its guards hold, and
// the data sent with an event is merged into the context.
func TestRunStatewrightWorkflowKeepsItsGuards(t *testing.T) {
	file := writeFile(t, "order.json", `{"id":"order","initial":"cart","context":{"items":0},
 "guards":{"has_items":{"field":"items","op":"gt","value":0}},
 "states":{"cart":{"allowed_tools":["add"],"on":{"SUBMIT":{"target":"paid","guards":["has_items"]},"ADD":{"target":"cart"}}},
  "paid":{"type":"final"}}}`)
	for _, format := range []string{"", "statewright"} {
		args := []string{"run", file, "--events", `SUBMIT,{"type":"ADD","input":{"items":2}},SUBMIT`}
		if format != "" {
			args = append(args, "--format", format)
		}
		code, out, errOut := chartgate(args...)
		require.Equal(t, exitOK, code, errOut)
		assert.Empty(t, errOut, "no unknown-key warnings: the file is read as Statewright's")
		got := lines(out)
		require.Len(t, got, 4)
		assert.Equal(t, `{"step":1,"event":{"type":"SUBMIT"},"value":"cart","status":"active","context":{"items":0}}`, got[1], "the guard refuses SUBMIT with no items")
		assert.Equal(t, `{"step":2,"event":{"type":"ADD","input":{"items":2}},"value":"cart","status":"active","context":{"items":2}}`, got[2])
		assert.Equal(t, `{"step":3,"event":{"type":"SUBMIT"},"value":"paid","status":"done","context":{"items":2}}`, got[3])
	}

	// Read as XState, as asked, the Statewright keys are unknown.
	code, out, errOut := chartgate("run", file, "--format", "xstate", "--events", "SUBMIT")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, errOut, `order.json: guards: warning: unknown key "guards"`)
	assert.Contains(t, lines(out)[1], `"value":"paid"`)
}

func TestRunAmbiguousFileWithDataAsksForFormat(t *testing.T) {
	file := writeFile(t, "toggle.json", `{"id":"t","initial":"a","states":{"a":{"on":{"T":"b"}},"b":{"type":"final"}}}`)

	// Without data both formats run it the same: XState's run.
	code, out, errOut := chartgate("run", file, "--events", "T")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, lines(out)[1], `"value":"b","status":"done"`)

	withData := `{"type":"T","input":{"x":1}}`
	code, out, errOut = chartgate("run", file, "--events", withData)
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "toggle.json: the file reads as a Statewright workflow and as an XState machine")
	assert.Contains(t, errOut, "--format statewright or --format xstate")

	code, out, errOut = chartgate("run", file, "--format", "statewright", "--events", withData)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, lines(out)[1], `"context":{"x":1}`)
	code, out, errOut = chartgate("run", file, "--format", "xstate", "--events", withData)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, lines(out)[1], `"context":{}`)

	code, _, errOut = chartgate("run", file, "--format", "yaml", "--events", "T")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `--format "yaml": use auto, xstate or statewright`)
}
