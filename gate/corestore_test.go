package gate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
)

// bytesStore hides MemoryStore's value methods: a store that holds bytes
// only, as the SQL and Redis stores do.
type bytesStore struct{ m *gate.MemoryStore }

func (s bytesStore) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	return s.m.Load(ctx, key)
}

func (s bytesStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	return s.m.CompareAndSwap(ctx, key, old, data)
}

func (s bytesStore) Delete(ctx context.Context, key string) error { return s.m.Delete(ctx, key) }

// stamped is a record that keeps the version it is stored under in *got.
type stamped struct {
	gate.Bytes
	got *uint64
}

func (s stamped) Stamp(ver uint64) gate.Value {
	*s.got = ver
	return s
}

// TestCoreSwap writes a record through a Core over a store of values and
// one of bytes: the first write and one against the version it returned
// succeed and hand the new version to the caller, a write against a stale
// version fails with ErrConflict and changes nothing, and Load reads back
// what the last write stored.
func TestCoreSwap(t *testing.T) {
	ctx := context.Background()
	for name, st := range map[string]gate.Store{
		"values": gate.NewMemoryStore(nil),
		"bytes":  bytesStore{gate.NewMemoryStore(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			c := gate.NewCore(&gate.CoreOptions{Store: st})
			if v, ver, err := c.Load(ctx, "k"); v != nil || ver != 0 || err != nil {
				t.Fatalf("Load of a new key = %v, %d, %v; want nil, 0, nil", v, ver, err)
			}
			var got uint64
			v1, err := c.Swap(ctx, "k", 0, stamped{gate.Bytes(`{"n":1}`), &got}, true)
			if err != nil || v1 == 0 || got != v1 {
				t.Fatalf("first Swap = %d, %v (set %d)", v1, err, got)
			}
			v2, err := c.Swap(ctx, "k", v1, stamped{gate.Bytes(`{"n":2}`), &got}, false)
			if err != nil || v2 == v1 || got != v2 {
				t.Fatalf("second Swap = %d, %v (set %d)", v2, err, got)
			}
			if _, err := c.Swap(ctx, "k", v1, stamped{gate.Bytes(`{"n":3}`), &got}, true); !errors.Is(err, gate.ErrConflict) || !gate.IsConflict(err) {
				t.Fatalf("stale Swap: err = %v, want ErrConflict", err)
			}
			if got != v2 {
				t.Errorf("a failed Swap set the version to %d", got)
			}
			v, ver, err := c.Load(ctx, "k")
			if err != nil || ver != v2 || string(v.Encode()) != `{"n":2}` {
				t.Fatalf("Load = %v, %d, %v; want {\"n\":2}, %d", v, ver, err, v2)
			}
		})
	}
}

// record is a record that keeps the version it is stored under, as a
// gate's workflow records do.
type record struct {
	gate.Bytes
	ver uint64
}

func (r *record) Stamp(ver uint64) gate.Value {
	r.ver = ver
	return r
}

// TestCoreSwapAllocs: a Core over a MemoryStore rewrites a record held as
// a value without allocating (the store keeps the record the Core passes).
func TestCoreSwapAllocs(t *testing.T) {
	ctx := context.Background()
	c := gate.NewCore(&gate.CoreOptions{Store: gate.NewMemoryStore(nil)})
	r := &record{Bytes: gate.Bytes(`{"n":1}`)}
	if _, err := c.Swap(ctx, "k", 0, r, true); err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() {
		if _, err := c.Swap(ctx, "k", r.ver, r, true); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("a Swap allocates %v times; want 0", n)
	}
}

// TestCoreDefaults checks that a Core without options gets a memory store
// and the default retry bound.
func TestCoreDefaults(t *testing.T) {
	c := gate.NewCore(nil)
	if _, ok := c.Store().(*gate.MemoryStore); !ok || c.Values() == nil {
		t.Errorf("Store() = %T, Values() = %v; want a MemoryStore that holds values", c.Store(), c.Values())
	}
	if c.MaxRetries() != 100 {
		t.Errorf("MaxRetries() = %d, want 100", c.MaxRetries())
	}
}

// TestCoreRetry checks the retries of a write against a real store: two
// writers from the same version, the loser reloads and wins on its second
// attempt; a write that always loses gives up after MaxRetries+1 attempts
// with an error matching ErrConflict; another error ends it at once.
func TestCoreRetry(t *testing.T) {
	ctx := context.Background()
	c := gate.NewCore(&gate.CoreOptions{MaxRetries: 2})
	var got uint64
	if _, err := c.Swap(ctx, "k", 0, stamped{gate.Bytes(`1`), &got}, true); err != nil {
		t.Fatal(err)
	}
	// Another writer moves the key on after our load at version 1.
	if _, err := c.Swap(ctx, "k", 1, stamped{gate.Bytes(`2`), &got}, true); err != nil {
		t.Fatal(err)
	}
	ver, attempts, reloads := uint64(1), 0, 0
	err := c.Retry(ctx, func() (bool, error) {
		attempts++
		_, err := c.Swap(ctx, "k", ver, stamped{gate.Bytes(`3`), &got}, true)
		return gate.IsConflict(err), err
	}, func() (err error) {
		reloads++
		_, ver, err = c.Load(ctx, "k")
		return err
	})
	if err != nil || attempts != 2 || reloads != 1 {
		t.Fatalf("Retry = %v after %d attempts, %d reloads; want nil after 2, 1", err, attempts, reloads)
	}
	if v, _, _ := c.Load(ctx, "k"); string(v.Encode()) != `3` {
		t.Errorf("stored %s, want 3", v.Encode())
	}

	attempts = 0
	err = c.Retry(ctx, func() (bool, error) {
		attempts++
		_, err := c.Swap(ctx, "k", 1, stamped{gate.Bytes(`4`), &got}, true) // always stale
		return gate.IsConflict(err), err
	}, func() error { return nil })
	if !errors.Is(err, gate.ErrConflict) || attempts != 3 {
		t.Errorf("always losing: Retry = %v after %d attempts; want ErrConflict after 3", err, attempts)
	}

	boom := errors.New("boom")
	attempts = 0
	err = c.Retry(ctx, func() (bool, error) { attempts++; return false, boom }, func() error { return nil })
	if err != boom || attempts != 1 {
		t.Errorf("failing: Retry = %v after %d attempts; want boom after 1", err, attempts)
	}
}

// TestMemoryStoreWatchFunc: a function that watches a MemoryStore has seen
// each write under its prefix by the time the write returns, misses none
// however many come (a channel of Watch would fill up), and is called no
// more once its context ended.
func TestMemoryStoreWatchFunc(t *testing.T) {
	s := gate.NewMemoryStore(nil)
	ctx, stop := context.WithCancel(context.Background())
	var seen []gate.Change
	if err := s.WatchFunc(ctx, "a:", func(c gate.Change) { seen = append(seen, c) }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwap(ctx, "b:1", 0, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	var ver uint64
	const writes = 2000
	for i := range writes {
		v, err := s.CompareAndSwap(ctx, "a:1", ver, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		ver = v
		if len(seen) != i+1 || seen[i] != (gate.Change{Key: "a:1", Version: v}) {
			t.Fatalf("after write %d (version %d), the function saw %d changes: %v", i+1, v, len(seen), seen[max(0, len(seen)-3):])
		}
	}
	stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := len(seen)
		v, err := s.CompareAndSwap(context.Background(), "a:1", ver, []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		ver = v
		if len(seen) == n {
			break // the watch ended (once ctx's AfterFunc ran)
		}
		if time.Now().After(deadline) {
			t.Fatal("the function is still called 5s after its context ended")
		}
		time.Sleep(time.Millisecond)
	}
}
