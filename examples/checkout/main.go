// Command checkout runs the checkout workflow of MCP Fusion's FSM State Gate
// (empty → has_items → payment → confirmed) on a go-sdk MCP server gated by
// package mcpbind. The workflow, and which tools each state shows, is the
// XState machine in checkout.json.
//
// Package statesync wraps the gate in the same middleware chain
// (Gate.AttachWith): every tool's description ends with
// [Cache-Control: no-store] (a cart changes), and a call that changes the
// cart starts its result with a notice such as
// "[System: Cache invalidated for cart.* — caused by cart.checkout]".
// cart_add_item invalidates cart.* on every call (a statesync policy);
// cart_checkout and cart_pay invalidate it through the transitions they
// cause (meta.mcp.invalidates in checkout.json).
//
// By default it runs a scripted in-memory MCP client that walks the flow:
// it prints the tool list at each step, calls cart_pay too early (refused,
// with the calls that make it available), uses workflow_status and
// workflow_transition (CANCEL goes back from payment to has_items), and
// shows each notifications/tools/list_changed the session receives.
//
// Under protocol 2026-07-28 (-protocol 2026-07-28), which has no sessions
// and forbids tool lists that vary per connection, the demo shows workflow
// handles, as a Streamable HTTP server uses them for such clients (over
// stdio or in memory the connection keeps its own workflow; the demo asks
// for handles with mcpbind.HandlesAlways): the client sees every tool,
// starts a workflow with workflow_start and passes its workflow_id to the
// workflow's tools; the gate refuses the calls the workflow's state does
// not allow.
//
//	go run ./examples/checkout
//	go run ./examples/checkout -engine full             # the full interpreter instead of the flat engine
//	go run ./examples/checkout -protocol 2026-07-28     # workflow handles instead of sessions
//	go run ./examples/checkout -stdio                   # serve over stdio, for an MCP client
//	go run ./examples/checkout -http localhost:8080     # serve over Streamable HTTP at /mcp
//	go run ./examples/checkout -http localhost:8080 -stateless   # stateless: every client uses workflow handles
//
// Over stdio, a line that is not a JSON-RPC message is answered with a
// JSON-RPC error (-32700 parse error, or -32600 invalid request) and the
// server goes on serving. Over HTTP, a session that has made no request
// for -session-timeout (default 30m) is closed, and its cart forgotten; the
// client gets 404 and must initialize a new session.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/chartgate/chartgate/statesync"
)

//go:embed checkout.json
var machineJSON []byte

func main() {
	serveStdio := flag.Bool("stdio", false, "serve the checkout server over stdio instead of running the scripted demo")
	httpAddr := flag.String("http", "", "serve the checkout server over Streamable HTTP at http://ADDR/mcp instead of running the scripted demo")
	stateless := flag.Bool("stateless", false, "with -http: a stateless server (no sessions): every client uses workflow handles")
	sessionTimeout := flag.Duration("session-timeout", defaultSessionTimeout, "with -http: close a session after this long without a request from its client (0: never)")
	engineName := flag.String("engine", "auto", `engine: "flat", "full" (the statechart interpreter) or "auto" (flat when the machine is flat)`)
	protocol := flag.String("protocol", "2025-11-25", "the MCP protocol version of the demo's client; 2026-07-28 uses workflow handles")
	flag.Parse()
	ctx := context.Background()
	engine, name, err := newEngine(*engineName)
	if err != nil {
		log.Fatal(err)
	}
	// Servers log each transition (Info) to stderr; the demo only problems.
	logger := slog.Default()
	switch {
	case *serveStdio:
		server, _, err := newServer(engine, &mcpbind.Options{Logger: logger})
		if err != nil {
			log.Fatal(err)
		}
		// stdio.Transport answers a line that is not a JSON-RPC message
		// with an error and keeps serving (go-sdk's StdioTransport would
		// end the session).
		if err := server.Run(ctx, &stdio.Transport{Logger: logger}); err != nil && !errors.Is(err, io.EOF) {
			log.Fatal(err)
		}
	case *httpAddr != "":
		h, _, err := httpHandler(engine, &httpOptions{Stateless: *stateless, SessionTimeout: *sessionTimeout, Logger: logger})
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("checkout MCP server (%s engine) on http://%s/mcp, stateless=%v", name, *httpAddr, *stateless)
		log.Fatal(http.ListenAndServe(*httpAddr, h))
	default:
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if err := demo(ctx, os.Stdout, engine, name, *protocol, logger); err != nil {
			log.Fatal(err)
		}
	}
}

// defaultSessionTimeout is how long an HTTP session may go without a
// request before it is closed: long enough for a person to think between
// two steps of a checkout, short enough that abandoned sessions and their
// carts do not pile up.
const defaultSessionTimeout = 30 * time.Minute

// httpOptions configures httpHandler.
type httpOptions struct {
	// Stateless serves without sessions: every client uses workflow
	// handles.
	Stateless bool
	// SessionTimeout closes a session whose client has sent no request for
	// that long; 0 never does.
	SessionTimeout time.Duration
	Logger         *slog.Logger
}

// httpHandler serves the checkout server over Streamable HTTP at /mcp, and
// returns the server too. A stateless server has no sessions, so every
// client uses workflow handles (mcpbind.HandlesAlways); otherwise clients
// of protocol 2026-07-28 do and older ones have their session's workflow.
func httpHandler(engine statechart.Engine, o *httpOptions) (http.Handler, *mcp.Server, error) {
	opts := &mcpbind.Options{Logger: o.Logger}
	if o.Stateless {
		opts.Handles = mcpbind.HandlesAlways
	}
	server, _, err := newServer(engine, opts)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: o.Stateless, SessionTimeout: o.SessionTimeout}))
	return mux, server, nil
}

// newEngine compiles checkout.json with the chosen engine.
func newEngine(name string) (statechart.Engine, string, error) {
	if name == "auto" {
		name = "full"
		if flat.IsFlat(machineJSON) {
			name = "flat"
		}
	}
	switch name {
	case "flat":
		m, err := flat.Compile(machineJSON)
		if err != nil {
			return nil, "", err
		}
		return m, name, nil
	case "full":
		m, err := statechart.Compile(machineJSON, nil)
		if err != nil {
			return nil, "", err
		}
		return m.Engine(), name, nil
	}
	return nil, "", fmt.Errorf("unknown engine %q (flat, full or auto)", name)
}

// Tool inputs and outputs.
type (
	addItemIn struct {
		ProductID string `json:"product_id" jsonschema:"the ID of the product to add"`
	}
	payIn struct {
		PaymentMethod string `json:"payment_method" jsonschema:"the payment method ID, e.g. card or paypal"`
	}
	empty struct{}
	cart  struct {
		Items []string `json:"items"`
	}
	order struct {
		OrderID       string   `json:"order_id"`
		Items         []string `json:"items"`
		PaymentMethod string   `json:"payment_method,omitempty"`
	}
)

// shop keeps one cart per workflow: per session, or per workflow id with
// workflow handles. (A real shop keeps carts in its database; this one
// forgets a session's cart when the session ends, and keeps the carts of
// handles for the life of the process.)
type shop struct {
	mu     sync.Mutex
	carts  map[any][]string // by *mcp.ServerSession or workflow id
	orders int
}

// cartOf names the cart a call works on.
func cartOf(ctx context.Context, req *mcp.CallToolRequest) any {
	if id := mcpbind.WorkflowID(ctx); id != "" {
		return id
	}
	return req.Session
}

func (s *shop) items(key any) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.carts[key]...)
}

func (s *shop) addItem(ctx context.Context, req *mcp.CallToolRequest, in addItemIn) (*mcp.CallToolResult, cart, error) {
	if in.ProductID == "" {
		return nil, cart{}, errors.New("product_id is required")
	}
	key := cartOf(ctx, req)
	s.mu.Lock()
	if _, ok := s.carts[key]; !ok && key == any(req.Session) {
		ss := req.Session
		go func() { // forget the cart when the session ends
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.carts, ss)
			s.mu.Unlock()
		}()
	}
	s.carts[key] = append(s.carts[key], in.ProductID)
	s.mu.Unlock()
	return nil, cart{Items: s.items(key)}, nil
}

func (s *shop) view(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, cart, error) {
	return nil, cart{Items: s.items(cartOf(ctx, req))}, nil
}

func (s *shop) checkout(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, order, error) {
	return nil, order{OrderID: "pending", Items: s.items(cartOf(ctx, req))}, nil
}

func (s *shop) pay(ctx context.Context, req *mcp.CallToolRequest, in payIn) (*mcp.CallToolResult, order, error) {
	if in.PaymentMethod == "" {
		return nil, order{}, errors.New("payment_method is required")
	}
	s.mu.Lock()
	s.orders++
	id := fmt.Sprintf("order-%d", s.orders)
	s.mu.Unlock()
	return nil, order{OrderID: id, Items: s.items(cartOf(ctx, req)), PaymentMethod: in.PaymentMethod}, nil
}

// newServer builds the checkout server: four tools, gated by the machine's
// meta.mcp (cart_view is bound to the root state, so it is always visible),
// with a statesync layer around the gate.
func newServer(engine statechart.Engine, opts *mcpbind.Options) (*mcp.Server, *mcpbind.Gate, error) {
	gate, err := mcpbind.New(engine, opts)
	if err != nil {
		return nil, nil, err
	}
	// Everything here changes as the session shops: no-store for every
	// tool. Adding an item changes the cart whatever the workflow does, so
	// that is a policy; checking out and paying invalidate the cart through
	// their transitions, declared in checkout.json.
	layer, err := statesync.New([]statesync.Policy{
		{Match: "cart.add_item", Invalidates: []string{"cart.*"}},
	}, &statesync.Options{Default: statesync.NoStore})
	if err != nil {
		return nil, nil, err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "checkout", Version: "1.0.0"}, nil)
	s := &shop{carts: map[any][]string{}}
	mcp.AddTool(server, &mcp.Tool{Name: "cart_add_item", Description: "Add a product to the cart"}, s.addItem)
	mcp.AddTool(server, &mcp.Tool{Name: "cart_checkout", Description: "Proceed to payment"}, s.checkout)
	mcp.AddTool(server, &mcp.Tool{Name: "cart_pay", Description: "Process payment"}, s.pay)
	mcp.AddTool(server, &mcp.Tool{Name: "cart_view", Description: "View current cart contents"}, s.view)
	gate.AttachWith(server, layer) // the layer wraps the gate: filter, then decorate
	// workflow_status, and workflow_transition for the events no tool sends
	// (CLEAR, CANCEL).
	if err := gate.AddWorkflowTools(server, nil); err != nil {
		return nil, nil, err
	}
	return server, gate, nil
}

// demo connects a scripted client to the server in memory and walks the
// checkout flow, printing what the client sees. Under protocol 2026-07-28
// the client starts a workflow and passes its workflow_id.
func demo(ctx context.Context, w io.Writer, engine statechart.Engine, engineName, protocol string, logger *slog.Logger) error {
	opts := &mcpbind.Options{Logger: logger}
	if protocol >= "2026-07-28" {
		opts.Handles = mcpbind.HandlesAlways // what HTTP clients of 2026-07-28 get
	}
	server, gate, err := newServer(engine, opts)
	if err != nil {
		return err
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "checkout-demo", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return err
	}
	defer cs.Close()
	negotiated := cs.InitializeResult().ProtocolVersion
	handles := negotiated >= "2026-07-28"
	fmt.Fprintf(w, "checkout workflow (%s engine), MCP protocol %s\n", engineName, negotiated)

	// The descriptions, once: each carries its cache directive (and, with
	// handles, where it works); needsID notes the tools that take a
	// workflow_id.
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	needsID := map[string]bool{}
	for _, t := range res.Tools {
		fmt.Fprintf(w, "  %s: %s\n", t.Name, strings.ReplaceAll(t.Description, "\n\n", "\n      "))
		var schema struct{ Required []string }
		needsID[t.Name] = remarshal(t.InputSchema, &schema) && slices.Contains(schema.Required, "workflow_id")
	}
	workflowID := ""

	show := func() error {
		if handles {
			if workflowID == "" {
				return nil
			}
			// The list is the same for everyone; the workflow says what
			// may be called now.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_status", Arguments: map[string]any{"workflow_id": workflowID}})
			if err != nil {
				return err
			}
			var st mcpbind.WorkflowStatus
			remarshal(res.StructuredContent, &st)
			fmt.Fprintf(w, "  state %-12s callable: %s\n", quote(st.State), strings.Join(st.Tools, ", "))
			return nil
		}
		st, err := gate.State(ctx, ss)
		if err != nil {
			return err
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		fmt.Fprintf(w, "  state %-12s tools: %s\n", quote(st.Value()), strings.Join(names, ", "))
		return nil
	}
	call := func(name string, args map[string]any) error {
		if args == nil {
			args = map[string]any{}
		}
		a, _ := json.Marshal(args)
		if needsID[name] && workflowID != "" {
			args["workflow_id"] = workflowID
		}
		fmt.Fprintf(w, "\n→ %s %s\n", name, a)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			fmt.Fprintf(w, "  refused (isError):\n%s\n", indent(text(res), "    "))
			if ref, ok := mcpbind.RefusalOf(res); ok && len(ref.Path) > 0 {
				var steps []string
				for _, s := range ref.Path {
					if s.Event == "" {
						steps = append(steps, s.Tool)
					} else {
						steps = append(steps, fmt.Sprintf("%s (%s)", s.Tool, s.Event))
					}
				}
				fmt.Fprintf(w, "  structured: %s, path: %s\n", ref.Code, strings.Join(steps, " → "))
			}
		} else {
			fmt.Fprintf(w, "  result:\n%s\n", indent(text(res), "    "))
		}
		var start mcpbind.WorkflowStart
		if name == "workflow_start" && !res.IsError && remarshal(res.StructuredContent, &start) {
			workflowID = start.WorkflowID
		}
		// A call that moved the workflow says so in _meta; workflow_transition
		// in its result.
		var note mcpbind.TransitionNote
		if raw, ok := res.Meta[mcpbind.MetaKey]; ok {
			remarshal(raw, &note)
		}
		var tr mcpbind.TransitionResult
		if name == "workflow_transition" && !res.IsError && remarshal(res.StructuredContent, &tr) && tr.Transitioned {
			note = mcpbind.TransitionNote{Event: tr.Event, From: tr.From, To: tr.To, ToolsChanged: tr.ToolsChanged}
		}
		if note.Event != "" {
			fmt.Fprintf(w, "  workflow: %s --%s--> %s\n", quote(note.From), note.Event, quote(note.To))
		}
		if note.ToolsChanged && !handles {
			select {
			case <-changed:
				fmt.Fprintln(w, "  ← notifications/tools/list_changed")
			case <-time.After(5 * time.Second):
				return errors.New("no notifications/tools/list_changed after a change of the visible tools")
			}
		}
		return show()
	}

	if err := show(); err != nil {
		return err
	}
	type step struct {
		tool string
		args map[string]any
	}
	var steps []step
	if handles {
		steps = append(steps,
			step{"cart_add_item", map[string]any{"product_id": "sku-42"}}, // no workflow yet: refused
			step{"workflow_start", nil})
	}
	steps = append(steps, []step{
		{"cart_pay", map[string]any{"payment_method": "card"}}, // too early: refused
		{"cart_add_item", map[string]any{"product_id": "sku-42"}},
		{"cart_view", nil},
		{"cart_checkout", nil},
		{"workflow_status", nil},
		{"workflow_transition", map[string]any{"event": "PAY"}}, // PAY is cart_pay's event: refused
		{"workflow_transition", map[string]any{"event": "CANCEL", "data": map[string]any{"rationale": "add one more"}}},
		{"cart_add_item", map[string]any{"product_id": "sku-7"}},
		{"cart_checkout", nil},
		{"cart_pay", map[string]any{"payment_method": "card"}},
	}...)
	for _, s := range steps {
		if err := call(s.tool, s.args); err != nil {
			return err
		}
	}
	select {
	case <-changed:
		return errors.New("an unexpected notifications/tools/list_changed")
	default:
	}
	return nil
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// remarshal decodes a JSON value the client decoded generically into v.
func remarshal(from, v any) bool {
	b, err := json.Marshal(from)
	return err == nil && json.Unmarshal(b, v) == nil
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

func quote(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
