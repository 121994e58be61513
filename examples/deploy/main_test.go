package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/sqlitestore"
	"github.com/chartgate/chartgate/statechart"
)

const wantDemo = `deploy workflow (deploy.json): run_tests starts the suite as a job
  state "idle"     tools: run_tests

→ run_tests {"suite":"unit"}
  result: {"started":"the unit suite is running"}
  ← notifications/tools/list_changed (run_tests)
  state "testing"  tools: cancel_tests

→ deploy {}
  refused: Tool "deploy" is not available in the current workflow state ("testing"). To make it available, wait for "suite" (running in the background) to finish.

… the suite runs off the request, and lands
  ← notifications/tools/list_changed (the suite passed)
  state "green"    tools: deploy
  transition by actor:suite: xstate.done.actor.suite, report {"failed":0,"passed":42,"suite":"unit"}

→ deploy {}
  result: {"release":"r1"}
  ← notifications/tools/list_changed (deploy)
  state "deployed" tools: 
`

// TestDemo runs the scripted demo: deploy is refused while the suite runs,
// and visible once it landed, with list_changed.
func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := demo(context.Background(), &out, quiet()); err != nil {
		t.Fatal(err)
	}
	if out.String() != wantDemo {
		t.Fatalf("demo output:\n%s\nwant:\n%s", out.String(), wantDemo)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// session is a go-sdk client connected to a server in memory.
type session struct {
	cs      *mcp.ClientSession
	changed chan struct{}
}

func connect(t *testing.T, server *mcp.Server) *session {
	t.Helper()
	ctx := context.Background()
	s := &session{changed: make(chan struct{}, 8)}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.changed <- struct{}{} },
	})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	var err error
	if s.cs, err = client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cs.Close() })
	return s
}

func (s *session) tools(t *testing.T) []string {
	t.Helper()
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func (s *session) awaitChanged(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.changed:
	case <-time.After(10 * time.Second):
		t.Fatalf("no notifications/tools/list_changed after %s", what)
	}
}

// TestResumeAfterRestart: with -sqlite, a server stopped while the suite
// runs leaves the job in the file; the server started again on the file
// runs the suite again, and the session sees deploy when it lands.
func TestResumeAfterRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "deploy.db")
	open := func() *sqlitestore.Store {
		s, err := sqlitestore.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	options := func(store mcpbind.Store) *mcpbind.Options {
		return &mcpbind.Options{Store: store, Logger: quiet(), LeaseTTL: 300 * time.Millisecond, ResumeJobsEvery: 20 * time.Millisecond,
			SessionKey: func(*mcp.ServerSession) string { return "stdio" }}
	}

	// The first server: its suite never finishes before the server stops.
	running := make(chan any, 1)
	stuck := statechart.Promise(func(ctx context.Context, input any) (any, error) {
		running <- input
		<-ctx.Done()
		return nil, ctx.Err()
	})
	server, gate, err := newServer(stuck, options(open()))
	if err != nil {
		t.Fatal(err)
	}
	first := connect(t, server)
	if _, err := first.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_tests", Arguments: map[string]any{"suite": "e2e"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-running:
	case <-time.After(10 * time.Second):
		t.Fatal("the suite did not start")
	}
	if err := gate.Close(); err != nil { // the server stops
		t.Fatal(err)
	}
	_ = first.cs.Close()

	// The server started again, on the same file.
	server, gate, err = newServer(testSuite(0, nil), options(open()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gate.Close() })
	second := connect(t, server)
	if got := second.tools(t); !slices.Equal(got, []string{"cancel_tests"}) && !slices.Equal(got, []string{"deploy"}) {
		t.Fatalf("tools after the restart: %v", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Equal(second.tools(t), []string{"deploy"}) {
		if time.Now().After(deadline) {
			t.Fatal("the suite was not resumed: deploy never became visible")
		}
		second.awaitChanged(t, "the resumed suite")
	}
	wf, err := gate.WorkflowOf(ctx, mcpbind.Ref{Name: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	report, _ := wf.State.Context()["report"].(map[string]any)
	if wf.State.Value() != "green" || report["suite"] != "e2e" {
		t.Fatalf("after the resumed suite: %v, report %v; want green, the e2e suite (the persisted input)", wf.State.Value(), report)
	}
}
