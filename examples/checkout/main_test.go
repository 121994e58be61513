package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
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
  structured path: cart_add_item (ADD_ITEM) → cart_checkout (CHECKOUT)
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
				if err := demo(context.Background(), &out, e, name, protocol); err != nil {
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
