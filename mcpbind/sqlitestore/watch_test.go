package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/storetest"
)

// TestWatchAcrossStores: two Stores on one file, as two processes have
// (chartgate serve twice, or serve and chartgate approve): a transition
// through a gate on one gives list_changed to the sessions of that
// workflow on the other (storetest.RunWatch).
func TestWatchAcrossStores(t *testing.T) {
	t.Parallel()
	storetest.RunWatch(t, func(t *testing.T) (mcpbind.Store, mcpbind.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		return openAt(t, path, nil), openAt(t, path, nil)
	})
}

// TestWatchReportsOtherWrites: a watcher of one Store gets the write made
// through another Store on the file, with its key and version, and not a
// write under another prefix.
func TestWatchReportsOtherWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := openAt(t, path, nil), openAt(t, path, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := a.Watch(ctx, "p:")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.CompareAndSwap(ctx, "other:x", 0, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	v, err := b.CompareAndSwap(ctx, "p:x", 0, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-ch:
		if c.Key != "p:x" || c.Version != v {
			t.Fatalf("change %+v, want p:x at version %d", c, v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change reported for a write through another Store")
	}
}

// TestWatchFuncOwnWrite: a function watching a Store has the Store's own
// write by the time the write returns (storetest.RunWatch checks the
// writes of other Stores on the file).
func TestWatchFuncOwnWrite(t *testing.T) {
	t.Parallel()
	s := open(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan gate.Change, 10)
	if err := s.WatchFunc(ctx, "p:", func(c gate.Change) { got <- c }); err != nil {
		t.Fatal(err)
	}
	v, err := s.CompareAndSwap(ctx, "p:mine", 0, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c != (gate.Change{Key: "p:mine", Version: v}) {
			t.Fatalf("change %+v, want p:mine at version %d", c, v)
		}
	default:
		t.Fatal("the Store's own write was not reported by the time it returned")
	}
}
