// This file tests what an assign keeps of a promise's output: a value
// of the context's own, whatever a user changes afterwards.

package statechart_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// outputMachine invokes fetch on FETCH and keeps its output in last; with
// touch, a Go action runs after the assign.
const outputMachine = `{"id":"parent","context":{"fetched":0},"initial":"idle","states":{
	"idle":{"on":{"FETCH":"loading"}},
	"loading":{"invoke":{"src":"fetch","id":"fetch","onDone":{"target":"idle",
		"actions":[{"type":"xstate.assign","params":{"fetched":{"$inc":1},"last":{"$ref":"event.output"}}}%s]}}}}}`

func lastJSON(t *testing.T, s *statechart.Snapshot) string {
	t.Helper()
	b, err := json.Marshal(s.Context()["last"])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPromiseOutputInContext checks the value an assign keeps from a
// promise's done event (event.output): each settlement of a declarative
// promise gives the context a value of its own, which what a user changes
// afterwards does not reach: the value in an earlier snapshot, the value a
// Go promise returned, the event a Go action or an inspection sees.
func TestPromiseOutputInContext(t *testing.T) {
	ctx := context.Background()
	const want = `{"items":[1,2],"ok":true}`
	decl, err := statechart.ParseImplementations([]byte(`{"actors":{"fetch":{"promise":{"resolve":{"ok":true,"items":[1,2]}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(t *testing.T, a *statechart.Actor) *statechart.Snapshot {
		t.Helper()
		if err := a.Send(ctx, statechart.NewEvent("FETCH")); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for a.Snapshot().Value() != "idle" {
			if time.Now().After(deadline) {
				t.Fatalf("the promise did not settle: %v", a.Snapshot().Value())
			}
			time.Sleep(time.Millisecond)
		}
		return a.Snapshot()
	}
	start := func(t *testing.T, impl statechart.Implementations, touch string, opts *statechart.ActorOptions) *statechart.Actor {
		t.Helper()
		m, err := statechart.Compile([]byte(fmt.Sprintf(outputMachine, touch)), &statechart.Options{Implementations: impl})
		if err != nil {
			t.Fatal(err)
		}
		a := statechart.NewActor(m, opts)
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Stop() })
		return a
	}
	spoil := func(v any) {
		m := v.(map[string]any)
		m["ok"] = false
		m["items"].([]any)[0] = "spoiled"
	}

	t.Run("declarative", func(t *testing.T) {
		a := start(t, decl, "", nil)
		s1 := fetch(t, a)
		if got := lastJSON(t, s1); got != want {
			t.Fatalf("last = %s, want %s", got, want)
		}
		spoil(s1.Context()["last"]) // a snapshot is not to be changed; its value is its own even so
		s2 := fetch(t, a)
		if got := lastJSON(t, s2); got != want {
			t.Errorf("after the first snapshot's value was changed, the next settlement gives last = %s, want %s", got, want)
		}
		spoil(s2.Context()["last"])
		if got := lastJSON(t, fetch(t, a)); got != want {
			t.Errorf("third settlement: last = %s, want %s", got, want)
		}
	})

	t.Run("go promise", func(t *testing.T) {
		var returned map[string]any
		impl := statechart.Implementations{Actors: map[string]statechart.ActorLogic{"fetch": statechart.Promise(func(context.Context, any) (any, error) {
			returned = map[string]any{"ok": true, "items": []any{1.0, 2.0}}
			return returned, nil
		})}}
		a := start(t, impl, "", nil)
		s := fetch(t, a)
		spoil(returned)
		if got := lastJSON(t, s); got != want {
			t.Errorf("after the Go promise's own value was changed, last = %s, want %s", got, want)
		}
	})

	t.Run("go action", func(t *testing.T) {
		decl.Actions = map[string]statechart.ActionFunc{"touch": func(_ context.Context, args *statechart.ActionArgs) error {
			spoil(args.Event.Data["output"])
			return nil
		}}
		a := start(t, decl, `,{"type":"touch"}`, nil)
		if got := lastJSON(t, fetch(t, a)); got != want {
			t.Errorf("after a Go action changed the event's output, last = %s, want %s", got, want)
		}
	})

	t.Run("inspection", func(t *testing.T) {
		decl.Actions = nil
		var seen []any
		a := start(t, decl, "", &statechart.ActorOptions{Inspect: func(in statechart.Inspection) {
			if out, ok := in.Event.Data["output"]; ok {
				seen = append(seen, out)
			}
		}})
		s := fetch(t, a)
		if len(seen) == 0 {
			t.Fatal("no inspected event had an output")
		}
		for _, out := range seen {
			spoil(out)
		}
		if got := lastJSON(t, s); got != want {
			t.Errorf("after an inspection changed the event's output, last = %s, want %s", got, want)
		}
	})
}

// TestFlatPromiseOutputIsACopy is TestPromiseOutputInContext's first case
// for a result with no object or array in it, which is copied another
// way: each settlement still gives the context a value of its own.
func TestFlatPromiseOutputIsACopy(t *testing.T) {
	ctx := context.Background()
	const want = `{"n":1,"ok":true}`
	decl, err := statechart.ParseImplementations([]byte(`{"actors":{"fetch":{"promise":{"resolve":{"ok":true,"n":1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := statechart.Compile([]byte(fmt.Sprintf(outputMachine, "")), &statechart.Options{Implementations: decl})
	if err != nil {
		t.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	for i := range 3 {
		if err := a.Send(ctx, statechart.NewEvent("FETCH")); err != nil {
			t.Fatal(err)
		}
		s := a.Snapshot()
		if got := lastJSON(t, s); got != want || s.Value() != "idle" {
			t.Fatalf("settlement %d: %v, last = %s, want idle and %s", i+1, s.Value(), got, want)
		}
		s.Context()["last"].(map[string]any)["ok"] = false // a snapshot is not to be changed; its value is its own even so
	}
}
