package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// checkout is a machine whose pay tool may run once: it sends PAY, and
// no state after it lists the tool.
const checkout = `{
  "id": "checkout", "initial": "cart",
  "states": {
    "cart":    {"on": {"CHECKOUT": "payment"},
                "meta": {"mcp": {"tools": ["cart_add", "checkout"], "events": {"checkout": "CHECKOUT"}}}},
    "payment": {"on": {"PAY": "paid"},
                "meta": {"mcp": {"tools": ["pay"], "events": {"pay": "PAY"}}}},
    "paid":    {"meta": {"mcp": {"tools": ["receipt"]}}}
  }}`

// newGate compiles a machine and returns a core for it, closed at the
// end of the test.
func newGate(t testing.TB, config string, opts *Options) *Core {
	t.Helper()
	m, err := statechart.Compile([]byte(config), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Engine(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

// newCore returns a core for the checkout machine on store.
func newCore(t *testing.T, store gate.Store) *Core {
	t.Helper()
	return newGate(t, checkout, &Options{Store: store, DefaultDeny: true, BusyWait: 5 * time.Second})
}

// TestDecideAndCommit drives the core as a hook does, with no MCP server
// and no front door: a refusal names the path, a committed call moves the
// workflow, and the tool is allowed in the state that follows.
func TestDecideAndCommit(t *testing.T) {
	ctx := context.Background()
	c := newCore(t, nil)
	var d gate.Decider = c
	ref := gate.Ref{Name: "s1"}
	tools := []string{"cart_add", "checkout", "pay", "receipt"}

	dec, err := d.Decide(ctx, gate.Request{Ref: ref, Tool: "pay", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if dec.Allowed || dec.Refusal == nil || dec.Refusal.Code != gate.CodeForbidden {
		t.Fatalf("pay in cart: got %+v, want a FORBIDDEN refusal", dec)
	}
	if len(dec.Refusal.Path) != 1 || dec.Refusal.Path[0].Tool != "checkout" {
		t.Errorf("pay in cart: path %+v, want through checkout", dec.Refusal.Path)
	}

	tr, err := d.Commit(ctx, gate.Request{Ref: ref, Tool: "checkout", Tools: tools}, gate.Outcome{})
	if err != nil {
		t.Fatal(err)
	}
	if tr == nil || tr.Event.Type != "CHECKOUT" || tr.To != "payment" {
		t.Fatalf("commit of checkout: got %+v, want CHECKOUT to payment", tr)
	}
	dec, err = d.Decide(ctx, gate.Request{Ref: ref, Tool: "pay", Tools: tools})
	if err != nil || !dec.Allowed {
		t.Fatalf("pay in payment: got %+v, %v; want allowed", dec, err)
	}
	// Another workflow is where it started.
	dec, err = d.Decide(ctx, gate.Request{Ref: gate.Ref{Name: "s2"}, Tool: "pay", Tools: tools})
	if err != nil || dec.Allowed {
		t.Fatalf("pay in another workflow: got %+v, %v; want refused", dec, err)
	}
}

// TestReserveOnce runs a once-only tool from many goroutines through two
// cores on one store (two instances): exactly one reservation is allowed
// and moves the workflow; every other one waits for it and is refused in
// the state it left.
func TestReserveOnce(t *testing.T) {
	ctx := context.Background()
	store := gate.NewMemoryStore(nil)
	cores := []*Core{newCore(t, store), newCore(t, store)}
	ref := gate.Ref{Name: "s1"}
	if _, err := cores[0].Commit(ctx, gate.Request{Ref: ref, Tool: "checkout"}, gate.Outcome{}); err != nil {
		t.Fatal(err)
	}

	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		refused = map[string]int{}
		moved   []*gate.Transition
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cores[i%2]
			dec, rv, err := c.Reserve(ctx, gate.Request{Ref: ref, Tool: "pay"})
			if err != nil {
				t.Error(err)
				return
			}
			if !dec.Allowed {
				mu.Lock()
				refused[dec.Refusal.Code]++
				mu.Unlock()
				return
			}
			tr, err := rv.Commit(ctx, gate.Outcome{})
			mu.Lock()
			defer mu.Unlock()
			allowed++
			if err != nil {
				t.Error(err)
			}
			if tr != nil {
				moved = append(moved, tr)
			}
		}()
	}
	wg.Wait()
	if allowed != 1 || len(moved) != 1 || refused[gate.CodeForbidden] != n-1 {
		t.Fatalf("allowed %d, moved %d, refused %v; want 1, 1, %d FORBIDDEN", allowed, len(moved), refused, n-1)
	}
	wf, err := cores[1].WorkflowOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if wf.State.Value() != "paid" {
		t.Fatalf("state %v, want paid", wf.State.Value())
	}
}

// TestInfoOfNamedToolsIsKept: how a tool the machine names is gated is
// worked out once, whether or not the server listed it (a call resolves
// its tool with remember unset), and a name only a pattern matches is not
// kept unless the server lists it.
func TestInfoOfNamedToolsIsKept(t *testing.T) {
	g := newGate(t, `{"id": "m", "initial": "a", "states": {
	  "a": {"on": {"GO": "b"}, "meta": {"mcp": {"tools": ["pay", "cart_*"], "events": {"pay": "GO"}}}},
	  "b": {}}}`, &Options{})
	r := g.Rules.Load()
	if ti := g.Info(r, "pay", false); ti.Event != "GO" || ti.Mode != ModeStates {
		t.Fatalf("pay: %+v", ti)
	}
	if n := testing.AllocsPerRun(100, func() { g.Info(r, "pay", false) }); n != 0 {
		t.Fatalf("Info of a named tool: %v allocations, want 0 (kept)", n)
	}
	for _, name := range []string{"cart_add", "cart_x"} {
		if ti := g.Info(r, name, false); ti.Mode != ModeStates {
			t.Fatalf("%s: %+v", name, ti)
		}
	}
	if n := r.cached.Load(); n != 1 {
		t.Fatalf("%d tools kept, want 1 (pay; not the names only a pattern matches)", n)
	}
}

// TestFingerprintAllocs: a key's fingerprint, which every transition's
// log record carries, allocates only the string it returns.
func TestFingerprintAllocs(t *testing.T) {
	key := "mcpbind:flip:wf:0123456789abcdef0123456789abcdef"
	var fp string
	if n := testing.AllocsPerRun(100, func() { fp = Fingerprint(key) }); n != 1 {
		t.Fatalf("Fingerprint allocates %v times; want 1", n)
	}
	if sum := sha256.Sum256([]byte(key)); fp != hex.EncodeToString(sum[:6]) {
		t.Fatalf("Fingerprint(%q) = %q, want the first 6 bytes of its SHA-256 in hex", key, fp)
	}
}

// TestKeyPrints: the fingerprint kept for a key is the key's own, also
// when more keys than slots take turns, and two keys share a slot.
func TestKeyPrints(t *testing.T) {
	var k keyPrints
	k.seed = maphash.MakeSeed()
	keys := make([]string, 3*len(k.slots))
	for i := range keys {
		keys[i] = fmt.Sprintf("session:%d", i)
	}
	for range 2 {
		for _, key := range keys {
			if got, want := k.of(key), Fingerprint(key); got != want {
				t.Fatalf("of(%q) = %q, want %q", key, got, want)
			}
		}
	}
}

// TestLeaseIDIn: a lease id written into a holder's bytes is the id
// newLeaseID gives, and one that does not fit is allocated whole.
func TestLeaseIDIn(t *testing.T) {
	g := newCore(t, gate.NewMemoryStore(nil))
	var h holder
	id := g.newLeaseIDIn(h.idBytes[:])
	if want := g.instance + ".1"; id != want {
		t.Fatalf("lease id %q, want %q", id, want)
	}
	g.seq.Store(1 << 62)
	if id, want := g.newLeaseIDIn(h.idBytes[:]), g.instance+"."+strconv.FormatUint(1<<62+1, 36); id != want {
		t.Fatalf("lease id %q, want %q", id, want)
	}
}
