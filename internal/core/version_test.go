package core

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// TestWorkflowVersion: records are stamped with the version of the gate
// that saved them; a gate of another version takes over a record whose
// active states it has (and stamps it at its next save), and refuses one
// whose active states it has not, naming them; a gate without a version
// checks nothing.
func TestWorkflowVersion(t *testing.T) {
	ctx := context.Background()
	store := gate.NewMemoryStore(nil)
	const v1 = `{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"on": {"GO": "c"}}, "c": {}}}`
	g1 := newGate(t, v1, &Options{Store: store, WorkflowVersion: "v1", KeyPrefix: "k:"})
	ref := gate.Ref{Name: "s"}
	_, err := g1.Send(ctx, ref, statechart.Event{Type: "GO"}, "test")
	require.NoError(t, err)
	data, _, err := store.Load(ctx, "k:session:s")
	require.NoError(t, err)
	assert.Contains(t, string(data), `"workflow":"v1"`)

	// v2 adds a state: b is still there.
	const v2 = `{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"on": {"GO": "c", "SKIP": "d"}}, "c": {}, "d": {}}}`
	g2 := newGate(t, v2, &Options{Store: store, WorkflowVersion: "v2", KeyPrefix: "k:"})
	w, err := g2.WorkflowOf(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, "b", w.State.Value())
	_, err = g2.Send(ctx, ref, statechart.Event{Type: "SKIP"}, "test")
	require.NoError(t, err)
	data, _, err = store.Load(ctx, "k:session:s")
	require.NoError(t, err)
	assert.Contains(t, string(data), `"workflow":"v2"`)

	// v3 has no d.
	const v3 = `{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {}}}`
	g3 := newGate(t, v3, &Options{Store: store, WorkflowVersion: "v3", KeyPrefix: "k:"})
	_, err = g3.WorkflowOf(ctx, ref)
	var ve *gate.VersionError
	require.True(t, errors.As(err, &ve), "%v", err)
	assert.Equal(t, []string{"m.d"}, ve.Missing)
	assert.Equal(t, `mcpbind: workflow name:s was saved by workflow version v2, and its active states "m.d" are not states of this version (v3); a person runs chartgate reset name:s to start it again from the initial state, or serves version v2 again to finish it`, err.Error())
	_, err = g3.Send(ctx, ref, statechart.Event{Type: "GO"}, "test")
	require.ErrorAs(t, err, &ve)
	ws, err := g3.Workflows(ctx)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	assert.Equal(t, "v2", ws[0].Version)
	assert.NotNil(t, ws[0].Refused)

	// A gate without a version does not check (and restoring fails on its own).
	g4 := newGate(t, v3, &Options{Store: store, KeyPrefix: "k:"})
	_, err = g4.WorkflowOf(ctx, ref)
	require.Error(t, err)
	assert.False(t, errors.As(err, &ve))
	assert.Contains(t, err.Error(), "restoring the workflow state")
}
