// This file holds the package example: a gateway in front of two HTTP
// upstreams whose tool names collide.

package gateway_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
)

// weatherServer is an upstream MCP server over Streamable HTTP with the
// tools forecast and, if extra is set, extra.
func weatherServer(name, extra string) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	type in struct {
		City string `json:"city"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "forecast"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.City + ": sunny, says " + name}}}, nil, nil
	})
	if extra != "" {
		mcp.AddTool(s, &mcp.Tool{Name: extra}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

func Example() {
	ctx := context.Background()
	met, backup := weatherServer("met", "alerts"), weatherServer("backup", "")
	defer met.Close()
	defer backup.Close()

	cfg, err := gateway.ParseConfig([]byte(`{"mcpServers": {
		"met":    {"url": "`+met.URL+`"},
		"backup": {"url": "`+backup.URL+`"}
	}}`), nil)
	if err != nil {
		log.Fatal(err)
	}
	g, err := gateway.New(ctx, cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close() // before the upstreams close: it ends their streams

	// Both upstreams have forecast: it is prefixed on both. (go-sdk lists
	// a server's tools by name.)
	for _, ti := range g.Tools() {
		fmt.Printf("%-17s is %s's %s\n", ti.Name, ti.Upstream, ti.UpstreamName)
	}

	// A client of the gateway (here in memory; chartgate serve uses stdio
	// or Streamable HTTP).
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "backup__forecast", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// alerts            is met's alerts
	// met__forecast     is met's forecast
	// backup__forecast  is backup's forecast
	// Oslo: sunny, says backup
}
