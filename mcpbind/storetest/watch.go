// This file defines RunWatch, which checks that gates on a store that
// reports its writes ([mcpbind.Watcher]) tell their sessions of the
// transitions made through other gates.

package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

// watchJSON is a workflow of two steps: "begin" is the tool of idle,
// "finish" that of working.
const watchJSON = `{
  "id": "watched",
  "initial": "idle",
  "states": {
    "idle": {"on": {"BEGIN": "working"}},
    "working": {"on": {"FINISH": "done"}},
    "done": {"type": "final"}
  }
}`

// watchJobJSON runs a job: "run" starts it, and its result moves the
// workflow to green, whose tool is "ship".
const watchJobJSON = `{
  "id": "watchedjob",
  "initial": "idle",
  "states": {
    "idle": {"on": {"RUN": "testing"}},
    "testing": {"invoke": {"id": "suite", "src": "suite", "onDone": "green", "onError": "idle"}},
    "green": {"on": {"SHIP": "done"}},
    "done": {"type": "final"}
  }
}`

// watchBindings are the tools of watchJSON's states.
var watchBindings = map[string]mcpbind.Binding{
	"begin":  {States: []string{"idle"}, Event: "BEGIN"},
	"finish": {States: []string{"working"}, Event: "FINISH"},
}

// watchGate is a gate of watchJSON on store; see watchGateOf.
func watchGate(t *testing.T, store mcpbind.Store) (*mcp.Server, *mcpbind.Gate) {
	t.Helper()
	m, err := flat.Compile([]byte(watchJSON))
	if err != nil {
		t.Fatal(err)
	}
	return watchGateOf(t, store, m, watchBindings)
}

// watchGateOf is a gate of engine on store, attached to a server of its
// own with the bound tools, whose sessions all share the workflow named
// "shared" (as the sessions of one agent on several instances would, with
// Options.SessionKey).
func watchGateOf(t *testing.T, store mcpbind.Store, engine statechart.Engine, bindings map[string]mcpbind.Binding) (*mcp.Server, *mcpbind.Gate) {
	t.Helper()
	g, err := mcpbind.New(engine, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesNever,
		SessionKey: func(*mcp.ServerSession) string { return "shared" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	s := mcp.NewServer(&mcp.Implementation{Name: "watched", Version: "1"}, nil)
	for tool, b := range bindings {
		mcpbind.AddTool(s, g, &mcp.Tool{Name: tool}, b, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	}
	g.Attach(s)
	return s, g
}

// watchClient is a client session of a server that counts the
// notifications/tools/list_changed it gets.
type watchClient struct {
	t       *testing.T
	cs      *mcp.ClientSession
	changed chan struct{}
}

func watchConnect(t *testing.T, s *mcp.Server) *watchClient {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := &watchClient{t: t, changed: make(chan struct{}, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.changed <- struct{}{} },
	})
	var err error
	// A protocol before 2026-07-28, whose tool lists follow the workflow.
	if c.cs, err = client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cs.Close() })
	return c
}

func (c *watchClient) tools() []string {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

// expectChanged waits for a list_changed, then checks the tools listed.
func (c *watchClient) expectChanged(what string, tools ...string) {
	c.t.Helper()
	select {
	case <-c.changed:
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: no notifications/tools/list_changed within 10 s", what)
	}
	if got := c.tools(); !slices.Equal(got, tools) {
		c.t.Fatalf("%s: tools %v after list_changed, want %v", what, got, tools)
	}
}

// expectQuiet checks that no more list_changed arrives within a short
// wait.
func (c *watchClient) expectQuiet(what string) {
	c.t.Helper()
	select {
	case <-c.changed:
		c.t.Fatalf("%s: a second notifications/tools/list_changed", what)
	case <-time.After(300 * time.Millisecond):
	}
}

// RunWatch checks, as subtests of t, that two gates on the store, each
// attached to a server of its own (two instances), tell their sessions
// of each other's transitions: a tool call through one gate, and an event
// sent from outside a request ([mcpbind.Gate.Send], as `chartgate
// approve` does) through one gate, and a job's result landing in one
// gate, give notifications/tools/list_changed to the sessions of that
// workflow on both, and the session whose call moved it gets one, not two. pair returns two handles on one empty
// backend, as two server instances would have; the store must implement
// [mcpbind.Watcher]. A store that implements [mcpbind.FuncWatcher] is
// checked to call its function with the other handle's writes too.
func RunWatch(t *testing.T, pair func(t *testing.T) (a, b mcpbind.Store)) {
	t.Run("WatchFunc", func(t *testing.T) {
		storeA, storeB := pair(t)
		testWatchFunc(t, storeA, storeB)
	})
	t.Run("CallOnOtherInstance", func(t *testing.T) {
		storeA, storeB := pair(t)
		if _, ok := storeA.(mcpbind.Watcher); !ok {
			t.Fatalf("%T does not implement mcpbind.Watcher", storeA)
		}
		a, _ := watchGate(t, storeA)
		b, _ := watchGate(t, storeB)
		ca, cb := watchConnect(t, a), watchConnect(t, b)
		if got := cb.tools(); !slices.Equal(got, []string{"begin"}) {
			t.Fatalf("tools on B before: %v, want [begin]", got)
		}
		if res, err := ca.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "begin"}); err != nil || res.IsError {
			t.Fatalf("begin on A: %v, %v", res, err)
		}
		cb.expectChanged("B's session after begin on A", "finish")
		ca.expectChanged("A's session after its own call", "finish")
		ca.expectQuiet("A's session after its own call")
	})
	t.Run("SendOnOtherInstance", func(t *testing.T) {
		storeA, storeB := pair(t)
		a, ga := watchGate(t, storeA)
		b, gb := watchGate(t, storeB)
		ca, cb := watchConnect(t, a), watchConnect(t, b)
		ca.tools()
		cb.tools()
		// An approval, or a hook's report, through gate A.
		tr, err := ga.Send(context.Background(), mcpbind.Ref{Name: "shared"}, statechart.Event{Type: "BEGIN"}, "person")
		if err != nil || tr == nil {
			t.Fatalf("Send on A: %v, %v", tr, err)
		}
		cb.expectChanged("B's session after a Send on A", "finish")
		ca.expectChanged("A's session after a Send on A", "finish")
		if _, err := gb.Send(context.Background(), mcpbind.Ref{Name: "shared"}, statechart.Event{Type: "FINISH"}, "person"); err != nil {
			t.Fatal(err)
		}
		ca.expectChanged("A's session after a Send on B", []string(nil)...)
		cb.expectChanged("B's session after a Send on B", []string(nil)...)
	})
	t.Run("JobOnOtherInstance", func(t *testing.T) {
		storeA, storeB := pair(t)
		result := make(chan error, 1)
		run := statechart.Promise(func(ctx context.Context, _ any) (any, error) {
			select {
			case err := <-result:
				return "report", err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		engine := func() statechart.Engine {
			m, err := statechart.Compile([]byte(watchJobJSON), &statechart.Options{Implementations: statechart.Implementations{
				Actors: map[string]statechart.ActorLogic{"suite": run},
			}})
			if err != nil {
				t.Fatal(err)
			}
			return m.Engine()
		}
		bindings := map[string]mcpbind.Binding{
			"run":  {States: []string{"idle"}, Event: "RUN"},
			"ship": {States: []string{"green"}, Event: "SHIP"},
		}
		a, _ := watchGateOf(t, storeA, engine(), bindings)
		b, _ := watchGateOf(t, storeB, engine(), bindings)
		ca, cb := watchConnect(t, a), watchConnect(t, b)
		cb.tools()
		if res, err := ca.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run"}); err != nil || res.IsError {
			t.Fatalf("run on A: %v, %v", res, err)
		}
		cb.expectChanged("B's session after run on A", []string(nil)...)
		ca.expectChanged("A's session after its own call", []string(nil)...)
		result <- nil // the job, which A runs, succeeds
		cb.expectChanged("B's session after the job's result on A", "ship")
		ca.expectChanged("A's session after the job's result on A", "ship")
		ca.expectQuiet("A's session after the job's result on A")
	})
}

// testWatchFunc checks b's [mcpbind.FuncWatcher], when it has one: a
// function watching "wf:" is called with the write a makes under that
// prefix, its key and version, and not with one under another prefix.
func testWatchFunc(t *testing.T, a, b mcpbind.Store) {
	fw, ok := b.(mcpbind.FuncWatcher)
	if !ok {
		t.Skipf("%T does not implement mcpbind.FuncWatcher", b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan mcpbind.Change, 100)
	if err := fw.WatchFunc(ctx, "wf:", func(c mcpbind.Change) { got <- c }); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompareAndSwap(ctx, "other:k", 0, []byte("x")); err != nil {
		t.Fatal(err)
	}
	v, err := a.CompareAndSwap(ctx, "wf:k", 0, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c != (mcpbind.Change{Key: "wf:k", Version: v}) {
			t.Fatalf("change %+v, want wf:k at version %d (other:k is not under the prefix)", c, v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10 s")
	}
}
