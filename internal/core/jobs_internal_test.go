package core

import (
	"context"
	"testing"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// TestDeliverOnce: a job's result goes through reserve and commit like an
// event; a second result for the same child (another run of the job)
// finds the child over and changes nothing, and a result for a child the
// workflow never had changes nothing either.
func TestDeliverOnce(t *testing.T) {
	// The logic runs elsewhere (nil): the gate runs no job, the test
	// delivers the results.
	m, err := statechart.Compile([]byte(`{"id": "m", "context": {"n": 0}, "initial": "idle", "states": {
		"idle": {"on": {"GO": "running"}},
		"running": {"invoke": {"id": "job", "src": "job",
			"onDone": {"actions": {"type": "xstate.assign", "params": {"n": {"$inc": 1}}}}}}}}`),
		&statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"job": statechart.Promise(nil)}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Engine(), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tgt := Target{Name: "w", Key: g.NameKey("w")}
	if _, err := g.Send(context.Background(), gate.Ref{Name: "w"}, statechart.Event{Type: "GO"}, "test"); err != nil {
		t.Fatal(err)
	}
	v, err := g.Load(context.Background(), tgt)
	if err != nil {
		t.Fatal(err)
	}
	child, ok := v.State.(*statechart.Snapshot).Child("job")
	if !ok || child.Status != statechart.StatusActive {
		t.Fatalf("no running child: %+v", child)
	}
	deliver := func(session string) Committed {
		ev := statechart.Event{Type: "xstate.done.actor.job"}
		c := &Call{Kind: CallSend, Rules: g.Rules.Load(), Info: UnboundInfo, Target: tgt, Event: ev, By: "actor:job",
			Report: &statechart.Report{Session: session, Kind: statechart.ReportDone, Output: "ok"}}
		v, err := g.Load(context.Background(), tgt)
		if err != nil {
			t.Fatal(err)
		}
		v, h, vd, err := g.ReserveCall(context.Background(), c, v)
		if err != nil || vd != nil {
			t.Fatalf("reserve: %v %v", vd, err)
		}
		return g.CommitCall(context.Background(), c, h, v, ToolOutcome{})
	}
	if out := deliver("no such session"); out.Err != nil || out.Tr != nil {
		t.Fatalf("a result for no child: %+v", out)
	}
	if out := deliver(child.Session); out.Err != nil || out.Tr == nil || out.After.State.Context()["n"] != float64(1) {
		t.Fatalf("the first result: %+v", out)
	}
	out := deliver(child.Session)
	if out.Err != nil || out.Tr != nil || out.After.State.Context()["n"] != float64(1) {
		t.Fatalf("the second result for the same child moved the workflow: %+v, n = %v", out, out.After.State.Context()["n"])
	}
	if out.After.Rec.Lease != nil {
		t.Fatal("the second result left the workflow's lease taken")
	}
}
