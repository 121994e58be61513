// This file checks that AppendJSON, the persisted form written field by
// field, is byte for byte what encoding/json writes for the snapshot's
// persisted value, and that Value and StateIDs (with their shortcut for a
// root and one atomic child) give what the general computation gives, on
// every snapshot the conformance cases go through and on snapshots with
// the strings encoding/json escapes.

package statechart_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	machines, snapshots := restoreMachines(t)
	checked := 0
	seen := map[string]int{}
	for i, m := range machines {
		for _, data := range snapshots[i] {
			s, err := m.Restore(data)
			if err != nil {
				continue // a case whose snapshot Restore refuses (tested elsewhere)
			}
			requireSameEncoding(t, s)
			checked++
			for _, part := range []string{`"output":`, `"errorMessage":`, `"scheduledEvents":`, `"historyValue":{"`, `"children":{"`, `"context":{"`} {
				if strings.Contains(string(data), part) {
					seen[part]++
				}
			}
		}
	}
	require.Greater(t, checked, 500, "too few snapshots checked")
	// The corpus exercises every optional part of the persisted form.
	for _, part := range []string{`"output":`, `"errorMessage":`, `"scheduledEvents":`, `"historyValue":{"`, `"children":{"`, `"context":{"`} {
		require.Positive(t, seen[part], "no snapshot with %s", part)
	}
}

func TestAppendJSONEscapesAsEncodingJSON(t *testing.T) {
	m, err := statechart.Compile([]byte(`{
	  "id": "esc", "initial": "a<b",
	  "context": {"html": "<&>", "line": "x\ny", "uni": "é\u2028"},
	  "states": {
	    "a<b": {"on": {"GO": "p&q"}},
	    "p&q": {"type": "parallel", "states": {
	      "r\"1": {"initial": "x", "states": {"x": {}, "h": {"type": "history", "history": "deep"}}},
	      "r2é": {"initial": "y", "states": {"y": {"after": {"100": "z"}}, "z": {"type": "final"}}}
	    }, "on": {"OUT": "done"}},
	    "done": {"type": "final", "output": {"tag": "</script>"}}
	  }
	}`), nil)
	require.NoError(t, err)
	ctx := context.Background()
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	requireSameEncoding(t, s)
	s, err = m.Transition(ctx, s, statechart.NewEvent("GO"), epoch)
	require.NoError(t, err)
	require.NotEmpty(t, s.Pending())
	requireSameEncoding(t, s)
	s, err = m.Transition(ctx, s, statechart.NewEvent("OUT"), epoch)
	require.NoError(t, err)
	require.Equal(t, statechart.StatusDone, s.Status())
	requireSameEncoding(t, s)
}

// requireSameEncoding checks AppendJSON (and MarshalJSON) against the
// reference encoder, and that AppendJSON appends to what b holds.
func requireSameEncoding(t *testing.T, s *statechart.Snapshot) {
	t.Helper()
	require.Equal(t, statechart.ValueInGeneral(s), s.Value())
	require.Equal(t, statechart.StateIDsInGeneral(s), s.StateIDs())
	want, err := statechart.MarshalByReflection(s)
	require.NoError(t, err)
	got, err := s.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	prefixed, err := s.AppendJSON([]byte("x"))
	require.NoError(t, err)
	require.Equal(t, "x"+string(want), string(prefixed))
}
