package gateway_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
)

// A session over stdio whose tool calls skip go-sdk's server, while the
// middleware on it (here one that prints each call; chartgate serve's is
// the workflow gate) still sees them. Dispatch takes the calls of
// sessions of protocol versions before 2026-07-28.
func ExampleGateway_Dispatch() {
	ctx := context.Background()
	met := weatherServer("met", "")
	defer met.Close()
	cfg, err := gateway.ParseConfig([]byte(`{"mcpServers": {"met": {"url": "`+met.URL+`"}}}`), nil)
	if err != nil {
		log.Fatal(err)
	}
	g, err := gateway.New(ctx, cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	g.Server().AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok {
				fmt.Printf("middleware: %s %s\n", r.Params.Name, r.Params.Arguments)
			}
			return next(ctx, method, req)
		}
	})
	d := g.Dispatch() // once the middleware is added

	// The session's stdio (here a pair of pipes; chartgate serve's own
	// stdin and stdout).
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- d.Run(sctx, &stdio.Transport{Reader: toServer, Writer: fromServer, Bypass: d.Bypass})
	}()
	defer func() { stop(); <-served }()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: toClient, Writer: fromClient}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// middleware: forecast {"city":"Oslo"}
	// Oslo: sunny, says met
}
