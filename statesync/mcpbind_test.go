package statesync_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/chartgate/chartgate/statesync"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestWithMcpbind runs the layer around mcpbind's real gate
// (Gate.AttachWith), end to end: the layer decorates only what the gate lets
// through, and a transition's patterns join the policy's in one notice.
func TestWithMcpbind(t *testing.T) {
	m, err := flat.Compile([]byte(`{
		"id": "checkout", "initial": "shopping",
		"states": {
			"shopping":    {"on": {"CHECKOUT": "checked_out"},
			                "meta": {"mcp": {"tools": ["cart_add", "cart_checkout"], "events": {"cart_checkout": "CHECKOUT"},
			                                 "invalidates": {"cart_checkout": ["cart.*"]}}}},
			"checked_out": {"on": {"PAY": "paid"},
			                "meta": {"mcp": {"tools": ["cart_pay"], "events": {"cart_pay": "PAY"},
			                                 "invalidates": {"cart_pay": ["cart.*", "orders.*"]}}}},
			"paid":        {"type": "final"}
		}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	gate, err := mcpbind.New(m, &mcpbind.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	layer, err := statesync.New([]statesync.Policy{
		{Match: "cart.checkout", Invalidates: []string{"cart.*"}},
		{Match: "cart.pay", Invalidates: []string{"orders.*", "payments.*"}},
	}, &statesync.Options{Default: statesync.NoStore, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	for _, name := range []string{"cart_add", "cart_checkout", "cart_pay"} {
		server.AddTool(&mcp.Tool{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	gate.AttachWith(server, layer)

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // a protocol with sessions
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list := func() []string {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name+": "+tool.Description)
		}
		return out
	}
	call := func(name string) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := func(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

	if got, want := list(), []string{"cart_add: cart_add [Cache-Control: no-store]", "cart_checkout: cart_checkout [Cache-Control: no-store]"}; !slices.Equal(got, want) {
		t.Fatalf("tools %q, want %q", got, want)
	}
	if res := call("cart_pay"); !res.IsError || strings.Contains(first(res), "[System:") {
		t.Fatalf("hidden cart_pay: %+v", res)
	}
	if res := call("cart_checkout"); first(res) != "[System: Cache invalidated for cart.* — caused by cart.checkout]" || len(res.Content) != 2 {
		t.Fatalf("cart_checkout: %q", first(res))
	}
	if got, want := list(), []string{"cart_pay: cart_pay [Cache-Control: no-store]"}; !slices.Equal(got, want) {
		t.Fatalf("tools %q, want %q", got, want)
	}
	if res := call("cart_pay"); first(res) != "[System: Cache invalidated for orders.*, payments.*, cart.* — caused by cart.pay]" || len(res.Content) != 2 {
		t.Fatalf("cart_pay: %q", first(res))
	}
}
