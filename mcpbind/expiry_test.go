package mcpbind_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
)

// TestFloodOfStartsEvictsNoWorkflow: one client starting workflows until the
// store is full does not end another client's workflow (before, the LRU
// evicted it); further starts are refused until room is made.
func TestFloodOfStartsEvictsNoWorkflow(t *testing.T) {
	store := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{MaxEntries: 50})
	s := newGatedServer(t, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways})
	close(s.release)
	victim := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	attacker := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	id := victim.start()
	if res := victim.call("claim_bonus", withID(id, nil)); res.IsError {
		t.Fatal(resultText(res))
	}
	started, refused := 0, 0
	for range 60 {
		res := attacker.call("workflow_start", nil)
		switch {
		case !res.IsError:
			started++
		case strings.Contains(resultText(res), "holds as many workflows as it can"):
			refused++
		default:
			t.Fatalf("workflow_start: %s", resultText(res))
		}
	}
	if started != 49 || refused != 11 {
		t.Fatalf("%d started, %d refused; want 49 and 11", started, refused)
	}
	w, err := s.gate.Workflow(context.Background(), id)
	if err != nil || w.State.Value() != "b" {
		t.Fatalf("the victim's workflow: %v, %v", w, err)
	}
	if res := victim.call("claim_bonus", withID(id, nil)); refusal(t, res).Code != mcpbind.CodeForbidden || s.claimed.Load() != 1 {
		t.Fatalf("claim again: %s (runs %d)", resultText(res), s.claimed.Load())
	}
}

// sharedStore hides the MemoryStore's Keep, as a shared store (Redis)
// has none: records expire after their TTL whatever the session.
type sharedStore struct{ mcpbind.Store }

// TestExpiredSessionNotRestarted: a session whose workflow expired from the
// store is refused with CodeWorkflowExpired; before, it started again from
// the initial state and a once-only tool ran again.
func TestExpiredSessionNotRestarted(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	store := sharedStore{mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{TTL: time.Hour, Now: clock.Now})}
	s := newGatedServer(t, &mcpbind.Options{Store: store})
	close(s.release)
	s.server.AddTool(&mcp.Tool{Name: "help", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "help"}}}, nil
	})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	if res := c.call("claim_bonus", nil); res.IsError {
		t.Fatal(resultText(res))
	}
	clock.Add(2 * time.Hour)
	for _, tool := range []string{"claim_bonus", "peek"} {
		res := c.call(tool, nil)
		if ref := refusal(t, res); ref.Code != mcpbind.CodeWorkflowExpired || !strings.Contains(resultText(res), "Start a new session") {
			t.Fatalf("%s: %+v %s", tool, ref, resultText(res))
		}
	}
	if n := s.claimed.Load(); n != 1 {
		t.Fatalf("claim_bonus ran %d times", n)
	}
	c.expectTools("an expired session lists only ungated tools", "help")
	if _, err := s.gate.SessionWorkflow(context.Background(), c.ss); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("SessionWorkflow: %v", err)
	}
}

// TestSessionRecordKeptWhileLive: with the memory store, a live session's
// record does not expire, however long it is idle; it is removed when the
// session ends.
func TestSessionRecordKeptWhileLive(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	store := mcpbind.NewMemoryStore(&mcpbind.MemoryStoreOptions{TTL: time.Hour, Now: clock.Now})
	s := newGatedServer(t, &mcpbind.Options{Store: store})
	close(s.release)
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	if res := c.call("claim_bonus", nil); res.IsError {
		t.Fatal(resultText(res))
	}
	clock.Add(100 * time.Hour)
	if res := c.call("peek", nil); res.IsError {
		t.Fatalf("after 100 idle hours: %s", resultText(res))
	}
	if st := stateOf(t, &fixture{gate: s.gate}, c); st != "b" {
		t.Fatalf("state %v", st)
	}
	_ = c.cs.Close()
	waitFor(t, "the record to be removed", func() bool { return store.Len() == 0 })
}

// TestStartLimit: Options.StartLimit limits each client's starts; another
// client has its own limit.
func TestStartLimit(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	s := newGatedServer(t, &mcpbind.Options{Handles: mcpbind.HandlesAlways, Now: clock.Now,
		StartLimit: &mcpbind.StartLimit{Every: time.Minute, Burst: 2,
			Client: func(req *mcp.CallToolRequest) string {
				if req.Extra != nil && req.Extra.TokenInfo != nil {
					return req.Extra.TokenInfo.UserID
				}
				return req.Params.Name // not reached: the test sets TokenInfo below
			}}})
	s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if cr, ok := req.(*mcp.CallToolRequest); ok {
				user, _ := cr.Params.Meta["user"].(string)
				cr.Extra = &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: user}}
			}
			return next(ctx, method, req)
		}
	})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	start := func(user string) *mcp.CallToolResult {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "workflow_start", Meta: mcp.Meta{"user": user}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for range 2 {
		if res := start("ada"); res.IsError {
			t.Fatal(resultText(res))
		}
	}
	res := start("ada")
	if ref := refusal(t, res); ref.Code != mcpbind.CodeRateLimited || !strings.Contains(resultText(res), "Try again in 1m0s") {
		t.Fatalf("third start: %+v %s", ref, resultText(res))
	}
	if res := start("bob"); res.IsError {
		t.Fatalf("another client: %s", resultText(res))
	}
	clock.Add(30 * time.Second)
	if res := start("ada"); !strings.Contains(resultText(res), "Try again in 30s") {
		t.Fatalf("30 s later: %s", resultText(res))
	}
	clock.Add(30 * time.Second)
	if res := start("ada"); res.IsError {
		t.Fatalf("a minute later: %s", resultText(res))
	}
}

// TestNamedWorkflowOutlivesSession: a workflow SessionKey names belongs to
// the name: when its session ends it stays (a client that reconnects, or
// an agent host's hooks, find it), while an unnamed session's is removed.
func TestNamedWorkflowOutlivesSession(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	s := newGatedServer(t, &mcpbind.Options{Store: store, SessionKey: func(*mcp.ServerSession) string { return "agent-1" }})
	close(s.release)
	f := &fixture{server: s.server, gate: s.gate}
	c := f.connect(t, "2025-11-25")
	if res := c.call("claim_bonus", nil); res.IsError {
		t.Fatal(resultText(res))
	}
	_ = c.cs.Close()
	waitFor(t, "the gate to forget the session", func() bool { return s.gate.Sessions() == 0 })
	if w, err := s.gate.WorkflowOf(context.Background(), mcpbind.Ref{Name: "agent-1"}); err != nil || w.State.Value() != "b" {
		t.Fatalf("the named workflow after its session ended: %v %v", w, err)
	}
	again := f.connect(t, "2025-11-25")
	if ref := refusal(t, again.call("claim_bonus", nil)); ref.Code != mcpbind.CodeForbidden || ref.State != "b" {
		t.Fatalf("a new session of the name: %+v", ref)
	}
}
