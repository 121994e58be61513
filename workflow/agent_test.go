package workflow_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/chartgate/chartgate/workflow"
)

// TestAgentWarningsLongChain: in a chain of 20000 states where only the
// first can fail, every other state that is not final is reported, in
// one walk.
func TestAgentWarningsLongChain(t *testing.T) {
	var b strings.Builder
	const n = 20000
	b.WriteString(`{"initial": "s0", "meta": {"danger_level": "safe"}, "states": {"s0": {"on": {"NEXT": "s1", "FAIL": "failed"}},`)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `"s%d": {"on": {"NEXT": "s%d"}},`, i, i+1)
	}
	fmt.Fprintf(&b, `"s%d": {"type": "final"}, "failed": {"type": "final"}}}`, n)
	ws := workflow.AgentWarnings([]byte(b.String()))
	assert.Len(t, ws, n-1)
	for _, w := range ws {
		assert.True(t, w.Warning)
		assert.Contains(t, w.Msg, `no path to the "failed" state`)
	}
}

// TestAgentWarningsPaths: each warning names where it is.
func TestAgentWarningsPaths(t *testing.T) {
	ws := workflow.AgentWarnings([]byte(`{"id": "bad", "initial": "reading", "meta": {"danger_level": "moderate"}, "states": {
		"reading": {"allowed_tools": ["read_file", "edit_file"], "on": {"GO": "deploying", "FAIL": "failed"}},
		"deploying": {"allowed_tools": ["deploy"], "on": {"DONE": "completed"}},
		"completed": {"type": "final"}, "failed": {"type": "final"}}}`))
	var got []string
	for _, w := range ws {
		got = append(got, w.Path+": "+w.Msg[:strings.Index(w.Msg, ":")])
	}
	assert.Equal(t, []string{
		`states.deploying: no path to the "failed" state`,
		"states.reading.allowed_tools: the initial state of a moderate workflow has write, execute or external tools (edit_file)",
		"meta.danger_level: a moderate workflow without a transition with requires_approval",
	}, got)
	assert.Empty(t, workflow.AgentWarnings([]byte(`{"initial": "a", "states": {"a": {"type": "final"}}}`)), "no danger_level")
	assert.Empty(t, workflow.AgentWarnings([]byte(`[1, 2]`)))
}
