package mcpbind_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
)

// bonusJSON: claim_bonus may run once; peek may run any time.
const bonusJSON = `{
  "id": "bonus", "initial": "a",
  "states": {
    "a": {"on": {"CLAIM": "b"}, "meta": {"mcp": {"tools": ["claim_bonus", "peek"], "events": {"claim_bonus": "CLAIM"}}}},
    "b": {"meta": {"mcp": {"tools": ["peek"]}}}
  }
}`

// gatedServer is a server with claim_bonus and peek behind a gate; the
// handlers count their runs and wait until release is closed (so that
// concurrent calls overlap).
type gatedServer struct {
	server  *mcp.Server
	gate    *mcpbind.Gate
	claimed atomic.Int32
	peeked  atomic.Int32
	arrived atomic.Int32 // calls that reached the server's middleware
	release chan struct{}
}

func newGatedServer(t testing.TB, opts *mcpbind.Options) *gatedServer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	g, err := mcpbind.New(compile(t, "full", bonusJSON, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &gatedServer{server: mcp.NewServer(&mcp.Implementation{Name: "bonus", Version: "1"}, nil), gate: g, release: make(chan struct{})}
	for name, n := range map[string]*atomic.Int32{"claim_bonus": &s.claimed, "peek": &s.peeked} {
		s.server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				n.Add(1)
				<-s.release
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + name}}}, nil
			})
	}
	g.Attach(s.server)
	// Added after Attach, this middleware runs before the gate.
	s.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				s.arrived.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// releaseWhen closes the servers' release channels once n calls have
// reached them (and a moment more, for them to get as far as they can).
func releaseWhen(t testing.TB, n int32, servers ...*gatedServer) {
	t.Helper()
	waitFor(t, "the concurrent calls to arrive", func() bool {
		var got int32
		for _, s := range servers {
			got += s.arrived.Load()
		}
		return got >= n
	})
	time.Sleep(20 * time.Millisecond)
	for _, s := range servers {
		close(s.release)
	}
}

// TestOnceOnlyConcurrentSession: ten concurrent calls of a tool that the
// workflow allows once, in one session: the handler runs once; the other
// calls wait for the first to be recorded and are then refused, because
// the workflow moved on.
func TestOnceOnlyConcurrentSession(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	const calls = 10
	results := make(chan *mcp.CallToolResult, calls)
	for range calls {
		go func() {
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "claim_bonus"})
			if err != nil {
				t.Errorf("claim_bonus: %v", err)
			}
			results <- res
		}()
	}
	releaseWhen(t, calls, s)
	ran, refused := 0, 0
	for range calls {
		res := <-results
		if res == nil {
			continue
		}
		if !res.IsError {
			ran++
			continue
		}
		refused++
		if ref := refusal(t, res); ref.Code != mcpbind.CodeForbidden || ref.State != "b" {
			t.Errorf("refusal %+v", ref)
		}
	}
	if n := s.claimed.Load(); n != 1 || ran != 1 || refused != calls-1 {
		t.Fatalf("handler ran %d times; %d calls succeeded, %d refused; want 1, 1, %d", n, ran, refused, calls-1)
	}
	if st := stateOf(t, &fixture{gate: s.gate}, c); st != "b" {
		t.Fatalf("state %v, want b", st)
	}
}

// TestOnceOnlyConcurrentInstances: two stateless Streamable HTTP instances
// share one store; 20 workflows, each called 8 times at once through both
// instances: each workflow's handler runs once.
func TestOnceOnlyConcurrentInstances(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	var servers []*gatedServer
	var urls []string
	for range 2 {
		s := newGatedServer(t, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways})
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.server }, &mcp.StreamableHTTPOptions{Stateless: true}))
		t.Cleanup(srv.Close)
		servers, urls = append(servers, s), append(urls, srv.URL)
	}
	ctx := context.Background()
	var clients []*mcp.ClientSession
	for _, url := range urls {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		clients = append(clients, cs)
	}
	const workflows, each = 20, 8
	var ids []string
	for range workflows {
		res, err := clients[0].CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
		if err != nil || res.IsError {
			t.Fatalf("workflow_start: %v %+v", err, res)
		}
		ids = append(ids, res.StructuredContent.(map[string]any)["workflow_id"].(string))
	}
	servers[0].arrived.Store(0)
	var ran sync.Map // workflow id -> *atomic.Int32 of successful calls
	var wg sync.WaitGroup
	for _, id := range ids {
		n := &atomic.Int32{}
		ran.Store(id, n)
		for i := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := clients[i%2].CallTool(ctx, &mcp.CallToolParams{Name: "claim_bonus", Arguments: map[string]any{"workflow_id": id}})
				switch {
				case err != nil:
					t.Errorf("claim_bonus: %v", err)
				case !res.IsError:
					n.Add(1)
				case !strings.Contains(resultText(res), "not available"):
					t.Errorf("claim_bonus refused: %s", resultText(res))
				}
			}()
		}
	}
	releaseWhen(t, workflows*each, servers...)
	wg.Wait()
	if got := servers[0].claimed.Load() + servers[1].claimed.Load(); got != workflows {
		t.Fatalf("the handler ran %d times for %d workflows", got, workflows)
	}
	for _, id := range ids {
		n, _ := ran.Load(id)
		if got := n.(*atomic.Int32).Load(); got != 1 {
			t.Errorf("workflow %s: %d successful calls", id, got)
		}
		w, err := servers[1].gate.Workflow(ctx, id)
		if err != nil || w.State.Value() != "b" {
			t.Errorf("workflow %s: %v %v", id, w, err)
		}
	}
}

// TestNoEventToolsRunConcurrently: tools that send no event take no lease:
// two peeks overlap, even while a claim holds the workflow.
func TestNoEventToolsRunConcurrently(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	done := make(chan string, 3)
	for _, name := range []string{"claim_bonus", "peek", "peek"} {
		go func() {
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name})
			if err != nil || res.IsError {
				t.Errorf("%s: %v %v", name, err, res)
			}
			done <- name
		}()
	}
	// All three handlers are running at once.
	waitFor(t, "three handlers running", func() bool { return s.claimed.Load() == 1 && s.peeked.Load() == 2 })
	close(s.release)
	for range 3 {
		<-done
	}
}

// TestWorkflowBusy: a call that waits longer than BusyWait for another
// call of its workflow is refused with CodeWorkflowBusy, without running;
// the state is intact and the first call is recorded when it ends.
func TestWorkflowBusy(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{BusyWait: 30 * time.Millisecond})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "claim_bonus"})
		if err != nil {
			t.Error(err)
		}
		first <- res
	}()
	waitFor(t, "the first call's handler", func() bool { return s.claimed.Load() == 1 })
	res := c.call("claim_bonus", nil)
	ref := refusal(t, res)
	if ref.Code != mcpbind.CodeWorkflowBusy || ref.State != "a" || !strings.Contains(resultText(res), "a call of claim_bonus in the same workflow is still in progress") {
		t.Fatalf("refusal %+v: %s", ref, resultText(res))
	}
	if n := s.claimed.Load(); n != 1 {
		t.Fatalf("the busy call ran: %d runs", n)
	}
	close(s.release)
	if res := <-first; res == nil || res.IsError {
		t.Fatalf("first call: %+v", res)
	}
	if st := stateOf(t, &fixture{gate: s.gate}, c); st != "b" {
		t.Fatalf("state %v, want b", st)
	}
}

// TestLeaseExpiresWhenHolderDies: a lease left in the store by an instance
// that died during a call (it never commits) holds the workflow until it
// expires; then the next call takes the workflow over.
func TestLeaseExpiresWhenHolderDies(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	dead := newGatedServer(t, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways, Now: clock, LeaseTTL: time.Minute})
	live := newGatedServer(t, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways, Now: clock, LeaseTTL: time.Minute})
	close(live.release)
	cd := (&fixture{server: dead.server, gate: dead.gate}).connect(t, "2025-11-25")
	cl := (&fixture{server: live.server, gate: live.gate}).connect(t, "2025-11-25")
	t.Cleanup(func() { close(dead.release) }) // before the sessions close, which waits for the handler
	id := cl.start()
	go func() {
		_, _ = cd.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "claim_bonus", Arguments: map[string]any{"workflow_id": id}})
	}()
	waitFor(t, "the dying instance's handler", func() bool { return dead.claimed.Load() == 1 })
	// The instance "dies": its handler never returns. The lease is live
	// for a minute; a call now waits.
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- cl.call("claim_bonus", withID(id, nil)) }()
	select {
	case res := <-done:
		t.Fatalf("a call ran while the lease was live: %s", resultText(res))
	case <-time.After(50 * time.Millisecond):
	}
	now.Add(int64(2 * time.Minute))
	res := <-done
	if res.IsError || live.claimed.Load() != 1 {
		t.Fatalf("after the lease expired: %s (runs %d)", resultText(res), live.claimed.Load())
	}
	w, err := live.gate.Workflow(context.Background(), id)
	if err != nil || w.State.Value() != "b" {
		t.Fatalf("workflow %v %v", w, err)
	}
}

// TestLeaseRenewedWhileToolRuns: a call whose tool runs for several
// LeaseTTLs keeps renewing its lease, so that a call of another instance
// on the same workflow waits for it instead of taking the workflow over,
// and is then authorized against the state the first call left.
//
// The TTL is long enough that a renewal, due every third of it, is not
// missed by a process stalled under the race detector on a loaded
// machine: a holder that misses its renewals loses the lease by design.
func TestLeaseRenewedWhileToolRuns(t *testing.T) {
	const ttl = 400 * time.Millisecond
	store := mcpbind.NewMemoryStore(nil)
	slow := newGatedServer(t, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways, LeaseTTL: ttl, BusyWait: 5 * time.Second})
	other := newGatedServer(t, &mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways, LeaseTTL: ttl, BusyWait: 5 * time.Second})
	close(other.release)
	cs := (&fixture{server: slow.server, gate: slow.gate}).connect(t, "2025-11-25")
	co := (&fixture{server: other.server, gate: other.gate}).connect(t, "2025-11-25")
	release := sync.OnceFunc(func() { close(slow.release) })
	t.Cleanup(release) // before the sessions close, which waits for the handler
	id := co.start()
	first := make(chan *mcp.CallToolResult, 1)
	go func() { first <- cs.call("claim_bonus", withID(id, nil)) }()
	waitFor(t, "the slow call's handler", func() bool { return slow.claimed.Load() == 1 })
	w, err := other.gate.Workflow(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	key := w.Key
	taken := leaseUntil(t, store, key)
	waitFor(t, "a renewal of the slow call's lease", func() bool { return leaseUntil(t, store, key).After(taken) })
	second := make(chan *mcp.CallToolResult, 1)
	go func() { second <- co.call("claim_bonus", withID(id, nil)) }()
	select {
	case res := <-second:
		t.Fatalf("a call of another instance ran while the slow call's tool ran (%d runs): %s", other.claimed.Load(), resultText(res))
	case <-time.After(3 * ttl):
	}
	release()
	if res := <-first; res.IsError {
		t.Fatalf("slow call: %s", resultText(res))
	}
	res := <-second
	if ref := refusal(t, res); ref.State != "b" || other.claimed.Load() != 0 {
		t.Fatalf("the waiting call after the slow one: %+v (runs %d): %s", ref, other.claimed.Load(), resultText(res))
	}
}

// leaseUntil returns when the lease in a workflow's record ends.
func leaseUntil(t *testing.T, store mcpbind.Store, key string) time.Time {
	t.Helper()
	data, _, err := store.Load(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Lease *struct {
			Until time.Time `json:"until"`
		} `json:"lease"`
	}
	if err := json.Unmarshal(data, &rec); err != nil || rec.Lease == nil {
		t.Fatalf("the record's lease: %v, %s", err, data)
	}
	return rec.Lease.Until
}

// TestQueuedCallsDoNotUseUpRetries: calls of two instances that wait for
// one workflow's lease race to take it when it is released, and all but
// one lose that race. Losing to a call that took the lease is the queue
// moving, not a conflict to give up on: with MaxRetries 1, every one of
// many concurrent moving calls still runs and is saved (the wait is
// bounded by BusyWait, not by the retries).
func TestQueuedCallsDoNotUseUpRetries(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	var clients []*client
	var fixtures []*fixture
	for range 2 {
		f := newFixture(t, counterEngine(t), &mcpbind.Options{
			MaxRetries: 1,
			Store:      store,
			SessionKey: func(*mcp.ServerSession) string { return "shared" },
		}, "inc")
		if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
			t.Fatal(err)
		}
		fixtures, clients = append(fixtures, f), append(clients, f.connect(t, "2025-11-25"))
	}
	const workers, each = 6, 5 // per instance
	callConcurrently(t, clients, "inc", workers, each)
	s, err := fixtures[0].gate.State(context.Background(), clients[0].ss)
	if err != nil {
		t.Fatal(err)
	}
	const want = 2 * workers * each
	if n, ran := s.Context()["n"], fixtures[0].ran("inc")+fixtures[1].ran("inc"); n != float64(want) || ran != want {
		t.Errorf("n = %v after %d handler runs, want %d of each", n, ran, want)
	}
}
