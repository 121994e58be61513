package statechart_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// An invoked promise: the machine leaves "loading" when the Go function
// returns, with its result in the context.
func ExamplePromise() {
	m, _ := statechart.Compile([]byte(`{"id": "m", "context": {"id": "u1"}, "initial": "loading", "states": {
		"loading": {"invoke": {"src": "fetchUser", "input": {"id": {"$ref": "context.id"}},
			"onDone": {"target": "ready", "actions": {"type": "xstate.assign", "params": {"user": {"$ref": "event.output"}}}}}},
		"ready": {}}}`), &statechart.Options{Implementations: statechart.Implementations{
		Actors: map[string]statechart.ActorLogic{
			"fetchUser": statechart.Promise(func(ctx context.Context, input any) (any, error) {
				return "user " + input.(map[string]any)["id"].(string), nil
			}),
		},
	}})
	a := statechart.NewActor(m, nil)
	ready := make(chan *statechart.Snapshot, 1)
	a.Subscribe(func(s *statechart.Snapshot) {
		if s.Matches("ready") {
			ready <- s
		}
	})
	_ = a.Start(context.Background())
	s := <-ready
	fmt.Println(s.Value(), s.Context()["user"])
	// Output: ready user u1
}

// The pure API of a stateless server: the job the machine starts is run
// outside, its result delivered later to the snapshot the server stored.
func ExampleMachine_TransitionEffects() {
	ctx, now := context.Background(), time.Unix(0, 0)
	m, _ := statechart.Compile([]byte(`{"id": "deploy", "initial": "idle", "states": {
		"idle": {"on": {"DEPLOY": "running"}},
		"running": {"invoke": {"src": "deployJob", "id": "job", "input": {"rev": {"$ref": "event.rev"}},
			"onDone": "live", "onError": "failed"}},
		"live": {"type": "final"}, "failed": {}}}`), &statechart.Options{Implementations: statechart.Implementations{
		Actors: map[string]statechart.ActorLogic{"deployJob": statechart.Promise(nil)}, // run elsewhere
	}})

	s, _, _ := m.StartEffects(ctx, nil, now)
	s, effects, _ := m.TransitionEffects(ctx, s, statechart.Event{Type: "DEPLOY", Data: map[string]any{"rev": "v2"}}, now)
	var session string
	for _, e := range effects {
		if start, ok := e.(statechart.StartChild); ok {
			fmt.Println("start", start.Child.Src, start.Input)
			session = start.Child.Session
		}
	}
	stored, _ := json.Marshal(s) // into the store

	// Later, maybe in another process: the job is over.
	s, _ = m.Restore(stored)
	s, _, _ = m.Deliver(ctx, s, statechart.Report{Session: session, Kind: statechart.ReportDone, Output: "ok"}, now)
	fmt.Println(s.Value(), s.Status())
	// Output:
	// start deployJob map[rev:v2]
	// live done
}

// Events a machine emits reach the functions registered with On.
func ExampleActor_On() {
	m, _ := statechart.Compile([]byte(`{"id": "m", "initial": "a", "states": {"a": {"on": {"GO": {"actions":
		{"type": "xstate.emit", "params": {"event": {"type": "progress", "step": {"$ref": "event.step"}}}}}}}}}`), nil)
	a := statechart.NewActor(m, nil)
	a.On("progress", func(ev statechart.Event) { fmt.Println("progress", ev.Data["step"]) })
	_ = a.Start(context.Background())
	_ = a.Send(context.Background(), statechart.Event{Type: "GO", Data: map[string]any{"step": 1}})
	// Output: progress 1
}
