package mcpbind_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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

// TestApproval: a transition that needs approval parks; while it waits no
// transition can be made, the agent cannot approve it, workflow_status
// shows it, and Gate.Approve (chartgate approve) approves it with the
// approver in the history.
func TestApproval(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s1" }}, "2025-11-25")
	res := c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	if res.IsError || !strings.Contains(resultText(res), "tested__approval__DEPLOY") {
		t.Fatalf("DEPLOY: %s", resultText(res))
	}
	for _, ev := range []string{"RETEST", "chartgate.approve"} {
		res := c.call("workflow_transition", map[string]any{"event": ev})
		if !res.IsError || !strings.Contains(resultText(res), "A transition is pending approval (\"tested\" to \"live\" on DEPLOY: ship it?)") {
			t.Fatalf("%s while pending: %s", ev, resultText(res))
		}
	}
	st := decode[mcpbind.WorkflowStatus](t, c.call("workflow_status", nil))
	if st.Pending == nil || st.Pending.To != "live" || !slicesEqual(st.Tools, []string{"read_logs", "workflow_status", "workflow_transition"}) {
		t.Fatalf("status %+v", st)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s1"}
	a, err := f.gate.Pending(ctx, ref)
	if err != nil || a == nil || a.Message != "ship it?" {
		t.Fatalf("Pending: %+v %v", a, err)
	}
	tr, err := f.gate.Approve(ctx, ref, true, "ada")
	if err != nil || tr == nil || tr.To != "live" || tr.By != "ada" {
		t.Fatalf("Approve: %+v %v", tr, err)
	}
	if _, err := f.gate.Approve(ctx, ref, true, "ada"); err == nil {
		t.Fatal("a second approval succeeded")
	}
	w, err := f.gate.SessionWorkflow(ctx, c.ss)
	if err != nil || w.State.Value() != "live" {
		t.Fatalf("workflow %+v %v", w, err)
	}
	last := w.History[len(w.History)-1]
	if last.By != "ada" || last.Event.Type != mcpbind.EventApprove {
		t.Fatalf("history %+v", last)
	}
}

// TestApprovalRejected: a rejection goes back to where the transition
// started.
func TestApprovalRejected(t *testing.T) {
	f, c := approvalFixture(t, &mcpbind.Options{SessionKey: func(*mcp.ServerSession) string { return "s2" }}, "2025-11-25")
	c.call("workflow_transition", map[string]any{"event": "DEPLOY"})
	tr, err := f.gate.Approve(context.Background(), mcpbind.Ref{Name: "s2"}, false, "bob")
	if err != nil || tr.To != "tested" {
		t.Fatalf("reject: %+v %v", tr, err)
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

// TestApprovalByElicitation: with ElicitApprovals, the client's user is
// asked and their answer applied at once.
func TestApprovalByElicitation(t *testing.T) {
	for _, answer := range []bool{true, false} {
		f := newFixture(t, compile(t, "full", deployJSON, nil), &mcpbind.Options{ElicitApprovals: true}, "read_logs")
		if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
			t.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		ctx := context.Background()
		ss, err := f.server.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		var asked string
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = req.Params.Message
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": answer}}, nil
			},
		}).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_transition", Arguments: map[string]any{"event": "DEPLOY"}})
		if err != nil || res.IsError {
			t.Fatalf("DEPLOY: %v %v", err, res)
		}
		want := map[bool]string{true: "live", false: "tested"}[answer]
		s, err := f.gate.State(ctx, ss)
		if err != nil || s.Value() != want || !strings.Contains(asked, `from "tested" to "live" (event DEPLOY): ship it?`) {
			t.Fatalf("answer %v: state %v %v, asked %q", answer, s.Value(), err, asked)
		}
		_ = cs.Close()
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
