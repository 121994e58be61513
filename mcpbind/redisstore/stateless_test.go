package redisstore_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/statechart"
)

// TestStatelessInstancesOneRedis: three stateless Streamable HTTP server
// instances, each with its own gate, share one Redis. Clients of protocol
// 2026-07-28 start a workflow on one instance and call it concurrently
// through all three: every call is counted, none is lost.
func TestStatelessInstancesOneRedis(t *testing.T) {
	t.Parallel()
	client := redistest.Start(t)
	m, err := statechart.Compile([]byte(counterJSON), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ran atomic.Int64
	var sessions []*mcp.ClientSession
	var gates []*mcpbind.Gate
	for range 3 {
		g, err := mcpbind.New(m.Engine(), &mcpbind.Options{
			Store:  redisstore.New(client, &redisstore.Options{Prefix: "test:stateless:"}),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		server := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
		server.AddTool(&mcp.Tool{Name: "inc", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ran.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		if err := g.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
			t.Fatal(err)
		}
		g.Attach(server)
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{Stateless: true}))
		t.Cleanup(srv.Close)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		sessions = append(sessions, cs)
		gates = append(gates, g)
	}
	res, err := sessions[0].CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
	if err != nil || res.IsError {
		t.Fatalf("workflow_start: %v, %+v", err, res)
	}
	id := res.StructuredContent.(map[string]any)["workflow_id"].(string)
	const workers, each = 6, 10
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				cs := sessions[(i+j)%len(sessions)]
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "inc", Arguments: map[string]any{"workflow_id": id}})
				if err != nil || res.IsError {
					t.Errorf("inc: %v, %+v", err, res)
				}
			}
		}()
	}
	wg.Wait()
	for i, g := range gates {
		w, err := g.Workflow(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if n := w.State.Context()["n"]; n != float64(workers*each) || ran.Load() != workers*each {
			t.Fatalf("instance %d: n = %v after %d handler runs, want %d", i+1, n, ran.Load(), workers*each)
		}
	}
	// The workflow is unknown to a fresh instance's store under another prefix.
	g, err := mcpbind.New(m.Engine(), &mcpbind.Options{Store: redisstore.New(client, &redisstore.Options{Prefix: "test:other:"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Workflow(ctx, id); err == nil {
		t.Fatal("a workflow was found under another prefix")
	}
}
