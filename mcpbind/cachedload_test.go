package mcpbind_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// loadCounter counts the loads of a store that holds bytes (it hides
// the MemoryStore's values), as the SQLite, Redis and Postgres stores do.
type loadCounter struct {
	mcpbind.Store
	loads atomic.Int32
}

func (s *loadCounter) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	s.loads.Add(1)
	return s.Store.Load(ctx, key)
}

// doorJSON: a door opened and closed by the agent's tools, each visible
// only where it moves the workflow.
const doorJSON = `{"id": "door", "initial": "closed", "states": {
	"closed": {"on": {"OPEN": "open"}, "meta": {"mcp": {"tools": ["open_door"], "events": {"open_door": "OPEN"}}}},
	"open": {"on": {"CLOSE": "closed"}, "meta": {"mcp": {"tools": ["close_door"], "events": {"close_door": "CLOSE"}}}}}}`

// TestMovingCallsReadTheirSavedRecord: a session's calls that move its
// workflow do not read the store: the first finds no record (the session
// has none yet), and each later one takes its lease against the record
// the gate saved last. Before, each call after the first read the record.
func TestMovingCallsReadTheirSavedRecord(t *testing.T) {
	store := &loadCounter{Store: mcpbind.NewMemoryStore(nil)}
	f := newFixture(t, compile(t, "full", doorJSON, nil), &mcpbind.Options{Store: store}, "open_door", "close_door")
	c := f.connect(t, "2025-11-25")
	before := store.loads.Load()
	for i, tool := range []string{"open_door", "close_door", "open_door", "close_door"} {
		if res := c.call(tool, nil); res.IsError {
			t.Fatalf("call %d (%s): %s", i, tool, resultText(res))
		}
	}
	if n := store.loads.Load() - before; n != 0 {
		t.Fatalf("4 moving calls loaded the record %d times; want 0", n)
	}
}

// TestMovingCallAfterAnotherInstanceMoved: two gates on one store, as two
// instances or processes share a workflow named by a handle. Once the
// other instance moved the workflow, a call is decided in the state it
// moved to, not in the one this instance saved last: refused where that
// state refuses it, allowed where it allows it.
func TestMovingCallAfterAnotherInstanceMoved(t *testing.T) {
	ctx := context.Background()
	store := &loadCounter{Store: mcpbind.NewMemoryStore(nil)}
	engine := compile(t, "full", doorJSON, nil)
	opts := func() *mcpbind.Options { return &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways} }
	f := newFixture(t, engine, opts(), "open_door", "close_door")
	other := newFixture(t, engine, opts(), "open_door", "close_door")
	c := f.connect(t, "2026-07-28")
	id := c.start()
	state := func() any {
		t.Helper()
		w, err := f.gate.Workflow(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return w.State.Value()
	}
	if res := c.call("open_door", withID(id, nil)); res.IsError {
		t.Fatal(resultText(res))
	}
	// The other instance closes the door: this one saved it open.
	if _, err := other.gate.Send(ctx, mcpbind.Ref{ID: id}, statechart.Event{Type: "CLOSE"}, "test"); err != nil {
		t.Fatal(err)
	}
	if res := c.call("close_door", withID(id, nil)); refusal(t, res).Code != mcpbind.CodeForbidden {
		t.Fatalf("close_door on a closed door: %s", resultText(res))
	}
	if s := state(); s != "closed" {
		t.Fatalf("state %v after a refused close_door; want closed", s)
	}
	// This instance now holds it closed; the other opens it again.
	if _, err := other.gate.Send(ctx, mcpbind.Ref{ID: id}, statechart.Event{Type: "OPEN"}, "test"); err != nil {
		t.Fatal(err)
	}
	if res := c.call("close_door", withID(id, nil)); res.IsError {
		t.Fatalf("close_door on a door the other instance opened: %s", resultText(res))
	}
	if s := state(); s != "closed" {
		t.Fatalf("state %v after close_door; want closed", s)
	}
}
