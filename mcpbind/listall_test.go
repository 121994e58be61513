// This file tests Options.ListAllTools: sessions of protocols before
// 2026-07-28 get the full, fixed tool list and are refused by state.

//lint:file-ignore SA1019 the guidance arrives as log messages, deprecated by 2026-07-28

package mcpbind_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// TestListAllTools: a session of an older protocol with ListAllTools sees
// every tool from the start, each gated one saying where it works; a call
// in the wrong state gets the refusal a default session gets; after the
// workflow moves, the tool runs without the list being read again, and no
// list_changed is sent.
func TestListAllTools(t *testing.T) {
	for _, engine := range engines {
		for _, protocol := range protocols {
			t.Run(engine+"/"+protocol, func(t *testing.T) {
				fixture := func(opts *mcpbind.Options) *fixture {
					f := newFixture(t, compile(t, engine, checkoutJSON, nil), opts)
					if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
						t.Fatal(err)
					}
					return f
				}
				f := fixture(&mcpbind.Options{ListAllTools: true})
				c := f.connect(t, protocol)
				if got := c.cs.InitializeResult().ProtocolVersion; got != protocol {
					t.Fatalf("negotiated %s", got)
				}
				all := []string{"cart_add_item", "cart_checkout", "cart_pay", "cart_view", "workflow_status", "workflow_transition"}
				c.expectTools("empty", all...)
				tools := c.listed()
				if d := tools["cart_pay"].Description; !strings.Contains(d, `It works only in state "payment".`) {
					t.Errorf("cart_pay description %q does not say where it works", d)
				}
				if d := tools["cart_add_item"].Description; !strings.Contains(d, `It works only in states "empty", "has_items".`) {
					t.Errorf("cart_add_item description %q does not say where it works", d)
				}
				for name, tool := range tools {
					if takesHandle(t, tool) {
						t.Errorf("%s takes a workflow_id", name)
					}
				}

				// Listed, yet refused in empty: the refusal of a session
				// whose list follows its workflow, word for word.
				res := c.call("cart_pay", map[string]any{"payment_method": "card"})
				ref := refusal(t, res)
				if f.ran("cart_pay") != 0 {
					t.Fatal("a refused call ran")
				}
				d := fixture(nil).connect(t, protocol)
				d.expectTools("default", "cart_add_item", "cart_view", "workflow_status", "workflow_transition")
				want := d.call("cart_pay", map[string]any{"payment_method": "card"})
				if got, w := resultText(res), resultText(want); got != w {
					t.Fatalf("refusal with ListAllTools:\n%s\nwithout:\n%s", got, w)
				}
				if ref.Code != mcpbind.CodeForbidden || ref.State != "empty" || !slices.Equal(ref.Available, []string{"cart_add_item", "cart_view", "workflow_status", "workflow_transition"}) ||
					len(ref.Path) != 2 || ref.Path[1].Tool != "cart_checkout" {
					t.Fatalf("refusal %+v", ref)
				}
				c.expectQuiet("refused call")

				if res := c.call("cart_add_item", map[string]any{"product_id": "p1"}); res.IsError {
					t.Fatalf("cart_add_item: %s", resultText(res))
				}
				c.expectQuiet("empty -> has_items")
				res = c.call("workflow_transition", map[string]any{"event": "CLEAR"})
				if res.IsError || !strings.Contains(resultText(res), `Transitioned from "has_items" to "empty" on CLEAR. The available tools changed.`) {
					t.Fatalf("workflow_transition: %s", resultText(res))
				}
				c.expectQuiet("has_items -> empty")
				c.call("cart_add_item", map[string]any{"product_id": "p2"})
				if res := c.call("cart_checkout", nil); res.IsError {
					t.Fatalf("cart_checkout: %s", resultText(res))
				}
				// cart_pay, listed from the start, now runs: the client
				// need not read the list again.
				if res := c.call("cart_pay", map[string]any{"payment_method": "card"}); res.IsError {
					t.Fatalf("cart_pay in payment: %s", resultText(res))
				}
				if f.ran("cart_pay") != 1 {
					t.Fatalf("cart_pay ran %d times, want 1", f.ran("cart_pay"))
				}
				c.expectQuiet("has_items -> payment -> confirmed")
				c.expectTools("confirmed", all...)
				if s := stateOf(t, f, c); s != "confirmed" {
					t.Fatalf("state %v", s)
				}
			})
		}
	}
}

// TestListAllToolsFeed: when another session moves the workflow a session
// with ListAllTools works in, the session gets no list_changed (its list
// does not vary) but still the new state's instructions, as a log message.
func TestListAllToolsFeed(t *testing.T) {
	m, err := statechart.Compile([]byte(guidanceJSON), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{Logger: quietLogger(), ListAllTools: true,
		SessionKey: func(*mcp.ServerSession) string { return "shared" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	s := mcp.NewServer(&mcp.Implementation{Name: "guided", Version: "1"}, nil)
	for _, name := range []string{"outline", "compile"} {
		mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{}, nil, nil
		})
	}
	g.Attach(s)
	if err := g.AddWorkflowTools(s, nil); err != nil {
		t.Fatal(err)
	}
	f := &fixture{server: s, gate: g}

	watcher := f.connect(t, "2025-11-25")
	logs := make(chan *mcp.LoggingMessageParams, 4)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	lc := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { watcher.changed <- struct{}{} },
		LoggingMessageHandler:  func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
	})
	listener, err := lc.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	if err := listener.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	// Listing the tools makes the session one of the workflow's.
	lr, err := listener.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Tools) != 4 {
		t.Fatalf("listed %d tools, want outline, compile and the workflow tools", len(lr.Tools))
	}

	if res := watcher.call("workflow_transition", map[string]any{"event": "BEGIN"}); res.IsError {
		t.Fatalf("workflow_transition: %s", resultText(res))
	}
	select {
	case p := <-logs:
		data, _ := p.Data.(map[string]any)
		if p.Logger != mcpbind.GuidanceLogger || data["state"] != "build" {
			t.Fatalf("guidance %+v, want state build from %s", p, mcpbind.GuidanceLogger)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other session was not told the new state's instructions")
	}
	watcher.expectQuiet("the workflow moved: no session's list varies")
	if res, err := listener.CallTool(context.Background(), &mcp.CallToolParams{Name: "compile"}); err != nil || res.IsError {
		t.Fatalf("compile in build, from the session that listed the tools in plan: %v %v", res, err)
	}
}
