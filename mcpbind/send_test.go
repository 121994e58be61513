package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// leaseJSON: a successful build moves a to b; an interrupt moves b to c,
// and in c every "NOTE" event merges nothing but is taken (a self
// transition with an assign), so that each one is a transition.
const leaseJSON = `{
  "id": "lease", "initial": "a", "context": {"n": 0},
  "states": {
    "a": {"on": {"BUILT": "b"}, "meta": {"mcp": {"tools": ["build"], "events": {"build": "BUILT"}}}},
    "b": {"on": {"chartgate.interrupt.env": "c"}, "meta": {"mcp": {"tools": ["*"]}}},
    "c": {"on": {"NOTE": {"actions": "note"}}, "meta": {"mcp": {"tools": ["*"]}}}
  }
}`

// leaseServer is a server whose build tool, gated by leaseJSON, runs until
// release is closed (started is closed when it starts: the call then
// holds the workflow's lease); its sessions' workflow is named "main".
func leaseServer(t *testing.T, opts *mcpbind.Options) (g *mcpbind.Gate, c *client, started, release chan struct{}) {
	t.Helper()
	g, err := mcpbind.New(compile(t, "full", leaseJSON, &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"note": func(context.Context, *statechart.ActionArgs) error { return nil }}}}), opts)
	if err != nil {
		t.Fatal(err)
	}
	started, release = make(chan struct{}), make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "lease", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "build", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "built"}}}, nil
		})
	g.Attach(s)
	return g, (&fixture{server: s, gate: g}).connect(t, "2025-11-25"), started, release
}

// TestSendWaitsForALeaseHeldByACall: an event sent from outside MCP (a
// hook's interrupt) while a tools/call of the workflow holds its lease
// waits for the call to be recorded, then is applied to the state the call
// left. It once read the MCP request it does not have, and panicked.
func TestSendWaitsForALeaseHeldByACall(t *testing.T) {
	g, c, started, release := leaseServer(t, &mcpbind.Options{Logger: quietLogger(), SessionKey: func(*mcp.ServerSession) string { return "main" }})
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "main"}
	built := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "build"})
		if err != nil {
			t.Errorf("build: %v", err)
		}
		built <- res
	}()
	<-started
	type sent struct {
		tr  *mcpbind.Transition
		err error
	}
	done := make(chan sent, 1)
	go func() {
		tr, err := g.Send(ctx, ref, statechart.Event{Type: "chartgate.interrupt.env"}, "hook")
		done <- sent{tr, err}
	}()
	select {
	case s := <-done:
		t.Fatalf("Send returned while build held the lease: %+v", s)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if res := <-built; res == nil || res.IsError {
		t.Fatalf("build: %+v", res)
	}
	s := <-done
	if s.err != nil || s.tr == nil || s.tr.From != "b" || s.tr.To != "c" || s.tr.By != "hook" {
		t.Fatalf("Send after the build: %+v %v", s.tr, s.err)
	}
}

// TestSendBusy: an event that cannot take the lease within BusyWait fails
// with ErrWorkflowBusy (it is never silently dropped as "nothing changed").
func TestSendBusy(t *testing.T) {
	g, c, started, release := leaseServer(t, &mcpbind.Options{Logger: quietLogger(), BusyWait: 100 * time.Millisecond,
		SessionKey: func(*mcp.ServerSession) string { return "main" }})
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "main"}
	built := make(chan struct{})
	go func() {
		defer close(built)
		_, _ = c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "build"})
	}()
	defer func() { <-built }()
	defer close(release)
	<-started
	tr, err := g.Send(ctx, ref, statechart.Event{Type: "chartgate.interrupt.env"}, "hook")
	if !errors.Is(err, mcpbind.ErrWorkflowBusy) || tr != nil {
		t.Fatalf("Send while busy: %+v %v", tr, err)
	}
}

// TestConcurrentSends: fifty events sent at once to one workflow are each
// applied once, in some order, and none is lost.
func TestConcurrentSends(t *testing.T) {
	opts := &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"note": func(_ context.Context, a *statechart.ActionArgs) error {
			n, _ := a.Context["n"].(float64)
			a.Assign(map[string]any{"n": n + 1})
			return nil
		},
	}}}
	g, err := mcpbind.New(compile(t, "full", leaseJSON, opts), &mcpbind.Options{Logger: quietLogger(), HistoryLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "main"}
	for _, ev := range []string{"BUILT", "chartgate.interrupt.env"} {
		if _, err := g.Send(ctx, ref, statechart.Event{Type: ev}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	const sends = 50
	var wg sync.WaitGroup
	for i := range sends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := g.Send(ctx, ref, statechart.Event{Type: "NOTE", Data: map[string]any{"i": i}}, fmt.Sprint("sender-", i))
			if err != nil || tr == nil {
				t.Errorf("send %d: %+v %v", i, tr, err)
			}
		}()
	}
	wg.Wait()
	w, err := g.WorkflowOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, h := range w.History {
		if h.Event.Type == "NOTE" {
			seen[h.By]++
		}
	}
	if len(seen) != sends {
		t.Fatalf("%d of %d events in the history", len(seen), sends)
	}
	for by, k := range seen {
		if k != 1 {
			t.Errorf("%s applied %d times", by, k)
		}
	}
	if got := w.State.Context()["n"]; got != float64(sends) {
		t.Errorf("n = %v, want %d", got, sends)
	}
}

// TestHostToolArguments: the arguments of a host's tool reach the gate
// without an MCP request: they are bounded before the tool runs (Check)
// and are the input of the event its record sends (Record).
func TestHostToolArguments(t *testing.T) {
	g, err := mcpbind.New(compile(t, "full", codingJSON, nil), &mcpbind.Options{Logger: quietLogger(), MaxArgumentBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s"}
	host := mcpbind.Host{Tools: []string{"Read", "Edit", "Bash"}}
	if _, err := g.Send(ctx, ref, mcpEvent("PLANNED"), "test"); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"command": "` + strings.Repeat("x", 100) + `"}`)
	if d, err := g.Check(ctx, ref, "Bash", big, host); err != nil || d.Allowed || d.Refusal == nil || d.Refusal.Code != mcpbind.CodeTooLarge {
		t.Fatalf("large arguments: %+v %v", d, err)
	}
	tr, err := g.Record(ctx, ref, "Bash", json.RawMessage(`{"command": "go test"}`), nil, host)
	if err != nil || tr == nil {
		t.Fatalf("Record: %+v %v", tr, err)
	}
	if in, _ := tr.Event.Data["input"].(map[string]any); in["command"] != "go test" {
		t.Fatalf("event data %v", tr.Event.Data)
	}
}
