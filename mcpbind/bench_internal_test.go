package mcpbind

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart/flat"
)

// ringMachine is a flat machine of n states in a ring; state s<i> lists
// the tools "t<i>_*".
func ringMachine(n int) string {
	var b strings.Builder
	b.WriteString(`{"id": "ring", "initial": "s0", "states": {`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"s%d": {"on": {"NEXT": "s%d"}, "meta": {"mcp": {"tools": ["t%d_*"]}}}`, i, (i+1)%n, i)
	}
	b.WriteString("}}")
	return b.String()
}

// BenchmarkListFilter measures the gate's tools/list middleware on a list
// of 1,000 tools (900 bound to one of 10 states by a pattern or in Go, 100
// unbound), for a session whose workflow is in the store: the result of
// the server's own handler is given.
func BenchmarkListFilter(b *testing.B) {
	for _, mode := range []string{"json-patterns", "go-bindings"} {
		b.Run(mode+"/1000-tools", func(b *testing.B) {
			m, err := flat.Compile([]byte(ringMachine(10)))
			if err != nil {
				b.Fatal(err)
			}
			g, err := New(m, nil)
			if err != nil {
				b.Fatal(err)
			}
			var tools []*mcp.Tool
			for i := range 10 {
				for j := range 90 {
					name := fmt.Sprintf("t%d_%02d", i, j)
					tools = append(tools, &mcp.Tool{Name: name})
					if mode == "go-bindings" {
						if err := g.Bind(name, Binding{States: []string{fmt.Sprintf("s%d", i)}}); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			for j := range 100 {
				tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("free_%02d", j)})
			}
			ss := connectSession(b, g)
			ctx := context.Background()
			// Move the session's workflow to s3, so that it is stored.
			for range 3 {
				if out := send(b, g, core.Target{Ss: ss}, g.core.Event("NEXT", "x", nil, nil)); out.Err != nil {
					b.Fatal(out.Err)
				}
			}
			next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
				// The server builds a new slice for every call.
				return &mcp.ListToolsResult{Tools: append([]*mcp.Tool(nil), tools...)}, nil
			}
			req := &mcp.ListToolsRequest{Session: ss, Params: &mcp.ListToolsParams{}}
			res, err := g.list(ctx, next, &attachment{}, req)
			if err != nil {
				b.Fatal(err)
			}
			if n := len(res.(*mcp.ListToolsResult).Tools); n != 190 {
				b.Fatalf("%d visible tools, want 190", n)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := g.list(ctx, next, &attachment{}, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListCopy is the baseline of BenchmarkListFilter: the server
// handler stand-in alone.
func BenchmarkListCopy(b *testing.B) {
	tools := make([]*mcp.Tool, 1000)
	for i := range tools {
		tools[i] = &mcp.Tool{Name: fmt.Sprint("t", i)}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = &mcp.ListToolsResult{Tools: append([]*mcp.Tool(nil), tools...)}
	}
}

// BenchmarkGateCall measures the work the gate adds to one tools/call, with
// the server's handler stubbed out: for a tool that is not gated, one that
// is gated without an event, and one whose event moves the workflow on
// every call (load, transition, compare-and-swap, change detection), the
// last also with its workflow named by a handle.
func BenchmarkGateCall(b *testing.B) {
	const machine = `{
	  "id": "flip", "initial": "a",
	  "states": {
	    "a": {"on": {"FLIP": "b"}, "meta": {"mcp": {"tools": ["flip", "look"], "events": {"flip": "FLIP"}}}},
	    "b": {"on": {"FLIP": "a"}, "meta": {"mcp": {"tools": ["flip", "look"]}}}
	  }
	}`
	// Transitions are logged at Info level: measure without output.
	quiet := &Options{Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	// With handles, the call names its workflow by the workflow_id argument
	// (as under protocol 2026-07-28).
	handles := *quiet
	handles.Handles = HandlesAlways
	for _, engine := range []string{"flat", "full"} {
		for _, tool := range []string{"other", "look", "flip", "flip/handle"} {
			b.Run(engine+"/"+tool, func(b *testing.B) {
				opts, name, args := quiet, tool, `{"x":1}`
				if tool == "flip/handle" {
					opts, name = &handles, "flip"
				}
				var g *Gate
				if engine == "flat" {
					m, err := flat.Compile([]byte(machine))
					if err != nil {
						b.Fatal(err)
					}
					g, err = New(m, opts)
					if err != nil {
						b.Fatal(err)
					}
				} else {
					g = compileGate(b, machine, opts)
				}
				ss := connectSession(b, g)
				ctx := context.Background()
				if opts == &handles {
					id := newHandle()
					if _, err := g.core.Create(ctx, g.core.HandleKey(id)); err != nil {
						b.Fatal(err)
					}
					args = `{"x":1,"workflow_id":"` + id + `"}`
				}
				next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"ok": true}}, nil
				}
				req := &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: name, Arguments: []byte(args)}}
				b.ReportAllocs()
				for b.Loop() {
					res, err := g.call(ctx, next, &attachment{}, req)
					if err != nil || res.(*mcp.CallToolResult).IsError {
						b.Fatal(err, res)
					}
				}
			})
		}
	}
}

// TestMovingCallAllocs: the gate's share of the allocations of a call
// that moves the workflow (its session's, on a MemoryStore, the handler
// stubbed out and the transition's log line not written) stays at 15:
// the call's own, its lease with the transition and the lease id, the views
// saved with the lease and with the new state, the new state's snapshot,
// active states and history entry, the states' values, and the result's
// copy with its note (a map and the note in it).
func TestMovingCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	g, req := movingCall(t, false, slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx := context.Background()
	next := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "flip"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	handler := testing.AllocsPerRun(200, func() { resultSink, _ = next(ctx, "tools/call", req) })
	call := testing.AllocsPerRun(200, func() {
		res, err := g.call(ctx, next, &attachment{}, req)
		if err != nil || res.(*mcp.CallToolResult).IsError {
			t.Fatal(err, res)
		}
	})
	if gate := call - handler; gate > 15 {
		t.Fatalf("a moving call: the gate allocates %v times (the handler %v); want at most 15", gate, handler)
	}
}

// resultSink keeps a result, so that it is allocated as the gate's are.
var resultSink mcp.Result

// TestLoggedMovingCallAllocs: the log record of a moving call's
// transition (a TextHandler at Info, writing to io.Discard) allocates
// nothing once its workflow has moved before, for a session's workflow and
// for a handle's: the key's fingerprint is kept, not hashed and allocated
// again.
func TestLoggedMovingCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	allocs := func(handles bool, level slog.Level) float64 {
		g, req := movingCall(t, handles, slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level})))
		ctx := context.Background()
		next := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "flip"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}
		return testing.AllocsPerRun(200, func() {
			res, err := g.call(ctx, next, &attachment{}, req)
			if err != nil || res.(*mcp.CallToolResult).IsError {
				t.Fatal(err, res)
			}
		})
	}
	for _, handles := range []bool{false, true} {
		if logged, unlogged := allocs(handles, slog.LevelInfo), allocs(handles, slog.LevelWarn); logged > unlogged {
			t.Errorf("handles %v: a logged moving call allocates %v times, an unlogged one %v", handles, logged, unlogged)
		}
	}
}

// TestHandleCallAllocs: a moving call whose workflow a handle names
// allocates at most twice more than one of a session's workflow: the
// handle's store key (the id is its end) and the arguments without
// workflow_id. The arguments are parsed in place; the request without
// workflow_id and the context naming the workflow come with the call's
// own allocation, and the handler reads the id without one.
func TestHandleCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	allocs := func(handles bool) float64 {
		g, req := movingCall(t, handles, slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})))
		ctx := context.Background()
		var gotID string
		next := func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "flip"}}}, nil
			}
			gotID = WorkflowID(ctx)
			if a := string(req.(*mcp.CallToolRequest).Params.Arguments); a != `{"x":1}` {
				t.Errorf("the handler got arguments %s", a)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		}
		n := testing.AllocsPerRun(200, func() {
			res, err := g.call(ctx, next, &attachment{}, req)
			if err != nil || res.(*mcp.CallToolResult).IsError {
				t.Fatal(err, res)
			}
		})
		if handles && gotID == "" {
			t.Error("the handler's context names no workflow")
		}
		return n
	}
	session, handle := allocs(false), allocs(true)
	if handle > session+2 {
		t.Fatalf("a handle's moving call: %v allocations, a session's %v; want at most 2 more", handle, session)
	}
}

// TestTransitionLogKey: every transition's log record names its workflow
// by the fingerprint of its key, the first time and again once it is kept.
func TestTransitionLogKey(t *testing.T) {
	var buf bytes.Buffer
	g, req := movingCall(t, true, slog.New(slog.NewTextHandler(&buf, nil)))
	var args struct {
		ID string `json:"workflow_id"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		t.Fatal(err)
	}
	next := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "flip"}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	for range 3 {
		if _, err := g.call(context.Background(), next, &attachment{}, req); err != nil {
			t.Fatal(err)
		}
	}
	want := "key=" + core.Fingerprint(g.core.HandleKey(args.ID))
	var n int
	for line := range strings.Lines(buf.String()) {
		if strings.Contains(line, `msg="mcpbind: transition"`) {
			n++
			if !strings.Contains(line, want) {
				t.Errorf("log record %q, want %s", line, want)
			}
		}
	}
	if n != 3 {
		t.Fatalf("%d transitions logged, want 3:\n%s", n, buf.String())
	}
}
