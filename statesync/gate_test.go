package statesync_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeGate stands in for mcpbind: a workflow whose state decides which tools
// are visible and callable, and whose transitions, fired by successful
// calls, may declare patterns they invalidate. It is what the layer's hook
// is designed for; it is not mcpbind's implementation.
type fakeGate struct {
	mu          sync.Mutex
	state       string
	visibleIn   map[string][]string // tool -> states in which it is visible
	target      map[string]string   // tool -> state its successful call moves to
	invalidates map[string][]string // tool -> patterns its transition invalidates
	hookErrs    []error
}

func newFakeGate() *fakeGate {
	g := &fakeGate{
		state: "shopping",
		visibleIn: map[string][]string{
			"cart_add":      {"shopping"},
			"cart_checkout": {"shopping"},
			"cart_pay":      {"checked_out"},
		},
		target:      map[string]string{"cart_checkout": "checked_out", "cart_pay": "paid"},
		invalidates: map[string][]string{"cart_checkout": {"cart.*"}, "cart_pay": {"cart.*", "orders.*"}},
	}
	for _, ps := range g.invalidates {
		for _, p := range ps {
			if err := statesync.ValidatePattern(p); err != nil { // checked when the gate is built
				panic(err)
			}
		}
	}
	return g
}

func (g *fakeGate) errs() []error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.hookErrs)
}

func (g *fakeGate) visible(tool string) bool {
	states, bound := g.visibleIn[tool]
	return !bound || slices.Contains(states, g.state)
}

func (g *fakeGate) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			lr := *res.(*mcp.ListToolsResult)
			g.mu.Lock()
			lr.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *mcp.Tool) bool { return !g.visible(t.Name) })
			g.mu.Unlock()
			return &lr, nil
		case "tools/call":
			name := req.(*mcp.CallToolRequest).Params.Name
			g.mu.Lock()
			ok, state := g.visible(name), g.state
			g.mu.Unlock()
			if !ok {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "tool " + name + " is not available in state " + state}}}, nil
			}
			res, err := next(ctx, method, req)
			if err != nil || res.(*mcp.CallToolResult).IsError {
				return res, err // failed calls fire no transition
			}
			g.mu.Lock()
			to, bound := g.target[name]
			changed := bound && to != g.state
			if changed {
				g.state = to
			}
			g.mu.Unlock()
			if changed {
				if err := statesync.Invalidate(ctx, g.invalidates[name]...); err != nil {
					g.mu.Lock()
					g.hookErrs = append(g.hookErrs, err)
					g.mu.Unlock()
				}
			}
			return res, nil
		}
		return next(ctx, method, req)
	}
}

type cartArgs struct {
	Fail bool `json:"fail,omitempty"`
}

func cartHandler(text string) mcp.ToolHandlerFor[cartArgs, any] {
	return func(_ context.Context, _ *mcp.CallToolRequest, in cartArgs) (*mcp.CallToolResult, any, error) {
		if in.Fail {
			return nil, nil, errors.New("payment declined")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
}

// newGatedServer builds a shop with the layer wrapping the gate, the order
// Layer.Middleware documents, and records which wire names the layer
// resolves.
func newGatedServer(t *testing.T, layerFirst bool) (*mcp.Server, *fakeGate, func() []statesync.Event, func() []string) {
	t.Helper()
	var (
		mu       sync.Mutex
		resolved []string
		events   []statesync.Event
	)
	key := statesync.GroupAction("_")
	l := mustNew(t, []statesync.Policy{
		{Match: "cart.checkout", Invalidates: []string{"orders.*"}},
		{Match: "cart.add", Invalidates: []string{"cart.*"}},
	}, &statesync.Options{
		Default: statesync.NoStore,
		Key: func(tool string) string {
			mu.Lock()
			resolved = append(resolved, tool)
			mu.Unlock()
			return key(tool)
		},
		OnInvalidation: func(e statesync.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	g := newFakeGate()
	s := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "cart_add", Description: "Add an item."}, cartHandler("added"))
	mcp.AddTool(s, &mcp.Tool{Name: "cart_checkout", Description: "Check out."}, cartHandler("checked out"))
	mcp.AddTool(s, &mcp.Tool{Name: "cart_pay", Description: "Pay."}, cartHandler("paid"))
	mcp.AddTool(s, &mcp.Tool{Name: "cart_view", Description: "View the cart."}, cartHandler("[]"))
	if layerFirst {
		s.AddReceivingMiddleware(l.Middleware, g.Middleware)
	} else {
		s.AddReceivingMiddleware(g.Middleware, l.Middleware)
	}
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(resolved)
	}
	evs := func() []statesync.Event {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(events)
	}
	return s, g, evs, seen
}

func listDescs(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tool := range lt.Tools {
		out[tool.Name] = tool.Description
	}
	return out
}

// TestGateInOneChain: the layer wraps a gate in one middleware chain. The
// gate filters tools/list before the layer decorates it, so hidden tools are
// never resolved; a refused call invalidates nothing; a transition's
// patterns join the tool's own in one notice and one event.
func TestGateInOneChain(t *testing.T) {
	s, g, events, resolved := newGatedServer(t, true)
	cs := connect(t, s, "2025-11-25", nil)

	descs := listDescs(t, cs)
	want := map[string]string{
		"cart_add":      "Add an item. [Cache-Control: no-store]",
		"cart_checkout": "Check out. [Cache-Control: no-store]",
		"cart_view":     "View the cart. [Cache-Control: no-store]",
	}
	if len(descs) != len(want) {
		t.Fatalf("tools = %v", descs)
	}
	for n, d := range want {
		if descs[n] != d {
			t.Errorf("%s: %q, want %q", n, descs[n], d)
		}
	}
	if slices.Contains(resolved(), "cart_pay") {
		t.Error("the layer resolved a tool the gate hides: double work")
	}

	refused := call(t, cs, "cart_pay", map[string]any{})
	if !refused.IsError || len(refused.Content) != 1 {
		t.Errorf("hidden call = %v %q", refused.IsError, texts(refused))
	}
	if len(events()) != 0 {
		t.Errorf("a refused call invalidated: %v", events())
	}

	// No transition: only the policy's patterns.
	res := call(t, cs, "cart_add", map[string]any{})
	if got := texts(res); !slices.Equal(got, []string{"[System: Cache invalidated for cart.* — caused by cart.add]", "added"}) {
		t.Errorf("cart_add = %q", got)
	}

	// A transition: the policy's orders.* and the gate's cart.*, once.
	res = call(t, cs, "cart_checkout", map[string]any{})
	if got := texts(res); !slices.Equal(got, []string{"[System: Cache invalidated for orders.*, cart.* — caused by cart.checkout]", "checked out"}) {
		t.Errorf("cart_checkout = %q", got)
	}
	if len(events()) != 2 || !slices.Equal(events()[1].Patterns, []string{"orders.*", "cart.*"}) {
		t.Errorf("events = %+v", events())
	}

	descs = listDescs(t, cs)
	if _, ok := descs["cart_pay"]; !ok || descs["cart_pay"] != "Pay. [Cache-Control: no-store]" || len(descs) != 2 {
		t.Errorf("after checkout: %v", descs)
	}

	// A failed call fires no transition and invalidates nothing.
	res = call(t, cs, "cart_pay", map[string]any{"fail": true})
	if !res.IsError || len(texts(res)) != 1 || len(events()) != 2 {
		t.Errorf("failed pay = %v %q, %d events", res.IsError, texts(res), len(events()))
	}
	// A transition of a tool with no policy patterns: the gate's alone.
	res = call(t, cs, "cart_pay", map[string]any{})
	if got := texts(res); got[0] != "[System: Cache invalidated for cart.*, orders.* — caused by cart.pay]" {
		t.Errorf("cart_pay = %q", got)
	}
	if errs := g.errs(); len(errs) != 0 {
		t.Errorf("hook errors: %v", errs)
	}
}

// TestGateOutsideLayer: installed the other way round, the gate's hook has
// no layer to report to and says so, and the layer decorates tools the gate
// then drops.
func TestGateOutsideLayer(t *testing.T) {
	s, g, _, resolved := newGatedServer(t, false)
	cs := connect(t, s, "2025-11-25", nil)
	listDescs(t, cs)
	if !slices.Contains(resolved(), "cart_pay") {
		t.Error("expected the inner layer to see every tool")
	}
	res := call(t, cs, "cart_checkout", map[string]any{})
	if got := texts(res); got[0] != "[System: Cache invalidated for orders.* — caused by cart.checkout]" {
		t.Errorf("cart_checkout = %q", got)
	}
	if errs := g.errs(); len(errs) != 1 || !errors.Is(errs[0], statesync.ErrNoLayer) {
		t.Errorf("hook errors = %v, want ErrNoLayer", errs)
	}
}

// TestHookPatternsDroppedOnFailure: patterns added during a call that ends
// in an error result are dropped.
func TestHookPatternsDroppedOnFailure(t *testing.T) {
	var events int
	l := mustNew(t, nil, &statesync.Options{OnInvalidation: func(statesync.Event) { events++ }})
	h := l.Middleware(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		if err := statesync.Invalidate(ctx, "cart.*"); err != nil {
			t.Error(err)
		}
		return &mcp.CallToolResult{IsError: true}, nil
	})
	res, _ := h(context.Background(), "tools/call", callReq("cart_checkout"))
	if len(res.(*mcp.CallToolResult).Content) != 0 || events != 0 {
		t.Error("an error result must not invalidate")
	}
}
