package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// checkoutJSON is the seeds' checkout workflow, bound in its meta.
const checkoutJSON = `{
  "id": "checkout",
  "initial": "empty",
  "states": {
    "empty": {
      "on": {"ADD_ITEM": "has_items"},
      "meta": {"mcp": {"tools": ["cart_add_item"], "events": {"cart_add_item": "ADD_ITEM"},
                       "instructions": "Add a product."}}
    },
    "has_items": {
      "on": {"CHECKOUT": "payment", "CLEAR": "empty"},
      "meta": {"mcp": {"tools": ["cart_add_item", "cart_checkout"], "events": {"cart_checkout": "CHECKOUT"}}}
    },
    "payment": {
      "on": {"PAY": "confirmed", "CANCEL": "has_items"},
      "meta": {"mcp": {"tools": ["cart_pay"], "events": {"cart_pay": "PAY"}, "instructions": "Pay."}}
    },
    "confirmed": {"type": "final"}
  }
}`

var (
	engines   = []string{"flat", "full"}
	protocols = []string{"2025-06-18", "2025-11-25"}
)

func compile(t testing.TB, kind, config string, opts *statechart.Options) statechart.Engine {
	t.Helper()
	switch kind {
	case "flat":
		m, err := flat.Compile([]byte(config))
		if err != nil {
			t.Fatal(err)
		}
		return m
	case "full":
		m, err := statechart.Compile([]byte(config), opts)
		if err != nil {
			t.Fatal(err)
		}
		return m.Engine()
	}
	t.Fatalf("unknown engine %q", kind)
	return nil
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fixture is a server with the checkout tools, gated.
type fixture struct {
	server *mcp.Server
	gate   *mcpbind.Gate
	runs   sync.Map // tool name -> *atomic.Int32: how often its handler ran
	// sameOutput keeps the workflow id a call names out of its tool's
	// result, so that the result is the same with handles and without
	// (benchmarks compare the two).
	sameOutput bool
}

func (f *fixture) ran(tool string) int {
	v, ok := f.runs.Load(tool)
	if !ok {
		return 0
	}
	return int(v.(*atomic.Int32).Load())
}

// addTool adds a raw tool whose handler counts its runs and returns its
// arguments as structured content. fail makes it return IsError.
func (f *fixture) addTool(name string, fail bool) {
	counter := &atomic.Int32{}
	f.runs.Store(name, counter)
	f.server.AddTool(&mcp.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			counter.Add(1)
			if fail {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "failed"}}}, nil
			}
			var args map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &args)
			out := map[string]any{"tool": name, "args": args}
			if id := mcpbind.WorkflowID(ctx); id != "" && !f.sameOutput {
				out["workflow"] = id
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "ok " + name}},
				StructuredContent: out,
			}, nil
		})
}

func newFixture(t testing.TB, engine statechart.Engine, opts *mcpbind.Options, tools ...string) *fixture {
	t.Helper()
	if opts == nil {
		opts = &mcpbind.Options{}
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	g, err := mcpbind.New(engine, opts)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{server: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil), gate: g}
	if len(tools) == 0 {
		tools = []string{"cart_add_item", "cart_checkout", "cart_pay", "cart_view"}
	}
	for _, name := range tools {
		f.addTool(name, false)
	}
	g.Attach(f.server)
	return f
}

// client is one session: the client side and the server side.
type client struct {
	t       testing.TB
	cs      *mcp.ClientSession
	ss      *mcp.ServerSession
	changed chan struct{}
}

func (f *fixture) connect(t testing.TB, protocol string) *client {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, ss: ss, changed: make(chan struct{}, 100)}
	mc := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.changed <- struct{}{} },
	})
	c.cs, err = mc.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cs.Close() })
	return c
}

// connectStateless connects a client of protocol to the fixture's server over
// stateless Streamable HTTP on loopback, where a request of protocol 2026-07-28 has
// no session and its workflow is named by a handle. The client gets no
// notifications.
func (f *fixture) connectStateless(t testing.TB, protocol string) *client {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	c := &client{t: t, changed: make(chan struct{}, 100)}
	var err error
	c.cs, err = mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cs.Close() })
	return c
}

func (c *client) tools() []string {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func (c *client) call(name string, args map[string]any) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// expectChanged waits for one notifications/tools/list_changed.
func (c *client) expectChanged(what string) {
	c.t.Helper()
	select {
	case <-c.changed:
	case <-time.After(5 * time.Second):
		c.t.Fatalf("%s: no notifications/tools/list_changed", what)
	}
}

// expectQuiet checks that no list_changed arrived (within a short wait:
// the notification, when there is one, is sent before the call's result).
func (c *client) expectQuiet(what string) {
	c.t.Helper()
	select {
	case <-c.changed:
		c.t.Fatalf("%s: unexpected notifications/tools/list_changed", what)
	case <-time.After(50 * time.Millisecond):
	}
}

func (c *client) expectTools(what string, want ...string) {
	c.t.Helper()
	if got := c.tools(); !slices.Equal(got, want) {
		c.t.Fatalf("%s: tools %v, want %v", what, got, want)
	}
}

func refusal(t testing.TB, res *mcp.CallToolResult) mcpbind.Refusal {
	t.Helper()
	if !res.IsError {
		t.Fatalf("call was not refused: %s", resultText(res))
	}
	if res.StructuredContent != nil {
		t.Fatalf("a refusal has structured content, which a tool's output schema may reject: %v", res.StructuredContent)
	}
	ref, ok := mcpbind.RefusalOf(res)
	if !ok {
		t.Fatalf("no refusal in _meta: %v", res.Meta)
	}
	return *ref
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func stateOf(t testing.TB, f *fixture, c *client) any {
	t.Helper()
	s, err := f.gate.State(context.Background(), c.ss)
	if err != nil {
		t.Fatal(err)
	}
	return s.Value()
}

// TestCheckout walks the seeds' checkout flow on both engines and both
// protocol versions with sessions: visibility per state, the refusal, and
// list_changed exactly when the visible set changes.
func TestCheckout(t *testing.T) {
	for _, engine := range engines {
		for _, protocol := range protocols {
			t.Run(engine+"/"+protocol, func(t *testing.T) {
				f := newFixture(t, compile(t, engine, checkoutJSON, nil), nil)
				c := f.connect(t, protocol)
				if got := c.cs.InitializeResult().ProtocolVersion; got != protocol {
					t.Fatalf("negotiated %s", got)
				}
				if caps := c.cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
					t.Fatalf("tools.listChanged not advertised: %+v", caps.Tools)
				}
				c.expectTools("empty", "cart_add_item", "cart_view")

				ref := refusal(t, c.call("cart_pay", map[string]any{"payment_method": "card"}))
				if f.ran("cart_pay") != 0 {
					t.Fatal("a hidden tool ran")
				}
				want := mcpbind.Refusal{
					Code: "FORBIDDEN", Tool: "cart_pay", State: "empty",
					Available:    []string{"cart_add_item", "cart_view"},
					Path:         []mcpbind.Step{{Tool: "cart_add_item", Event: "ADD_ITEM"}, {Tool: "cart_checkout", Event: "CHECKOUT"}},
					Reachable:    true,
					Instructions: []string{"Add a product."},
				}
				if g, w := fmt.Sprintf("%+v", ref), fmt.Sprintf("%+v", want); g != w {
					t.Fatalf("refusal\n%s\nwant\n%s", g, w)
				}
				c.expectQuiet("refused call")

				res := c.call("cart_add_item", map[string]any{"product_id": "p1"})
				if res.IsError || resultText(res) != "ok cart_add_item" {
					t.Fatalf("cart_add_item: %s", resultText(res))
				}
				c.expectChanged("empty -> has_items")
				c.expectTools("has_items", "cart_add_item", "cart_checkout", "cart_view")
				if s := stateOf(t, f, c); s != "has_items" {
					t.Fatalf("state %v", s)
				}

				c.call("cart_add_item", map[string]any{"product_id": "p2"}) // has_items ignores ADD_ITEM
				c.call("cart_view", nil)
				c.expectQuiet("no state change")

				c.call("cart_checkout", nil)
				c.expectChanged("has_items -> payment")
				c.expectTools("payment", "cart_pay", "cart_view")

				c.call("cart_pay", map[string]any{"payment_method": "card"})
				c.expectChanged("payment -> confirmed")
				c.expectTools("confirmed", "cart_view")

				res = c.call("cart_add_item", map[string]any{"product_id": "p3"})
				ref = refusal(t, res)
				if ref.Reachable || len(ref.Path) != 0 || ref.State != "confirmed" {
					t.Fatalf("refusal in the final state: %+v", ref)
				}
				if txt := resultText(res); !strings.Contains(txt, "No sequence of tool calls makes it available") {
					t.Fatalf("text: %s", txt)
				}
				if f.ran("cart_add_item") != 2 || f.ran("cart_pay") != 1 {
					t.Fatalf("runs: add %d, pay %d", f.ran("cart_add_item"), f.ran("cart_pay"))
				}
			})
		}
	}
}

func TestRefusalText(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), nil)
	c := f.connect(t, "2025-11-25")
	res := c.call("cart_pay", nil)
	want := `Tool "cart_pay" is not available in the current workflow state ("empty"). To make it available, call cart_add_item, then cart_checkout.
Tools available now: cart_add_item, cart_view.
Instructions: Add a product.`
	if got := resultText(res); got != want {
		t.Fatalf("text:\n%s\nwant:\n%s", got, want)
	}
}

// TestRefusalPathThroughWorkflowTransition: the path search includes the
// events workflow_transition may send. In payment, cart_add_item is one
// CANCEL away (payment → has_items); before, it was called unreachable.
func TestRefusalPathThroughWorkflowTransition(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), nil)
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.call("cart_add_item", map[string]any{"product_id": "p"})
	c.call("cart_checkout", nil)
	res := c.call("cart_add_item", map[string]any{"product_id": "q"})
	ref := refusal(t, res)
	if !ref.Reachable || len(ref.Path) != 1 || ref.Path[0].Tool != "workflow_transition" || ref.Path[0].Event != "CANCEL" {
		t.Fatalf("refusal %+v", ref)
	}
	if !strings.Contains(resultText(res), `To make it available, call workflow_transition with event "CANCEL".`) {
		t.Fatalf("text: %s", resultText(res))
	}
	// Following it works.
	if res := c.call("workflow_transition", map[string]any{"event": "CANCEL"}); res.IsError {
		t.Fatal(resultText(res))
	}
	if res := c.call("cart_add_item", map[string]any{"product_id": "q"}); res.IsError {
		t.Fatal(resultText(res))
	}
}

// TestListChangedOnlyToCaller checks that the notification goes to the
// session whose call changed its tools, and that sessions have independent
// workflows.
func TestListChangedOnlyToCaller(t *testing.T) {
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			f := newFixture(t, compile(t, "full", checkoutJSON, nil), nil)
			a := f.connect(t, protocol)
			b := f.connect(t, protocol)

			a.call("cart_add_item", map[string]any{"product_id": "p1"})
			a.expectChanged("a: empty -> has_items")
			b.expectQuiet("b, after a's call")
			a.expectTools("a", "cart_add_item", "cart_checkout", "cart_view")
			b.expectTools("b", "cart_add_item", "cart_view")
			refusal(t, b.call("cart_checkout", nil))

			b.call("cart_add_item", map[string]any{"product_id": "p2"})
			b.expectChanged("b: empty -> has_items")
			b.call("cart_checkout", nil)
			b.expectChanged("b: has_items -> payment")
			a.expectQuiet("a, after b's calls")
			a.expectTools("a", "cart_add_item", "cart_checkout", "cart_view")
			b.expectTools("b", "cart_pay", "cart_view")
			if sa, sb := stateOf(t, f, a), stateOf(t, f, b); sa != "has_items" || sb != "payment" {
				t.Fatalf("states %v, %v", sa, sb)
			}
		})
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSessionCloseRemovesState(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{Store: store})
	idle := f.connect(t, "2025-11-25")
	idle.expectTools("idle", "cart_add_item", "cart_view")
	if f.gate.Sessions() != 0 || store.Len() != 0 {
		t.Fatalf("an idle session holds state: %d sessions, %d records", f.gate.Sessions(), store.Len())
	}
	a := f.connect(t, "2025-11-25")
	a.call("cart_add_item", map[string]any{"product_id": "p1"})
	if f.gate.Sessions() != 1 || store.Len() != 1 {
		t.Fatalf("after a transition: %d sessions, %d records", f.gate.Sessions(), store.Len())
	}
	if err := a.cs.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the state of the closed session to be removed", func() bool { return f.gate.Sessions() == 0 && store.Len() == 0 })
	// The other session is unaffected.
	idle.call("cart_add_item", map[string]any{"product_id": "p2"})
	idle.expectTools("idle", "cart_add_item", "cart_checkout", "cart_view")
}

const counterJSON = `{
  "id": "counter",
  "initial": "open",
  "context": {"n": 0},
  "states": {
    "open": {"on": {"INC": {"actions": "inc"}, "CLOSE": "closed"}},
    "closed": {"type": "final"}
  }
}`

func counterEngine(t testing.TB) statechart.Engine {
	impl, err := statechart.ParseImplementations([]byte(`{"actions": {"inc": {"assign": {"n": {"$inc": 1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return compile(t, "full", counterJSON, &statechart.Options{Implementations: impl})
}

// TestConcurrentCalls makes many concurrent calls in one session (the
// go-sdk runs them concurrently): every one must be counted, so no
// transition may be lost to a concurrent one.
func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t, counterEngine(t), nil, "inc")
	if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
		t.Fatal(err)
	}
	a := f.connect(t, "2025-11-25")
	b := f.connect(t, "2025-11-25")
	const workers, each = 16, 20
	callConcurrently(t, []*client{a, b}, "inc", workers, each)
	for _, c := range []*client{a, b} {
		s, err := f.gate.State(context.Background(), c.ss)
		if err != nil {
			t.Fatal(err)
		}
		if n := s.Context()["n"]; n != float64(workers*each) {
			t.Errorf("n = %v, want %d", n, workers*each)
		}
	}
}

// callConcurrently calls tool (without arguments) from workers goroutines
// per client, each making calls calls one after the other, and fails the
// test on a call that fails or is refused.
func callConcurrently(t *testing.T, clients []*client, tool string, workers, calls int) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range clients {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range calls {
					res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
					if err != nil {
						t.Errorf("%s: %v", tool, err)
						return
					}
					if res.IsError {
						t.Errorf("%s refused: %s", tool, resultText(res))
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}

// TestSharedStore runs two gates (two server instances) on one store, with
// sessions named by the client, and calls through both concurrently.
func TestSharedStore(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	engine := counterEngine(t)
	opts := &mcpbind.Options{Store: store, SessionKey: func(*mcp.ServerSession) string { return "workflow-1" }}
	f1 := newFixture(t, engine, opts, "inc")
	f2 := newFixture(t, engine, opts, "inc")
	var clients []*client
	for _, f := range []*fixture{f1, f2} {
		if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, f.connect(t, "2025-11-25"))
	}
	const each = 100
	callConcurrently(t, clients, "inc", 4, each/4)
	s, err := f1.gate.State(context.Background(), clients[0].ss)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Context()["n"]; n != float64(2*each) {
		t.Fatalf("n = %v, want %d", n, 2*each)
	}
}

// failingStore fails loads or saves on demand. While failSave is set,
// the first passSaves saves still succeed.
type failingStore struct {
	mcpbind.Store
	failLoad, failSave atomic.Bool
	passSaves          atomic.Int32
}

var errStore = errors.New("store is down")

func (s *failingStore) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	if s.failLoad.Load() {
		return nil, 0, errStore
	}
	return s.Store.Load(ctx, key)
}

func (s *failingStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	if s.failSave.Load() && s.passSaves.Add(-1) < 0 {
		return 0, errStore
	}
	return s.Store.CompareAndSwap(ctx, key, old, data)
}

func TestStoreErrors(t *testing.T) {
	store := &failingStore{Store: mcpbind.NewMemoryStore(nil)}
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{Store: store, SessionKey: func(*mcp.ServerSession) string { return "s" },
		LeaseTTL: 50 * time.Millisecond})
	c := f.connect(t, "2025-11-25")

	// A load failure refuses the call before the handler runs, and fails
	// tools/list (gated tools cannot be decided).
	store.failLoad.Store(true)
	_, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cart_add_item", Arguments: map[string]any{"product_id": "p"}})
	if err == nil || !strings.Contains(err.Error(), "workflow state unavailable") || !strings.Contains(err.Error(), "the tool was not run") {
		t.Fatalf("call with a failing store: %v", err)
	}
	if f.ran("cart_add_item") != 0 {
		t.Fatal("the handler ran although the state could not be loaded")
	}
	if _, err := c.cs.ListTools(context.Background(), nil); err == nil {
		t.Fatal("tools/list succeeded with a failing store")
	}
	if res := c.call("cart_view", nil); res.IsError { // unbound tools need no state
		t.Fatalf("cart_view: %s", resultText(res))
	}
	store.failLoad.Store(false)

	// A save failure before the handler runs (the call's reservation)
	// refuses the call: the tool is not run.
	store.failSave.Store(true)
	_, err = c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cart_add_item", Arguments: map[string]any{"product_id": "p"}})
	if err == nil || !strings.Contains(err.Error(), "workflow state unavailable") || !strings.Contains(err.Error(), "the tool was not run") {
		t.Fatalf("call with a failing store: %v", err)
	}
	if f.ran("cart_add_item") != 0 {
		t.Fatal("the handler ran although its reservation could not be saved")
	}

	// A save failure after the handler ran: the tool's result is returned,
	// with a note in the content and in _meta; the state does not move and
	// no list_changed is sent. (The call's lease stays in the store until
	// it expires, after LeaseTTL.)
	store.passSaves.Store(1)
	res := c.call("cart_add_item", map[string]any{"product_id": "p"})
	if res.IsError || f.ran("cart_add_item") != 1 {
		t.Fatalf("save failure: isError %v, runs %d", res.IsError, f.ran("cart_add_item"))
	}
	txt := resultText(res)
	if !strings.HasPrefix(txt, "ok cart_add_item\n") || !strings.Contains(txt, `event "ADD_ITEM" was not applied`) || !strings.Contains(txt, `still in state "empty"`) {
		t.Fatalf("text: %s", txt)
	}
	note, _ := res.Meta[mcpbind.MetaKey].(map[string]any)
	if note["code"] != mcpbind.CodeStateNotSaved || note["event"] != "ADD_ITEM" || note["state"] != "empty" {
		t.Fatalf("_meta: %v", res.Meta)
	}
	c.expectQuiet("unsaved transition")
	c.expectTools("after the failed save", "cart_add_item", "cart_view")
	store.failSave.Store(false)

	c.call("cart_add_item", map[string]any{"product_id": "p"})
	c.expectChanged("after recovery")
}

// TestFailedCallSendsNoEvent: an IsError result or a protocol error sends
// no event.
func TestFailedCallSendsNoEvent(t *testing.T) {
	g, err := mcpbind.New(compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{server: mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil), gate: g}
	f.addTool("cart_add_item", true)
	mcp.AddTool(f.server, &mcp.Tool{Name: "cart_view"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	g.Attach(f.server)
	c := f.connect(t, "2025-11-25")
	if res := c.call("cart_add_item", map[string]any{"product_id": "p"}); !res.IsError {
		t.Fatal("expected the tool's error")
	}
	if s := stateOf(t, f, c); s != "empty" {
		t.Fatalf("state %v after a failed call", s)
	}
	c.expectQuiet("failed call")
}

// TestGoBindings binds in Go: a binding overrides the JSON, a compound
// state is active with any descendant, "can" bindings follow the machine.
func TestGoBindings(t *testing.T) {
	const machine = `{
	  "id": "doc",
	  "initial": "draft",
	  "states": {
	    "draft": {"on": {"SUBMIT": "review"}, "meta": {"mcp": {"tools": ["doc_*"]}}},
	    "review": {
	      "initial": "legal",
	      "on": {"REJECT": "draft"},
	      "states": {"legal": {"on": {"OK": "finance"}}, "finance": {"on": {"OK": "#doc.approved"}}}
	    },
	    "approved": {"type": "final"}
	  }
	}`
	f := newFixture(t, compile(t, "full", machine, nil), nil, "doc_edit", "doc_submit", "doc_reject", "doc_ok", "doc_read", "help")
	for tool, b := range map[string]mcpbind.Binding{
		"doc_submit": {States: []string{"draft"}, Event: "SUBMIT"},
		"doc_reject": {States: []string{"review"}, Event: "REJECT"},
		"doc_ok":     {Event: "OK"},
		"doc_read":   {States: []string{"draft", "review", "approved"}},
	} {
		if err := f.gate.Bind(tool, b); err != nil {
			t.Fatal(err)
		}
	}
	c := f.connect(t, "2025-11-25")
	c.expectTools("draft", "doc_edit", "doc_read", "doc_submit", "help")
	ref := refusal(t, c.call("doc_ok", nil))
	if len(ref.Path) != 1 || ref.Path[0].Tool != "doc_submit" {
		t.Fatalf("path to doc_ok: %+v", ref.Path)
	}
	c.call("doc_submit", nil)
	c.expectChanged("draft -> review.legal")
	c.expectTools("review.legal", "doc_ok", "doc_read", "doc_reject", "help")
	c.call("doc_ok", nil)
	// review.legal -> review.finance: the same tools are visible.
	c.expectQuiet("legal -> finance")
	if s, _ := json.Marshal(stateOf(t, f, c)); string(s) != `{"review":"finance"}` {
		t.Fatalf("state %s", s)
	}
	res := c.call("doc_ok", nil)
	var note mcpbind.TransitionNote
	b, _ := json.Marshal(res.Meta[mcpbind.MetaKey])
	if err := json.Unmarshal(b, &note); err != nil || note.Event != "OK" || note.To != "approved" || !note.ToolsChanged {
		t.Fatalf("note %s", b)
	}
	c.expectChanged("review -> approved")
	c.expectTools("approved", "doc_read", "help")
}

// TestEventShape checks the event a call sends: guards see the arguments
// under "input", OnTransition sees the structured result under "output".
func TestEventShape(t *testing.T) {
	const machine = `{
	  "id": "pay",
	  "initial": "payment",
	  "states": {
	    "payment": {"on": {"PAY": {"target": "confirmed", "guard": "knownMethod"}}},
	    "confirmed": {"type": "final"}
	  }
	}`
	impl, err := statechart.ParseImplementations([]byte(`{"guards": {"knownMethod": {"field": "event.input.payment_method", "op": "in", "value": ["card", "paypal"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var events []mcpbind.Transition
	var mu sync.Mutex
	opts := &mcpbind.Options{OnTransition: func(_ context.Context, tr mcpbind.Transition) {
		mu.Lock()
		events = append(events, tr)
		mu.Unlock()
	}}
	f := newFixture(t, compile(t, "full", machine, &statechart.Options{Implementations: impl}), opts, "pay")
	if err := f.gate.Bind("pay", mcpbind.Binding{States: []string{"payment"}, Event: "PAY"}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.call("pay", map[string]any{"payment_method": "bitcoin"})
	if s := stateOf(t, f, c); s != "payment" {
		t.Fatalf("the guard let an unknown method through: %v", s)
	}
	c.call("pay", map[string]any{"payment_method": "card"})
	if s := stateOf(t, f, c); s != "confirmed" {
		t.Fatalf("state %v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 {
		t.Fatalf("%d transitions", len(events))
	}
	got, _ := json.Marshal(events[0].Event)
	want := `{"input":{"payment_method":"card"},"output":{"args":{"payment_method":"card"},"tool":"pay"},"tool":"pay","type":"PAY"}`
	if string(got) != want {
		t.Fatalf("event %s\nwant  %s", got, want)
	}
	if events[0].From != "payment" || events[0].To != "confirmed" || events[0].Tool != "pay" {
		t.Fatalf("transition %+v", events[0])
	}
}

// TestCanBindingGuardRefusal: a tool bound to an event alone is hidden
// while a guard refuses the event, and the refusal says so.
func TestCanBindingGuardRefusal(t *testing.T) {
	const machine = `{
	  "id": "m", "initial": "a", "context": {"ready": false},
	  "states": {"a": {"on": {"GO": {"target": "b", "guard": "ready"}, "PREPARE": {"actions": "prepare"}}}, "b": {}}
	}`
	impl, err := statechart.ParseImplementations([]byte(`{
	  "guards": {"ready": {"field": "context.ready", "op": "eq", "value": true}},
	  "actions": {"prepare": {"assign": {"ready": true}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, compile(t, "full", machine, &statechart.Options{Implementations: impl}), nil, "go", "prepare")
	if err := f.gate.Bind("go", mcpbind.Binding{Event: "GO"}); err != nil {
		t.Fatal(err)
	}
	if err := f.gate.Bind("prepare", mcpbind.Binding{Event: "PREPARE"}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.expectTools("not ready", "prepare")
	res := c.call("go", nil)
	ref := refusal(t, res)
	if !ref.Reachable || len(ref.Path) != 0 || !strings.Contains(resultText(res), `does not accept its event "GO" now: a guard refuses it`) {
		t.Fatalf("refusal %+v: %s", ref, resultText(res))
	}
	c.call("prepare", nil)
	c.expectChanged("ready")
	c.expectTools("ready", "go", "prepare")
}

// TestUnknownTool: a hidden name that the server does not have gets the
// server's own error, not a refusal.
func TestUnknownTool(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), nil)
	c := f.connect(t, "2025-11-25")
	_, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cart_checkout2"})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "cart_checkout2"`) {
		t.Fatalf("unbound unknown tool: %v", err)
	}
	if err := f.gate.Bind("cart_gone", mcpbind.Binding{States: []string{"payment"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cart_gone"})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "cart_gone"`) {
		t.Fatalf("bound unknown tool: %v", err)
	}
}

// TestAdvertisesListChanged: tools.listChanged is advertised even when the
// server's options turned it off, and with no tools.
func TestAdvertisesListChanged(t *testing.T) {
	g, err := mcpbind.New(compile(t, "flat", checkoutJSON, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	g.Attach(server)
	f := &fixture{server: server, gate: g}
	c := f.connect(t, "2025-11-25")
	if caps := c.cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities %+v", caps)
	}
}

// TestDelayedTransition: delayed transitions are applied when the session
// next makes a request.
func TestDelayedTransition(t *testing.T) {
	const machine = `{
	  "id": "hold", "initial": "held",
	  "states": {
	    "held": {"after": {"60000": "expired"}, "on": {"PAY": "paid"}, "meta": {"mcp": {"tools": ["pay"], "events": {"pay": "PAY"}}}},
	    "expired": {"meta": {"mcp": {"tools": ["renew"]}}},
	    "paid": {"type": "final"}
	  }
	}`
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	f := newFixture(t, compile(t, "full", machine, nil), &mcpbind.Options{Now: clock.Now}, "pay", "renew")
	a := f.connect(t, "2025-11-25")
	a.expectTools("held", "pay")
	clock.Add(30 * time.Second)
	b := f.connect(t, "2025-11-25")
	b.expectTools("b", "pay") // b's workflow, and its hold, start at its first request
	clock.Add(40 * time.Second)
	a.expectTools("a, after 70 s", "renew")
	b.expectTools("b, after 40 s", "pay")
	refusal(t, a.call("pay", nil))
}
