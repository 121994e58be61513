package mcpbind_test

import (
	"context"
	"errors"
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

// TestMemoryStoreNeverEvicts: a full store refuses new records (by count
// and by bytes) instead of evicting live ones; updates still work, and
// expired records make room.
func TestMemoryStoreNeverEvicts(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	s := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{MaxEntries: 3, MaxBytes: 100, TTL: time.Minute, Now: clock.Now})
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.CompareAndSwap(ctx, k, 0, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CompareAndSwap(ctx, "d", 0, []byte("d")); !errors.Is(err, mcpbind.ErrStoreFull) {
		t.Fatalf("a fourth record: %v, want ErrStoreFull", err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if d, _, _ := s.Load(ctx, k); string(d) != k {
			t.Fatalf("%s was evicted: %q", k, d)
		}
	}
	_, v, _ := s.Load(ctx, "c")
	if _, err := s.CompareAndSwap(ctx, "c", v, []byte("c2")); err != nil || s.Len() != 3 {
		t.Fatalf("update in a full store: %v, Len %d", err, s.Len())
	}
	// Expired records make room.
	clock.Add(50 * time.Second)
	if _, _, err := s.Load(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	clock.Add(20 * time.Second) // b and c expired, a was used 20 s ago
	if _, err := s.CompareAndSwap(ctx, "d", 0, []byte("d")); err != nil {
		t.Fatalf("after b and c expired: %v", err)
	}
	if d, _, _ := s.Load(ctx, "a"); string(d) != "a" {
		t.Fatalf("a: %q", d)
	}
	// The byte bound.
	if _, err := s.CompareAndSwap(ctx, "e", 0, make([]byte, 99)); !errors.Is(err, mcpbind.ErrStoreFull) {
		t.Fatalf("a record past MaxBytes: %v", err)
	}
	if _, err := s.CompareAndSwap(ctx, "e", 0, make([]byte, 90)); err != nil {
		t.Fatalf("a record within MaxBytes: %v", err)
	}
}

// TestMemoryStoreKeep: a kept record (a live session's) does not expire;
// Delete ends the keep.
func TestMemoryStoreKeep(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	s := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{TTL: time.Minute, Now: clock.Now})
	s.Keep("session")
	for _, k := range []string{"session", "handle"} {
		if _, err := s.CompareAndSwap(ctx, k, 0, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(time.Hour)
	if d, _, _ := s.Load(ctx, "handle"); d != nil {
		t.Fatalf("the handle's record did not expire: %q", d)
	}
	if d, _, _ := s.Load(ctx, "session"); string(d) != "session" {
		t.Fatalf("the kept record expired: %q", d)
	}
	if err := s.Delete(ctx, "session"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwap(ctx, "session", 0, []byte("again")); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Hour)
	if d, _, _ := s.Load(ctx, "session"); d != nil {
		t.Fatalf("Delete did not end the keep: %q", d)
	}
}

// TestMemoryStoreConcurrentCAS increments a counter from many goroutines
// with load/compare-and-swap/retry: no increment may be lost.

// sized is a value of a given size.
type sized int

func (n sized) Size() int      { return int(n) }
func (n sized) Encode() []byte { return make([]byte, n) }

// TestMemoryStoreValueBytes: MaxBytes bounds the records held as values
// by their size, as it bounds those written as bytes.
func TestMemoryStoreValueBytes(t *testing.T) {
	ctx := context.Background()
	s := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{MaxBytes: 100})
	of := func(n int) func(uint64) mcpbind.Value { return func(uint64) mcpbind.Value { return sized(n) } }
	v, err := s.CompareAndSwapValue(ctx, "a", 0, of(60))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapValue(ctx, "b", 0, of(50)); !errors.Is(err, mcpbind.ErrStoreFull) {
		t.Fatalf("a value past MaxBytes: %v, want ErrStoreFull", err)
	}
	if _, err := s.CompareAndSwap(ctx, "b", 0, make([]byte, 50)); !errors.Is(err, mcpbind.ErrStoreFull) {
		t.Fatalf("bytes past MaxBytes: %v, want ErrStoreFull", err)
	}
	// A record that shrinks makes room.
	if _, err := s.CompareAndSwapValue(ctx, "a", v, of(10)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwapValue(ctx, "b", 0, of(90)); err != nil {
		t.Fatalf("after a record shrank: %v", err)
	}
	if d, _, err := s.Load(ctx, "b"); len(d) != 90 || err != nil {
		t.Fatalf("Load of a value: %d bytes, %v", len(d), err)
	}
	if err := s.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwap(ctx, "c", 0, make([]byte, 90)); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}
