package mcpbind_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
)

// TestGatedAs: a tool a gateway renamed ("up1__x", because two upstreams
// have an "x") is gated by the workflow's "x" too: hidden and refused
// where "x" is, visible where it is, and sending "x"'s event. Before
// Options.GatedAs the workflow named neither prefixed name, and both ran
// in every state.
func TestGatedAs(t *testing.T) {
	for _, deny := range []bool{false, true} {
		gate, err := mcpbind.New(compile(t, "full", `{"id": "m", "initial": "a", "states": {
			"a": {"on": {"GO": "b"}, "meta": {"mcp": {"tools": ["read"]}}},
			"b": {"on": {"BACK": "a"}, "meta": {"mcp": {"tools": ["x", "read"], "events": {"x": "BACK"}}}}}}`, nil),
			&mcpbind.Options{Logger: quietLogger(), DefaultDeny: deny, GatedAs: func(tool string) string {
				if _, name, ok := strings.Cut(tool, "__"); ok {
					return name
				}
				return ""
			}})
		if err != nil {
			t.Fatal(err)
		}
		if errs := gate.CheckTools([]string{"up1__x", "up2__x", "read"}); len(errs) != 0 {
			t.Fatalf("CheckTools: %v", errs)
		}
		if errs := gate.CheckTools([]string{"up1__y", "read"}); len(errs) != 2 {
			t.Fatalf("CheckTools without an x: %v", errs)
		}
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		ran := map[string]int{}
		for _, name := range []string{"up1__x", "up2__x", "read"} {
			srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran[name]++
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		}
		gate.Attach(srv)
		if err := gate.AddWorkflowTools(srv, nil); err != nil {
			t.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		ctx := context.Background()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		listed := func() []string {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, tool := range res.Tools {
				if !strings.HasPrefix(tool.Name, "workflow_") {
					out = append(out, tool.Name)
				}
			}
			slices.Sort(out)
			return out
		}
		call := func(name string) *mcp.CallToolResult {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if got := listed(); !slices.Equal(got, []string{"read"}) {
			t.Fatalf("deny=%v, in a: listed %v", deny, got)
		}
		for _, name := range []string{"up1__x", "up2__x"} {
			if _, refused := mcpbind.RefusalOf(call(name)); !refused || ran[name] != 0 {
				t.Fatalf("deny=%v, in a: %s ran", deny, name)
			}
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "GO"}}); err != nil || res.IsError {
			t.Fatalf("GO: %v %v", err, res)
		}
		if got := listed(); !slices.Equal(got, []string{"read", "up1__x", "up2__x"}) {
			t.Fatalf("deny=%v, in b: listed %v", deny, got)
		}
		// up1__x sends x's event, BACK: the workflow is in a again.
		if res := call("up1__x"); res.IsError || ran["up1__x"] != 1 {
			t.Fatalf("deny=%v, in b: up1__x: %v", deny, res.Content)
		}
		if _, refused := mcpbind.RefusalOf(call("up2__x")); !refused || ran["up2__x"] != 0 {
			t.Fatalf("deny=%v: up2__x ran after up1__x sent BACK", deny)
		}
	}
}
