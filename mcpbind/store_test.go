package mcpbind_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/storetest"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestMemoryStoreContract: the Store contract (storetest).
func TestMemoryStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) mcpbind.Store { return mcpbind.NewMemoryStore(nil) })
}

func TestMemoryStoreTTL(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	s := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{TTL: time.Minute, Now: clock.Now})
	if _, err := s.CompareAndSwap(ctx, "k", 0, []byte("a")); err != nil {
		t.Fatal(err)
	}
	clock.Add(50 * time.Second)
	if d, _, _ := s.Load(ctx, "k"); string(d) != "a" {
		t.Fatalf("before the TTL: %q", d)
	}
	clock.Add(50 * time.Second) // 100 s after the write, 50 s after the load: the expiry slides
	if d, _, _ := s.Load(ctx, "k"); string(d) != "a" {
		t.Fatalf("a load must refresh the expiry: %q", d)
	}
	clock.Add(time.Minute)
	if d, v, _ := s.Load(ctx, "k"); d != nil || v != 0 {
		t.Fatalf("after the TTL: %q, %d", d, v)
	}
	if s.Len() != 0 {
		t.Fatalf("Len = %d after expiry", s.Len())
	}
	// Expired records are dropped when others are written.
	if _, err := s.CompareAndSwap(ctx, "a", 0, []byte("a")); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Minute)
	if _, err := s.CompareAndSwap(ctx, "b", 0, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("Len = %d, want 1: the expired record was not dropped", s.Len())
	}
	// A CAS on an expired record behaves as on a missing one.
	clock.Add(2 * time.Minute)
	if _, err := s.CompareAndSwap(ctx, "b", 0, []byte("b2")); err != nil {
		t.Fatalf("create over an expired record: %v", err)
	}
}

func TestMemoryStoreLRU(t *testing.T) {
	ctx := context.Background()
	s := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{MaxEntries: 3})
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.CompareAndSwap(ctx, k, 0, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Load(ctx, "a"); err != nil { // a is now the most recently used
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwap(ctx, "d", 0, []byte("d")); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		d, _, _ := s.Load(ctx, k)
		if (d != nil) != want {
			t.Errorf("%s present = %v, want %v (b was the least recently used)", k, d != nil, want)
		}
	}
	// Updating a record does not grow the store.
	_, v, _ := s.Load(ctx, "d")
	if _, err := s.CompareAndSwap(ctx, "d", v, []byte("d2")); err != nil || s.Len() != 3 {
		t.Fatalf("update: %v, Len %d", err, s.Len())
	}
}

// TestMemoryStoreConcurrentCAS increments a counter from many goroutines
// with load/compare-and-swap/retry: no increment may be lost.
