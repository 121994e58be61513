package mcpbind_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statesync"
)

// invalidatingJSON is the checkout workflow whose transitions declare what
// they make stale, in meta.mcp.invalidates.
const invalidatingJSON = `{
  "id": "checkout",
  "initial": "empty",
  "states": {
    "empty": {
      "on": {"ADD_ITEM": "has_items"},
      "meta": {"mcp": {"tools": ["cart_add_item"], "events": {"cart_add_item": "ADD_ITEM"},
                       "invalidates": {"cart_add_item": ["cart.*"]}}}
    },
    "has_items": {
      "on": {"CHECKOUT": "payment", "CLEAR": "empty"},
      "meta": {"mcp": {"tools": ["cart_add_item", "cart_checkout"], "events": {"cart_checkout": "CHECKOUT"},
                       "invalidates": {"cart_checkout": ["cart.*"]}}}
    },
    "payment": {
      "on": {"PAY": "confirmed", "CANCEL": "has_items"},
      "meta": {"mcp": {"tools": ["cart_pay"], "events": {"cart_pay": "PAY"},
                       "invalidates": {"cart_pay": ["cart.*"]}}}
    },
    "confirmed": {"type": "final"}
  }
}`

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// layered is a server with both layers: the gate and, around it, a
// statesync layer.
type layered struct {
	*fixture
	layer    *statesync.Layer
	logs     *syncBuffer
	mu       sync.Mutex
	events   []statesync.Event
	resolved []string // wire names the layer resolved (its cache is off)
}

func (l *layered) takeEvents() []statesync.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := l.events
	l.events = nil
	return ev
}

func (l *layered) takeResolved() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.resolved
	l.resolved = nil
	slices.Sort(r)
	return slices.Compact(r)
}

// newLayered builds the server. With misordered set, the layer is installed
// inside the gate instead of around it.
func newLayered(t *testing.T, kind string, misordered bool) *layered {
	t.Helper()
	l := &layered{logs: &syncBuffer{}}
	logger := slog.New(slog.NewTextHandler(l.logs, nil))
	layer, err := statesync.New([]statesync.Policy{
		{Match: "cart.checkout", Invalidates: []string{"cart.*"}},      // the same pattern as the transition's
		{Match: "cart.pay", Invalidates: []string{"orders.*"}},         // another one
		{Match: "catalog.*", CacheControl: statesync.Immutable},        // reference data
		{Match: "cart.**", CacheControl: statesync.NoStore},            // everything else of the cart
		{Match: "orders.list", CacheControl: statesync.NoStore},        // unbound
		{Match: "workflow.**", CacheControl: statesync.NoStore},        // not registered here
		{Match: "nothing.here", Invalidates: []string{"nothing.else"}}, // matches no tool
	}, &statesync.Options{
		Default:   statesync.NoStore,
		CacheSize: -1,
		Logger:    logger,
		Key: func(tool string) string {
			l.mu.Lock()
			l.resolved = append(l.resolved, tool)
			l.mu.Unlock()
			return statesync.GroupAction("_")(tool)
		},
		OnInvalidation: func(e statesync.Event) {
			l.mu.Lock()
			l.events = append(l.events, e)
			l.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	l.layer = layer
	g, err := mcpbind.New(compile(t, kind, invalidatingJSON, nil), &mcpbind.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	l.fixture = &fixture{server: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil), gate: g}
	for _, name := range []string{"cart_add_item", "cart_checkout", "cart_pay", "cart_view", "catalog_list"} {
		l.addTool(name, false)
	}
	l.addTool("cart_broken", true)
	if err := g.Bind("cart_broken", mcpbind.Binding{States: []string{"has_items"}, Event: "CHECKOUT", Invalidates: []string{"cart.*"}}); err != nil {
		t.Fatal(err)
	}
	if misordered {
		l.server.AddReceivingMiddleware(layer.Middleware)
		g.Attach(l.server)
	} else {
		g.AttachWith(l.server, layer)
	}
	return l
}

// describedTools lists the session's tools as "name: description".
func describedTools(t *testing.T, c *client) []string {
	t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name+": "+tool.Description)
	}
	return out
}

// notices returns the invalidation notices in a result's content.
func notices(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, "[System: Cache invalidated") {
			out = append(out, tc.Text)
		}
	}
	return out
}

func expectNotices(t *testing.T, what string, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	if got := notices(res); !slices.Equal(got, want) {
		t.Fatalf("%s: notices %q, want %q (content %q)", what, got, want, resultText(res))
	}
	if len(want) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != want[0] {
			t.Fatalf("%s: the notice is not content[0]: %q", what, resultText(res))
		}
	}
}

// TestWithStatesync runs both layers in one chain, end to end over the
// go-sdk client: the gate filters tools/list before the layer decorates it,
// a saved transition's patterns join the tool's own in one notice, and
// refused, failed and unsaved calls invalidate nothing.
func TestWithStatesync(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			l := newLayered(t, engine, false)
			a := l.connect(t, "2025-11-25")
			b := l.connect(t, "2025-11-25")

			// Only the visible tools are listed, each decorated once, and
			// the layer never resolves a hidden tool.
			l.takeResolved()
			want := []string{
				"cart_add_item: cart_add_item [Cache-Control: no-store]",
				"cart_view: cart_view [Cache-Control: no-store]",
				"catalog_list: catalog_list [Cache-Control: immutable]",
			}
			if got := describedTools(t, a); !slices.Equal(got, want) {
				t.Fatalf("tools in empty:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got := l.takeResolved(); !slices.Equal(got, []string{"cart_add_item", "cart_view", "catalog_list"}) {
				t.Fatalf("the layer resolved %v: hidden tools must never reach it", got)
			}

			// A refused call of a hidden tool: no notice, no event.
			res := b.call("cart_pay", map[string]any{"payment_method": "card"})
			refusal(t, res)
			expectNotices(t, "refused cart_pay", res)
			if ev := l.takeEvents(); len(ev) != 0 {
				t.Fatalf("a refused call invalidated %+v", ev)
			}
			if l.ran("cart_pay") != 0 {
				t.Fatal("a refused tool ran")
			}

			// The transition empty -> has_items invalidates cart.*; the tool's
			// policy has nothing to add.
			res = a.call("cart_add_item", map[string]any{"product_id": "p1"})
			expectNotices(t, "first cart_add_item", res, "[System: Cache invalidated for cart.* — caused by cart.add_item]")
			a.expectChanged("cart_add_item")
			b.expectQuiet("other session, cart_add_item")

			// A second add: has_items ignores ADD_ITEM, nothing is saved, so
			// the transition invalidates nothing (the tool's own data is its
			// policy's business).
			res = a.call("cart_add_item", map[string]any{"product_id": "p2"})
			expectNotices(t, "second cart_add_item", res)
			a.expectQuiet("second cart_add_item")

			want = []string{
				"cart_add_item: cart_add_item [Cache-Control: no-store]",
				"cart_broken: cart_broken [Cache-Control: no-store]",
				"cart_checkout: cart_checkout [Cache-Control: no-store]",
				"cart_view: cart_view [Cache-Control: no-store]",
				"catalog_list: catalog_list [Cache-Control: immutable]",
			}
			if got := describedTools(t, a); !slices.Equal(got, want) {
				t.Fatalf("tools in has_items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got := describedTools(t, b); len(got) != 3 {
				t.Fatalf("the other session sees %v", got)
			}

			// A failed call (IsError) sends no event and invalidates nothing.
			res = a.call("cart_broken", nil)
			if !res.IsError {
				t.Fatal("cart_broken succeeded")
			}
			expectNotices(t, "failed call", res)
			if s := stateOf(t, l.fixture, a); s != "has_items" {
				t.Fatalf("state %v after a failed call", s)
			}
			l.takeEvents()

			// cart_checkout: its policy and its transition both invalidate
			// cart.*: one notice, one event, the pattern once; list_changed
			// to the caller only.
			res = a.call("cart_checkout", nil)
			expectNotices(t, "cart_checkout", res, "[System: Cache invalidated for cart.* — caused by cart.checkout]")
			if !strings.HasSuffix(resultText(res), "ok cart_checkout") {
				t.Fatalf("cart_checkout content: %q", resultText(res))
			}
			a.expectChanged("cart_checkout")
			b.expectQuiet("other session, cart_checkout")
			ev := l.takeEvents()
			if len(ev) != 1 || ev[0].CausedBy != "cart.checkout" || !slices.Equal(ev[0].Patterns, []string{"cart.*"}) || ev[0].Session != a.ss {
				t.Fatalf("events %+v", ev)
			}

			// cart_pay: the policy's orders.* first, then the transition's
			// cart.*.
			res = a.call("cart_pay", map[string]any{"payment_method": "card"})
			expectNotices(t, "cart_pay", res, "[System: Cache invalidated for orders.*, cart.* — caused by cart.pay]")
			a.expectChanged("cart_pay")
			if ev := l.takeEvents(); len(ev) != 1 {
				t.Fatalf("%d events for one call", len(ev))
			}

			// The other session is still in empty.
			res = b.call("cart_checkout", nil)
			refusal(t, res)
			expectNotices(t, "refused cart_checkout", res)
			if strings.Contains(l.logs.String(), "no statesync layer") {
				t.Fatalf("a correct chain was reported as misordered:\n%s", l.logs)
			}
		})
	}
}

// TestWithStatesyncMisordered: a layer installed inside the gate cannot
// receive the transitions' patterns; the gate says so in its log, once.
func TestWithStatesyncMisordered(t *testing.T) {
	l := newLayered(t, "flat", true)
	a := l.connect(t, "2025-11-25")
	res := a.call("cart_add_item", map[string]any{"product_id": "p"})
	expectNotices(t, "misordered cart_add_item", res) // the transition's cart.* is lost
	a.call("cart_checkout", nil)                      // its policy still invalidates cart.*
	logs := l.logs.String()
	if n := strings.Count(logs, "no statesync layer wraps the gate"); n != 1 {
		t.Fatalf("the misordering was logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "tool=cart_add_item") || !strings.Contains(logs, "AttachWith") {
		t.Fatalf("log: %s", logs)
	}
}

// TestInvalidatesWithoutLayer: a gate alone with declared patterns works,
// and logs once that they go nowhere.
func TestInvalidatesWithoutLayer(t *testing.T) {
	logs := &syncBuffer{}
	f := newFixture(t, compile(t, "flat", invalidatingJSON, nil), &mcpbind.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c := f.connect(t, "2025-11-25")
	res := c.call("cart_add_item", map[string]any{"product_id": "p"})
	if res.IsError || len(notices(res)) != 0 {
		t.Fatalf("result %q", resultText(res))
	}
	c.expectChanged("cart_add_item")
	c.call("cart_checkout", nil)
	if n := strings.Count(logs.String(), "no statesync layer wraps the gate"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs)
	}
}

// TestTargetlessTransitionInvalidates: a transition without a target whose
// actions change the context is saved, and so invalidates; the state value
// does not change.
func TestTargetlessTransitionInvalidates(t *testing.T) {
	layer, err := statesync.New(nil, &statesync.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, counterEngine(t), nil, "inc")
	// newFixture attached the gate; add the layer around it.
	f.server.AddReceivingMiddleware(layer.Middleware)
	if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC", Invalidates: []string{"counter.value", "counter.value"}}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	for i := 0; i < 2; i++ {
		res := c.call("inc", nil)
		expectNotices(t, "inc", res, "[System: Cache invalidated for counter.value — caused by inc]")
	}
	c.expectQuiet("a targetless transition")
}

// TestUnsavedTransitionInvalidatesNothing: when the new state cannot be
// saved, the workflow did not move, and nothing is invalidated.
func TestUnsavedTransitionInvalidatesNothing(t *testing.T) {
	layer, err := statesync.New(nil, &statesync.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	store := &failingStore{Store: mcpbind.NewMemoryStore(nil)}
	g, err := mcpbind.New(compile(t, "flat", invalidatingJSON, nil), &mcpbind.Options{Store: store, Logger: quietLogger(), LeaseTTL: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{server: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil), gate: g}
	f.addTool("cart_add_item", false)
	g.AttachWith(f.server, layer)
	c := f.connect(t, "2025-11-25")
	store.failSave.Store(true)
	store.passSaves.Store(1) // the reservation, not the commit
	res := c.call("cart_add_item", map[string]any{"product_id": "p"})
	if res.IsError || !strings.Contains(resultText(res), "was not applied") {
		t.Fatalf("result %q", resultText(res))
	}
	expectNotices(t, "unsaved", res)
	store.failSave.Store(false)
	res = c.call("cart_add_item", map[string]any{"product_id": "p"})
	expectNotices(t, "saved", res, "[System: Cache invalidated for cart.* — caused by cart.add_item]")
}
