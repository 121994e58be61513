package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateNoStates: validate refuses a file that defines no state,
// naming the file, as serve and hook refuse to load it.
func TestValidateNoStates(t *testing.T) {
	for _, content := range []string{`{}`, `{"id": "x", "states": {}}`, `{"id": "x", "meta": {"chartgate": {"workflow": {}}}}`} {
		f := writeFile(t, "workflow.json", content)
		code, out, _ := chartgate("validate", f)
		assert.Equal(t, exitFail, code, content)
		assert.Contains(t, out, f+": ", content)
		assert.Contains(t, out, "the workflow defines no state", content)
	}
	project := hookProject(t)
	f := writeFile(t, "empty.json", `{}`)
	code, out, errOut := chartgateIn(fixture(t, "claude-code", "pre-tool-use-bash.json", project, "s1"), "hook", "claude-code", "--workflow", f)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"permissionDecision":"deny"`)
	assert.Contains(t, out, "the workflow defines no state")
}

// TestInstalledFormatEnforced: once installed with a Statewright
// workflow, the project's workflow file rewritten as an XState machine is
// refused by the hook (a pre tool event is denied, naming both formats)
// and by validate.
func TestInstalledFormatEnforced(t *testing.T) {
	project := hookProject(t) // the Statewright coding workflow
	chartgateOnPath(t)
	code, _, errOut := chartgate("install", "claude-code", "--dir", project)
	require.Equal(t, exitOK, code, errOut)
	wf := filepath.Join(project, ".chartgate", "workflow.json")
	code, out, _ := chartgate("validate", wf)
	require.Equal(t, exitOK, code, out)

	require.NoError(t, os.WriteFile(wf, []byte(`{"id": "w", "initial": "a", "states": {"a": {"meta": {"mcp": {"tools": ["*"]}}}}}`), 0o644))
	code, out, errOut = chartgateIn(fixture(t, "claude-code", "pre-tool-use-bash.json", project, "s1"), "hook", "claude-code")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"permissionDecision":"deny"`)
	assert.Contains(t, out, `the workflow loads in format \"xstate\", but the project was installed with format \"statewright\"`, "JSON-escaped in the answer")
	code, out, _ = chartgate("validate", wf)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, wf+": the workflow loads in format \"xstate\", but the project was installed with format \"statewright\"")
}
