package redisstore_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/mcpbind/storetest"
)

// TestContract: the Store contract (storetest), each subtest under its own
// prefix in one redis-server.
func TestContract(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) mcpbind.Store {
		return redisstore.New(client, &redisstore.Options{Prefix: t.Name() + ":"})
	})
}

// TestVersionsIncrease writes many times in a row, deleting now and then:
// every version is greater than all before it.
func TestVersionsIncrease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := redisstore.New(redistest.Start(t), nil)
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

// TestTTL checks the expiry of records and tombstones, with a short TTL.
func TestTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t)
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
	t3 := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t2) < ttl-20*time.Millisecond { // else the machine was too slow to tell
		if string(d) != "b" || v != v2 {
			t.Fatalf("Load before the TTL = %q, %d; a write must refresh the expiry", d, v)
		}
		// A load refreshes the expiry too.
		if pttl, err := client.PTTL(ctx, s.Key("k")).Result(); err != nil || pttl <= ttl-time.Since(t3)-50*time.Millisecond {
			t.Fatalf("PTTL after a load = %v, %v; want about %v: a load must refresh the expiry", pttl, err, ttl)
		}
	}
	time.Sleep(time.Until(t3.Add(ttl + 50*time.Millisecond)))
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
	client := redistest.Start(t)
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
	client := redistest.Start(t)
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
	client := redistest.Start(t)
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

// TestJobs: the jobs of gates on two connections to one redis-server (two
// instances) resume when the instance that ran them is closed, and move
// their workflow once (storetest.RunJobs).
func TestJobs(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t)
	storetest.RunJobs(t, func(t *testing.T) (mcpbind.Store, mcpbind.Store) {
		other := redis.NewClient(client.Options())
		t.Cleanup(func() { _ = other.Close() })
		opts := &redisstore.Options{Prefix: t.Name() + ":"}
		return redisstore.New(client, opts), redisstore.New(other, opts)
	})
}

// TestWatch: a write through one store reaches the watchers of another on
// the same prefix (pub/sub), with its version, filtered by the watch's
// prefix; a store with another Options.Prefix does not hear it.
func TestWatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := redistest.Start(t)
	other := redis.NewClient(client.Options())
	t.Cleanup(func() { _ = other.Close() })
	a := redisstore.New(client, &redisstore.Options{Prefix: "app1:"})
	b := redisstore.New(other, &redisstore.Options{Prefix: "app1:"})
	c := redisstore.New(other, &redisstore.Options{Prefix: "app2:"})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chB, err := b.Watch(wctx, "wf:")
	if err != nil {
		t.Fatal(err)
	}
	chC, err := c.Watch(wctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwap(ctx, "other:k", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	v, err := a.CompareAndSwap(ctx, "wf:k", 0, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-chB:
		if ch != (mcpbind.Change{Key: "wf:k", Version: v}) {
			t.Fatalf("change %+v, want wf:k at version %d (other:k is not under the watch's prefix)", ch, v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10 s")
	}
	select {
	case ch := <-chC:
		t.Fatalf("a store with another prefix heard %+v", ch)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	for range chB { // closed once the watch ended
	}
}

// TestWatchGates: two gates on two connections to one redis-server (two
// instances); a transition through one gives list_changed to the sessions
// of that workflow on the other (storetest.RunWatch).
func TestWatchGates(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t)
	storetest.RunWatch(t, func(t *testing.T) (mcpbind.Store, mcpbind.Store) {
		other := redis.NewClient(client.Options())
		t.Cleanup(func() { _ = other.Close() })
		opts := &redisstore.Options{Prefix: t.Name() + ":"}
		return redisstore.New(client, opts), redisstore.New(other, opts)
	})
}
