package core

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// countingStore counts the compare-and-swap conflicts of a store.
type countingStore struct {
	gate.Store
	conflicts atomic.Int32
}

func (s *countingStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	v, err := s.Store.CompareAndSwap(ctx, key, old, data)
	if errors.Is(err, gate.ErrConflict) {
		s.conflicts.Add(1)
	}
	return v, err
}

// TestCommitRetriesOnConflict: a call's commit that finds its workflow
// saved since its reservation (by a call that was only counted) reloads
// and applies its event to the newer state, keeping both changes.
func TestCommitRetriesOnConflict(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(`{"actions": {"inc": {"assign": {"n": {"$inc": 1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := statechart.Compile([]byte(`{"id": "c", "initial": "a", "context": {"n": 0}, "states": {"a": {"on": {"INC": {"actions": "inc"}}}}}`),
		&statechart.Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	store := &countingStore{Store: gate.NewMemoryStore(nil)}
	g, err := New(m.Engine(), &Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tgt := Target{Name: "w", Key: g.NameKey("w")}
	c := &Call{Kind: CallTransition, Name: "inc", Rules: g.Rules.Load(), Info: UnboundInfo, Target: tgt, Event: statechart.NewEvent("INC")}
	v, err := g.Load(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	v, h, vd, err := g.ReserveCall(ctx, c, v)
	if err != nil || vd != nil {
		t.Fatalf("reserve: %v %v", vd, err)
	}
	// Another call saves the record (as a counted call does), keeping the lease.
	if _, err := g.Save(ctx, tgt, v, v.State, v.Rec); err != nil {
		t.Fatal(err)
	}
	out := g.CommitCall(ctx, c, h, v, ToolOutcome{})
	if out.Err != nil || out.Tr == nil {
		t.Fatalf("commit: %+v", out)
	}
	w, err := g.WorkflowOf(ctx, gate.Ref{Name: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.State.Context()["n"]; n != 1.0 || store.conflicts.Load() != 1 {
		t.Fatalf("n = %v, %d conflicts; want 1 and 1", n, store.conflicts.Load())
	}
	if out.After.Rec.Lease != nil {
		t.Fatalf("the lease was kept: %+v", out.After.Rec.Lease)
	}
}
