package mcpbind_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
)

// start calls the start tool and returns the workflow id.
func (c *client) start() string {
	c.t.Helper()
	res := c.call("workflow_start", nil)
	if res.IsError {
		c.t.Fatalf("workflow_start: %s", resultText(res))
	}
	st := decode[mcpbind.WorkflowStart](c.t, res)
	if st.WorkflowID == "" {
		c.t.Fatalf("workflow_start result %+v", st)
	}
	return st.WorkflowID
}

// withID returns args plus the workflow id.
func withID(id string, args map[string]any) map[string]any {
	out := map[string]any{"workflow_id": id}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// listed returns the listed tools by name.
func (c *client) listed() map[string]*mcp.Tool {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// takesHandle reports whether a listed tool requires the workflow_id
// argument.
func takesHandle(t *testing.T, tool *mcp.Tool) bool {
	t.Helper()
	var schema struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	b, _ := json.Marshal(tool.InputSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	_, has := schema.Properties["workflow_id"]
	req := slices.Contains(schema.Required, "workflow_id")
	if has != req {
		t.Fatalf("%s: workflow_id property %v but required %v", tool.Name, has, req)
	}
	return has
}

// TestHandles: under protocol 2026-07-28 every tool is listed, the same for
// every client; gated tools take a workflow_id minted by workflow_start and
// are gated by the workflow it names.
func TestHandles(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			f := newFixture(t, compile(t, engine, checkoutJSON, nil), nil)
			c := f.connectStateless(t, "2026-07-28")
			tools := c.listed()
			for _, name := range []string{"cart_add_item", "cart_checkout", "cart_pay", "cart_view", "workflow_start"} {
				if tools[name] == nil {
					t.Fatalf("%s is not listed: %v", name, c.tools())
				}
			}
			for name, want := range map[string]bool{"cart_add_item": true, "cart_pay": true, "cart_view": false, "workflow_start": false} {
				if got := takesHandle(t, tools[name]); got != want {
					t.Errorf("%s takes workflow_id: %v, want %v", name, got, want)
				}
			}
			if d := tools["cart_pay"].Description; !strings.Contains(d, `It works only in state "payment".`) {
				t.Errorf("cart_pay description %q does not say where it works", d)
			}
			if d := tools["cart_add_item"].Description; !strings.Contains(d, `It works only in states "empty", "has_items".`) {
				t.Errorf("cart_add_item description %q does not say where it works", d)
			}

			// No workflow id, or one that names nothing: refused with guidance.
			ref := refusal(t, c.call("cart_add_item", map[string]any{"product_id": "p"}))
			if ref.Code != mcpbind.CodeWorkflowRequired || len(ref.Path) != 1 || ref.Path[0].Tool != "workflow_start" {
				t.Fatalf("call without workflow_id: %+v", ref)
			}
			res := c.call("cart_add_item", withID("0123456789abcdef0123456789abcdef", map[string]any{"product_id": "p"}))
			if ref := refusal(t, res); ref.Code != mcpbind.CodeUnknownWorkflow || !strings.Contains(resultText(res), "Call workflow_start") {
				t.Fatalf("call with an unknown workflow_id: %+v %s", ref, resultText(res))
			}
			if ref := refusal(t, c.call("cart_add_item", withID("../../etc", nil))); ref.Code != mcpbind.CodeUnknownWorkflow {
				t.Fatalf("call with a malformed workflow_id: %+v", ref)
			}
			if f.ran("cart_add_item") != 0 {
				t.Fatal("a refused call ran")
			}

			id := c.start()
			ref = refusal(t, c.call("cart_pay", withID(id, map[string]any{"payment_method": "card"})))
			if ref.Code != mcpbind.CodeForbidden || ref.Workflow != id || ref.State != "empty" || len(ref.Path) != 2 {
				t.Fatalf("early cart_pay: %+v", ref)
			}
			res = c.call("cart_add_item", withID(id, map[string]any{"product_id": "p1"}))
			if res.IsError {
				t.Fatalf("cart_add_item: %s", resultText(res))
			}
			// The handler gets its own arguments, without the workflow id,
			// which WorkflowID gives it.
			if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"args":{"product_id":"p1"},"tool":"cart_add_item","workflow":"`+id+`"}` {
				t.Errorf("handler saw %s", got)
			}
			c.expectQuiet("2026-07-28: lists do not vary")
			if got := c.tools(); !slices.Contains(got, "cart_pay") || !slices.Contains(got, "workflow_start") {
				t.Fatalf("list changed: %v", got)
			}

			// A second workflow on the same connection is independent.
			other := c.start()
			if other == id {
				t.Fatal("workflow_start returned the same id twice")
			}
			refusal(t, c.call("cart_checkout", withID(other, nil)))
			if res := c.call("cart_checkout", withID(id, nil)); res.IsError {
				t.Fatalf("cart_checkout: %s", resultText(res))
			}
			// Handles are not tied to connections.
			d := f.connectStateless(t, "2026-07-28")
			if res := d.call("cart_pay", withID(id, map[string]any{"payment_method": "card"})); res.IsError {
				t.Fatalf("cart_pay from another connection: %s", resultText(res))
			}
			w, err := f.gate.Workflow(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if w.State.Value() != "confirmed" || len(w.History) != 3 {
				t.Fatalf("workflow %s: state %v, history %+v", id, w.State.Value(), w.History)
			}
			if w, err := f.gate.Workflow(context.Background(), other); err != nil || w.State.Value() != "empty" {
				t.Fatalf("other workflow: %+v, %v", w, err)
			}
		})
	}
}

// TestHandlesWorkflowTools: workflow_status and workflow_transition take
// the workflow id too.
func TestHandlesWorkflowTools(t *testing.T) {
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), nil)
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c := f.connectStateless(t, "2026-07-28")
	tools := c.listed()
	if !takesHandle(t, tools["workflow_status"]) || !takesHandle(t, tools["workflow_transition"]) {
		t.Fatal("the workflow tools do not take workflow_id")
	}
	if ref := refusal(t, c.call("workflow_status", nil)); ref.Code != mcpbind.CodeWorkflowRequired {
		t.Fatalf("workflow_status without an id: %+v", ref)
	}
	id := c.start()
	c.call("cart_add_item", withID(id, map[string]any{"product_id": "p"}))
	res := c.call("workflow_transition", withID(id, map[string]any{"event": "CLEAR"}))
	if res.IsError || !strings.Contains(resultText(res), `Transitioned from "has_items" to "empty" on CLEAR.`) {
		t.Fatalf("workflow_transition: %s", resultText(res))
	}
	st := decode[mcpbind.WorkflowStatus](t, c.call("workflow_status", withID(id, nil)))
	if st.Workflow != id || st.State != "empty" || !slices.Equal(st.Tools, []string{"cart_add_item", "cart_view", "workflow_status", "workflow_transition"}) {
		t.Fatalf("workflow_status: %+v", st)
	}
}

// TestHandlesAlways: with Options.Handles = HandlesAlways, sessions of
// older protocols use handles too (for stateless servers).
func TestHandlesAlways(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{Handles: mcpbind.HandlesAlways})
	c := f.connect(t, "2025-11-25")
	c.expectTools("handles", "cart_add_item", "cart_checkout", "cart_pay", "cart_view", "workflow_start")
	id := c.start()
	c.call("cart_add_item", withID(id, map[string]any{"product_id": "p"}))
	c.expectQuiet("handles: lists do not vary")
	refusal(t, c.call("cart_checkout", nil))
}

// TestHandlesNever: without handles, the start tool is not added and
// sessions of protocol 2026-07-28 are gated by their connection, with every
// tool listed.
func TestHandlesNever(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{Handles: mcpbind.HandlesNever})
	c := f.connect(t, "2026-07-28")
	c.expectTools("2026-07-28", "cart_add_item", "cart_checkout", "cart_pay", "cart_view")
	refusal(t, c.call("cart_pay", nil))
	if f.ran("cart_pay") != 0 {
		t.Fatal("a hidden tool ran")
	}
	c.call("cart_add_item", map[string]any{"product_id": "p"})
	if res := c.call("cart_checkout", nil); res.IsError {
		t.Fatalf("cart_checkout: %s", resultText(res))
	}
	c.expectQuiet("2026-07-28")
}

// TestConnectionServesOneWorkflow: over a connection that lasts (stdio,
// in-memory) a client of protocol 2026-07-28, as the go-sdk client
// negotiates by default, is served the connection's own workflow: every
// tool listed but workflow_start, without a workflow_id argument and with
// the states in which it works, calls refused by state and never sent to
// workflow_start, the list never changing.
func TestConnectionServesOneWorkflow(t *testing.T) {
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), nil)
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2026-07-28")
	c.expectTools("2026-07-28", "cart_add_item", "cart_checkout", "cart_pay", "cart_view", "workflow_status", "workflow_transition")
	tools := c.listed()
	for name, tool := range tools {
		if takesHandle(t, tool) {
			t.Errorf("%s takes a workflow_id", name)
		}
	}
	if d := tools["cart_pay"].Description; !strings.Contains(d, `It works only in state "payment".`) {
		t.Errorf("cart_pay description %q does not say where it works", d)
	}
	res := c.call("cart_pay", map[string]any{"payment_method": "card"})
	ref := refusal(t, res)
	if ref.Code != mcpbind.CodeForbidden || ref.State != "empty" || strings.Contains(resultText(res), "workflow_start") {
		t.Fatalf("early cart_pay: %+v %s", ref, resultText(res))
	}
	if f.ran("cart_pay") != 0 {
		t.Fatal("a refused call ran")
	}
	c.call("cart_add_item", map[string]any{"product_id": "p"})
	if res := c.call("cart_checkout", nil); res.IsError {
		t.Fatalf("cart_checkout: %s", resultText(res))
	}
	if res := c.call("cart_pay", map[string]any{"payment_method": "card"}); res.IsError {
		t.Fatalf("cart_pay in payment: %s", resultText(res))
	}
	c.expectQuiet("2026-07-28")
	// A second connection has a workflow of its own.
	d := f.connect(t, "2026-07-28")
	refusal(t, d.call("cart_pay", map[string]any{"payment_method": "card"}))
}

// TestSessionsDoNotSeeStartTool: sessions of older protocols have their
// own workflow; the start tool is neither listed nor needed.
func TestSessionsDoNotSeeStartTool(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), nil)
	c := f.connect(t, "2025-11-25")
	c.expectTools("session", "cart_add_item", "cart_view")
	res := c.call("workflow_start", nil)
	if !res.IsError || !strings.Contains(resultText(res), "has its own") {
		t.Fatalf("workflow_start in a session: %s", resultText(res))
	}
}

// TestStatelessHTTPInstances: two server instances behind stateless
// Streamable HTTP share one store; a workflow started on one continues on
// the other, and concurrent calls through both lose no transition. Clients
// of protocol 2026-07-28 get handles by default; older ones with
// HandlesAlways.
func TestStatelessHTTPInstances(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		mode     mcpbind.HandleMode
	}{{"2026-07-28", mcpbind.HandlesAuto}, {"2025-11-25", mcpbind.HandlesAlways}} {
		t.Run(tc.protocol, func(t *testing.T) { testStatelessHTTP(t, tc.protocol, tc.mode) })
	}
}

func testStatelessHTTP(t *testing.T, protocol string, mode mcpbind.HandleMode) {
	store := mcpbind.NewMemoryStore(nil)
	var urls []string
	var fixtures []*fixture
	for range 2 {
		f := newFixture(t, counterEngine(t), &mcpbind.Options{Store: store, Handles: mode}, "inc")
		if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
			t.Fatal(err)
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, &mcp.StreamableHTTPOptions{Stateless: true})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
		fixtures = append(fixtures, f)
	}
	ctx := context.Background()
	connect := func(url string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	a, b := connect(urls[0]), connect(urls[1])
	if v := a.InitializeResult(); v == nil || v.ProtocolVersion != protocol {
		t.Fatalf("negotiated %+v, want %s", v, protocol)
	}
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
	if err != nil || res.IsError {
		t.Fatalf("workflow_start: %v %+v", err, res)
	}
	id := res.StructuredContent.(map[string]any)["workflow_id"].(string)

	const calls = 40
	var wg sync.WaitGroup
	for i := range calls {
		cs := []*mcp.ClientSession{a, b}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "inc", Arguments: map[string]any{"workflow_id": id}})
			if err != nil || res.IsError {
				t.Errorf("inc: %v %+v", err, res)
			}
		}()
	}
	wg.Wait()
	for i, f := range fixtures {
		w, err := f.gate.Workflow(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if n := w.State.Context()["n"]; n != float64(calls) {
			t.Fatalf("instance %d: count %v after %d calls", i+1, n, calls)
		}
	}
	if f := fixtures; f[0].ran("inc")+f[1].ran("inc") != calls || f[0].ran("inc") == 0 || f[1].ran("inc") == 0 {
		t.Fatalf("handler runs: %d and %d", f[0].ran("inc"), f[1].ran("inc"))
	}
}
