package mcpbind

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// framesAbove runs f below n frames of about 256 bytes each, as a
// request's goroutine runs the gate's middleware below go-sdk's own
// frames (about a kilobyte).
//
//go:noinline
func framesAbove(n int, f func()) byte {
	var pad [224]byte
	pad[n%len(pad)] = byte(n)
	if n <= 0 {
		f()
		return pad[0]
	}
	return framesAbove(n-1, f) + pad[(n*7)%len(pad)]
}

// TestMovingCallStack: a moving call (the tool's output two objects deep,
// its history entry written) runs within a goroutine stack of 8 KiB below
// a kilobyte of frames, as a plain call does: go-sdk runs each request on
// a goroutine of its own, whose stack is copied to one twice as large
// whenever it runs out. The stacks of goroutines that each made one call
// and wait are measured.
func TestMovingCallStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation takes more stack")
	}
	for _, handles := range []bool{false, true} {
		g, req := movingCall(t, handles, slog.New(slog.NewTextHandler(io.Discard, nil)))
		ctx := context.Background()
		next := func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "flip"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}},
				StructuredContent: map[string]any{"tool": "flip", "args": map[string]any{"x": 1.0}}}, nil
		}
		call := func() {
			res, err := g.call(ctx, next, &attachment{}, req)
			if err != nil || res.(*mcp.CallToolResult).IsError {
				t.Error(err, res)
			}
		}
		call()
		const n = 100
		release, done := make(chan struct{}), make(chan struct{})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			go func() {
				framesAbove(4, call)
				done <- struct{}{}
				<-release
			}()
			<-done
		}
		runtime.ReadMemStats(&after)
		close(release)
		if per := float64(after.StackInuse-before.StackInuse) / n; per > 12<<10 {
			t.Errorf("handles %v: %.0f bytes of stack per goroutine, want at most 8 KiB", handles, per)
		}
	}
}

// movingCall returns a gate whose tool "flip" moves the workflow at every
// call, and a call of it, whose workflow its session or (handles) a handle
// names.
func movingCall(t testing.TB, handles bool, logger *slog.Logger) (*Gate, *mcp.CallToolRequest) {
	t.Helper()
	const machine = `{"id": "flip", "initial": "a", "states": {
	  "a": {"on": {"FLIP": "b"}, "meta": {"mcp": {"tools": ["flip"], "events": {"flip": "FLIP"}}}},
	  "b": {"on": {"FLIP": "a"}, "meta": {"mcp": {"tools": ["flip"]}}}}}`
	opts := &Options{Logger: logger}
	args := `{"x":1}`
	if handles {
		opts.Handles = HandlesAlways
	}
	g := compileGate(t, machine, opts)
	ss := connectSession(t, g)
	if handles {
		id := newHandle()
		if _, err := g.core.Create(context.Background(), g.core.HandleKey(id)); err != nil {
			t.Fatal(err)
		}
		args = `{"x":1,"workflow_id":"` + id + `"}`
	}
	return g, &mcp.CallToolRequest{Session: ss, Params: &mcp.CallToolParamsRaw{Name: "flip", Arguments: []byte(args)}}
}
