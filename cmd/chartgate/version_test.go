package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// TestWorkflowVersionsAcrossEdits: the workflow file is edited under a
// live workflow. While its active states are still states of the file,
// status shows the version that saved it and that it is migrated, and its
// next transition saves it under the new version; once the file drops its
// active state, status, history and the gate refuse it naming the state
// and the reset command, which deletes it.
func TestWorkflowVersionsAcrossEdits(t *testing.T) {
	wf := writeFile(t, "workflow.json", releaseWorkflow)
	store := filepath.Join(t.TempDir(), "state.db")
	flags := []string{"--workflow", wf, "--store", store}
	parkRelease(t, wf, store, "s1")
	v1 := workflowVersion([]byte(releaseWorkflow))

	code, out, errOut := chartgate(append([]string{"status"}, flags...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "  version "+v1+"  last moved")
	assert.NotContains(t, out, "migrated")

	// A new state, the old ones kept: migrated.
	edited := strings.Replace(releaseWorkflow, `"deploy": {"on": {"DONE": "done"}}`, `"deploy": {"on": {"DONE": "done", "AUDIT": "audit"}}, "audit": {"on": {"DONE": "done"}}`, 1)
	require.NoError(t, os.WriteFile(wf, []byte(edited), 0o644))
	v2 := workflowVersion([]byte(edited))
	code, out, errOut = chartgate(append([]string{"status"}, flags...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "  version "+v1+" (current "+v2+": migrated at its next save)")
	p, err := openProject(projectFlagsOf(wf, store))
	require.NoError(t, err)
	g, err := p.gate()
	require.NoError(t, err)
	_, err = g.Send(context.Background(), mcpbind.Ref{Name: "s1"}, statechart.Event{Type: "BUILT"}, "agent")
	require.NoError(t, err)
	require.NoError(t, p.close())
	code, out, errOut = chartgate(append([]string{"status", "--json"}, flags...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"version":"`+v2+`"`)

	// The active state ("build") renamed: refused, with what to do.
	renamed := strings.ReplaceAll(edited, `"build"`, `"compile"`)
	require.NoError(t, os.WriteFile(wf, []byte(renamed), 0o644))
	v3 := workflowVersion([]byte(renamed))
	code, out, errOut = chartgate(append([]string{"status"}, flags...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, regexp.MustCompile(`^name:s1  version `+v2+`  REFUSED: workflow name:s1 was saved by workflow version `+v2+
		`, and its active states "release.build:BUILT:approval" are not states of this version \(`+v3+
		`\); a person runs chartgate reset name:s1 to start it again from the initial state, or serves version `+v2+` again to finish it\n$`), out)
	code, _, errOut = chartgate(append([]string{"history", "name:s1"}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "chartgate reset name:s1")

	p, err = openProject(projectFlagsOf(wf, store))
	require.NoError(t, err)
	defer p.close()
	g, err = p.gate()
	require.NoError(t, err)
	_, err = g.Send(context.Background(), mcpbind.Ref{Name: "s1"}, statechart.Event{Type: "BUILT"}, "agent")
	var ve *mcpbind.VersionError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, []string{"release.build:BUILT:approval"}, ve.Missing)

	// Reset: asked on the terminal; no, then yes.
	var out2, errOut2 bytes.Buffer
	code = resetWith(append([]string{"name:s1"}, flags...), &out2, &errOut2, func() (terminal, error) {
		return fakeTTY{in: strings.NewReader("no\n"), out: &strings.Builder{}}, nil
	})
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut2.String(), "not confirmed: workflow name:s1 is unchanged")
	shown := &strings.Builder{}
	out2.Reset()
	code = resetWith(append([]string{"name:s1"}, flags...), &out2, &errOut2, func() (terminal, error) {
		return fakeTTY{in: strings.NewReader("yes\n"), out: shown}, nil
	})
	require.Equal(t, exitOK, code, errOut2.String())
	assert.Contains(t, shown.String(), "Workflow name:s1 (version "+v2+") is refused: workflow name:s1 was saved")
	assert.Contains(t, out2.String(), "reset workflow name:s1 (was version "+v2+", refused:")
	code, out, errOut = chartgate(append([]string{"status"}, flags...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "no workflows\n", out)

	// The named workflow starts again, in the new version's initial state.
	s, err := g.WorkflowOf(context.Background(), mcpbind.Ref{Name: "s1"})
	require.NoError(t, err)
	assert.Equal(t, "compile", s.State.Value())

	// --yes without the approver key is refused.
	code, _, errOut = chartgate(append([]string{"reset", "name:s1", "--yes", "--key", filepath.Join(t.TempDir(), "none.key")}, flags...)...)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, errOut, "--yes needs the approver key")
}

// TestEmptyWorkflowArgRefused: an empty WORKFLOW is a usage error for
// every command that takes one, never a match for the workflows no Ref
// names (a stdio session's), which reset would otherwise delete.
func TestEmptyWorkflowArgRefused(t *testing.T) {
	for _, cmd := range []string{"reset", "history", "resume"} {
		code, _, errOut := chartgate(cmd, "")
		assert.Equal(t, exitUsage, code, cmd)
		assert.Contains(t, errOut, "an empty WORKFLOW names no workflow", cmd)
	}
}
