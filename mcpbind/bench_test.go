package mcpbind_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/cputime"
	"github.com/chartgate/chartgate/mcpbind"
)

// flipJSON toggles between two states, both showing the tool "flip".
const flipJSON = `{
  "id": "flip",
  "initial": "a",
  "states": {
    "a": {"on": {"FLIP": "b"}, "meta": {"mcp": {"tools": ["flip", "look"], "events": {"flip": "FLIP"}}}},
    "b": {"on": {"FLIP": "a"}, "meta": {"mcp": {"tools": ["flip", "look"]}}}
  }
}`

// callCase is one kind of tools/call the benchmarks make.
type callCase struct {
	name, tool string
	gated      bool
	protocol   string
	http       bool // over Streamable HTTP on loopback, not in memory
}

// callCases are the kinds of call BenchmarkCall measures.
var callCases = []callCase{
	{"plain", "flip", false, "2025-11-25", false},
	{"plain+note", "flip", false, "2025-11-25", false},
	{"gated/unbound-tool", "other", true, "2025-11-25", false},
	{"gated/visibility-only", "look", true, "2025-11-25", false},
	{"gated/transition", "flip", true, "2025-11-25", false},
	{"gated/transition-unlogged", "flip", true, "2025-11-25", false},
	{"plain-2026", "flip", false, "2026-07-28", false},
	{"handles/transition", "flip", true, "2026-07-28", false},
	{"http/plain", "flip", false, "2025-11-25", true},
	{"http/gated/transition", "flip", true, "2025-11-25", true},
}

// BenchmarkCall measures an in-memory tools/call round trip through the
// go-sdk client and server: on a plain server, and through the gate for a
// tool that is not gated, one that is gated without an event (a load and a
// visibility check) and one whose event moves the workflow every call (a
// load, the handler, a transition and a compare-and-swap; no notification,
// since both states show the same tools); and the last under protocol
// 2026-07-28, with a workflow handle instead of the session.
//
// Two more cases take a moving call apart: "gated/transition-unlogged",
// with a logger that drops Info records (the transition's log line, which
// the others format and discard, is not written), and "plain+note", a
// plain server whose results carry the note the gate adds to the result
// of a moving call (what the note costs the client and the server).
//
// The "http/" cases make the plain call and the moving call over Streamable
// HTTP (a stateful session, on a loopback httptest server), as a server
// deployed on the network is called.
func BenchmarkCall(b *testing.B) {
	for _, engine := range engines {
		for _, c := range callCases {
			b.Run(engine+"/"+c.name, func(b *testing.B) {
				call := newBenchCall(b, engine, c)
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					call()
				}
				// CPU time (client and server, both in this process) is less
				// sensitive than wall time to other load on the machine.
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// BenchmarkPairedCalls measures the cases of BenchmarkCall that compare a
// moving call with a plain one (full engine) in turns within one process,
// a batch of calls of each in every iteration, so that load from elsewhere
// on the machine falls on all of them alike. It reports each case's CPU
// time per call and what a moving call adds, in percent: gated/transition
// over plain and over plain+note (the note's own cost to the client and
// server set aside), handles/transition over plain-2026, and
// gated/transition-unlogged (no log line written) over plain+note, and
// http/gated/transition over http/plain (both over Streamable HTTP).
func BenchmarkPairedCalls(b *testing.B) {
	const batch = 20
	names := []string{"plain", "plain+note", "gated/transition", "plain-2026", "handles/transition", "gated/transition-unlogged", "http/plain", "http/gated/transition"}
	calls := make([]func(), len(names))
	labelled := make([]context.Context, len(names))
	for i, name := range names {
		for _, c := range callCases {
			if c.name == name {
				// Labelled, so that a CPU profile of the run tells the cases
				// apart (go tool pprof -tagfocus case=plain): the server's and
				// the client's goroutines, and below the benchmark's while it
				// calls.
				labelled[i] = pprof.WithLabels(context.Background(), pprof.Labels("case", name))
				pprof.Do(context.Background(), pprof.Labels("case", name), func(context.Context) {
					calls[i] = newBenchCall(b, "full", c)
				})
			}
		}
	}
	defer pprof.SetGoroutineLabels(context.Background())
	cpu := make([]time.Duration, len(names))
	for b.Loop() {
		for i, call := range calls {
			pprof.SetGoroutineLabels(labelled[i])
			cpu0 := cputime.Process()
			for range batch {
				call()
			}
			cpu[i] += cputime.Process() - cpu0
		}
	}
	if cpu[0] == 0 {
		return // no CPU clock on this system
	}
	perCall := func(i int) float64 { return float64(cpu[i].Nanoseconds()) / float64(b.N*batch) }
	for i, name := range names {
		b.ReportMetric(perCall(i), name+"-cpu-ns/call")
	}
	b.ReportMetric(100*(perCall(2)/perCall(0)-1), "transition-over-plain-%")
	b.ReportMetric(100*(perCall(2)/perCall(1)-1), "transition-over-note-%")
	b.ReportMetric(100*(perCall(4)/perCall(3)-1), "handles-over-plain-2026-%")
	b.ReportMetric(100*(perCall(5)/perCall(1)-1), "unlogged-over-note-%")
	b.ReportMetric(100*(perCall(7)/perCall(6)-1), "http-transition-over-plain-%")
}

// newBenchCall sets up a server and a client for one case of
// BenchmarkCall, and returns the call it makes.
func newBenchCall(b *testing.B, engine string, c callCase) func() {
	// The tools answer alike in every case: the handles case measures
	// what the gate adds, not a longer result.
	f := &fixture{server: mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil), sameOutput: true}
	for _, name := range []string{"flip", "look", "other"} {
		f.addTool(name, false)
	}
	if c.gated {
		logger := quietLogger()
		if c.name == "gated/transition-unlogged" {
			logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
		}
		opts := &mcpbind.Options{Logger: logger}
		if c.protocol >= "2026-07-28" {
			// A lasting connection serves one workflow unless handles are
			// asked for: the case measures handles.
			opts.Handles = mcpbind.HandlesAlways
		}
		g, err := mcpbind.New(compile(b, engine, flipJSON, nil), opts)
		if err != nil {
			b.Fatal(err)
		}
		g.Attach(f.server)
		f.gate = g
	}
	if c.name == "plain+note" {
		f.server.AddReceivingMiddleware(withTransitionNote)
	}
	var cl *client
	if c.http {
		cl = f.connectHTTP(b, c.protocol)
	} else {
		cl = f.connect(b, c.protocol)
	}
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"x": 1}}
	if c.gated && c.protocol >= "2026-07-28" {
		params.Arguments = map[string]any{"x": 1, "workflow_id": cl.start()}
	}
	return func() {
		res, err := cl.cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// connectHTTP connects a client to the fixture's server over Streamable
// HTTP: a stateful session, on a loopback test server.
func (f *fixture) connectHTTP(b *testing.B, protocol string) *client {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server }, nil))
	b.Cleanup(srv.Close)
	mc := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := mc.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return &client{t: b, cs: cs, changed: make(chan struct{}, 100)}
}

// withTransitionNote adds to the results of tools/call the note the gate
// adds to those of calls that move the workflow from "a" to "b".
func withTransitionNote(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if cr, ok := res.(*mcp.CallToolResult); ok && method == "tools/call" {
			out := *cr
			out.Meta = map[string]any{mcpbind.MetaKey: mcpbind.TransitionNote{Event: "FLIP", From: "a", To: "b"}}
			res = &out
		}
		return res, err
	}
}

// BenchmarkSessionMemory reports the heap a session costs, on a plain
// server and through the gate: idle (initialized, tools listed: the gate
// keeps nothing for it) and after one transition (a store record and the
// gate's session record, which its sweep removes once the session ends).
// The gate's share is the difference to "plain".
func BenchmarkSessionMemory(b *testing.B) {
	const sessions = 200
	for _, c := range []struct {
		name       string
		gated, act bool
	}{
		{"plain", false, false},
		{"gated/idle", true, false},
		{"gated/after-transition", true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				f := &fixture{server: mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)}
				f.addTool("flip", false)
				f.addTool("look", false)
				if c.gated {
					g, err := mcpbind.New(compile(b, "flat", flipJSON, nil), &mcpbind.Options{Logger: quietLogger()})
					if err != nil {
						b.Fatal(err)
					}
					g.Attach(f.server)
					f.gate = g
				}
				var clients []*client
				before := heap()
				for range sessions {
					cl := f.connect(b, "2025-11-25")
					cl.tools()
					if c.act {
						cl.call("flip", nil)
					}
					clients = append(clients, cl)
				}
				after := heap()
				b.ReportMetric(float64(after-before)/sessions, "B/session")
				for _, cl := range clients {
					_ = cl.cs.Close()
				}
			}
		})
	}
}

// heap returns the bytes of live heap and goroutine stacks.
func heap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc + ms.StackInuse)
}
