package mcpbind_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
)

// syncRecorder is a store that can write without sync: it records which
// way each write went.
type syncRecorder struct {
	mcpbind.Store
	mu     sync.Mutex
	writes []string // "sync" or "nosync"
}

func (s *syncRecorder) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	s.note("sync")
	return s.Store.CompareAndSwap(ctx, key, old, data)
}

func (s *syncRecorder) CompareAndSwapNoSync(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	s.note("nosync")
	return s.Store.CompareAndSwap(ctx, key, old, data)
}

func (s *syncRecorder) note(how string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, how)
}

// since returns the writes after the first n.
func (s *syncRecorder) since(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes[n:]...)
}

// TestLeaseWrittenWithoutSync: a call that moves the workflow takes its
// lease with a write that need not be synced, and its commit (the
// transition acknowledged) is synced; a lease written together with a
// count against a budget is synced, as is a count alone.
func TestLeaseWrittenWithoutSync(t *testing.T) {
	store := &syncRecorder{Store: mcpbind.NewMemoryStore(nil)}
	f := newFixture(t, counterEngine(t), &mcpbind.Options{Store: store}, "inc")
	if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.call("inc", nil) // creates the record
	for range 2 {
		n := len(store.since(0))
		if res := c.call("inc", nil); res.IsError {
			t.Fatalf("inc: %s", resultText(res))
		}
		if got := strings.Join(store.since(n), ","); got != "nosync,sync" {
			t.Fatalf("the writes of a moving call: %s; want nosync,sync (the lease, the commit)", got)
		}
	}

	store = &syncRecorder{Store: mcpbind.NewMemoryStore(nil)}
	f = newFixture(t, compile(t, "full", strings.Replace(researchJSON, `"maxCalls": 2`, `"maxCalls": 5`, 1), nil), &mcpbind.Options{Store: store}, "search", "note", "submit")
	c = f.connect(t, "2025-11-25")
	c.call("search", nil) // creates the record
	for _, tool := range []string{"note", "search"} {
		n := len(store.since(0))
		if res := c.call(tool, nil); res.IsError {
			t.Fatalf("%s: %s", tool, resultText(res))
		}
		if got := store.since(n); len(got) == 0 || strings.Contains(strings.Join(got, ","), "nosync") {
			t.Errorf("the writes of a %s call in a state with a budget: %v; want every one synced", tool, got)
		}
	}
}
