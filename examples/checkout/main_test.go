package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets the test binary act as the command, for TestStdio.
func TestMain(m *testing.M) {
	if os.Getenv("CHECKOUT_AS_COMMAND") == "1" {
		os.Args = []string{"checkout", "-stdio"}
		flag.CommandLine = flag.NewFlagSet("checkout", flag.ExitOnError)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// wantDemo is the demo's output after its first line.
const wantDemo = `
  cart_add_item: Add a product to the cart [Cache-Control: no-store]
  cart_view: View current cart contents [Cache-Control: no-store]
  workflow_status: Show the current state of the workflow: the state, the tools available now, the events workflow_transition can send now, and the instructions for this state. [Cache-Control: no-store]
  workflow_transition: Send an event to the workflow to move it to another state. The workflow's rules decide whether the event is accepted; data is passed to them. [Cache-Control: no-store]
  state "empty"      tools: cart_add_item, cart_view, workflow_status, workflow_transition

→ cart_pay {"payment_method":"card"}
  refused (isError):
    Tool "cart_pay" is not available in the current workflow state ("empty"). To make it available, call cart_add_item, then cart_checkout.
    Tools available now: cart_add_item, cart_view, workflow_status, workflow_transition.
    Instructions: The cart is empty. Add a product with cart_add_item.
  structured: FORBIDDEN, path: cart_add_item (ADD_ITEM) → cart_checkout (CHECKOUT)
  state "empty"      tools: cart_add_item, cart_view, workflow_status, workflow_transition

→ cart_add_item {"product_id":"sku-42"}
  result:
    [System: Cache invalidated for cart.* — caused by cart.add_item]
    {"items":["sku-42"]}
  workflow: "empty" --ADD_ITEM--> "has_items"
  ← notifications/tools/list_changed
  state "has_items"  tools: cart_add_item, cart_checkout, cart_view, workflow_status, workflow_transition

→ cart_view {}
  result:
    {"items":["sku-42"]}
  state "has_items"  tools: cart_add_item, cart_checkout, cart_view, workflow_status, workflow_transition

→ cart_checkout {}
  result:
    [System: Cache invalidated for cart.* — caused by cart.checkout]
    {"items":["sku-42"],"order_id":"pending"}
  workflow: "has_items" --CHECKOUT--> "payment"
  ← notifications/tools/list_changed
  state "payment"    tools: cart_pay, cart_view, workflow_status, workflow_transition

→ workflow_status {}
  result:
    Workflow state: "payment" (active).
    Tools available now: cart_pay, cart_view, workflow_status, workflow_transition.
    Events workflow_transition can send now: CANCEL.
    State "payment": 0 of 5 tool calls used.
    Instructions: Ask the user for a payment method, then call cart_pay.
  state "payment"    tools: cart_pay, cart_view, workflow_status, workflow_transition

→ workflow_transition {"event":"PAY"}
  refused (isError):
    Event "PAY" is sent by calling cart_pay, not with workflow_transition.
  state "payment"    tools: cart_pay, cart_view, workflow_status, workflow_transition

→ workflow_transition {"data":{"rationale":"add one more"},"event":"CANCEL"}
  result:
    Transitioned from "payment" to "has_items" on CANCEL. The available tools changed.
  workflow: "payment" --CANCEL--> "has_items"
  ← notifications/tools/list_changed
  state "has_items"  tools: cart_add_item, cart_checkout, cart_view, workflow_status, workflow_transition

→ cart_add_item {"product_id":"sku-7"}
  result:
    [System: Cache invalidated for cart.* — caused by cart.add_item]
    {"items":["sku-42","sku-7"]}
  state "has_items"  tools: cart_add_item, cart_checkout, cart_view, workflow_status, workflow_transition

→ cart_checkout {}
  result:
    [System: Cache invalidated for cart.* — caused by cart.checkout]
    {"items":["sku-42","sku-7"],"order_id":"pending"}
  workflow: "has_items" --CHECKOUT--> "payment"
  ← notifications/tools/list_changed
  state "payment"    tools: cart_pay, cart_view, workflow_status, workflow_transition

→ cart_pay {"payment_method":"card"}
  result:
    [System: Cache invalidated for cart.* — caused by cart.pay]
    {"items":["sku-42","sku-7"],"order_id":"order-1","payment_method":"card"}
  workflow: "payment" --PAY--> "confirmed"
  ← notifications/tools/list_changed
  state "confirmed"  tools: cart_view, workflow_status, workflow_transition
`

func TestDemo(t *testing.T) {
	for _, engine := range []string{"flat", "full"} {
		for _, protocol := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(engine+"/"+protocol, func(t *testing.T) {
				e, name, err := newEngine(engine)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := demo(context.Background(), &out, e, name, protocol, quietLogger()); err != nil {
					t.Fatal(err)
				}
				first, rest, _ := strings.Cut(out.String(), "\n")
				if want := "checkout workflow (" + engine + " engine), MCP protocol " + protocol; first != want {
					t.Errorf("first line %q, want %q", first, want)
				}
				if rest != wantDemo[1:] {
					t.Errorf("output:\n%s\nwant:\n%s", rest, wantDemo[1:])
				}
			})
		}
	}
}

func TestAutoEngine(t *testing.T) {
	if _, name, err := newEngine("auto"); err != nil || name != "flat" {
		t.Fatalf("auto: %s, %v", name, err)
	}
	if _, _, err := newEngine("fast"); err == nil {
		t.Fatal("an unknown engine was accepted")
	}
}

// TestStdio runs the command with -stdio and talks to it with the go-sdk
// client over its stdin and stdout.
func TestStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), "CHECKOUT_AS_COMMAND=1")
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools := func() string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return strings.Join(names, " ")
	}
	if got := tools(); got != "cart_add_item cart_view workflow_status workflow_transition" {
		t.Fatalf("tools %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_pay", Arguments: map[string]any{"payment_method": "card"}})
	if err != nil || !res.IsError {
		t.Fatalf("early cart_pay: %v, %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_add_item", Arguments: map[string]any{"product_id": "p1"}})
	if err != nil || res.IsError {
		t.Fatalf("cart_add_item: %v, %+v", err, res)
	}
	if got := text(res); !strings.HasPrefix(got, "[System: Cache invalidated for cart.* — caused by cart.add_item]\n") {
		t.Fatalf("cart_add_item result %q: no invalidation notice", got)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	if got := tools(); got != "cart_add_item cart_checkout cart_view workflow_status workflow_transition" {
		t.Fatalf("tools %q", got)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestDemoHandles runs the demo under protocol 2026-07-28: every tool is
// listed, the client starts a workflow and passes its id, and the gate
// refuses what the workflow's state does not allow.
func TestDemoHandles(t *testing.T) {
	for _, engine := range []string{"flat", "full"} {
		t.Run(engine, func(t *testing.T) {
			e, name, err := newEngine(engine)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := demo(context.Background(), &out, e, name, "2026-07-28", quietLogger()); err != nil {
				t.Fatal(err)
			}
			got := regexp.MustCompile(`[0-9a-f]{32}`).ReplaceAllString(out.String(), "<id>")
			for _, want := range []string{
				"MCP protocol 2026-07-28\n",
				`  cart_pay: Process payment` + "\n      " + `Part of the "checkout" workflow: pass the workflow_id that workflow_start returned. It works only in state "payment". [Cache-Control: no-store]`,
				"→ cart_add_item {\"product_id\":\"sku-42\"}\n  refused (isError):\n    Tool \"cart_add_item\" is part of the \"checkout\" workflow and needs its workflow_id argument.",
				"  structured: WORKFLOW_REQUIRED, path: workflow_start\n",
				"Started workflow <id> in state \"empty\".",
				"  structured: FORBIDDEN, path: cart_add_item (ADD_ITEM) → cart_checkout (CHECKOUT)\n",
				"  workflow: \"empty\" --ADD_ITEM--> \"has_items\"\n  state \"has_items\"  callable: cart_add_item, cart_checkout, cart_view, workflow_status, workflow_transition\n",
				"{\"items\":[\"sku-42\",\"sku-7\"],\"order_id\":\"order-1\",\"payment_method\":\"card\"}\n  workflow: \"payment\" --PAY--> \"confirmed\"\n",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the output lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "list_changed") {
				t.Errorf("list_changed under 2026-07-28:\n%s", got)
			}
		})
	}
}

// TestHTTP serves the checkout server over Streamable HTTP (-http): with
// sessions, list_changed reaches the caller on its POST; stateless, two
// clients share nothing but the workflow id, each on its own connection.
func TestHTTP(t *testing.T) {
	engine, _, err := newEngine("auto")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	names := func(cs *mcp.ClientSession) string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return strings.Join(out, " ")
	}
	t.Run("sessions", func(t *testing.T) {
		h, _, err := httpHandler(engine, &httpOptions{SessionTimeout: defaultSessionTimeout, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		changed := make(chan struct{}, 10)
		client := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: srv.Client()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
			t.Fatalf("negotiated %s", v)
		}
		if got := names(cs); got != "cart_add_item cart_view workflow_status workflow_transition" {
			t.Fatalf("tools %q", got)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_pay", Arguments: map[string]any{"payment_method": "card"}}); err != nil || !res.IsError {
			t.Fatalf("early cart_pay: %v %+v", err, res)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_add_item", Arguments: map[string]any{"product_id": "p"}}); err != nil || res.IsError {
			t.Fatalf("cart_add_item: %v %+v", err, res)
		}
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/tools/list_changed")
		}
		if got := names(cs); got != "cart_add_item cart_checkout cart_view workflow_status workflow_transition" {
			t.Fatalf("tools %q", got)
		}
	})
	t.Run("stateless", func(t *testing.T) {
		h, _, err := httpHandler(engine, &httpOptions{Stateless: true, SessionTimeout: defaultSessionTimeout, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		connect := func(protocol string) *mcp.ClientSession {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: srv.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		}
		a, b := connect("2026-07-28"), connect("2025-11-25")
		call := func(cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			return res
		}
		if got := names(b); got != "cart_add_item cart_checkout cart_pay cart_view workflow_start workflow_status workflow_transition" {
			t.Fatalf("tools %q", got)
		}
		res := call(a, "workflow_start", nil)
		id, _ := res.StructuredContent.(map[string]any)["workflow_id"].(string)
		if id == "" {
			t.Fatalf("workflow_start: %+v", res)
		}
		if res := call(b, "cart_add_item", map[string]any{"product_id": "p"}); !res.IsError || !strings.Contains(text(res), "Call workflow_start first") {
			t.Fatalf("cart_add_item without workflow_id: %s", text(res))
		}
		if res := call(b, "cart_add_item", map[string]any{"product_id": "p", "workflow_id": id}); res.IsError {
			t.Fatalf("cart_add_item: %s", text(res))
		}
		if res := call(a, "cart_checkout", map[string]any{"workflow_id": id}); res.IsError {
			t.Fatalf("cart_checkout: %s", text(res))
		}
		res = call(b, "cart_pay", map[string]any{"payment_method": "card", "workflow_id": id})
		if res.IsError || !strings.Contains(text(res), `"items":["p"]`) {
			t.Fatalf("cart_pay: %s", text(res))
		}
	})
}

// TestStdioKeepsServingAfterBadInput sends the -stdio command lines that
// are not JSON-RPC messages, between requests: each gets a JSON-RPC error
// and the next request is served; the end of stdin ends the command
// cleanly.
func TestStdioKeepsServingAfterBadInput(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), "CHECKOUT_AS_COMMAND=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<20)
	exchange := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing %q: %v (stderr: %s)", line, err, stderr.String())
		}
		if !out.Scan() {
			t.Fatalf("no answer to %q: the server's output ended (stderr: %s)", line, stderr.String())
		}
		var msg map[string]any
		if err := json.Unmarshal(out.Bytes(), &msg); err != nil {
			t.Fatalf("answer to %q: %v: %s", line, err, out.Text())
		}
		return msg
	}
	init := exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`)
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		line string
		code float64
		id   any
	}{
		{"hello", -32700, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"`, -32700, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}}`, -32700, nil},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`, -32700, nil},
		{"\xff\xfe", -32700, nil},
		{`[]`, -32600, nil},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, nil}, // no batches in 2025-11-25
		{`42`, -32600, nil},
		{`"tools/list"`, -32600, nil},
		{`{"id":4,"method":"tools/list"}`, -32600, float64(4)},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil},
	} {
		msg := exchange(c.line)
		e, _ := msg["error"].(map[string]any)
		if e == nil || e["code"] != c.code || msg["id"] != c.id {
			t.Errorf("%q: answer %v, want error %v with id %v", c.line, msg, c.code, c.id)
		}
		ping := exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		if ping["error"] != nil || ping["id"] != float64(100+i) {
			t.Fatalf("ping after %q: %v", c.line, ping)
		}
	}
	list := exchange(`{"jsonrpc":"2.0","id":"tools","method":"tools/list"}`)
	tools, _ := list["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 4 {
		t.Errorf("tools/list after bad input: %v", list)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the command ended with %v at the end of its input (stderr: %s)", err, stderr.String())
	}
}

// TestHTTPSessionTimeout checks that a session whose client stops sending
// requests is closed: it leaves the server's sessions, and the client's
// next request is refused.
func TestHTTPSessionTimeout(t *testing.T) {
	engine, _, err := newEngine("auto")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, server, err := httpHandler(engine, &httpOptions{SessionTimeout: 50 * time.Millisecond, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: srv.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_add_item", Arguments: map[string]any{"product_id": "p"}}); err != nil || res.IsError {
		t.Fatalf("cart_add_item: %v %+v", err, res)
	}
	sessions := func() int {
		n := 0
		for range server.Sessions() {
			n++
		}
		return n
	}
	if n := sessions(); n != 1 {
		t.Fatalf("%d sessions, want 1", n)
	}
	// Wait for the server to close the idle session (the client sends
	// nothing meanwhile); the deadline only stops a hung test.
	deadline := time.Now().Add(20 * time.Second)
	for sessions() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session was not closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Fatal("the closed session still answers")
	}
}
