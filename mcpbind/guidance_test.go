// This file tests the guidance a gate sends a session whose workflow
// another instance moved: the new state's instructions, as a log message.

//lint:file-ignore SA1019 the guidance arrives as log messages, deprecated by 2026-07-28

package mcpbind_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

const guidanceJSON = `{
  "id": "guided", "initial": "plan",
  "states": {
    "plan": {"on": {"BEGIN": "build"}, "meta": {"mcp": {"tools": ["outline"], "instructions": "Write the plan."}}},
    "build": {"on": {"SHIP": "done"}, "meta": {"mcp": {"tools": ["compile"], "instructions": "Build what the plan says."}}},
    "done": {"type": "final"}
  }
}`

// TestGuidanceFromOtherInstance: a person's Send through gate A moves the
// workflow that a session of gate B works in; B's session, which asked
// for log messages, is told the new state's instructions, and one that
// did not ask is not (protocol 2025-11-25: 2026-07-28 deprecates logging).
func TestGuidanceFromOtherInstance(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	gate := func() (*mcp.Server, *mcpbind.Gate) {
		m, err := statechart.Compile([]byte(guidanceJSON), nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := mcpbind.New(m.Engine(), &mcpbind.Options{Store: store, Logger: quietLogger(),
			SessionKey: func(*mcp.ServerSession) string { return "shared" }})
		if err != nil {
			t.Fatal(err)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "guided", Version: "1"}, nil)
		for _, name := range []string{"outline", "compile"} {
			mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{}, nil, nil
			})
		}
		g.Attach(s)
		t.Cleanup(func() { _ = g.Close() })
		return s, g
	}
	_, ga := gate()
	sb, _ := gate()
	connect := func(setLevel bool) <-chan *mcp.LoggingMessageParams {
		got := make(chan *mcp.LoggingMessageParams, 4)
		c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { got <- r.Params },
		})
		ct, st := mcp.NewInMemoryTransports()
		if _, err := sb.Connect(context.Background(), st, nil); err != nil {
			t.Fatal(err)
		}
		// Logging, deprecated from 2026-07-28 on, is the guidance
		// channel of the protocols before it.
		cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if setLevel {
			if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
				t.Fatal(err)
			}
		}
		// Listing the tools makes the session one of the workflow's.
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return got
	}
	listening, silent := connect(true), connect(false)
	if _, err := ga.Send(context.Background(), mcpbind.Ref{Name: "shared"}, statechart.Event{Type: "BEGIN"}, "person"); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-listening:
		if p.Logger != mcpbind.GuidanceLogger {
			t.Fatalf("log message from %q, want %q", p.Logger, mcpbind.GuidanceLogger)
		}
		data, _ := p.Data.(map[string]any)
		ins, _ := data["instructions"].([]any)
		if data["state"] != "build" || len(ins) != 1 || ins[0] != "Build what the plan says." {
			t.Fatalf("guidance %v, want state build and its instructions", p.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session that set a log level was not told the new state's instructions")
	}
	select {
	case p := <-silent:
		t.Fatalf("a session that set no log level got %v", p)
	case <-time.After(300 * time.Millisecond):
	}
}
