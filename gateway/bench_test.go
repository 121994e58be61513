// This file benchmarks the gateway's cost: the latency it adds to a tool
// call over stdio, against calling the same upstream directly, and listing
// an upstream's 1,000 tools.
//
//	go test -run '^$' -bench . -benchtime 3s ./gateway/

package gateway_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/internal/stdio"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
)

// directSession connects a client straight to the upstream s, over its
// stdin and stdout.
func directSession(b *testing.B, s *gateway.ServerConfig) *mcp.ClientSession {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = os.Environ()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(b, err)
	b.Cleanup(func() { cs.Close() })
	return cs
}

// gatewaySession connects a client to a gateway in front of s, over a
// pair of OS pipes framed as stdio, as a host would run chartgate serve.
func gatewaySession(b *testing.B, s *gateway.ServerConfig) *mcp.ClientSession {
	return gatedSession(b, s, nil, true)
}

// gatedSession is gatewaySession with a workflow gate on the gateway's
// server, if gate is not nil, whose calls a Dispatch takes (as chartgate
// serve --workflow runs it) if dispatch is set, else go-sdk's server.
func gatedSession(b *testing.B, s *gateway.ServerConfig, gate *mcpbind.Gate, dispatch bool) *mcp.ClientSession {
	g, err := gateway.New(context.Background(), &gateway.Config{Servers: []*gateway.ServerConfig{s}}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { g.Close() })
	t := &stdio.Transport{}
	serve := g.Server().Run
	if gate != nil {
		gate.Attach(g.Server())
		if dispatch {
			d := g.Dispatch()
			t.Bypass, serve = d.Bypass, d.Run
		}
	} else {
		t.Bypass = g.Passthrough()
	}
	return pipeSession(b, serve, t, "bench", nil)
}

func benchCalls(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if _, err := cs.CallTool(ctx, params); err != nil { // warm up
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkCall calls an echo tool of an upstream over stdio, directly
// and through the gateway (whose client also speaks stdio): the
// difference is the gateway's added latency per call. The Go upstream is
// the test binary; the Node one is the reference server-everything, when
// installed.
func BenchmarkCall(b *testing.B) {
	upstreams := []struct {
		name string
		cfg  func(b *testing.B) *gateway.ServerConfig
		tool string
		args map[string]any
	}{
		{"go", func(b *testing.B) *gateway.ServerConfig { return upstreamCommand(b, "up", "small", "") }, "echo", map[string]any{"text": "hello"}},
		{"node", func(b *testing.B) *gateway.ServerConfig { return referenceServer(b, "server-everything", "stdio") }, "echo", map[string]any{"message": "hello"}},
	}
	for _, u := range upstreams {
		b.Run(u.name+"/direct", func(b *testing.B) { benchCalls(b, directSession(b, u.cfg(b)), u.tool, u.args) })
		b.Run(u.name+"/gateway", func(b *testing.B) { benchCalls(b, gatewaySession(b, u.cfg(b)), u.tool, u.args) })
		for _, store := range []string{"memory", "sqlite", "sqlite-relaxed"} {
			b.Run(u.name+"/gated/visible/"+store, func(b *testing.B) {
				benchCalls(b, gatedSession(b, u.cfg(b), benchGate(b, store, false), true), u.tool, u.args)
			})
			b.Run(u.name+"/gated/transition/"+store, func(b *testing.B) {
				benchCalls(b, gatedSession(b, u.cfg(b), benchGate(b, store, true), true), u.tool, u.args)
			})
			// The same through go-sdk's server, for comparison.
			b.Run(u.name+"/gated/transition/"+store+"/sdk", func(b *testing.B) {
				benchCalls(b, gatedSession(b, u.cfg(b), benchGate(b, store, true), false), u.tool, u.args)
			})
		}
	}
}

// benchGate is the gate chartgate serve --workflow would attach: every
// tool visible; with moving, echo's success sends an event that changes
// the context (a lease, the event and two writes per call).
func benchGate(b *testing.B, store string, moving bool) *mcpbind.Gate {
	machine := `{"id": "w", "initial": "a", "context": {"n": 0}, "states": {"a": {"meta": {"mcp": {"tools": ["*"]}}}}}`
	if moving {
		machine = `{"id": "w", "initial": "a", "context": {"n": 0}, "states": {"a": {
			"on": {"E": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}},
			"meta": {"mcp": {"tools": ["*"], "events": {"echo": "E"}}}}}}`
	}
	m, err := statechart.Compile([]byte(machine), nil)
	require.NoError(b, err)
	opts := &mcpbind.Options{Logger: slog.New(slog.DiscardHandler), AuditCalls: true}
	if store != "memory" {
		s, err := sqlitestore.Open(filepath.Join(b.TempDir(), "state.db"), &sqlitestore.Options{RelaxedSync: store == "sqlite-relaxed"})
		require.NoError(b, err)
		b.Cleanup(func() { s.Close() })
		opts.Store = s
	}
	g, err := mcpbind.New(m.Engine(), opts)
	require.NoError(b, err)
	return g
}

// BenchmarkListTools lists the 1,000 tools of an upstream (one page each
// time), directly and through the gateway, which answers from the list it
// keeps.
func BenchmarkListTools(b *testing.B) {
	for _, path := range []struct {
		name    string
		connect func(*testing.B, *gateway.ServerConfig) *mcp.ClientSession
	}{{"direct", directSession}, {"gateway", gatewaySession}} {
		b.Run("1000/"+path.name, func(b *testing.B) {
			cs := path.connect(b, upstreamCommand(b, "up", "many", ""))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.ListTools(ctx, nil)
				if err != nil || len(res.Tools) != 1000 {
					b.Fatal(err, len(res.Tools))
				}
			}
		})
	}
}

// BenchmarkStart1000Tools starts a gateway in front of an upstream with
// 1,000 tools: the child starts, is initialized and listed, and the tools
// are added to the downstream server.
func BenchmarkStart1000Tools(b *testing.B) {
	cfg := &gateway.Config{Servers: []*gateway.ServerConfig{upstreamCommand(b, "up", "many", "")}}
	b.ReportAllocs()
	for b.Loop() {
		g, err := gateway.New(context.Background(), cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(g.Tools()); n != 1000 {
			b.Fatal(n)
		}
		g.Close()
	}
}
