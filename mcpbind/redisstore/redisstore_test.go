package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
)

// The same contract as mcpbind's TestMemoryStoreCompareAndSwap.
func TestCompareAndSwap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisstore.New(startRedis(t), nil)
	if d, v, err := s.Load(ctx, "k"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load of a missing key = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	v1, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil || v1 == 0 {
		t.Fatalf("create = %d, %v", v1, err)
	}
	if _, err := s.CompareAndSwap(ctx, "k", 0, []byte("b")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("second create: err = %v, want ErrConflict", err)
	}
	v2, err := s.CompareAndSwap(ctx, "k", v1, []byte("b"))
	if err != nil || v2 <= v1 {
		t.Fatalf("update = %d, %v (old version %d): want a greater version", v2, err, v1)
	}
	if _, err := s.CompareAndSwap(ctx, "k", v1, []byte("c")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("update from a stale version: err = %v, want ErrConflict", err)
	}
	if _, err := s.CompareAndSwap(ctx, "k", v2+1, []byte("c")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("update from a future version: err = %v, want ErrConflict", err)
	}
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
	if _, err := s.CompareAndSwap(ctx, "k", v2, []byte("d")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("update of a deleted key: err = %v, want ErrConflict", err)
	}
	v3, err := s.CompareAndSwap(ctx, "k", 0, []byte("e"))
	if err != nil || v3 <= v2 {
		t.Fatalf("re-create = %d, %v: versions must never be reused (had %d, %d)", v3, err, v1, v2)
	}
	if d, v, err := s.Load(ctx, "k"); string(d) != "e" || v != v3 || err != nil {
		t.Fatalf("Load = %q, %d, %v; want e, %d", d, v, err, v3)
	}
	// Empty data is a record, not a missing one.
	ve, err := s.CompareAndSwap(ctx, "empty", 0, []byte{})
	if err != nil {
		t.Fatal(err)
	}
	if d, v, err := s.Load(ctx, "empty"); d == nil || len(d) != 0 || v != ve || err != nil {
		t.Fatalf("Load of empty data = %q (nil %v), %d, %v; want empty, %d", d, d == nil, v, err, ve)
	}
}

// TestVersionsIncrease writes many times in a row, deleting now and then:
// every version is greater than all before it.
func TestVersionsIncrease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisstore.New(startRedis(t), nil)
	var last, cur uint64
	for i := range 500 {
		if i%50 == 49 {
			if err := s.Delete(ctx, "k"); err != nil {
				t.Fatal(err)
			}
			cur = 0
		}
		v, err := s.CompareAndSwap(ctx, "k", cur, []byte(strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		if v <= last {
			t.Fatalf("write %d: version %d after %d", i, v, last)
		}
		last, cur = v, v
	}
	// The versions are microseconds of the server's clock (or above).
	if now := uint64(time.Now().UnixMicro()); last < now-uint64(time.Hour/time.Microsecond) || last > now+uint64(time.Hour/time.Microsecond) {
		t.Errorf("last version %d is not near the time in microseconds (%d)", last, now)
	}
}

func TestBinaryData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisstore.New(startRedis(t), nil)
	data := make([]byte, 256*3)
	for i := range data {
		data[i] = byte(i)
	}
	v, err := s.CompareAndSwap(ctx, "bin", 0, data)
	if err != nil {
		t.Fatal(err)
	}
	got, gv, err := s.Load(ctx, "bin")
	if err != nil || gv != v || string(got) != string(data) {
		t.Fatalf("Load = %d bytes, %d, %v; want the %d bytes written, %d", len(got), gv, err, len(data), v)
	}
}

// TestTTL checks the expiry of records and tombstones, with a short TTL.
func TestTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := startRedis(t)
	const ttl = 400 * time.Millisecond
	s := redisstore.New(client, &redisstore.Options{TTL: ttl, Prefix: "test:"})
	if s.TTL() != ttl {
		t.Fatalf("TTL() = %v, want %v", s.TTL(), ttl)
	}
	t1 := time.Now()
	v1, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	pttl, err := client.PTTL(ctx, s.Key("k")).Result()
	if err != nil || pttl <= 0 || pttl > ttl {
		t.Fatalf("PTTL of %s = %v, %v; want in (0, %v]", s.Key("k"), pttl, err, ttl)
	}
	// Each write sets the expiry again.
	time.Sleep(ttl / 2)
	v2, err := s.CompareAndSwap(ctx, "k", v1, []byte("b"))
	t2 := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if pttl, err := client.PTTL(ctx, s.Key("k")).Result(); err != nil || pttl <= ttl-time.Since(t2)-50*time.Millisecond {
		t.Fatalf("PTTL after the second write = %v, %v; want about %v: a write must refresh the expiry", pttl, err, ttl)
	}
	time.Sleep(time.Until(t1.Add(ttl + 50*time.Millisecond))) // past the first write's expiry
	d, v, err := s.Load(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t2) < ttl-20*time.Millisecond { // else the machine was too slow to tell
		if string(d) != "b" || v != v2 {
			t.Fatalf("Load before the TTL = %q, %d; a write must refresh the expiry", d, v)
		}
	}
	time.Sleep(time.Until(t2.Add(ttl + 50*time.Millisecond)))
	if d, v, err := s.Load(ctx, "k"); d != nil || v != 0 || err != nil {
		t.Fatalf("Load after the TTL = %q, %d, %v; want nil, 0, nil", d, v, err)
	}
	if n, err := client.Exists(ctx, s.Key("k")).Result(); n != 0 || err != nil {
		t.Fatalf("the expired record is still in Redis: %d, %v", n, err)
	}
	if _, err := s.CompareAndSwap(ctx, "k", v2, []byte("c")); !errors.Is(err, mcpbind.ErrConflict) {
		t.Fatalf("update of an expired record: err = %v, want ErrConflict", err)
	}
	v3, err := s.CompareAndSwap(ctx, "k", 0, []byte("c"))
	if err != nil || v3 <= v2 {
		t.Fatalf("create after expiry = %d, %v; versions must never be reused (had %d)", v3, err, v2)
	}
	// A tombstone expires too.
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n, err := client.Exists(ctx, s.Key("k")).Result(); n != 1 || err != nil {
		t.Fatalf("no tombstone after Delete: %d, %v", n, err)
	}
	time.Sleep(ttl + 100*time.Millisecond)
	if n, err := client.Exists(ctx, s.Key("k")).Result(); n != 0 || err != nil {
		t.Fatalf("the tombstone did not expire: %d, %v", n, err)
	}
	v4, err := s.CompareAndSwap(ctx, "k", 0, []byte("d"))
	if err != nil || v4 <= v3 {
		t.Fatalf("create after the tombstone expired = %d, %v; versions must never be reused (had %d)", v4, err, v3)
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	s := redisstore.New(nil, nil)
	if s.TTL() != redisstore.DefaultTTL {
		t.Errorf("default TTL = %v, want %v", s.TTL(), redisstore.DefaultTTL)
	}
	if s.Key("k") != "k" {
		t.Errorf("default Key(k) = %q", s.Key("k"))
	}
	if got := redisstore.New(nil, &redisstore.Options{TTL: 1500 * time.Microsecond}).TTL(); got != 2*time.Millisecond {
		t.Errorf("TTL 1.5 ms rounds to %v, want 2ms", got)
	}
}

// TestPrefix checks that records live under Prefix + key, and that two
// stores with different prefixes do not see each other's records.
func TestPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := startRedis(t)
	a := redisstore.New(client, &redisstore.Options{Prefix: "a:"})
	b := redisstore.New(client, &redisstore.Options{Prefix: "b:"})
	if _, err := a.CompareAndSwap(ctx, "k", 0, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if d, v, _ := b.Load(ctx, "k"); d != nil || v != 0 {
		t.Fatalf("store b sees store a's record: %q, %d", d, v)
	}
	if got, err := client.HGet(ctx, "a:k", "d").Result(); got != "a" || err != nil {
		t.Fatalf("HGET a:k d = %q, %v", got, err)
	}
}

// TestScriptFlushed checks the fallback from EVALSHA to EVAL when Redis
// lost its script cache (a restart, a failover, SCRIPT FLUSH).
func TestScriptFlushed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := startRedis(t)
	s := redisstore.New(client, nil)
	v, err := s.CompareAndSwap(ctx, "k", 0, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CompareAndSwap(ctx, "k", v, []byte("b")); err != nil {
		t.Fatalf("after SCRIPT FLUSH: %v", err)
	}
}

// TestErrors checks that Redis errors are returned, wrapped, and are not
// conflicts.
func TestErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := startRedis(t)
	s := redisstore.New(client, nil)
	if err := client.Set(ctx, "str", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx, "str"); err == nil || errors.Is(err, mcpbind.ErrConflict) {
		t.Errorf("Load of a string key: err = %v, want a WRONGTYPE error", err)
	}
	if _, err := s.CompareAndSwap(ctx, "str", 0, []byte("a")); err == nil || errors.Is(err, mcpbind.ErrConflict) {
		t.Errorf("CompareAndSwap of a string key: err = %v, want a WRONGTYPE error", err)
	}
	if err := s.Delete(ctx, "str"); err == nil {
		t.Error("Delete of a string key: no error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.CompareAndSwap(cctx, "k", 0, []byte("a")); !errors.Is(err, context.Canceled) {
		t.Errorf("CompareAndSwap with a cancelled context: err = %v, want context.Canceled", err)
	}
	if err := client.HSet(ctx, "bad", "v", "x", "d", "y").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Load(ctx, "bad"); err == nil {
		t.Error("Load of a record with a bad version: no error")
	}
}

// TestConcurrentCAS increments a counter from many goroutines with
// load/compare-and-swap/retry: no increment may be lost.
func TestConcurrentCAS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := startRedis(t)
	const workers, each = 32, 25
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		conflicts int
		versions  = map[uint64]bool{}
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := redisstore.New(client, nil) // a store per worker, as gate instances would have
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
					mu.Lock()
					conflicts++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	d, _, err := redisstore.New(client, nil).Load(ctx, "n")
	if err != nil || string(d) != strconv.Itoa(workers*each) {
		t.Fatalf("counter = %s, %v; want %d", d, err, workers*each)
	}
	t.Logf("%d increments, %d conflicts", workers*each, conflicts)
}
