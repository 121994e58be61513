package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// deployJSON parks DEPLOY for a person's approval, in a state of its own
// (the Statewright compiler of package workflow writes requires_approval
// in this shape, naming the state "tested:DEPLOY:approval").
const deployJSON = `{
  "id": "deploy", "initial": "tested",
  "states": {
    "tested": {"on": {"DEPLOY": "tested__approval__DEPLOY", "RETEST": "tested"}, "meta": {"mcp": {"tools": ["read_logs"]}}},
    "tested__approval__DEPLOY": {
      "on": {"chartgate.approve": "live", "chartgate.reject": "tested"},
      "meta": {"mcp": {"tools": ["read_logs"], "instructions": "Waiting for approval: ship it?",
                       "approval": {"event": "DEPLOY", "from": "tested", "to": "live", "message": "ship it?"}}}
    },
    "live": {"type": "final", "meta": {"mcp": {"tools": ["*"]}}}
  }
}`

func approvalFixture(t *testing.T, opts *mcpbind.Options, protocol string) (*fixture, *client) {
	t.Helper()
	f := newFixture(t, compile(t, "full", deployJSON, nil), opts, "read_logs", "ship")
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	return f, f.connect(t, protocol)
}

// testKey is an approver key for the tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// grant is a grant of approval id signed with key at now.
func grant(key []byte, id string, approve bool, by string, now time.Time) mcpbind.Grant {
	return mcpbind.Grant{ID: id, Approve: approve, By: by, Authenticated: by == "ada", Time: now,
		Token: mcpbind.ApprovalToken(key, id, approve, by, now)}
}

// TestApproval: a transition that needs approval parks, with a pending
// approval of its own id that every message names; while it waits no
// transition can be made and the agent cannot approve it; Gate.Approve
// (chartgate approve) approves it with a grant signed with the approver
// key, once, recording who, through which channel, and whether who was
// authenticated.
func TestApproval(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s1" }, ApproverKey: testKey}, "2025-11-25")
	res := c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s1"}
	a, err := f.gate.Pending(ctx, ref)
	if err != nil || a == nil || a.Message != "ship it?" || len(a.ID) != 40 || !mcpbind.IsApprovalID(a.ID) {
		t.Fatalf("Pending: %+v %v", a, err)
	}
	if d := a.Expires.Sub(a.Asked); d != 24*time.Hour {
		t.Fatalf("expires %v after it was asked, want 24h", d)
	}
	if res.IsError || !strings.Contains(resultText(res), "tested__approval__DEPLOY") || !strings.Contains(resultText(res), "pending approval "+a.ID) {
		t.Fatalf("DEPLOY: %s", resultText(res))
	}
	for _, ev := range []string{"RETEST", "chartgate.approve"} {
		res := c.call("workflow_transition", map[string]any{"event": ev})
		if !res.IsError || !strings.Contains(resultText(res), "A transition is pending approval "+a.ID+": \"tested\" to \"live\" on DEPLOY: ship it? (expires ") {
			t.Fatalf("%s while pending: %s", ev, resultText(res))
		}
	}
	stRes := c.call("workflow_status", nil)
	st := decode[mcpbind.WorkflowStatus](t, stRes)
	if st.Pending == nil || st.Pending.ID != a.ID || st.Pending.To != "live" || !slicesEqual(st.Tools, []string{"read_logs", "workflow_status", "workflow_transition"}) ||
		!strings.Contains(resultText(stRes), "Pending approval "+a.ID) {
		t.Fatalf("status %+v %s", st, resultText(stRes))
	}
	now := time.Now()
	tr, err := f.gate.Approve(ctx, ref, grant(testKey, a.ID, true, "ada", now))
	if err != nil || tr == nil || tr.To != "live" || tr.By != "ada" {
		t.Fatalf("Approve: %+v %v", tr, err)
	}
	// Replaying the same grant, or granting the id again, is refused.
	_, err = f.gate.Approve(ctx, ref, grant(testKey, a.ID, true, "ada", now))
	if !errors.Is(err, mcpbind.ErrApprovalUsed) || !strings.Contains(err.Error(), "approval "+a.ID+" was already approved (by ada through command") {
		t.Fatalf("a second grant: %v", err)
	}
	_, err = f.gate.Approve(ctx, mcpbind.Ref{}, grant(testKey, a.ID, false, "ada", now))
	if !errors.Is(err, mcpbind.ErrApprovalUsed) {
		t.Fatalf("a second grant found by id: %v", err)
	}
	w, err := f.gate.SessionWorkflow(ctx, c.ss)
	if err != nil || w.State.Value() != "live" {
		t.Fatalf("workflow %+v %v", w, err)
	}
	last := w.History[len(w.History)-1]
	want := mcpbind.ApprovalGrant{ID: a.ID, Approved: true, By: "ada", Channel: mcpbind.ChannelCommand, Authenticated: true}
	if last.By != "ada" || last.Event.Type != mcpbind.EventApprove || last.Approval == nil || *last.Approval != want {
		t.Fatalf("history %+v", last)
	}
}

// TestApprovalRejected: a rejection goes back to where the transition
// started; asking again makes a new approval, with a new id.
func TestApprovalRejected(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s2" }, ApproverKey: testKey}, "2025-11-25")
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	ctx := context.Background()
	a, _ := f.gate.Pending(ctx, mcpbind.Ref{Name: "s2"})
	tr, err := f.gate.Approve(ctx, mcpbind.Ref{}, grant(testKey, a.ID, false, "bob", time.Now()))
	if err != nil || tr.To != "tested" || tr.Approval == nil || tr.Approval.Authenticated {
		t.Fatalf("reject: %+v %v", tr, err)
	}
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	b, _ := f.gate.Pending(ctx, mcpbind.Ref{Name: "s2"})
	if b == nil || b.ID == a.ID {
		t.Fatalf("asked again: %+v (first %s)", b, a.ID)
	}
	// The first id answers nothing any more.
	if _, err := f.gate.Approve(ctx, mcpbind.Ref{Name: "s2"}, grant(testKey, a.ID, true, "bob", time.Now())); !errors.Is(err, mcpbind.ErrApprovalUsed) {
		t.Fatalf("the old id: %v", err)
	}
}

// TestApprovalAttempts: what an agent might try instead of a person's
// grant fails, and changes nothing: no key, a forged token, a token made
// for another decision, name or time, an approval id of another
// workflow, a grant too far from now, and sending the approval's event
// with Send.
func TestApprovalAttempts(t *testing.T) {
	names := []string{"s1", "s2"}
	var mu sync.Mutex
	named := map[*mcp.ServerSession]string{}
	store := mcpbind.NewMemoryStore(nil)
	f := newFixture(t, compile(t, "full", deployJSON, nil), &mcpbind.Options{ApproverKey: testKey, Store: store,
		SessionKey: func(ss *mcp.ServerSession) string {
			mu.Lock()
			defer mu.Unlock()
			if named[ss] == "" {
				named[ss] = names[len(named)]
			}
			return named[ss]
		}}, "read_logs")
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c1, c2 := f.connect(t, "2025-11-25"), f.connect(t, "2025-11-25")
	c1.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	c2.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	ctx := context.Background()
	a1, _ := f.gate.Pending(ctx, mcpbind.Ref{Name: "s1"})
	a2, _ := f.gate.Pending(ctx, mcpbind.Ref{Name: "s2"})
	if a1 == nil || a2 == nil || a1.ID == a2.ID {
		t.Fatalf("pending %+v %+v", a1, a2)
	}
	now := time.Now()
	forged := grant(testKey, a1.ID, true, "ada", now)
	forged.Token = strings.Repeat("0", 64)
	otherDecision := grant(testKey, a1.ID, false, "ada", now)
	otherDecision.Approve = true
	otherName := grant(testKey, a1.ID, true, "ada", now)
	otherName.By = "alice"
	otherTime := grant(testKey, a1.ID, true, "ada", now)
	otherTime.Time = now.Add(time.Second)
	for _, tc := range []struct {
		name string
		ref  mcpbind.Ref
		g    mcpbind.Grant
		want error
	}{
		{"another key", mcpbind.Ref{Name: "s1"}, grant([]byte("not the approver's key, but long"), a1.ID, true, "ada", now), mcpbind.ErrApprovalToken},
		{"no token", mcpbind.Ref{Name: "s1"}, mcpbind.Grant{ID: a1.ID, Approve: true, By: "ada", Time: now}, mcpbind.ErrApprovalToken},
		{"forged token", mcpbind.Ref{Name: "s1"}, forged, mcpbind.ErrApprovalToken},
		{"token of a rejection", mcpbind.Ref{Name: "s1"}, otherDecision, mcpbind.ErrApprovalToken},
		{"token of another name", mcpbind.Ref{Name: "s1"}, otherName, mcpbind.ErrApprovalToken},
		{"token of another time", mcpbind.Ref{Name: "s1"}, otherTime, mcpbind.ErrApprovalToken},
		{"an hour old", mcpbind.Ref{Name: "s1"}, grant(testKey, a1.ID, true, "ada", now.Add(-time.Hour)), mcpbind.ErrApprovalToken},
		{"another workflow's id", mcpbind.Ref{Name: "s1"}, grant(testKey, a2.ID, true, "ada", now), mcpbind.ErrUnknownApproval},
		{"an unknown id", mcpbind.Ref{}, grant(testKey, strings.Repeat("ab", 20), true, "ada", now), mcpbind.ErrUnknownApproval},
		{"no such workflow", mcpbind.Ref{Name: "nosuch"}, grant(testKey, a1.ID, true, "ada", now), mcpbind.ErrUnknownWorkflow},
	} {
		if _, err := f.gate.Approve(ctx, tc.ref, tc.g); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A gate without the key refuses every grant.
	g2, err := mcpbind.New(compile(t, "full", deployJSON, nil), &mcpbind.Options{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g2.Approve(ctx, mcpbind.Ref{Name: "s1"}, grant(nil, a1.ID, true, "ada", now)); !errors.Is(err, mcpbind.ErrApprovalToken) {
		t.Errorf("a gate without a key: %v", err)
	}
	// Send cannot send an approval's event.
	for _, ev := range []string{mcpbind.EventApprove, mcpbind.EventReject} {
		if _, err := f.gate.Send(ctx, mcpbind.Ref{Name: "s1"}, statechart.Event{Type: ev}, "hook"); err == nil {
			t.Errorf("Send %s succeeded", ev)
		}
	}
	for _, name := range names {
		if p, _ := f.gate.Pending(ctx, mcpbind.Ref{Name: name}); p == nil {
			t.Errorf("%s no longer waits", name)
		}
	}
}

// TestApprovalExpired: an approval cannot be granted once it expired;
// trying rejects it, recorded with channel "expiry".
func TestApprovalExpired(t *testing.T) {
	clock := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s4" }, ApproverKey: testKey,
		ApprovalTTL: time.Hour, Now: now}, "2025-11-25")
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s4"}
	a, _ := f.gate.Pending(ctx, ref)
	if !a.Expires.Equal(clock.Add(time.Hour)) {
		t.Fatalf("expires %v", a.Expires)
	}
	mu.Lock()
	clock = clock.Add(time.Hour)
	mu.Unlock()
	if res := c.call("workflow_transition", map[string]any{"event": "RETEST"}); !strings.Contains(resultText(res), "approval "+a.ID+`: "tested" to "live" on DEPLOY: ship it? (expires 2026-11-28T10:00:00Z), which has expired`) {
		t.Fatalf("the agent is told: %s", resultText(res))
	}
	_, err := f.gate.Approve(ctx, ref, grant(testKey, a.ID, true, "ada", now()))
	if !errors.Is(err, mcpbind.ErrApprovalExpired) || !strings.Contains(err.Error(), "approval "+a.ID+" expired at 2026-11-28T10:00:00Z: it is rejected") {
		t.Fatalf("Approve: %v", err)
	}
	w, _ := f.gate.SessionWorkflow(ctx, c.ss)
	last := w.History[len(w.History)-1]
	if w.State.Value() != "tested" || last.Approval == nil || last.Approval.Channel != mcpbind.ChannelExpiry || last.Approval.Approved {
		t.Fatalf("after: %v %+v", w.State.Value(), last)
	}
}

// TestApprovalSurvivesRestart: the pending approval is kept in the
// workflow's record: another gate on the same store sees the same id and
// expiry, and grants it.
func TestApprovalSurvivesRestart(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s5" }, Store: store}, "2025-11-25")
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	ctx := context.Background()
	a, _ := f.gate.Pending(ctx, mcpbind.Ref{Name: "s5"})
	c.call("read_logs", nil) // a call that saves the record again keeps the approval
	g2, err := mcpbind.New(compile(t, "full", deployJSON, nil), &mcpbind.Options{Store: store, ApproverKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g2.Pending(ctx, mcpbind.Ref{Name: "s5"})
	if err != nil || b == nil || b.ID != a.ID || !b.Expires.Equal(a.Expires) {
		t.Fatalf("another gate: %+v %v, want %+v", b, err, a)
	}
	if tr, err := g2.Approve(ctx, mcpbind.Ref{}, grant(testKey, a.ID, true, "ada", time.Now())); err != nil || tr.To != "live" {
		t.Fatalf("Approve: %+v %v", tr, err)
	}
}

// TestReservedEvents: no tool and no workflow_transition call can send a
// chartgate.* event.
func TestReservedEvents(t *testing.T) {
	_, err := mcpbind.New(compile(t, "full", `{"id": "m", "initial": "a", "states": {"a": {"on": {"chartgate.approve": "b"}, "meta": {"mcp": {"events": {"t": "chartgate.approve"}}}}, "b": {}}}`, nil), nil)
	if err == nil || !strings.Contains(err.Error(), `states.a.meta.mcp.events.t: event "chartgate.approve" is reserved`) {
		t.Fatalf("New: %v", err)
	}
	f, c := approvalFixture(t, nil, "2025-11-25")
	if err := f.gate.Bind("ship", mcpbind.Binding{Event: "chartgate.approve"}); err == nil {
		t.Fatal("Bind to a reserved event succeeded")
	}
	res := c.call("workflow_transition", map[string]any{"event": "chartgate.approve"})
	if !res.IsError || !strings.Contains(resultText(res), "is reserved") {
		t.Fatalf("workflow_transition: %s", resultText(res))
	}
	st := decode[mcpbind.WorkflowStatus](t, c.call("workflow_status", nil))
	for _, ev := range st.Events {
		if strings.HasPrefix(ev, "chartgate.") {
			t.Fatalf("status offers %s", ev)
		}
	}
}

// askingClient connects a client that answers the gate's questions with
// answer ("approve", "reject", or "decline"), recording the questions.
func askingClient(t *testing.T, f *fixture, protocol, answer string, asked *[]string, disableRetry bool) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := f.server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			*asked = append(*asked, req.Params.Message)
			if answer == "decline" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": answer == "approve"}}, nil
		},
	}
	if disableRetry {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestApprovalAskedThroughClient: with ElicitApprovals, the client's user
// is asked, by elicitation before protocol 2026-07-28 and by an
// input-required result the client answers on retry under 2026-07-28
// (the go-sdk client's own retry); an answer is applied at once and
// recorded with its channel, and a declined question leaves the approval
// pending, named in the answer.
func TestApprovalAskedThroughClient(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		channel := map[string]string{"2025-11-25": mcpbind.ChannelElicitation, "2026-07-28": mcpbind.ChannelInputRequired}[protocol]
		for _, answer := range []string{"approve", "reject", "decline"} {
			t.Run(protocol+"/"+answer, func(t *testing.T) {
				f := newFixture(t, compile(t, "full", deployJSON, nil), &mcpbind.Options{ElicitApprovals: true,
					SessionKey: func(*mcp.ServerSession) string { return "s" }}, "read_logs")
				if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
					t.Fatal(err)
				}
				var asked []string
				cs := askingClient(t, f, protocol, answer, &asked, false)
				ctx := context.Background()
				args := map[string]any{"event": "DEPLOY"}
				// A lasting connection serves the session's workflow under
				// every protocol version.
				load := func() *mcpbind.Workflow {
					w, err := f.gate.WorkflowOf(ctx, mcpbind.Ref{Name: "s"})
					if err != nil {
						t.Fatal(err)
					}
					return w
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: args})
				if err != nil || res.IsError {
					t.Fatalf("DEPLOY: %v %v", err, res)
				}
				if len(asked) != 1 || !strings.Contains(asked[0], "from \"tested\" to \"live\" (event DEPLOY): ship it?\n\nApprove this transition? (approval ") {
					t.Fatalf("asked %q", asked)
				}
				wf := load()
				switch answer {
				case "decline":
					p := wf.Pending
					if p == nil || !strings.Contains(asked[0], p.ID) || !strings.Contains(resultText(res), "pending approval "+p.ID) {
						t.Fatalf("declined: pending %+v, answer %s", p, resultText(res))
					}
					return
				}
				want := map[string]string{"approve": "live", "reject": "tested"}[answer]
				last := wf.History[len(wf.History)-1]
				if wf.State.Value() != want || last.Approval == nil || last.Approval.Channel != channel || last.Approval.Approved != (answer == "approve") ||
					last.Approval.By != "user" || last.Approval.Authenticated || !strings.Contains(asked[0], last.Approval.ID) {
					t.Fatalf("state %v, history %+v %+v", wf.State.Value(), last, last.Approval)
				}
				if !strings.Contains(resultText(res), want) {
					t.Fatalf("answer %s", resultText(res))
				}
			})
		}
	}
}

// TestInputRequiredRetry: under 2026-07-28 only the retry that carries
// the request state of the question asked grants the approval: a forged
// request state is refused, and the request state once used answers
// nothing again.
func TestInputRequiredRetry(t *testing.T) {
	// Handles (workflow_start, workflow_id) on an in-memory connection.
	f := newFixture(t, compile(t, "full", deployJSON, nil), &mcpbind.Options{ElicitApprovals: true, Handles: mcpbind.HandlesAlways}, "read_logs")
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	var asked []string
	cs := askingClient(t, f, "2026-07-28", "approve", &asked, true)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
	if err != nil {
		t.Fatal(err)
	}
	id := decode[mcpbind.WorkflowStart](t, res).WorkflowID
	args := map[string]any{"event": "DEPLOY", "workflow_id": id}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: args})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("DEPLOY: %v %+v", err, res)
	}
	w, _ := f.gate.Workflow(ctx, id)
	approvalID, _, _ := strings.Cut(res.RequestState, ".")
	if w.Pending == nil || w.Pending.ID != approvalID {
		t.Fatalf("request state %q, pending %+v", res.RequestState, w.Pending)
	}
	yes := mcp.InputResponseMap{"approval": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}
	retry := func(state string) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: args, InputResponses: yes, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, forged := range []string{approvalID + "." + strings.Repeat("0", 32), approvalID, "x", strings.Repeat("ab", 20) + ".00"} {
		if r := retry(forged); !r.IsError || !strings.Contains(resultText(r), "This answer was not applied") {
			t.Fatalf("forged %q: %s", forged, resultText(r))
		}
	}
	if w, _ := f.gate.Workflow(ctx, id); w.State.Value() != "tested__approval__DEPLOY" {
		t.Fatalf("forged retries moved it: %v", w.State.Value())
	}
	if r := retry(res.RequestState); r.IsError || !strings.Contains(resultText(r), "Approval "+approvalID+" was approved by user (input-required)") {
		t.Fatalf("retry: %s", resultText(r))
	}
	if r := retry(res.RequestState); !r.IsError || !strings.Contains(resultText(r), "approval "+approvalID+" was already approved") {
		t.Fatalf("replay: %s", resultText(r))
	}
	if w, _ := f.gate.Workflow(ctx, id); w.State.Value() != "live" {
		t.Fatalf("state %v", w.State.Value())
	}
}

// TestSend: events from outside an MCP request take the workflow's path:
// recorded with By, and a named workflow is the one SessionKey gives a
// session.
func TestSend(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s3" }}, "2025-11-25")
	ctx := context.Background()
	tr, err := f.gate.Send(ctx, mcpbind.Ref{Name: "s3"}, statechart.Event{Type: "DEPLOY"}, "hook")
	if err != nil || tr == nil || tr.By != "hook" {
		t.Fatalf("Send: %+v %v", tr, err)
	}
	if st := stateOf(t, f, c); st != "tested__approval__DEPLOY" {
		t.Fatalf("state %v", st)
	}
	if _, err := f.gate.Send(ctx, mcpbind.Ref{}, statechart.Event{Type: "X"}, "x"); err == nil {
		t.Fatal("an empty Ref was accepted")
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestWorkflows: the workflows a store holds, with their state and the
// approval they wait for.
func TestWorkflows(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "alice" }}, "2025-11-25")
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	h := f.connectStateless(t, "2026-07-28")
	id := h.start()
	ws, err := f.gate.Workflows(context.Background())
	if err != nil || len(ws) != 2 {
		t.Fatalf("Workflows: %+v %v", ws, err)
	}
	byRef := map[mcpbind.Ref]mcpbind.WorkflowInfo{}
	for _, w := range ws {
		byRef[w.Ref] = w
	}
	a, b := byRef[mcpbind.Ref{Name: "alice"}], byRef[mcpbind.Ref{ID: id}]
	if a.State != "tested__approval__DEPLOY" || a.Pending == nil || a.Updated.IsZero() || b.State != "tested" || b.Pending != nil {
		t.Fatalf("workflows %+v", ws)
	}
}

// TestAfterCall: events that follow a call (a gateway's file interrupt)
// move the workflow after the call, are recorded with their reason, add a
// notice to the call's result, and the session is told once that its
// tools changed.
func TestAfterCall(t *testing.T) {
	engine := compile(t, "full", `{"id": "w", "initial": "work", "states": {
		"work": {"on": {"chartgate.interrupt.env": "check"}, "meta": {"mcp": {"tools": ["write_file", "read_file"]}}},
		"check": {"meta": {"mcp": {"tools": ["read_file"]}}}}}`, nil)
	f := newFixture(t, engine, &mcpbind.Options{AfterCall: func(_ context.Context, c mcpbind.Call) []mcpbind.FollowUp {
		var args struct{ Path string }
		_ = json.Unmarshal(c.Arguments, &args)
		if c.Tool == "write_file" && c.Result != nil && !c.Result.IsError && strings.HasSuffix(args.Path, ".env") {
			return []mcpbind.FollowUp{{Event: statechart.Event{Type: "chartgate.interrupt.env"}, Reason: "file " + args.Path + " matches interrupt env"}}
		}
		return nil
	}}, "write_file", "read_file")
	c := f.connect(t, "2025-11-25")
	if res := c.call("write_file", map[string]any{"path": "main.go"}); res.IsError || strings.Contains(resultText(res), "[Workflow:") {
		t.Fatalf("main.go: %s", resultText(res))
	}
	c.expectQuiet("no interrupt")
	res := c.call("write_file", map[string]any{"path": "config/.env"})
	if !strings.Contains(resultText(res), `[Workflow: file config/.env matches interrupt env, so the workflow moved from "work" to "check".`) {
		t.Fatalf("result: %s", resultText(res))
	}
	c.expectChanged("the interrupt")
	c.expectTools("check", "read_file")
	w, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil || w.History[len(w.History)-1].By != "file config/.env matches interrupt env" {
		t.Fatalf("history %+v %v", w, err)
	}
}

// TestApprovalConcurrentGrants: of grants of one approval made at once
// (a person answering in the client and at the terminal), exactly one is
// applied; the others fail with ErrApprovalUsed.
func TestApprovalConcurrentGrants(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s6" }, ApproverKey: testKey}, "2025-11-25")
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s6"}
	a, _ := f.gate.Pending(ctx, ref)
	const n = 16
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.gate.Approve(ctx, ref, grant(testKey, a.ID, i%2 == 0, "ada", time.Now()))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	applied := 0
	for err := range errs {
		switch {
		case err == nil:
			applied++
		case !errors.Is(err, mcpbind.ErrApprovalUsed):
			t.Errorf("a losing grant: %v", err)
		}
	}
	w, _ := f.gate.SessionWorkflow(ctx, c.ss)
	answers := 0
	for _, h := range w.History {
		if h.Approval != nil {
			answers++
		}
	}
	if applied != 1 || answers != 1 {
		t.Fatalf("%d grants applied, %d in the history", applied, answers)
	}
}
