// This file holds the benchmark of a gate on the store: tools/calls that
// move a workflow, through the go-sdk client and server in memory.

package sqlitestore_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
)

// BenchmarkGateMovingCall is a tools/call whose event moves the session's
// workflow each time (its context counts the calls), through a gate on
// the store as chartgate serve opens it (RelaxedSync) and with --durable:
// what the gate asks of the store for a moving call, with the MCP round
// trip in memory around it.
func BenchmarkGateMovingCall(b *testing.B) {
	for _, relaxed := range []bool{true, false} {
		name := "relaxed-sync"
		if !relaxed {
			name = "full-sync"
		}
		b.Run(name, func(b *testing.B) {
			cs := movingSession(b, open(b, &sqlitestore.Options{RelaxedSync: relaxed}))
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// movingSession returns a client session of a server with an echo tool,
// gated on store by a workflow that every echo call moves.
func movingSession(tb testing.TB, store *sqlitestore.Store) *mcp.ClientSession {
	tb.Helper()
	m, err := statechart.Compile([]byte(`{"id": "w", "initial": "a", "context": {"n": 0}, "states": {"a": {
		"on": {"E": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}},
		"meta": {"mcp": {"tools": ["*"], "events": {"echo": "E"}}}}}}`), nil)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler), Store: store})
	if err != nil {
		tb.Fatal(err)
	}
	type echoIn struct {
		Text string `json:"text"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	g.Attach(s)
	return connect(tb, s, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// connect connects a client to s over in-memory transports, both closed
// when tb ends.
func connect(tb testing.TB, s *mcp.Server, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
	tb.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}
