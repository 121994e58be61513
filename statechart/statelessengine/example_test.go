package statelessengine_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/qmuntal/stateless"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart/statelessengine"
)

// A document workflow written with stateless gates the tools of an MCP
// server: publish_doc is refused until the document is approved, and
// approve_doc until a reviewer is assigned (a stateless guard).
func Example() {
	sm := stateless.NewStateMachineWithExternalStorage(statelessengine.State, statelessengine.SetState, stateless.FiringImmediate)
	var reviewer atomic.Bool
	sm.Configure("draft").Permit("APPROVE", "approved", func(context.Context, ...any) bool { return reviewer.Load() })
	sm.Configure("approved").Permit("PUBLISH", "published")
	engine, err := statelessengine.New(sm, &statelessengine.Options{
		ID:       "doc",
		States:   []any{"draft", "approved", "published"},
		Final:    []any{"published"},
		Triggers: []any{"APPROVE", "PUBLISH"},
	})
	if err != nil {
		panic(err)
	}
	gate, err := mcpbind.New(engine, &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "approve_doc"}, mcpbind.Binding{Event: "APPROVE"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "approved"}}}, nil, nil
		})
	mcpbind.AddTool(server, gate, &mcp.Tool{Name: "publish_doc"}, mcpbind.Binding{Event: "PUBLISH"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "published"}}}, nil, nil
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
	call := func(name string) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: isError=%v: %s\n", name, res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	call("publish_doc")
	call("approve_doc")
	reviewer.Store(true)
	call("approve_doc")
	call("publish_doc")
	// Output:
	// publish_doc: isError=true: Tool "publish_doc" is not available in the current workflow state ("draft"). No sequence of tool calls makes it available from this state.
	// Tools available now: none.
	// approve_doc: isError=true: Tool "approve_doc" is not available in the current workflow state ("draft"). No sequence of tool calls makes it available from this state.
	// Tools available now: none.
	// approve_doc: isError=false: approved
	// publish_doc: isError=false: published
}
