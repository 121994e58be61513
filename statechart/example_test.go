package statechart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

func ExampleCompile() {
	m, err := statechart.Compile([]byte(`{
		"id": "light",
		"initial": "green",
		"states": {
			"green":  {"on": {"TIMER": "yellow"}},
			"yellow": {"on": {"TIMER": "red"}},
			"red":    {"on": {"TIMER": "green"}}
		}
	}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.ID(), m.StateIDs())
	// Output: light [light light.green light.yellow light.red]
}

func ExampleCompile_errors() {
	_, err := statechart.Compile([]byte(`{
		"initial": "cart",
		"states": {
			"cart":    {"on": {"PAY": [{"target": "paid", "guard": "hasItems"}, {"target": "#nope"}]}},
			"paid":    {"type": "final", "entyr": "thank"}
		}
	}`), nil)
	fmt.Println(err)
	// Output:
	// 2 errors and 1 warning:
	// 	states.cart.on.PAY[0].guard: guard "hasItems" is not implemented
	// 	states.cart.on.PAY[1].target: "#nope" is not a state id
	// 	states.paid.entyr: warning: unknown key "entyr" (did you mean "entry"?)
}

// What XState accepts, Compile accepts too; what is most likely a mistake
// comes back as a warning. Strict makes warnings errors.
func ExampleMachine_Warnings() {
	config := []byte(`{
		"initial": "cart",
		"predictableActionArguments": true,
		"states": {
			"cart": {"on": {"PAY": {"target": "paid", "cond": "hasItems"}}},
			"paid": {"type": "final", "entyr": "thank"}
		}
	}`)
	m, err := statechart.Compile(config, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range m.Warnings() {
		fmt.Println(w)
	}
	_, err = statechart.Compile(config, &statechart.Options{Strict: true})
	fmt.Println(err != nil)
	// Output:
	// predictableActionArguments: warning: "predictableActionArguments" is ignored: an XState v4 option; v5 always works that way
	// states.cart.on.PAY.cond: warning: "cond" is ignored: it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)
	// states.paid.entyr: warning: unknown key "entyr" (did you mean "entry"?)
	// true
}

func ExampleActor() {
	ctx := context.Background()
	m, _ := statechart.Compile([]byte(`{
		"initial": "idle",
		"context": {"count": 0},
		"states": {
			"idle":    {"on": {"START": "running"}},
			"running": {
				"on": {"TICK": {"actions": "count"}, "STOP": "idle"},
				"after": {"1000": "idle"}
			}
		}
	}`), &statechart.Options{Implementations: statechart.Implementations{
		Actions: map[string]statechart.ActionFunc{
			"count": func(_ context.Context, a *statechart.ActionArgs) error {
				a.Assign(map[string]any{"count": a.Context["count"].(float64) + 1})
				return nil
			},
		},
	}})
	clock := statechart.NewSimulatedClock()
	actor := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	_ = actor.Start(ctx)
	_ = actor.Send(ctx, statechart.Event{Type: "START"})
	_ = actor.Send(ctx, statechart.Event{Type: "TICK"})
	fmt.Println(actor.Snapshot().Value(), actor.Snapshot().Context()["count"])
	clock.Advance(time.Second)
	fmt.Println(actor.Snapshot().Value())
	// Output:
	// running 1
	// idle
}

func ExampleParseImplementations() {
	// A workflow with no Go code: guards and actions are declarative JSON.
	impl, err := statechart.ParseImplementations([]byte(`{
		"guards":  {"bigOrder": {"field": "event.qty", "op": "gte", "value": 10}},
		"actions": {"remember": {"assign": {"qty": {"$ref": "event.qty"}, "orders": {"$inc": 1}}}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := statechart.Compile([]byte(`{
		"initial": "open",
		"states": {
			"open": {"on": {"ORDER": [
				{"target": "review", "guard": "bigOrder", "actions": "remember"},
				{"actions": "remember"}
			]}},
			"review": {}
		}
	}`), &statechart.Options{Implementations: impl})
	ctx := context.Background()
	s, _ := m.Start(ctx, time.Now())
	s, _ = m.Transition(ctx, s, statechart.Event{Type: "ORDER", Data: map[string]any{"qty": 3.0}}, time.Now())
	fmt.Println(s.Value(), s.Context())
	s, _ = m.Transition(ctx, s, statechart.Event{Type: "ORDER", Data: map[string]any{"qty": 12.0}}, time.Now())
	fmt.Println(s.Value(), s.Context())
	// Output:
	// open map[orders:1 qty:3]
	// review map[orders:2 qty:12]
}

func ExampleMachine_Restore() {
	ctx := context.Background()
	src := []byte(`{
		"id": "doc",
		"initial": "draft",
		"states": {
			"draft":  {"on": {"SUBMIT": "review"}},
			"review": {"after": {"60000": "expired"}, "on": {"APPROVE": "published"}},
			"expired": {},
			"published": {"type": "final"}
		}
	}`)
	m, _ := statechart.Compile(src, nil)
	start := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s, _ := m.Start(ctx, start)
	s, _ = m.Transition(ctx, s, statechart.Event{Type: "SUBMIT"}, start)

	// Persist anywhere; restore on another process, pending timer included.
	data, _ := json.Marshal(s)
	restored, _ := m.Restore(data)
	for _, p := range restored.Pending() {
		fmt.Println(p.Event.Type, "due", p.Due.Format(time.TimeOnly))
	}
	later, _ := m.Advance(ctx, restored, start.Add(2*time.Minute))
	fmt.Println(later.Value())
	// Output:
	// xstate.after.60000.doc.review due 09:01:00
	// expired
}

// A machine that raises more events than it takes never settles; the call
// stops at the step budget and leaves the snapshot as it was.
func ExampleStepBudgetError() {
	ctx := context.Background()
	m, _ := statechart.Compile([]byte(`{
		"initial": "idle",
		"states": {
			"idle": {"on": {"PING": {"actions": [
				{"type": "xstate.raise", "params": {"event": {"type": "PING"}}},
				{"type": "xstate.raise", "params": {"event": {"type": "PING"}}}
			]}}}
		}
	}`), &statechart.Options{MaxSteps: 1000})
	s, _ := m.Start(ctx, time.Time{})
	next, err := m.Transition(ctx, s, statechart.NewEvent("PING"), time.Time{})
	fmt.Println(errors.Is(err, statechart.ErrStepBudget), next == s, next.Status())
	fmt.Println(err)
	// Output:
	// true true active
	// statechart: on event "PING": more than 1000 steps in one call (Options.MaxSteps): the machine loops, or needs a larger budget; nothing was changed
}

// TransitionInto steps a snapshot the caller owns in place, so that a long
// run of events allocates nothing, the counter's context included. The
// snapshot Start returned stays as it was; Clone keeps a step for later.
func ExampleMachine_TransitionInto() {
	ctx := context.Background()
	impl, _ := statechart.ParseImplementations([]byte(`{"actions": {"count": {"assign": {"n": {"$inc": 1}}}}}`))
	m, _ := statechart.Compile([]byte(`{
		"id": "counter",
		"context": {"n": 0},
		"initial": "even",
		"states": {
			"even": {"on": {"TICK": {"target": "odd", "actions": "count"}}},
			"odd": {"on": {"TICK": {"target": "even", "actions": "count"}}}
		}
	}`), &statechart.Options{Implementations: impl})
	start, _ := m.Start(ctx, time.Time{})

	var s statechart.Snapshot // storage for TransitionInto
	tick := statechart.NewEvent("TICK")
	_ = m.TransitionInto(ctx, &s, start, tick, time.Time{}) // s is start's next
	kept := s.Clone()
	for range 999 {
		if err := m.TransitionInto(ctx, &s, &s, tick, time.Time{}); err != nil {
			fmt.Println(err)
			return
		}
	}
	data, _ := json.Marshal(&s)
	fmt.Println(string(data))
	fmt.Println(start.Context()["n"], kept.Context()["n"], kept.Value())
	// Output:
	// {"status":"active","value":"even","context":{"n":1000},"historyValue":{},"children":{},"nodes":["counter","counter.even"]}
	// 0 1 odd
}
