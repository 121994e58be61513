// This file benchmarks a tool call over Streamable HTTP, directly to an
// upstream's HTTP server and through a gateway's HTTP handler in front of
// it, both on loopback in this process.
//
//	go test -run '^$' -bench CallHTTP -benchtime 3s ./gateway/

package gateway_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
)

// httpServe serves s with go-sdk's Streamable HTTP handler on loopback.
func httpServe(t testing.TB, s *mcp.Server) *httptest.Server {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	return srv
}

// httpSession connects a go-sdk client to url over Streamable HTTP.
func httpSession(t testing.TB, url string) *mcp.ClientSession {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkCallHTTP calls an echo tool of an upstream served over
// Streamable HTTP, directly and through a gateway's HTTP handler.
func BenchmarkCallHTTP(b *testing.B) {
	up := httpServe(b, newUpstreamServer("small", "up", ""))
	b.Run("direct", func(b *testing.B) { benchCalls(b, httpSession(b, up.URL), "echo", map[string]any{"text": "hello"}) })
	b.Run("gateway", func(b *testing.B) {
		g, err := gateway.New(context.Background(), &gateway.Config{Servers: []*gateway.ServerConfig{{Name: "up", Transport: gateway.TransportHTTP, URL: up.URL}}},
			&gateway.Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(b, err)
		b.Cleanup(func() { g.Close() })
		srv := httptest.NewServer(g.HTTPHandler(&mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)}))
		b.Cleanup(srv.Close)
		benchCalls(b, httpSession(b, srv.URL), "echo", map[string]any{"text": "hello"})
	})
}
