package statechart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// slotMachine is a machine whose declarative guards and assigns read and
// write the context through every kind of expression: $inc past the
// numbers kept boxed in advance, $push, a $ref of the event that may be
// missing (which removes the key), a $ref of a nested context path, a
// nested guard path, a key no context has at first. GO runs a Go action
// that reads the context and assigns (BOTH runs it between two assigns);
// the delayed transition of busy has a Go guard that reads it.
const slotMachine = `{
	"id": "slots",
	"initial": "idle",
	"context": {"n": 250, "name": "a", "tags": [], "obj": {"x": 1}},
	"on": {
		"INC": {"actions": "inc"},
		"TAG": {"actions": "tag"},
		"SET": {"actions": "set"},
		"COPY": {"actions": "copy"},
		"SWAP": {"actions": "swap"},
		"GO": {"actions": "seeGo"},
		"BOTH": {"actions": ["inc", "seeGo", "inc"]}
	},
	"states": {
		"idle": {"on": {"MOVE": {"target": "busy", "guard": "big", "actions": "count"}}},
		"busy": {
			"on": {"MOVE": {"target": "idle", "guard": "deep", "actions": "count"}},
			"after": {"1000": {"target": "idle", "guard": "goBig", "actions": "count"}}
		}
	}
}`

const slotImplementations = `{
	"guards": {
		"big": {"and": [{"field": "context.n", "op": "gte", "value": 256}, {"field": "context.name", "op": "exists"}]},
		"deep": {"field": "context.obj.x", "op": "eq", "value": 1}
	},
	"actions": {
		"inc": {"assign": {"n": {"$inc": 3}}},
		"tag": {"assign": {"tags": {"$push": {"$ref": "event.tag"}}}},
		"set": {"assign": {"name": {"$ref": "event.name"}}},
		"copy": {"assign": {"x": {"$ref": "context.obj.x"}, "n2": {"$ref": "context.n"}}},
		"swap": {"assign": {"n": {"$ref": "context.moves"}, "moves": {"$ref": "context.n"}}},
		"count": {"assign": {"moves": {"$inc": 1}}}
	}
}`

// slotImpl returns the implementations of slotMachine; the Go action and
// guard append what they see of the context to seen.
func slotImpl(t *testing.T, seen *[]string) Implementations {
	t.Helper()
	decl, err := ParseImplementations([]byte(slotImplementations))
	if err != nil {
		t.Fatal(err)
	}
	return decl.Merge(Implementations{
		Actions: map[string]ActionFunc{"seeGo": func(_ context.Context, args *ActionArgs) error {
			*seen = append(*seen, fmt.Sprintf("action n=%v name=%v", args.Context["n"], args.Context["name"]))
			n, _ := args.Context["n"].(float64)
			args.Assign(map[string]any{"n": n + 1000})
			return nil
		}},
		Guards: map[string]GuardFunc{"goBig": func(_ context.Context, args GuardArgs) (bool, error) {
			*seen = append(*seen, fmt.Sprintf("guard n=%v moves=%v", args.Context["n"], args.Context["moves"]))
			n, _ := args.Context["n"].(float64)
			return n > 300, nil
		}},
	})
}

// slotEvents is a stream that takes every path of slotMachine.
var slotEvents = []Event{
	{Type: "INC"}, {Type: "MOVE"}, {Type: "INC"}, {Type: "INC"}, {Type: "MOVE"},
	{Type: "TAG", Data: map[string]any{"tag": "t1"}}, {Type: "TAG"},
	{Type: "SET", Data: map[string]any{"name": "b"}}, {Type: "COPY"}, {Type: "MOVE"},
	{Type: "SET"}, {Type: "MOVE"}, {Type: "INC"}, {Type: "SWAP"}, {Type: "GO"},
	{Type: "INC"}, {Type: "SET", Data: map[string]any{"name": "c"}}, {Type: "MOVE"},
	{Type: "MOVE"}, {Type: "INC"}, {Type: "SWAP"}, {Type: "COPY"}, {Type: "INC"},
	{Type: "BOTH"}, {Type: "INC"},
}

func contextJSON(t *testing.T, c map[string]any) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSlotContextMatchesPureTransition sends the same events to an Actor,
// which keeps its context in slots between the steps it takes from the
// step cache, and through Machine.Transition, which works on maps: the
// contexts agree whenever the Actor's is read, whether it was read after
// every event or after every few.
func TestSlotContextMatchesPureTransition(t *testing.T) {
	ctx := context.Background()
	for _, every := range []int{1, 3, 7, 1000} {
		t.Run(fmt.Sprint("every", every), func(t *testing.T) {
			var seenActor, seenPure []string
			mA, err := Compile([]byte(slotMachine), &Options{Implementations: slotImpl(t, &seenActor)})
			if err != nil {
				t.Fatal(err)
			}
			mP, err := Compile([]byte(slotMachine), &Options{Implementations: slotImpl(t, &seenPure)})
			if err != nil {
				t.Fatal(err)
			}
			if mA.slots == nil {
				t.Fatal("the machine has no slots")
			}
			a := startedActor(t, mA, nil)
			now := time.Unix(0, 0)
			s, err := mP.Start(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 40 { // the counters pass 255 and beyond
				for i, ev := range slotEvents {
					if err := a.Send(ctx, ev); err != nil {
						t.Fatal(err)
					}
					if s, err = mP.Transition(ctx, s, ev, now); err != nil {
						t.Fatal(err)
					}
					if k := round*len(slotEvents) + i; k%every == 0 {
						got := a.Snapshot()
						if g, w := contextJSON(t, got.Context()), contextJSON(t, s.Context()); g != w {
							t.Fatalf("round %d event %d (%s): actor context %s, pure %s", round, i, ev.Type, g, w)
						}
						if fmt.Sprint(got.Value()) != fmt.Sprint(s.Value()) {
							t.Fatalf("round %d event %d: actor in %v, pure in %v", round, i, got.Value(), s.Value())
						}
					}
				}
			}
			if g, w := contextJSON(t, a.Snapshot().Context()), contextJSON(t, s.Context()); g != w {
				t.Fatalf("at the end: actor context %s, pure %s", g, w)
			}
			if fmt.Sprint(seenActor) != fmt.Sprint(seenPure) {
				t.Fatalf("the Go action saw\n%v\nin the actor, and\n%v\nin the pure API", seenActor, seenPure)
			}
			if every > 1 && a.r.cache.fast == 0 {
				t.Fatal("the actor took no step from the cache: the slots were not used")
			}
		})
	}
}

// TestSlotContextSeenByEveryReader checks that what an Actor's slots hold
// reaches every reader of its context: an inspection, a subscriber, a Go
// action and a Go guard (of a delayed event), a persisted snapshot and
// the actor restored from it.
func TestSlotContextSeenByEveryReader(t *testing.T) {
	ctx := context.Background()
	var seen []string
	m, err := Compile([]byte(slotMachine), &Options{Implementations: slotImpl(t, &seen)})
	if err != nil {
		t.Fatal(err)
	}
	clock := NewSimulatedClock()
	var inspected []string
	a := NewActor(m, &ActorOptions{Clock: clock, Inspect: func(in Inspection) {
		inspected = append(inspected, fmt.Sprint(in.Event.Type, " n=", in.Snapshot.Context()["n"]))
	}})
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	send := func(evs ...Event) {
		t.Helper()
		for _, ev := range evs {
			if err := a.Send(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(Event{Type: "INC"}, Event{Type: "INC"}, Event{Type: "SET"}, Event{Type: "GO"})
	want := []string{"INC n=250", "INC n=253", "SET n=256", "GO n=256"}
	if fmt.Sprint(inspected) != fmt.Sprint(want) {
		t.Fatalf("inspected %v, want %v", inspected, want)
	}
	// SET without a name removed the key; the Go action saw that.
	if want := []string{"action n=256 name=<nil>"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("the Go action saw %v, want %v", seen, want)
	}
	send(Event{Type: "INC"}, Event{Type: "SET", Data: map[string]any{"name": "z"}}, Event{Type: "MOVE"})
	if v := a.Snapshot().Value(); v != "busy" {
		t.Fatalf("in %v, want busy", v)
	}
	clock.Advance(time.Second) // the delayed event's Go guard reads the slots' values
	if want := "guard n=1259 moves=1"; len(seen) != 2 || seen[1] != want {
		t.Fatalf("the Go guard saw %v, want %q last", seen, want)
	}

	var subscribed []string
	stop := a.Subscribe(func(s *Snapshot) { subscribed = append(subscribed, fmt.Sprint(s.Context()["n"])) })
	send(Event{Type: "INC"}, Event{Type: "INC"})
	stop()
	if want := []string{"1262", "1265"}; fmt.Sprint(subscribed) != fmt.Sprint(want) {
		t.Fatalf("the subscriber saw n %v, want %v", subscribed, want)
	}

	send(Event{Type: "INC"}, Event{Type: "TAG", Data: map[string]any{"tag": "x"}}, Event{Type: "COPY"})
	data, err := json.Marshal(a.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	wantCtx := `{"moves":2,"n":1268,"n2":1268,"name":"z","obj":{"x":1},"tags":["x"],"x":1}`
	if g := contextJSON(t, a.Snapshot().Context()); g != wantCtx {
		t.Fatalf("context %s, want %s", g, wantCtx)
	}
	restored, err := m.Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	if g := contextJSON(t, restored.Context()); g != wantCtx {
		t.Fatalf("restored context %s, want %s", g, wantCtx)
	}
	b := startedActor(t, m, &ActorOptions{Snapshot: restored, Clock: clock})
	for range 3 {
		if err := b.Send(ctx, Event{Type: "INC"}); err != nil {
			t.Fatal(err)
		}
	}
	if g := b.Snapshot().Context()["n"]; g != 1277.0 {
		t.Fatalf("the restored actor counted to %v, want 1277", g)
	}
	if g := restored.Context()["n"]; g != 1268.0 {
		t.Fatalf("the restored snapshot changed to n=%v", g)
	}
}

// TestSlotsNotUsedForWholeContext checks that a machine with a $ref of the
// whole context keeps its context in the map alone, and still assigns it.
func TestSlotsNotUsedForWholeContext(t *testing.T) {
	impl, err := ParseImplementations([]byte(`{"actions": {
		"inc": {"assign": {"n": {"$inc": 1}}},
		"keep": {"assign": {"copy": {"$ref": "context"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile([]byte(`{"context": {"n": 0}, "on": {"INC": {"actions": "inc"}, "KEEP": {"actions": "keep"}}}`),
		&Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	if m.slots != nil {
		t.Fatalf("slots %v for a machine that reads the whole context", m.slots.keys)
	}
	ctx := context.Background()
	a := startedActor(t, m, nil)
	for _, typ := range []string{"INC", "INC", "KEEP", "INC"} {
		if err := a.Send(ctx, Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	if g, w := contextJSON(t, a.Snapshot().Context()), `{"copy":{"n":2},"n":3}`; g != w {
		t.Fatalf("context %s, want %s", g, w)
	}
}

// TestSlotContextRollsBack checks that a call on the general path that
// fails, or runs out of steps, after assigns that set slots leaves the
// context as it was before the call, and that the actor goes on counting
// from there.
func TestSlotContextRollsBack(t *testing.T) {
	decl, err := ParseImplementations([]byte(`{"actions": {"inc": {"assign": {"n": {"$inc": 1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	impl := decl.Merge(Implementations{Actions: map[string]ActionFunc{
		"boom": func(context.Context, *ActionArgs) error { return fmt.Errorf("boom") },
	}})
	m, err := Compile([]byte(`{
		"context": {"n": 0},
		"initial": "idle",
		"on": {"INC": {"actions": "inc"}},
		"states": {
			"idle": {"on": {"LOOP": "spin", "FAIL": {"actions": ["inc", "inc", "boom"]}, "CHECK": "check"}},
			"check": {"always": {"target": "idle", "actions": ["inc", "inc"]}},
			"spin": {"always": {"target": "spin2", "actions": "inc"}},
			"spin2": {"always": {"target": "spin", "actions": "inc"}}
		}
	}`), &Options{Implementations: impl, MaxSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := startedActor(t, m, nil)
	n := func() any { return a.Snapshot().Context()["n"] }
	for range 300 {
		if err := a.Send(ctx, Event{Type: "INC"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Send(ctx, Event{Type: "CHECK"}); err != nil { // the general path, with the slots
		t.Fatal(err)
	}
	var budget *StepBudgetError
	if err := a.Send(ctx, Event{Type: "LOOP"}); !errors.As(err, &budget) {
		t.Fatalf("LOOP: %v, want a StepBudgetError", err)
	}
	if s := a.Snapshot(); s.Value() != "idle" || s.Status() != StatusActive || s.Context()["n"] != 302.0 {
		t.Fatalf("after running out of steps: %v %v n=%v, want idle active n=302", s.Value(), s.Status(), s.Context()["n"])
	}
	for range 3 {
		if err := a.Send(ctx, Event{Type: "INC"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Send(ctx, Event{Type: "LOOP"}); !errors.As(err, &budget) { // no snapshot in between
		t.Fatalf("LOOP: %v, want a StepBudgetError", err)
	}
	if g := n(); g != 305.0 {
		t.Fatalf("n=%v after a second LOOP, want 305", g)
	}
	// The snapshot above shares the context: the first INC copies it, the
	// next ones take the slots again.
	for range 3 {
		if err := a.Send(ctx, Event{Type: "INC"}); err != nil {
			t.Fatal(err)
		}
	}
	if !a.r.slotCtx.live {
		t.Fatal("the slots are not in use before FAIL")
	}
	if err := a.Send(ctx, Event{Type: "FAIL"}); err == nil {
		t.Fatal("FAIL: no error")
	}
	if s := a.Snapshot(); s.Status() != StatusError || s.Context()["n"] != 308.0 {
		t.Fatalf("after a failing action: %v n=%v, want error n=308", s.Status(), s.Context()["n"])
	}
}

// startedActor returns a started actor of m.
func startedActor(t *testing.T, m *Machine, opts *ActorOptions) *Actor {
	t.Helper()
	a := NewActor(m, opts)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSlotContextOfActorSystem checks the slots of a machine cell in an
// actor system: a sendTo event, an invoke's input (of a promise, which a
// cached step may start), a subscriber and a snapshot read the context
// its fast steps keep in slots.
func TestSlotContextOfActorSystem(t *testing.T) {
	ctx := context.Background()
	kid, err := Compile([]byte(`{"id": "kid", "context": {},
		"entry": {"type": "xstate.assign", "params": {"got": {"$ref": "event.input.n"}}},
		"on": {"N": {"actions": {"type": "xstate.assign", "params": {"got": {"$ref": "event.n"}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	impl, err := ParseImplementations([]byte(`{"actions": {"inc": {"assign": {"n": {"$inc": 3}}}},
		"actors": {"p": {"promise": {"resolve": {"$ref": "input.n"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	impl.Actors["kid"] = kid
	m, err := Compile([]byte(`{"id": "parent", "initial": "idle", "context": {"n": 250},
		"invoke": {"src": "kid", "id": "kid"},
		"on": {
			"INC": {"actions": "inc"},
			"TELL": {"actions": ["inc", {"type": "xstate.sendTo", "params": {"to": "kid", "event": {"type": "N", "n": {"$ref": "context.n"}}}}]}
		},
		"states": {
			"idle": {"on": {"GO": "busy"}},
			"busy": {"invoke": {"src": "p", "id": "late", "input": {"n": {"$ref": "context.n"}}}, "on": {"BACK": "idle"}}
		}}`), &Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	a := startedActor(t, m, nil)
	send := func(types ...string) {
		t.Helper()
		for _, typ := range types {
			if err := a.Send(ctx, Event{Type: typ}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := func(s *Snapshot, id string) any {
		t.Helper()
		c, ok := s.Child(id)
		if !ok || c.Snapshot == nil {
			t.Fatalf("no child %q in %v", id, s.Children())
		}
		return c.Snapshot.Context()["got"]
	}
	root := a.sys.root
	// live sends the events, INC last, and checks that the parent's
	// context is then in its slots: the INC that follows a snapshot
	// copies the map, the next two record and link the cached step.
	live := func(types ...string) {
		t.Helper()
		send(append(types, "INC", "INC", "INC", "INC")...)
		if !root.r.slotCtx.live {
			t.Fatalf("after %v: the parent's slots are not in use", types)
		}
	}
	// Each event twice or more: the first takes the general path, which
	// writes the slots back.
	for i, want := range []float64{265, 292, 319} {
		live()
		send("TELL")
		live()
		s := a.Snapshot()
		if n, g := s.Context()["n"], got(s, "kid"); n != want+12 || g != want {
			t.Fatalf("TELL %d: n=%v, the child got %v; want %v, %v", i, n, g, want+12, want)
		}
	}
	for i, want := range []float64{343, 355, 367} {
		live("BACK")
		send("GO")
		s := a.Snapshot()
		c, _ := s.Child("late")
		if n := s.Context()["n"]; n != want || c.Output != want {
			t.Fatalf("GO %d: n=%v, the child resolved to its input's %v; want %v both", i, n, c.Output, want)
		}
	}
	var seen []any
	stop := a.Subscribe(func(s *Snapshot) { seen = append(seen, s.Context()["n"]) })
	send("INC", "INC")
	stop()
	if want := []any{370.0, 373.0}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("the subscriber saw n %v, want %v", seen, want)
	}
	if root.r.cache.fast == 0 {
		t.Fatal("no fast step")
	}
}

// TestSlotBooleanGuardsMatchMaps compares guards that test a boolean
// context value against literals of every kind, evaluated on an Actor's
// slots and by Machine.Transition on maps: after each SET, one event per
// guard counts, in the guard's own key, whether it passes.
func TestSlotBooleanGuardsMatchMaps(t *testing.T) {
	ctx := context.Background()
	literals := []string{`true`, `false`, `1`, `0`, `null`, `"true"`, `[true]`}
	var on, impl, names []string
	for i, lit := range literals {
		for _, op := range []string{"eq", "neq"} {
			g := fmt.Sprintf("%s%d", op, i)
			names = append(names, g)
			impl = append(impl, fmt.Sprintf(`%q: {"field": "context.flag", "op": %q, "value": %s}`, g, op, lit))
			on = append(on, fmt.Sprintf(`%q: {"guard": %q, "actions": {"type": "xstate.assign", "params": {%q: {"$inc": 1}}}}`, g, g, g))
		}
	}
	src := fmt.Sprintf(`{"id": "b", "context": {"flag": false}, "on": {%s,
		"SET": {"actions": {"type": "xstate.assign", "params": {"flag": {"$ref": "event.v"}}}}}}`, strings.Join(on, ","))
	decl, err := ParseImplementations([]byte(`{"guards": {` + strings.Join(impl, ",") + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile([]byte(src), &Options{Implementations: decl})
	if err != nil {
		t.Fatal(err)
	}
	if m.slots == nil {
		t.Fatal("the machine has no slots")
	}
	a := startedActor(t, m, nil)
	now := time.Unix(0, 0)
	s, err := m.Start(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var stream []Event
	for _, v := range []any{true, false, 1.0, nil, "true", true, false} {
		stream = append(stream, Event{Type: "SET", Data: map[string]any{"v": v}})
		for _, g := range names {
			stream = append(stream, Event{Type: g})
		}
	}
	for _, ev := range stream {
		if err := a.Send(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if s, err = m.Transition(ctx, s, ev, now); err != nil {
			t.Fatal(err)
		}
	}
	if g, w := contextJSON(t, a.Snapshot().Context()), contextJSON(t, s.Context()); g != w {
		t.Fatalf("actor context %s, pure %s", g, w)
	}
	if a.r.cache.fast == 0 {
		t.Fatal("the actor took no step from the cache: the slots were not used")
	}
}
