package sqlitestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/internal/histrec/histrectest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
)

// countingStore is a Store that counts its compare-and-swaps.
type countingStore struct {
	*sqlitestore.Store
	swaps atomic.Int64
}

func (s *countingStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	s.swaps.Add(1)
	return s.Store.CompareAndSwap(ctx, key, old, data)
}

func (s *countingStore) CompareAndSwapNoSync(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	s.swaps.Add(1)
	return s.Store.CompareAndSwapNoSync(ctx, key, old, data)
}

func (s *countingStore) SplitAbove() int { return s.Store.SplitAbove() }

func (s *countingStore) CompareAndSwapSplit(ctx context.Context, key string, old uint64, w *histrec.Write, durable bool) (uint64, error) {
	s.swaps.Add(1)
	return s.Store.CompareAndSwapSplit(ctx, key, old, w, durable)
}

// leaseSession returns a client session without an id (as over stdio) of
// a server whose tool "step" moves the workflow on store (its context
// counts the calls) and runs run while it does.
func leaseSession(t *testing.T, store mcpbind.Store, opts *mcpbind.Options, run func()) *mcp.ClientSession {
	t.Helper()
	m, err := statechart.Compile([]byte(`{"id": "w", "initial": "a", "context": {"n": 0}, "states": {"a": {
		"on": {"E": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}},
		"meta": {"mcp": {"tools": ["*"], "events": {"step": "E"}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := mcpbind.Options{}
	if opts != nil {
		o = *opts
	}
	o.Logger, o.Store = slog.New(slog.DiscardHandler), store
	g, err := mcpbind.New(m.Engine(), &o)
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "lease", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	mcp.AddTool(s, &mcp.Tool{Name: "step"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		run()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	g.Attach(s)
	// A panic of a tool becomes an error, as a recovering middleware makes
	// it.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return next(ctx, method, req)
		}
	})
	return connect(t, s, nil)
}

// count returns the call count in the context of the one workflow
// stored, as read from the file.
func count(t *testing.T, store *sqlitestore.Store) any {
	t.Helper()
	ctx := context.Background()
	keys, err := store.Keys(ctx, "")
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys %q, %v; want one", keys, err)
	}
	data, _, err := store.Load(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		State struct {
			Context struct {
				N any `json:"n"`
			} `json:"context"`
		} `json:"state"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return rec.State.Context.N
}

// TestLocalSessionMovingCallWritesOnce: a call that moves the workflow of
// a session without an id (stdio), which only this process can reach,
// writes the store once (the commit); its lease is held in the process.
func TestLocalSessionMovingCallWritesOnce(t *testing.T) {
	store := &countingStore{Store: open(t, &sqlitestore.Options{RelaxedSync: true})}
	cs := leaseSession(t, store, nil, func() {})
	ctx := context.Background()
	call := func() {
		t.Helper()
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "step"}); err != nil || res.IsError {
			t.Fatal(err, res)
		}
	}
	call() // the first saves the workflow
	before := store.swaps.Load()
	for range 5 {
		call()
	}
	if n := store.swaps.Load() - before; n != 5 {
		t.Fatalf("5 moving calls wrote the store %d times; want 5 (one each)", n)
	}
}

// TestLocalSessionCallsSerialised runs moving calls of one session at
// once: their tools run one at a time, and each call moves the workflow
// once, on disk.
func TestLocalSessionCallsSerialised(t *testing.T) {
	store := open(t, &sqlitestore.Options{RelaxedSync: true})
	var running, most atomic.Int64
	cs := leaseSession(t, store, nil, func() {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		for range 1000 {
			_ = json.Valid([]byte(`{"busy": true}`)) // some work while others may start
		}
		running.Add(-1)
	})
	const calls = 24
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "step"})
			if err != nil || res.IsError {
				t.Error(err, res)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d moving tools of one workflow ran at once; want 1", most.Load())
	}
	if n := count(t, store); n != float64(calls) {
		t.Errorf("the workflow counted %v calls; want %d", n, calls)
	}
}

// TestLocalLeaseOfPanickedToolAbandoned: a tool that panics through a
// recovering middleware skips its call's commit; the lease its call held
// in the process is taken to be abandoned LeaseTTL plus StoreTimeout
// after the tool ended (as a lease in the store expires), and the next
// call moves the workflow.
func TestLocalLeaseOfPanickedToolAbandoned(t *testing.T) {
	store := open(t, &sqlitestore.Options{RelaxedSync: true})
	var calls atomic.Int64
	cs := leaseSession(t, store, &mcpbind.Options{LeaseTTL: 50 * time.Millisecond, StoreTimeout: 50 * time.Millisecond, BusyWait: 10 * time.Second}, func() {
		if calls.Add(1) == 2 {
			panic("the tool failed")
		}
	})
	ctx := context.Background()
	step := func() (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: "step"})
	}
	if res, err := step(); err != nil || res.IsError {
		t.Fatal(err, res)
	}
	if _, err := step(); err == nil || !strings.Contains(err.Error(), "the tool failed") {
		t.Fatalf("the panicking call: %v; want its panic", err)
	}
	if res, err := step(); err != nil || res.IsError {
		t.Fatalf("the call after the panic: %v %v; want it to run", err, res)
	}
	if n := count(t, store); n != 2.0 {
		t.Errorf("the workflow counted %v calls; want 2 (the panicked one was not committed)", n)
	}
}

// TestGateKeepsHistoryApart: a gate on the store writes its workflow's
// record split: the run history, at most HistoryLimit entries, each call
// audited, is kept in rows of its own, and the record loaded (by another
// Store on the file) holds the newest entries, oldest first.
// Without a tail, each entry is a row; with one, the newest entries (here
// all of them) are in the record's row.
func TestGateKeepsHistoryApart(t *testing.T) {
	for _, tail := range []int{0, 3 << 10} {
		path := filepath.Join(t.TempDir(), "state.db")
		store := openAt(t, path, &sqlitestore.Options{RelaxedSync: true})
		store.SetSplitAbove(0) // a history of 3 entries fits in a page
		store.SetTailAbove(tail)
		key := histrectest.GateHistory(t, store, openAt(t, path, nil))
		want := 3
		if tail > 0 {
			want = 0
		}
		if n := historyRows(t, path, key); n != want {
			t.Fatalf("tail of %d bytes: %d rows of history; want %d", tail, n, want)
		}
	}
}
