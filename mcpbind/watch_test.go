// This file holds the tests of the change feed: Feed's fan-out and
// lifetime, and two gates on one MemoryStore telling each other's
// sessions of their transitions.

package mcpbind_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/storetest"
)

func TestWatchMemoryStore(t *testing.T) {
	storetest.RunWatch(t, func(*testing.T) (a, b mcpbind.Store) {
		s := mcpbind.NewMemoryStore(nil)
		return s, s
	})
}

// TestFeed checks that a change reaches the watchers of its prefix only,
// that a watch ends with its context (its channel closed), and that the
// listen function runs while there are watchers.
func TestFeed(t *testing.T) {
	var running atomic.Int32
	publishes := make(chan func(mcpbind.Change), 4)
	f := mcpbind.NewFeed(func(ctx context.Context, publish func(mcpbind.Change), ready func()) {
		running.Add(1)
		defer running.Add(-1)
		ready()
		publishes <- publish
		<-ctx.Done()
	})
	ctx := context.Background()
	actx, stopA := context.WithCancel(ctx)
	a, err := f.Watch(actx, "a:")
	if err != nil {
		t.Fatal(err)
	}
	bctx, stopB := context.WithCancel(ctx)
	b, err := f.Watch(bctx, "")
	if err != nil {
		t.Fatal(err)
	}
	publish := <-publishes
	if n := running.Load(); n != 1 {
		t.Fatalf("%d listen functions run for two watchers, want 1", n)
	}
	publish(mcpbind.Change{Key: "b:1", Version: 7})
	publish(mcpbind.Change{Key: "a:1", Version: 8})
	if c := <-a; c != (mcpbind.Change{Key: "a:1", Version: 8}) {
		t.Fatalf("watcher of a: got %+v, want a:1 (b:1 is not under its prefix)", c)
	}
	if c1, c2 := <-b, <-b; c1.Key != "b:1" || c2.Key != "a:1" {
		t.Fatalf("watcher of everything: got %+v, %+v", c1, c2)
	}
	stopA()
	if _, ok := <-a; ok {
		t.Fatal("a watch whose context ended still receives")
	}
	stopB()
	for range b {
	}
	deadline := time.Now().Add(5 * time.Second)
	for running.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the listen function still runs after the last watch ended")
		}
		time.Sleep(time.Millisecond)
	}
	f.Close()
	if _, err := f.Watch(ctx, ""); !errors.Is(err, mcpbind.ErrFeedClosed) {
		t.Fatalf("Watch after Close: %v, want ErrFeedClosed", err)
	}
}
