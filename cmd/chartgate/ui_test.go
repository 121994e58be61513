package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUICommandLine(t *testing.T) {
	code, out, errOut := chartgate("ui", "--help")
	assert.Equal(t, exitOK, code)
	assert.Empty(t, errOut)
	assert.Equal(t, uiUsage, out)

	for _, args := range [][]string{{"ui", "extra"}, {"ui", "--poll", "0s"}, {"ui", "--nope"}} {
		code, out, errOut := chartgate(args...)
		assert.Equal(t, exitUsage, code, args)
		assert.Empty(t, out, args)
		assert.Contains(t, errOut, "usage: chartgate ui", args)
	}

	dir := t.TempDir()
	code, out, errOut = chartgate("ui", "--workflow", filepath.Join(dir, "none.json"), "--store", "memory")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "reading the workflow")

	wf := writeFile(t, "workflow.json", shipWorkflow)
	code, out, errOut = chartgate("ui", "--workflow", wf, "--store", "memory", "--addr", "256.0.0.1:0")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out, "no URL printed when it cannot listen")
	assert.Contains(t, errOut, "chartgate ui: listen tcp")
}
