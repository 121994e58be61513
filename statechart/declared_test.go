// This file tests the declarative guards and assigns that Compile runs
// directly: they behave like the functions ParseImplementations returns,
// a function put in their place is called instead, and a context an
// implementation was handed never changes afterwards.

package statechart_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

const declaredMachine = `{"id":"d","initial":"a","context":{"n":0,"tag":"x"},"states":{
	"a":{"on":{"GO":{"target":"b","guard":"ready","actions":["bump","seen","bump"]},"BUMP":{"actions":"bump"}}},
	"b":{}}}`

const declaredImpls = `{
	"guards":{"ready":{"and":[{"field":"context.n","op":"in","value":[1,3,"1",null,{"a":1}]},{"field":"context.tag","op":"eq","value":"x"}]}},
	"actions":{"bump":{"assign":{"n":{"$inc":1}}}}}`

func declaredActor(t *testing.T, impl statechart.Implementations) *statechart.Actor {
	t.Helper()
	m, err := statechart.Compile([]byte(declaredMachine), &statechart.Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

func send(t *testing.T, a *statechart.Actor, types ...string) {
	t.Helper()
	for _, typ := range types {
		if err := a.Send(context.Background(), statechart.NewEvent(typ)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeclaredGuardAndAssign: the compiled "in" over a literal list finds
// the number 1 (not the string "1") and 3, not 0 or 2; the assigns count.
func TestDeclaredGuardAndAssign(t *testing.T) {
	var seen []map[string]any
	impl, err := statechart.ParseImplementations([]byte(declaredImpls))
	if err != nil {
		t.Fatal(err)
	}
	impl = impl.Merge(statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"seen": func(_ context.Context, args *statechart.ActionArgs) error {
			seen = append(seen, args.Context)
			return nil
		},
	}})
	a := declaredActor(t, impl)
	send(t, a, "GO") // n = 0: refused
	if got := a.Snapshot().Value(); got != "a" {
		t.Fatalf("after GO with n=0: %v, want a", got)
	}
	send(t, a, "BUMP", "BUMP", "GO") // n = 2: refused
	if got := a.Snapshot().Value(); got != "a" {
		t.Fatalf("after GO with n=2: %v, want a", got)
	}
	send(t, a, "BUMP", "GO") // n = 3: taken, bump, seen, bump
	s := a.Snapshot()
	if s.Value() != "b" || s.Context()["n"] != 5.0 {
		t.Fatalf("after GO with n=3: %v %v, want b with n=5", s.Value(), s.Context())
	}
	// The action kept the context it was handed: the assign after it made
	// a new one rather than changing that one.
	if len(seen) != 1 || seen[0]["n"] != 4.0 {
		t.Fatalf("the context the action was handed changed: %v, want n=4", seen)
	}
}

// TestDeclaredOverridden: a Go function put in the map in place of a
// declarative guard or action is the one that runs.
func TestDeclaredOverridden(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(declaredImpls))
	if err != nil {
		t.Fatal(err)
	}
	impl.Guards["ready"] = func(context.Context, statechart.GuardArgs) (bool, error) { return true, nil }
	calls := 0
	impl.Actions["bump"] = func(_ context.Context, args *statechart.ActionArgs) error {
		calls++
		args.Assign(map[string]any{"n": 100.0})
		return nil
	}
	a := declaredActor(t, impl)
	send(t, a, "GO")
	s := a.Snapshot()
	if s.Value() != "b" || calls != 2 || s.Context()["n"] != 100.0 {
		t.Fatalf("got %v %v after %d calls, want b, n=100 after 2 calls", s.Value(), s.Context(), calls)
	}

	// The same through Merge: the later Go function wins.
	base, _ := statechart.ParseImplementations([]byte(declaredImpls))
	merged := base.Merge(statechart.Implementations{Guards: map[string]statechart.GuardFunc{
		"ready": func(context.Context, statechart.GuardArgs) (bool, error) { return true, nil },
	}})
	a = declaredActor(t, merged)
	send(t, a, "GO")
	if s := a.Snapshot(); s.Value() != "b" || s.Context()["n"] != 2.0 {
		t.Fatalf("merged: got %v %v, want b with n=2", s.Value(), s.Context())
	}
}

// TestDeclaredContextNotShared: a snapshot taken before an event keeps
// its context when later events assign.
func TestDeclaredContextNotShared(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(declaredImpls))
	if err != nil {
		t.Fatal(err)
	}
	a := declaredActor(t, impl)
	send(t, a, "BUMP")
	before := a.Snapshot()
	send(t, a, "BUMP", "BUMP")
	if got := before.Context()["n"]; got != 1.0 {
		t.Fatalf("an earlier snapshot's context changed: n=%v, want 1", got)
	}
	if got := a.Snapshot().Context()["n"]; got != 3.0 {
		t.Fatalf("n=%v, want 3", got)
	}
}

// TestDeclaredRollback: an Actor changes its own context in place, and a
// macrostep that fails (an action that throws, or the step budget) leaves
// the context as it was before the event.
func TestDeclaredRollback(t *testing.T) {
	const machine = `{"id":"r","initial":"a","context":{"n":0},"states":{"a":{"on":{
		"BUMP":{"actions":"bump"},
		"FAIL":{"actions":["bump","boom"]},
		"LOOP":{"actions":["bump",{"type":"xstate.raise","params":{"event":{"type":"LOOP"}}}]}}}}}`
	impl, err := statechart.ParseImplementations([]byte(`{"actions":{"bump":{"assign":{"n":{"$inc":1},"new":true}},"boom":{"throw":"no"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct{ event, status string }{{"LOOP", "active"}, {"FAIL", "error"}} {
		m, err := statechart.Compile([]byte(machine), &statechart.Options{Implementations: impl, MaxSteps: 10})
		if err != nil {
			t.Fatal(err)
		}
		a := statechart.NewActor(m, nil)
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		send(t, a, "BUMP", "BUMP") // the second assign changes the actor's own map
		if err := a.Send(ctx, statechart.NewEvent(tc.event)); err == nil {
			t.Fatalf("%s: no error", tc.event)
		}
		s := a.Snapshot()
		if got := s.Context(); got["n"] != 2.0 || len(got) != 2 || string(s.Status()) != tc.status {
			t.Fatalf("%s: context %v, status %s; want n=2 and new=true as before, status %s", tc.event, got, s.Status(), tc.status)
		}
	}
}

// TestDeclaredWithGoUnset: a Go action that unsets a key after an assign
// changed the actor's context in place sees (and changes) its own copy;
// if the macrostep then fails, the actor keeps the context it had.
func TestDeclaredWithGoUnset(t *testing.T) {
	const machine = `{"id":"u","initial":"a","context":{"n":0,"tag":"x"},"states":{"a":{"on":{
		"BUMP":{"actions":"bump"},
		"DROP":{"actions":["bump","drop"]},
		"FAIL":{"actions":["bump","drop","boom"]}}}}}`
	impl, err := statechart.ParseImplementations([]byte(`{"actions":{"bump":{"assign":{"n":{"$inc":1}}},"boom":{"throw":"no"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var seen []map[string]any
	impl.Actions["drop"] = func(_ context.Context, args *statechart.ActionArgs) error {
		seen = append(seen, args.Context)
		args.Unset("tag")
		return nil
	}
	ctx := context.Background()
	m, err := statechart.Compile([]byte(machine), &statechart.Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	send(t, a, "BUMP", "BUMP") // the actor's own context, n = 2
	if err := a.Send(ctx, statechart.NewEvent("FAIL")); err == nil {
		t.Fatal("FAIL: no error")
	}
	if got := a.Snapshot().Context(); got["n"] != 2.0 || got["tag"] != "x" {
		t.Fatalf("after a failed macrostep: %v, want n=2 and tag=x", got)
	}
	if len(seen) != 1 || seen[0]["n"] != 3.0 || seen[0]["tag"] != "x" {
		t.Fatalf("the action was handed %v, want n=3 and tag=x", seen)
	}

	b := statechart.NewActor(m, nil)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	send(t, b, "BUMP", "BUMP", "DROP", "BUMP")
	if got := b.Snapshot().Context(); got["n"] != 4.0 || len(got) != 1 {
		t.Fatalf("after DROP and BUMP: %v, want only n=4", got)
	}
	if kept := seen[1]; kept["n"] != 3.0 || kept["tag"] != "x" {
		t.Fatalf("the context the action kept changed: %v, want n=3 and tag=x", kept)
	}
}

// TestCheckSeesConfigurationBeforeMicrostep: a guard that an action checks
// (xstate.enqueueActions) reads the configuration the microstep started
// from, in exit, transition and entry actions alike, as XState's check
// does; the step cache, which replays the second round of each microstep,
// gives the same answers.
func TestCheckSeesConfigurationBeforeMicrostep(t *testing.T) {
	check := func(label string) string {
		return `{"type":"xstate.enqueueActions","params":{"actions":[
			{"if":"inB1","then":[{"type":"xstate.assign","params":{"log":{"$push":"` + label + `:b1"}}}]},
			{"if":"inB2","then":[{"type":"xstate.assign","params":{"log":{"$push":"` + label + `:b2"}}}]}]}}`
	}
	machine := `{"id":"m","type":"parallel","context":{"log":[]},"states":{
		"A":{"initial":"a1","states":{
			"a1":{"exit":` + check("x") + `,"on":{"GO":{"target":"a2","actions":` + check("t") + `}}},
			"a2":{"entry":` + check("n") + `,"on":{"BACK":"a1"}}}},
		"B":{"initial":"b1","states":{"b1":{"on":{"GO":"b2"}},"b2":{"on":{"BACK":"b1"}}}}}}`
	in := func(id string) statechart.GuardFunc {
		return func(_ context.Context, args statechart.GuardArgs) (bool, error) { return args.InState(id) }
	}
	m, err := statechart.Compile([]byte(machine), &statechart.Options{Implementations: statechart.Implementations{
		Guards: map[string]statechart.GuardFunc{"inB1": in("#m.B.b1"), "inB2": in("#m.B.b2")}}})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	send(t, a, "GO", "BACK", "GO")
	got := fmt.Sprint(a.Snapshot().Context()["log"])
	// B leaves b1 in the same microstep as A leaves a1: every check of
	// both GO microsteps still sees b1.
	if want := "[x:b1 t:b1 n:b1 x:b1 t:b1 n:b1]"; got != want {
		t.Errorf("log = %s, want %s", got, want)
	}
}

// TestRaiseAfterAndCancel: a Go action schedules events on the actor's
// clock, in a machine without delayed events of its own, and cancels one
// by its send id.
func TestRaiseAfterAndCancel(t *testing.T) {
	m, err := statechart.Compile([]byte(`{"id":"r","initial":"a","states":{
		"a":{"entry":"schedule","on":{"LATE":"b","NEVER":"fail"}},"b":{},"fail":{}}}`),
		&statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
			"schedule": func(_ context.Context, args *statechart.ActionArgs) error {
				args.RaiseAfter(statechart.NewEvent("NEVER"), 5*time.Millisecond, "n")
				args.RaiseAfter(statechart.NewEvent("LATE"), 10*time.Millisecond, "")
				args.Cancel("n")
				return nil
			}}}})
	if err != nil {
		t.Fatal(err)
	}
	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	clock.Advance(9 * time.Millisecond)
	if v := a.Snapshot().Value(); v != "a" {
		t.Fatalf("at 9 ms: %v, want a", v)
	}
	clock.Advance(time.Millisecond)
	if v := a.Snapshot().Value(); v != "b" {
		t.Fatalf("at 10 ms: %v, want b", v)
	}
	send(t, a, "GO") // a Send after start reads the clock lazily too
}
