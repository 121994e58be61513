package mcpbind_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
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

// staleLoadStore holds the first save until a second load that finds no
// record has read the store, and answers that load only once the save has
// landed, with what it read before: the read of a call that began while a
// concurrent call of the same workflow was saving.
type staleLoadStore struct {
	mcpbind.Store
	empty      atomic.Int32  // loads that found no record
	saving     chan struct{} // closed when the first save begins
	secondRead chan struct{} // closed when the second load that found no record has read
	saved      chan struct{} // closed when the first save landed
	first      atomic.Bool
}

func (s *staleLoadStore) Load(ctx context.Context, key string) ([]byte, uint64, error) {
	data, ver, err := s.Store.Load(ctx, key)
	if ver == 0 && err == nil && s.empty.Add(1) == 2 {
		close(s.secondRead)
		<-s.saved
	}
	return data, ver, err
}

func (s *staleLoadStore) CompareAndSwap(ctx context.Context, key string, old uint64, data []byte) (uint64, error) {
	if !s.first.CompareAndSwap(false, true) {
		return s.Store.CompareAndSwap(ctx, key, old, data)
	}
	close(s.saving)
	select {
	case <-s.secondRead:
	case <-time.After(5 * time.Second): // the second call never read: the test fails below
	}
	defer close(s.saved)
	return s.Store.CompareAndSwap(ctx, key, old, data)
}

// TestFirstCallsOfASessionAreNotExpired: two concurrent first calls of a
// session, the second reading the store while the first is saving: the
// second is not refused as expired (it read no record, but none had been
// saved when it read), and both run, one after the other. Before, the
// session's "saved" mark was read after the record, so the second call was
// refused with CodeWorkflowExpired.
func TestFirstCallsOfASessionAreNotExpired(t *testing.T) {
	store := &staleLoadStore{Store: mcpbind.NewMemoryStore(nil), saving: make(chan struct{}), secondRead: make(chan struct{}), saved: make(chan struct{})}
	f := newFixture(t, counterEngine(t), &mcpbind.Options{
		Store:      store,
		SessionKey: func(*mcp.ServerSession) string { return "named" }, // the session has its key before its first save
	}, "inc")
	if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	var wg sync.WaitGroup
	call := func() {
		defer wg.Done()
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "inc"})
		if err != nil {
			t.Errorf("inc: %v", err)
		} else if res.IsError {
			t.Errorf("inc refused: %s", resultText(res))
		}
	}
	wg.Add(2)
	go call()
	<-store.saving // the first call is saving: the second begins now
	go call()
	wg.Wait()
	if n := store.empty.Load(); n < 2 {
		t.Fatalf("%d loads found no record, want 2: the calls did not overlap", n)
	}
	s, err := f.gate.State(context.Background(), c.ss)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Context()["n"]; n != float64(2) || f.ran("inc") != 2 {
		t.Errorf("n = %v after %d handler runs, want 2 of each", n, f.ran("inc"))
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
