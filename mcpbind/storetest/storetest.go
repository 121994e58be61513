// Package storetest checks that an implementation of [mcpbind.Store] keeps
// the contract a [mcpbind.Gate] relies on: versioned loads, atomic
// compare-and-swap, versions that are never reused, and deletes. It is for
// the tests of store implementations, as testing/fstest is for file
// systems:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) mcpbind.Store { return newMyStore(t) })
//	}
//
// A store that implements [mcpbind.ValueStore] or [mcpbind.Lister] is
// checked as such too. Expiry and eviction are the implementation's own
// business and are not checked here. [RunJobs] checks that the jobs of
// gates on a store shared by several instances resume when the instance
// that ran them goes away, and [RunWatch] that gates on a store with a
// change feed ([mcpbind.Watcher]) tell their sessions of each other's
// transitions.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
)

// Run runs the contract checks as subtests of t. newStore is called once
// per subtest and must return an empty store (or one whose keys no other
// subtest sees, for stores that share a backend).
func Run(t *testing.T, newStore func(t *testing.T) mcpbind.Store) {
	t.Run("CompareAndSwap", func(t *testing.T) { testCompareAndSwap(t, newStore(t)) })
	t.Run("Data", func(t *testing.T) { testData(t, newStore(t)) })
	t.Run("VersionsNeverReused", func(t *testing.T) { testVersionsNeverReused(t, newStore(t)) })
	t.Run("ConcurrentCompareAndSwap", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	t.Run("Values", func(t *testing.T) {
		s := newStore(t)
		if vs, ok := s.(mcpbind.ValueStore); ok {
			testValues(t, vs)
		} else {
			t.Skip("the store does not implement mcpbind.ValueStore")
		}
	})
	t.Run("Keys", func(t *testing.T) {
		s := newStore(t)
		if l, ok := s.(mcpbind.Lister); ok {
			testKeys(t, s, l)
		} else {
			t.Skip("the store does not implement mcpbind.Lister")
		}
	})
}

// testKeys checks a Lister: the keys of the records under a prefix,
// sorted, without deleted ones.
func testKeys(t *testing.T, s mcpbind.Store, l mcpbind.Lister) {
	ctx := context.Background()
	for _, k := range []string{"app:b", "app:a", "app:c", "other:a", "app"} {
		if _, err := s.CompareAndSwap(ctx, k, 0, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "app:c"); err != nil {
		t.Fatal(err)
	}
	keys, err := l.Keys(ctx, "app:")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "app:a,app:b" {
		t.Fatalf("Keys(app:) = %q, want [app:a app:b]", keys)
	}
	if keys, err := l.Keys(ctx, "nothing:"); err != nil || len(keys) != 0 {
		t.Fatalf("Keys(nothing:) = %q, %v", keys, err)
	}
}

func conflict(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("%s: err = %v, want one matching mcpbind.ErrConflict", what, err)
	}
}

func testCompareAndSwap(t *testing.T, s mcpbind.Store) {
	ctx := context.Background()
	if d, v, err := s.Load(ctx, "k"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load of a missing key = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	v1, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil || v1 == 0 {
		t.Fatalf("create = %d, %v; want a version other than 0", v1, err)
	}
	_, err = s.CompareAndSwap(ctx, "k", 0, []byte("b"))
	conflict(t, "second create", err)
	v2, err := s.CompareAndSwap(ctx, "k", v1, []byte("b"))
	if err != nil || v2 == v1 || v2 == 0 {
		t.Fatalf("update = %d, %v (old version %d): want a new version", v2, err, v1)
	}
	_, err = s.CompareAndSwap(ctx, "k", v1, []byte("c"))
	conflict(t, "update from a stale version", err)
	_, err = s.CompareAndSwap(ctx, "k", v2+1, []byte("c"))
	conflict(t, "update from a version the key never had", err)
	if d, v, err := s.Load(ctx, "k"); string(d) != "b" || v != v2 || err != nil {
		t.Fatalf("Load = %q, %d, %v; want b, %d", d, v, err, v2)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if d, v, err := s.Load(ctx, "k"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load after Delete = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatalf("deleting a deleted key: %v", err)
	}
	if err := s.Delete(ctx, "never-written"); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
	_, err = s.CompareAndSwap(ctx, "k", v2, []byte("d"))
	conflict(t, "update of a deleted key", err)
	v3, err := s.CompareAndSwap(ctx, "k", 0, []byte("e"))
	if err != nil || v3 == 0 || v3 == v1 || v3 == v2 {
		t.Fatalf("re-create = %d, %v: versions must never be reused for a key (it had %d, %d)", v3, err, v1, v2)
	}
	if d, v, err := s.Load(ctx, "k"); string(d) != "e" || v != v3 || err != nil {
		t.Fatalf("Load = %q, %d, %v; want e, %d", d, v, err, v3)
	}
	// Keys are independent.
	if d, v, err := s.Load(ctx, "k2"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load of another key = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
}

func testData(t *testing.T, s mcpbind.Store) {
	ctx := context.Background()
	// Empty data is a record, not a missing one.
	ve, err := s.CompareAndSwap(ctx, "empty", 0, []byte{})
	if err != nil {
		t.Fatal(err)
	}
	if d, v, err := s.Load(ctx, "empty"); d == nil || len(d) != 0 || v != ve || err != nil {
		t.Fatalf("Load of empty data = %q (nil: %v), %d, %v; want empty data, %d", d, d == nil, v, err, ve)
	}
	// Any bytes, and records of some size.
	data := make([]byte, 256*1024)
	for i := range data {
		data[i] = byte(i * 7)
	}
	v, err := s.CompareAndSwap(ctx, "bin", 0, data)
	if err != nil {
		t.Fatal(err)
	}
	got, gv, err := s.Load(ctx, "bin")
	if err != nil || gv != v || !bytes.Equal(got, data) {
		t.Fatalf("Load = %d bytes, %d, %v; want the %d bytes written, %d", len(got), gv, err, len(data), v)
	}
}

// testVersionsNeverReused writes one key many times, deleting it now and
// then, and a second key in between.
func testVersionsNeverReused(t *testing.T, s mcpbind.Store) {
	ctx := context.Background()
	seen := map[uint64]bool{}
	var cur uint64
	for i := range 300 {
		if i%30 == 29 {
			if err := s.Delete(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			cur = 0
		}
		v, err := s.CompareAndSwap(ctx, "k", cur, []byte(strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if seen[v] || v == 0 {
			t.Fatalf("write %d: version %d was handed out before", i, v)
		}
		seen[v] = true
		cur = v
		if _, err := s.CompareAndSwap(ctx, "other"+strconv.Itoa(i), 0, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
}

// testConcurrent increments a counter from many goroutines with
// load/compare-and-swap/retry: no increment may be lost, and no version
// handed out twice.
func testConcurrent(t *testing.T, s mcpbind.Store) {
	ctx := context.Background()
	const workers, each = 16, 25
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		versions = map[uint64]bool{}
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				for {
					d, v, err := s.Load(ctx, "n")
					if err != nil {
						t.Error(err)
						return
					}
					n := 0
					if d != nil {
						n, _ = strconv.Atoi(string(d))
					}
					nv, err := s.CompareAndSwap(ctx, "n", v, []byte(strconv.Itoa(n+1)))
					if err == nil {
						mu.Lock()
						if versions[nv] {
							t.Errorf("version %d handed out twice", nv)
						}
						versions[nv] = true
						mu.Unlock()
						break
					}
					if !errors.Is(err, mcpbind.ErrConflict) {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if d, _, err := s.Load(ctx, "n"); err != nil || string(d) != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, %v; want %d", d, err, workers*each)
	}
}

// value is a record held as a value, which counts its encodings.
type value struct {
	data    string
	version uint64 // as newValue was given it
	encoded *int
}

func (v *value) Size() int { return len(v.data) }

func (v *value) Encode() []byte {
	*v.encoded++
	return []byte(v.data)
}

// testValues checks a ValueStore: a value is held as it was stored (not
// encoded) and knows its version, Load returns its encoding, a record
// written as bytes is a mcpbind.Bytes value, and a conflict stores nothing.
func testValues(t *testing.T, s mcpbind.ValueStore) {
	ctx := context.Background()
	if v, ver, err := s.LoadValue(ctx, "k"); v != nil || ver != 0 || err != nil {
		t.Fatalf("LoadValue of a missing key = %v, %d, %v; want nil, 0, nil", v, ver, err)
	}
	encoded := 0
	mk := func(data string) func(uint64) mcpbind.Value {
		return func(ver uint64) mcpbind.Value { return &value{data: data, version: ver, encoded: &encoded} }
	}
	v1, err := s.CompareAndSwapValue(ctx, "k", 0, mk("a"))
	if err != nil || v1 == 0 {
		t.Fatalf("create = %d, %v; want a version other than 0", v1, err)
	}
	got, ver, err := s.LoadValue(ctx, "k")
	if x, ok := got.(*value); !ok || x.data != "a" || x.version != v1 || ver != v1 || err != nil {
		t.Fatalf("LoadValue = %#v, %d, %v; want the value stored, made for version %d", got, ver, err, v1)
	}
	if encoded != 0 {
		t.Fatalf("the store encoded a value it holds %d times", encoded)
	}
	if d, ver, err := s.Load(ctx, "k"); string(d) != "a" || ver != v1 || err != nil {
		t.Fatalf("Load of a value = %q, %d, %v; want its encoding a, %d", d, ver, err, v1)
	}
	called := false
	_, err = s.CompareAndSwapValue(ctx, "k", 0, func(uint64) mcpbind.Value { called = true; return &value{data: "b", encoded: &encoded} })
	conflict(t, "second create", err)
	_, err = s.CompareAndSwapValue(ctx, "k", v1+1, func(uint64) mcpbind.Value { called = true; return &value{data: "b", encoded: &encoded} })
	conflict(t, "update from a version the key never had", err)
	if called {
		t.Fatal("newValue was called for a compare-and-swap that failed")
	}
	v2, err := s.CompareAndSwap(ctx, "k", v1, []byte("c"))
	if err != nil || v2 == v1 {
		t.Fatalf("update with bytes = %d, %v", v2, err)
	}
	if got, ver, err := s.LoadValue(ctx, "k"); ver != v2 || err != nil || got == nil || string(got.Encode()) != "c" {
		t.Fatalf("LoadValue of bytes = %v, %d, %v; want c, %d", got, ver, err, v2)
	} else if _, ok := got.(mcpbind.Bytes); !ok {
		t.Fatalf("LoadValue of bytes = %T, want mcpbind.Bytes", got)
	}
	v3, err := s.CompareAndSwapValue(ctx, "k", v2, mk("d"))
	if err != nil || v3 == v2 || v3 == v1 {
		t.Fatalf("update with a value = %d, %v", v3, err)
	}
	if got, _, _ := s.LoadValue(ctx, "k"); got.(*value).version != v3 {
		t.Fatalf("the value was made for version %d, stored as %d", got.(*value).version, v3)
	}
}
