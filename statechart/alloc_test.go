// This file tests what the interpreter allocates per event: nothing, once
// warm, for the pure API on machines whose events change only the
// configuration, and for an Actor whose parent and child machine answer
// each other.

package statechart_test

import (
	"context"
	"errors"
	"testing"

	"github.com/chartgate/chartgate/statechart"
)

func TestPureAPIAllocatesNothingPerEvent(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ name, src, event string }{
		{"toggle", benchToggle, "TOGGLE"}, {"hierarchy", benchHierarchy, "GO"}, {"parallel", benchParallel, "GO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := statechart.Compile([]byte(c.src), nil)
			if err != nil {
				t.Fatal(err)
			}
			e := m.Engine()
			s, err := e.Start(ctx, epoch)
			if err != nil {
				t.Fatal(err)
			}
			ev := statechart.Event{Type: c.event}
			send := func() {
				prev := s
				if s, err = e.Send(ctx, s, ev, epoch); err != nil {
					t.Fatal(err)
				}
				if s == prev {
					t.Fatal("Send returned its input for an event that moved the machine")
				}
			}
			if allocs := testing.AllocsPerRun(100, send); allocs != 0 && !raceEnabled {
				t.Errorf("Engine.Send allocates %.1f times per event, want 0", allocs)
			}
			values := map[string]bool{}
			for range 4 {
				send()
				values[statechartValue(t, s)] = true
			}
			if len(values) != 2 {
				t.Errorf("the machine went through %d state values, want 2 (it toggles)", len(values))
			}
		})
	}
}

// TestSharedSnapshotsStayImmutable keeps every snapshot Transition returns
// and checks, at the end, that each still reads as it did when returned.
func TestSharedSnapshotsStayImmutable(t *testing.T) {
	ctx := context.Background()
	m, err := statechart.Compile([]byte(benchParallel), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Start(ctx, epoch)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		s     *statechart.Snapshot
		value string
	}
	var all []seen
	for i := range 50 {
		ev := statechart.Event{Type: "GO"}
		if i%5 == 4 {
			ev.Type = "NOPE" // selects nothing: the same state, a snapshot other than the input
		}
		next, err := m.Transition(ctx, s, ev, epoch)
		if err != nil {
			t.Fatal(err)
		}
		if next == s {
			t.Fatalf("event %d: Transition returned its input", i)
		}
		s = next
		all = append(all, seen{s, statechartValue(t, s)})
	}
	for i, x := range all {
		if v := statechartValue(t, x.s); v != x.value {
			t.Errorf("snapshot %d reads %s now, %s when returned", i, v, x.value)
		}
	}
}

func statechartValue(t *testing.T, s statechart.State) string {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestActorRoundTripAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	echo, err := statechart.Compile([]byte(`{"id":"e","initial":"on","states":{"on":{"on":{"PING":{"actions":{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := statechart.Compile([]byte(benchPingPong), &statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"echo": echo}}})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pongs := 0
	a.Subscribe(func(*statechart.Snapshot) { pongs++ })
	ping := statechart.NewEvent("PING")
	for range 10 {
		if err := a.Send(ctx, ping); err != nil {
			t.Fatal(err)
		}
	}
	if pongs < 20 {
		t.Fatalf("the parent changed %d times for 10 round trips, want 20 (PING and PONG each)", pongs)
	}
	b := statechart.NewActor(m, nil)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := b.Send(ctx, ping); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 && !raceEnabled {
		t.Errorf("a round trip allocates %.1f times, want 0", allocs)
	}
}

// TestActorSystemContextInPlace checks the machine of an actor system that
// assigns in place: a snapshot handed out keeps its context, and a failed
// event leaves the context as it was before it.
func TestActorSystemContextInPlace(t *testing.T) {
	ctx := context.Background()
	impl, err := statechart.ParseImplementations([]byte(`{"actors":{"echo":{"machine":{"machine":{"id":"e","initial":"on","states":{"on":{}}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	impl.Actions = map[string]statechart.ActionFunc{"fail": func(context.Context, *statechart.ActionArgs) error { return errors.New("boom") }}
	m, err := statechart.Compile([]byte(`{"id":"m","context":{"n":0},"initial":"on","states":{"on":{
		"invoke":{"src":"echo","id":"echo"},
		"on":{"INC":{"actions":{"type":"xstate.assign","params":{"n":{"$inc":1}}}},
		      "LOOP":{"actions":[{"type":"xstate.assign","params":{"n":{"$inc":100}}},{"type":"xstate.raise","params":{"event":{"type":"LOOP"}}}]},
		      "BAD":{"actions":[{"type":"xstate.assign","params":{"n":{"$inc":100}}},"fail"]}}}}}`), &statechart.Options{Implementations: impl, MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	inc := statechart.NewEvent("INC")
	for range 3 {
		if err := a.Send(ctx, inc); err != nil {
			t.Fatal(err)
		}
	}
	held := a.Snapshot()
	for range 2 {
		if err := a.Send(ctx, inc); err != nil {
			t.Fatal(err)
		}
	}
	if n := held.Context()["n"]; n != 3.0 {
		t.Errorf("a snapshot taken after 3 INCs reads n=%v after 2 more", n)
	}
	if err := a.Send(ctx, statechart.NewEvent("BAD")); err == nil {
		t.Fatal("BAD did not fail")
	}
	s := a.Snapshot()
	if s.Status() != statechart.StatusError || s.Context()["n"] != 5.0 {
		t.Errorf("after a failed BAD: status %s, n=%v; want error, n=5 (the context before BAD)", s.Status(), s.Context()["n"])
	}
	// LOOP assigns in place, then raises itself until the step budget
	// is spent: the assigns are undone.
	b := statechart.NewActor(m, nil)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := b.Send(ctx, inc); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(ctx, statechart.NewEvent("LOOP")); !errors.Is(err, statechart.ErrStepBudget) {
		t.Fatalf("LOOP: %v, want the step budget's error", err)
	}
	if n := b.Snapshot().Context()["n"]; n != 2.0 {
		t.Errorf("after LOOP ran out of steps: n=%v, want 2 (the context before LOOP)", n)
	}
}

// TestActorSpawnedChildSnapshots starts and stops children machines: a
// cycle allocates at most 4 times once warm (the child's cell, its
// snapshot with the buffer of its first macrostep in one, and its context
// map, two; session ids come many to an allocation), and a snapshot that holds a child taken before the child's
// first event still reads the same after it.
func TestActorSpawnedChildSnapshots(t *testing.T) {
	ctx := context.Background()
	worker, err := statechart.Compile([]byte(`{"id":"worker","context":{"n":0},"initial":"a","states":{"a":{"on":{"NEXT":"b"}},"b":{"on":{"NEXT":"a"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := statechart.Compile([]byte(`{"id":"parent","initial":"idle","states":{
		"idle":{"on":{"START":"running"}},
		"running":{"invoke":{"src":"worker","id":"worker"},"on":{"STOP":"idle",
			"NEXT":{"actions":{"type":"xstate.sendTo","params":{"to":"worker","event":{"type":"NEXT"}}}}}}}}`),
		&statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"worker": worker}}})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	send := func(typ string) {
		t.Helper()
		if err := a.Send(ctx, statechart.NewEvent(typ)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		send("START")
		before := a.Snapshot()
		was := statechartValue(t, before)
		send("NEXT")
		after := statechartValue(t, a.Snapshot())
		if now := statechartValue(t, before); now != was {
			t.Fatalf("the snapshot taken before the child's first event reads\n%s\nnow, was\n%s", now, was)
		}
		if after == was {
			t.Fatalf("NEXT did not move the child: %s", after)
		}
		send("STOP")
	}
	allocs := testing.AllocsPerRun(100, func() {
		send("START")
		send("STOP")
	})
	if allocs > 4 && !raceEnabled {
		t.Errorf("a child's start and stop allocates %.1f times, want at most 4", allocs)
	}
}

// TestActorEventlessCheckAllocatesNothing sends an order workflow's events
// to an Actor: an event guarded by its data, assigns that keep the event's
// amount, and a state whose eventless transitions compare it with the
// total. Once warm, a round of the stream allocates nothing.
func TestActorEventlessCheckAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	impl, err := statechart.ParseImplementations([]byte(`{
		"guards":{"positive":{"field":"event.qty","op":"gt","value":0},
			"hasItems":{"field":"context.items","op":"gt","value":0},
			"enough":{"field":"context.last","op":"gte","value":{"$ref":"context.total"}}},
		"actions":{"add":{"assign":{"items":{"$inc":1},"total":{"$inc":5}}},
			"remember":{"assign":{"last":{"$ref":"event.amount"}}},
			"settle":{"assign":{"paid":{"$inc":1}}},
			"reset":{"assign":{"items":0,"total":0}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := statechart.Compile([]byte(`{"id":"order","initial":"cart","context":{"items":0,"total":0,"paid":0,"last":null},"states":{
		"cart":{"on":{"ADD":{"guard":"positive","actions":"add"},"CHECKOUT":{"target":"checkout","guard":"hasItems"}}},
		"checkout":{"on":{"PAY":{"target":"check","actions":"remember"}}},
		"check":{"always":[{"target":"paid","guard":"enough"},{"target":"checkout"}]},
		"paid":{"entry":"settle","on":{"DONE":{"target":"cart","actions":"reset"}}}}}`), &statechart.Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stream := []statechart.Event{
		{Type: "ADD", Data: map[string]any{"qty": 2.0}}, {Type: "ADD", Data: map[string]any{"qty": 0.0}},
		{Type: "CHECKOUT"}, {Type: "PAY", Data: map[string]any{"amount": 3.0}},
		{Type: "PAY", Data: map[string]any{"amount": 5.0}}, {Type: "DONE"},
	}
	round := func() {
		for _, ev := range stream {
			if err := a.Send(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	round()
	allocs := testing.AllocsPerRun(100, round)
	if got := a.Snapshot().Context()["paid"]; got != 102.0 {
		t.Fatalf("paid = %v after 102 rounds, want 102: the stream does not pay once a round", got)
	}
	if allocs != 0 && !raceEnabled {
		t.Errorf("a round of %d events allocates %.1f times, want 0", len(stream), allocs)
	}
}

// TestActorSpawnStopAllocatesNothing starts and stops a child machine
// that has no children and no delayed events of its own, as the bench's
// spawnstop machine does: once warm, a thousand cycles allocate nothing
// (the stopped child's cell, with its snapshots, serves the next child,
// and a session id is written only when something reads it), and every
// child still gets a session of its own.
func TestActorSpawnStopAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	worker, err := statechart.Compile([]byte(`{"id":"worker","initial":"a","states":{"a":{"on":{"NEXT":"b"}},"b":{"on":{"NEXT":"a"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := statechart.Compile([]byte(benchSpawnStop), &statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"worker": worker}}})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	start, stop := statechart.NewEvent("START"), statechart.NewEvent("STOP")
	cycle := func() {
		if err := a.Send(ctx, start); err != nil {
			t.Fatal(err)
		}
		if err := a.Send(ctx, stop); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for range 4 {
		if err := a.Send(ctx, start); err != nil {
			t.Fatal(err)
		}
		c, ok := a.Snapshot().Child("worker")
		if !ok || c.Status != statechart.StatusActive || seen[c.Session] {
			t.Fatalf("child %+v (listed %v), want an active child with a session not seen before %v", c, ok, seen)
		}
		seen[c.Session] = true
		if err := a.Send(ctx, stop); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1, func() {
		for range 1000 {
			cycle()
		}
	})
	if v := a.Snapshot().Value(); v != "idle" {
		t.Fatalf("value %v after the cycles, want idle", v)
	}
	if allocs != 0 && !raceEnabled {
		t.Errorf("1000 starts and stops of a child allocate %.0f times, want 0", allocs)
	}
}
