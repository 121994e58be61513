package mcpbind_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/mcpbind"
)

// TestReserve: a tool run in the caller's process, reserved and
// committed, is gated as a tools/call: refused out of its state, counted,
// and while a call that may send an event holds the workflow, another
// waits for it and is refused busy when it does not finish in time.
func TestReserve(t *testing.T) {
	g, err := mcpbind.New(compile(t, "full", codingJSON, nil), &mcpbind.Options{Logger: quietLogger(), BusyWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s"}
	req := func(tool string) gate.Request {
		return gate.Request{Ref: ref, Tool: tool, Tools: []string{"Read", "Edit", "Bash"}}
	}

	if d, rv, err := g.Reserve(ctx, req("Edit")); err != nil || d.Allowed || rv != nil || d.Refusal.Code != mcpbind.CodeForbidden {
		t.Fatalf("Edit in plan: %+v %v %v", d, rv, err)
	}
	if _, err := g.Send(ctx, ref, mcpEvent("PLANNED"), "agent"); err != nil {
		t.Fatal(err)
	}
	d, held, err := g.Reserve(ctx, req("Bash"))
	if err != nil || !d.Allowed {
		t.Fatalf("Bash: %+v %v", d, err)
	}
	// Bash may send TESTED: it holds the workflow, so a second Bash waits
	// and is refused busy; Edit sends nothing and runs.
	if d, _, err := g.Reserve(ctx, req("Bash")); err != nil || d.Allowed || d.Refusal.Code != mcpbind.CodeWorkflowBusy {
		t.Fatalf("second Bash: %+v %v", d, err)
	}
	d, edit, err := g.Reserve(ctx, req("Edit"))
	if err != nil || !d.Allowed {
		t.Fatalf("Edit while Bash runs: %+v %v", d, err)
	}
	if tr, err := edit.Commit(ctx, gate.Outcome{}); err != nil || tr != nil {
		t.Fatalf("Edit's commit: %v %v", tr, err)
	}
	tr, err := held.Commit(ctx, gate.Outcome{Output: json.RawMessage(`{"passed":true}`)})
	if err != nil || tr == nil || tr.Event.Type != "TESTED" || tr.To != "done" {
		t.Fatalf("Bash's commit: %+v %v", tr, err)
	}
	if _, err := held.Commit(ctx, gate.Outcome{}); err == nil {
		t.Fatal("a second commit of one reservation succeeded")
	}
	w, err := g.WorkflowOf(ctx, ref)
	if err != nil || w.State.Value() != "done" {
		t.Fatalf("workflow: %v %v", w, err)
	}
}

// TestReserveReleasedByFailure: a reservation committed as failed sends no
// event and frees the workflow for the next call at once.
func TestReserveReleasedByFailure(t *testing.T) {
	g, err := mcpbind.New(compile(t, "full", codingJSON, nil), &mcpbind.Options{Logger: quietLogger(), BusyWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "s"}
	if _, err := g.Send(ctx, ref, mcpEvent("PLANNED"), "agent"); err != nil {
		t.Fatal(err)
	}
	r := gate.Request{Ref: ref, Tool: "Bash"}
	_, rv, err := g.Reserve(ctx, r)
	if err != nil || rv == nil {
		t.Fatal(rv, err)
	}
	if tr, err := rv.Commit(ctx, gate.Outcome{Failed: true}); err != nil || tr != nil {
		t.Fatalf("failed Bash: %v %v", tr, err)
	}
	start := time.Now()
	d, rv, err := g.Reserve(ctx, r)
	if err != nil || !d.Allowed || time.Since(start) > 10*time.Second {
		t.Fatalf("Bash after a failure: %+v %v after %v", d, err, time.Since(start))
	}
	if _, err := rv.Commit(ctx, gate.Outcome{}); err != nil {
		t.Fatal(err)
	}
	w, err := g.WorkflowOf(ctx, ref)
	if err != nil || w.State.Value() != "done" || len(w.Limits) != 0 {
		t.Fatalf("workflow: %v %v", w, err)
	}
}
