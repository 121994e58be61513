package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
