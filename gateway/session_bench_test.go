package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
)

// BenchmarkSessionMemory opens 1,000 downstream sessions on a gateway's
// server, each initialized and then listing the tools once, and reports
// what they hold: the heap and goroutine stacks, per session, after a
// collection. Over stdio, each session is served on a pair of pipes, as
// chartgate serve does (the client side, pipes and a reader, is counted
// in); over HTTP, the sessions are those of one Streamable HTTP handler,
// as chartgate serve --http runs it, reached over loopback (the client's
// connections are shared). With gated, a workflow gate on a memory store
// is attached, as chartgate serve --workflow does. With called, each
// HTTP session also calls a tool once, which the handler takes; with
// logging, it sets a log level.
func BenchmarkSessionMemory(b *testing.B) {
	const n = 1000
	for _, c := range []struct {
		name  string
		gated bool
		open  func(*testing.B, *gateway.Gateway) func()
		extra string // what each HTTP session sends after listing the tools
	}{{"stdio", false, openRawSession, ""}, {"stdio/gated", true, openRawSession, ""}, {"http", false, nil, ""}, {"http/gated", true, nil, ""},
		{"http/called", false, nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`},
		{"http/logging", false, nil, `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}`}} {
		gated, extra := c.gated, c.extra
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				g, err := gateway.New(context.Background(), &gateway.Config{Servers: []*gateway.ServerConfig{upstreamCommand(b, "up", "small", "")}}, nil)
				require.NoError(b, err)
				if gated {
					benchGate(b, "memory", false).Attach(g.Server())
				}
				open := c.open
				if open == nil {
					open = httpSessions(b, g, extra)
				}
				b.StartTimer()
				before := inUse()
				var ends []func()
				for range n {
					ends = append(ends, open(b, g))
				}
				after := inUse()
				b.ReportMetric(float64(after-before)/n, "B/session")
				b.StopTimer()
				for _, end := range ends {
					end()
				}
				g.Close()
				b.StartTimer()
			}
		})
	}
}

// inUse is the heap and stack memory in use after a collection.
func inUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// openRawSession serves one session of g's server on pipes, as chartgate
// serve's stdio transport does, and initializes it and lists the tools
// with raw lines; it returns the function that ends the session.
func openRawSession(b *testing.B, g *gateway.Gateway) func() {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Server().Run(ctx, &stdio.Transport{Reader: toServer, Writer: fromServer, Bypass: g.Passthrough()})
	}()
	r := bufio.NewReader(toClient)
	exchange := func(line string, answered bool) {
		if _, err := fmt.Fprintln(fromClient, line); err != nil {
			b.Fatal(err)
		}
		if answered {
			if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
				b.Fatal(err)
			}
			for r.Buffered() > 0 { // the rest of a long line
				if _, err := r.ReadSlice('\n'); err != bufio.ErrBufferFull {
					break
				}
			}
		}
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, true)
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, true)
	return func() { fromClient.Close(); cancel(); <-done }
}

// httpSessions serves g's server with its Streamable HTTP handler on
// loopback and returns a function that opens one session on it (and
// sends it extra, unless "").
func httpSessions(b *testing.B, g *gateway.Gateway, extra string) func(*testing.B, *gateway.Gateway) func() {
	srv := httptest.NewServer(g.HTTPHandler(&mcp.StreamableHTTPOptions{Logger: slog.New(slog.DiscardHandler)}))
	b.Cleanup(srv.Close)
	client := srv.Client()
	post := func(session, body string) string {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(b, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		require.NoError(b, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			b.Fatalf("%s: %s", body, resp.Status)
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	return func(*testing.B, *gateway.Gateway) func() {
		id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if extra != "" {
			post(id, extra)
		}
		return func() {
			req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
			req.Header.Set("Mcp-Session-Id", id)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
}
