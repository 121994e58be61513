package mcpbind_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/chartgate/chartgate/statesync"
)

// The checkout workflow with tools bound in Go, as MCP Fusion's bindState
// does, and a client that calls cart_pay too early.
func Example() {
	m, err := flat.Compile([]byte(`{
		"id": "checkout",
		"initial": "empty",
		"states": {
			"empty":     {"on": {"ADD_ITEM": "has_items"}},
			"has_items": {"on": {"CHECKOUT": "payment", "CLEAR": "empty"}},
			"payment":   {"on": {"PAY": "confirmed", "CANCEL": "has_items"}},
			"confirmed": {"type": "final"}
		}
	}`))
	if err != nil {
		panic(err)
	}
	gate, err := mcpbind.New(m, nil)
	if err != nil {
		panic(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	type addIn struct {
		ProductID string `json:"product_id"`
	}
	type payIn struct {
		PaymentMethod string `json:"payment_method"`
	}
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "cart_add_item"}, mcpbind.Binding{States: []string{"empty", "has_items"}, Event: "ADD_ITEM"},
		func(context.Context, *mcp.CallToolRequest, addIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "cart_checkout"}, mcpbind.Binding{States: []string{"has_items"}, Event: "CHECKOUT"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "cart_pay"}, mcpbind.Binding{States: []string{"payment"}, Event: "PAY"},
		func(context.Context, *mcp.CallToolRequest, payIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "cart_view"}, // unbound: always visible
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	gate.Attach(server)

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	printTools := func() {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			panic(err)
		}
		fmt.Print("tools:")
		for _, t := range res.Tools {
			fmt.Print(" ", t.Name)
		}
		fmt.Println()
	}
	printTools()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_pay", Arguments: map[string]any{"payment_method": "card"}})
	if err != nil {
		panic(err)
	}
	fmt.Println("isError:", res.IsError)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "cart_add_item", Arguments: map[string]any{"product_id": "p1"}}); err != nil {
		panic(err)
	}
	printTools()
	// Output:
	// tools: cart_add_item cart_view
	// isError: true
	// Tool "cart_pay" is not available in the current workflow state ("empty"). To make it available, call cart_add_item, then cart_checkout.
	// Tools available now: cart_add_item, cart_view.
	// tools: cart_add_item cart_checkout cart_view
}

// New validates the bindings in the machine's meta and reports every
// problem with its JSON path.
func ExampleNew() {
	m, err := statechart.Compile([]byte(`{
		"id": "checkout",
		"initial": "payment",
		"states": {
			"payment": {
				"on": {"PAY": "confirmed"},
				"meta": {"mcp": {"tools": ["cart pay"], "events": {"cart_pay": "PAI"}, "maxCall": 3}}
			},
			"confirmed": {"type": "final"}
		}
	}`), nil)
	if err != nil {
		panic(err)
	}
	_, err = mcpbind.New(m.Engine(), nil)
	fmt.Println(err)
	// Output:
	// 3 errors:
	// 	states.payment.meta.mcp.events.cart_pay: no state handles event "PAI" (did you mean "PAY"?)
	// 	states.payment.meta.mcp.maxCall: unknown key "maxCall" (did you mean "maxCalls"?)
	// 	states.payment.meta.mcp.tools[0]: "cart pay" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"
}

// A statesync layer around the gate, in one middleware chain: only the
// visible tools are decorated, and the transition of cart_checkout
// invalidates cart.* in the same notice as the tool's own policy.
func ExampleGate_AttachWith() {
	m, err := flat.Compile([]byte(`{
		"id": "checkout",
		"initial": "has_items",
		"states": {
			"has_items": {"on": {"CHECKOUT": "payment"}},
			"payment":   {"on": {"PAY": "confirmed"}},
			"confirmed": {"type": "final"}
		}
	}`))
	if err != nil {
		panic(err)
	}
	gate, err := mcpbind.New(m, nil)
	if err != nil {
		panic(err)
	}
	layer, err := statesync.New([]statesync.Policy{
		{Match: "cart.pay", Invalidates: []string{"orders.*"}},
	}, &statesync.Options{Default: statesync.NoStore})
	if err != nil {
		panic(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	done := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	}
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "cart_checkout", Description: "Check out."},
		mcpbind.Binding{States: []string{"has_items"}, Event: "CHECKOUT", Invalidates: []string{"cart.*"}}, done)
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "cart_pay", Description: "Pay."},
		mcpbind.Binding{States: []string{"payment"}, Event: "PAY", Invalidates: []string{"cart.*"}}, done)
	gate.AttachWith(server, layer) // the layer wraps the gate

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	for _, tool := range []string{"cart_checkout", "cart_pay"} {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			panic(err)
		}
		for _, t := range res.Tools {
			fmt.Printf("%s: %s\n", t.Name, t.Description)
		}
		cr, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			panic(err)
		}
		fmt.Println(cr.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// cart_checkout: Check out. [Cache-Control: no-store]
	// [System: Cache invalidated for cart.* — caused by cart.checkout]
	// cart_pay: Pay. [Cache-Control: no-store]
	// [System: Cache invalidated for orders.*, cart.* — caused by cart.pay]
}

// With workflow handles (over Streamable HTTP under protocol 2026-07-28, on
// a stateless server, or with HandlesAlways as here) a client starts a
// workflow with workflow_start and passes its workflow_id to the
// workflow's tools; every tool is listed.
func Example_handles() {
	m, err := flat.Compile([]byte(`{
		"id": "deploy",
		"initial": "untested",
		"states": {
			"untested": {"on": {"TESTED": "tested"}, "meta": {"mcp": {"tools": ["run_tests"], "events": {"run_tests": "TESTED"}}}},
			"tested":   {"meta": {"mcp": {"tools": ["deploy"]}}}
		}
	}`))
	if err != nil {
		panic(err)
	}
	gate, err := mcpbind.New(m, &mcpbind.Options{Handles: mcpbind.HandlesAlways})
	if err != nil {
		panic(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "ci", Version: "1"}, nil)
	for _, name := range []string{"run_tests", "deploy"} {
		mcp.AddTool(server, &mcp.Tool{Name: name}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Printf("  %s runs for workflow %d chars long\n", name, len(mcpbind.WorkflowID(ctx)))
			return nil, nil, nil
		})
	}
	gate.Attach(server)

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		panic(err)
	}
	fmt.Print("tools:")
	for _, t := range res.Tools {
		fmt.Print(" ", t.Name)
	}
	fmt.Println()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		fmt.Println("call", name)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			panic(err)
		}
		if res.IsError {
			ref, _ := mcpbind.RefusalOf(res)
			fmt.Println("  refused:", ref.Code)
		}
		return res
	}
	call("deploy", nil)
	id := call("workflow_start", nil).StructuredContent.(map[string]any)["workflow_id"].(string)
	call("deploy", map[string]any{"workflow_id": id})
	call("run_tests", map[string]any{"workflow_id": id})
	call("deploy", map[string]any{"workflow_id": id})
	// Output:
	// tools: deploy run_tests workflow_start
	// call deploy
	//   refused: WORKFLOW_REQUIRED
	// call workflow_start
	// call deploy
	//   refused: FORBIDDEN
	// call run_tests
	//   run_tests runs for workflow 32 chars long
	// call deploy
	//   deploy runs for workflow 32 chars long
}

// A state that invokes a Go promise runs it as a job, off the request
// that entered the state; its result moves the workflow (see "Jobs" in the
// package documentation).
func Example_jobs() {
	m, err := statechart.Compile([]byte(`{"id": "build", "initial": "idle", "states": {
		"idle":     {"on": {"BUILD": "building"}},
		"building": {"invoke": {"id": "compile", "src": "compile", "input": {"$ref": "event.rev"}, "onDone": "built"}},
		"built":    {}}}`), &statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"compile": statechart.Promise(func(ctx context.Context, rev any) (any, error) {
			return "app-" + rev.(string) + ".tar", nil // a long build, honouring ctx
		}),
	}}})
	if err != nil {
		panic(err)
	}
	landed := make(chan mcpbind.Transition, 1)
	gate, err := mcpbind.New(m.Engine(), &mcpbind.Options{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnTransition: func(_ context.Context, tr mcpbind.Transition) {
			if strings.HasPrefix(tr.By, "actor:") {
				landed <- tr
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer gate.Close() // stops the jobs still running

	ctx := context.Background()
	tr, _ := gate.Send(ctx, mcpbind.Ref{Name: "main"}, statechart.Event{Type: "BUILD", Data: map[string]any{"rev": "v2"}}, "ci")
	fmt.Println(tr.From, "->", tr.To)
	tr2 := <-landed
	fmt.Println(tr2.By, tr2.From, "->", tr2.To, tr2.Event.Data["output"])
	// Output:
	// idle -> building
	// actor:compile building -> built app-v2.tar
}
