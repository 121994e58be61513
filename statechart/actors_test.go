// This file tests actors written in Go: Promise and Callback logic run by
// an Actor (goroutines, cancellation, sendBack from other goroutines),
// child machines given as compiled machines, emitted events, machine
// input, and restoring a snapshot with children (Resume).

package statechart_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

// waitFor waits until the actor's snapshot satisfies ok, and returns it.
func waitFor(t *testing.T, a *statechart.Actor, ok func(*statechart.Snapshot) bool) *statechart.Snapshot {
	t.Helper()
	changed := make(chan struct{}, 1)
	unsubscribe := a.Subscribe(func(*statechart.Snapshot) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer unsubscribe()
	deadline := time.After(10 * time.Second)
	for {
		if s := a.Snapshot(); ok(s) {
			return s
		}
		select {
		case <-changed:
		case <-deadline:
			s := a.Snapshot()
			t.Fatalf("timed out waiting; the actor is in %v (%s), context %v", s.Value(), s.Status(), s.Context())
			return nil
		}
	}
}

func compileWith(t *testing.T, src string, impl statechart.Implementations) *statechart.Machine {
	t.Helper()
	m, err := statechart.Compile([]byte(src), &statechart.Options{Implementations: impl})
	require.NoError(t, err)
	return m
}

const fetchMachine = `{"id": "m", "context": {"id": 7}, "initial": "loading", "states": {
	"loading": {
		"invoke": {"src": "fetch", "id": "f", "input": {"id": {"$ref": "context.id"}},
			"onDone": {"target": "ready", "actions": {"type": "xstate.assign", "params": {"user": {"$ref": "event.output"}}}},
			"onError": {"target": "failed", "actions": {"type": "xstate.assign", "params": {"why": {"$ref": "event.error"}}}}},
		"on": {"CANCEL": "idle"}},
	"ready": {}, "failed": {}, "idle": {}}}`

func TestPromiseRunsOffTheInterpreterAndItsOutputMovesTheMachine(t *testing.T) {
	ctx := context.Background()
	got := make(chan any, 1)
	m := compileWith(t, fetchMachine, statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"fetch": statechart.Promise(func(ctx context.Context, input any) (any, error) {
			got <- input
			return map[string]any{"name": "ada"}, nil
		}),
	}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	assert.Equal(t, map[string]any{"id": 7.0}, <-got)
	s := waitFor(t, a, func(s *statechart.Snapshot) bool { return s.Matches("ready") })
	assert.Equal(t, map[string]any{"name": "ada"}, s.Context()["user"])
	// The finished child is gone with its state.
	assert.Empty(t, s.Children())
}

func TestPromiseErrorGoesToOnError(t *testing.T) {
	boom := errors.New("no such user")
	m := compileWith(t, fetchMachine, statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"fetch": statechart.Promise(func(context.Context, any) (any, error) { return nil, boom }),
	}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(context.Background()))
	s := waitFor(t, a, func(s *statechart.Snapshot) bool { return s.Matches("failed") })
	why, ok := s.Context()["why"].(error)
	require.True(t, ok, "event.error is the Go error: %T", s.Context()["why"])
	assert.ErrorIs(t, why, boom)
	// Through JSON it is XState's Error object.
	b, err := json.Marshal(s.Context())
	require.NoError(t, err)
	assert.JSONEq(t, `{"id": 7, "why": {}}`, string(b))
}

func TestPromiseIsCancelledWhenItsStateIsLeft(t *testing.T) {
	ctx := context.Background()
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	m := compileWith(t, fetchMachine, statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"fetch": statechart.Promise(func(ctx context.Context, _ any) (any, error) {
			close(started)
			<-ctx.Done()
			cancelled <- ctx.Err()
			return "late", nil
		}),
	}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	<-started
	require.Len(t, a.Snapshot().Children(), 1)
	require.NoError(t, a.Send(ctx, statechart.NewEvent("CANCEL")))
	assert.ErrorIs(t, <-cancelled, context.Canceled)
	// The late result reaches nobody.
	time.Sleep(10 * time.Millisecond)
	s := a.Snapshot()
	assert.True(t, s.Matches("idle"))
	assert.NotContains(t, s.Context(), "user")
}

func TestCallbackSendsBackAndReceives(t *testing.T) {
	ctx := context.Background()
	var cleanups atomic.Int32
	later := make(chan func(statechart.Event), 1)
	src := `{"id": "m", "context": {"log": []}, "initial": "on", "states": {
		"on": {
			"invoke": {"src": "ticker", "id": "t", "input": 3},
			"on": {
				"TICK": {"actions": {"type": "xstate.assign", "params": {"log": {"$push": {"$ref": "event.n"}}}}},
				"PING": {"actions": {"type": "xstate.sendTo", "params": {"to": "t", "event": {"type": "PING", "n": 9}}}},
				"OFF": "off"}},
		"off": {}}}`
	m := compileWith(t, src, statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"ticker": statechart.Callback(func(ctx context.Context, args statechart.CallbackArgs) func() {
			// Sent while the callback runs: delivered during the start.
			args.SendBack(statechart.Event{Type: "TICK", Data: map[string]any{"n": args.Input}})
			args.Receive(func(ev statechart.Event) {
				args.SendBack(statechart.Event{Type: "TICK", Data: map[string]any{"n": ev.Data["n"]}})
			})
			later <- args.SendBack
			return func() { cleanups.Add(1) }
		}),
	}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	assert.Equal(t, []any{3.0}, a.Snapshot().Context()["log"])
	require.NoError(t, a.Send(ctx, statechart.NewEvent("PING")))
	assert.Equal(t, []any{3.0, 9.0}, a.Snapshot().Context()["log"])
	sendBack := <-later
	go sendBack(statechart.Event{Type: "TICK", Data: map[string]any{"n": "async"}})
	waitFor(t, a, func(s *statechart.Snapshot) bool { return len(s.Context()["log"].([]any)) == 3 })
	require.NoError(t, a.Send(ctx, statechart.NewEvent("OFF")))
	assert.Equal(t, int32(1), cleanups.Load())
	// After the stop, sendBack is dropped.
	sendBack(statechart.Event{Type: "TICK", Data: map[string]any{"n": "dropped"}})
	time.Sleep(10 * time.Millisecond)
	assert.Len(t, a.Snapshot().Context()["log"], 3)
}

func TestChildMachineAsLogic(t *testing.T) {
	ctx := context.Background()
	child, err := statechart.Compile([]byte(`{"id": "counter", "context": {"n": 0},
		"entry": {"type": "xstate.assign", "params": {"n": {"$ref": "event.input.start"}}},
		"initial": "counting", "states": {
			"counting": {"on": {
				"INC": {"actions": [{"type": "xstate.assign", "params": {"n": {"$inc": 1}}},
					{"type": "xstate.sendParent", "params": {"event": {"type": "COUNTED", "n": {"$ref": "context.n"}}}}]},
				"STOP": "stopped"}},
			"stopped": {"type": "final"}},
		"output": {"total": {"$ref": "context.n"}}}`), nil)
	require.NoError(t, err)
	src := `{"id": "m", "initial": "a", "states": {
		"a": {"invoke": {"src": "counter", "id": "c", "input": {"start": 10},
				"onDone": {"target": "b", "actions": {"type": "xstate.assign", "params": {"total": {"$ref": "event.output.total"}}}}},
			"on": {
				"INC": {"actions": {"type": "xstate.forwardTo", "params": {"to": "c"}}},
				"STOP": {"actions": {"type": "xstate.forwardTo", "params": {"to": "c"}}},
				"COUNTED": {"actions": {"type": "xstate.assign", "params": {"last": {"$ref": "event.n"}}}}}},
		"b": {}}}`
	m := compileWith(t, src, statechart.Implementations{Actors: map[string]statechart.ActorLogic{"counter": child}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("INC")))
	s := a.Snapshot()
	assert.Equal(t, 11.0, s.Context()["last"])
	c, ok := s.Child("c")
	require.True(t, ok)
	assert.Equal(t, statechart.StatusActive, c.Status)
	assert.Equal(t, map[string]any{"n": 11.0}, c.Snapshot.Context())
	require.NoError(t, a.Send(ctx, statechart.NewEvent("STOP")))
	s = a.Snapshot()
	assert.True(t, s.Matches("b"))
	assert.Equal(t, 11.0, s.Context()["total"])
}

func TestOnDeliversEmittedEvents(t *testing.T) {
	ctx := context.Background()
	m := compileWith(t, `{"id": "m", "context": {"n": 1}, "initial": "a",
		"entry": {"type": "xstate.emit", "params": {"event": {"type": "started"}}},
		"states": {"a": {"on": {"GO": {"actions": [
			{"type": "xstate.emit", "params": {"event": {"type": "progress", "n": {"$ref": "context.n"}}}},
			{"type": "xstate.emit", "params": {"event": {"type": "other"}}}]}}}}}`, statechart.Implementations{})
	a := statechart.NewActor(m, nil)
	var mu sync.Mutex
	var all, progress []string
	a.On("*", func(ev statechart.Event) { mu.Lock(); all = append(all, ev.Type); mu.Unlock() })
	off := a.On("progress", func(ev statechart.Event) {
		mu.Lock()
		progress = append(progress, ev.Type)
		mu.Unlock()
		assert.Equal(t, 1.0, ev.Data["n"])
	})
	require.NoError(t, a.Start(ctx))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("GO")))
	off()
	require.NoError(t, a.Send(ctx, statechart.NewEvent("GO")))
	assert.Equal(t, []string{"started", "progress", "other", "progress", "other"}, all)
	assert.Equal(t, []string{"progress"}, progress)
}

func TestMachineInput(t *testing.T) {
	ctx := context.Background()
	m := compileWith(t, `{"id": "m", "entry": {"type": "xstate.assign", "params": {"user": {"$ref": "event.input.user"}, "raw": {"$ref": "event.input"}}},
		"initial": "a", "states": {"a": {}}}`, statechart.Implementations{})
	for _, tc := range []struct {
		name  string
		input any
		want  map[string]any
	}{
		{"none", nil, map[string]any{}},
		{"object", map[string]any{"user": "ada"}, map[string]any{"user": "ada", "raw": map[string]any{"user": "ada"}}},
		{"JSON null", json.RawMessage("null"), map[string]any{"raw": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := statechart.NewActor(m, &statechart.ActorOptions{Input: tc.input})
			require.NoError(t, a.Start(ctx))
			assert.Equal(t, tc.want, a.Snapshot().Context())
			s, _, err := m.StartEffects(ctx, &statechart.StartOptions{Input: tc.input}, time.Time{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Context())
		})
	}
}

func TestRestoreRestartsChildrenOrResumesThem(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	called := make(chan any, 4)
	block := make(chan struct{})
	impl := statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"fetch": statechart.Promise(func(ctx context.Context, input any) (any, error) {
			calls.Add(1)
			called <- input
			select {
			case <-block:
				return "fresh", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}),
	}}
	m := compileWith(t, fetchMachine, impl)
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	<-called
	data, err := json.Marshal(a.Snapshot())
	require.NoError(t, err)
	a.Stop()
	snap, err := m.Restore(data)
	require.NoError(t, err)
	c, ok := snap.Child("f")
	require.True(t, ok)
	assert.Equal(t, map[string]any{"id": 7.0}, c.Input)
	assert.NotEmpty(t, c.Session)

	t.Run("XState restarts it with its input", func(t *testing.T) {
		b := statechart.NewActor(m, &statechart.ActorOptions{Snapshot: snap})
		require.NoError(t, b.Start(ctx))
		assert.Equal(t, map[string]any{"id": 7.0}, <-called)
		b.Stop()
	})
	t.Run("Resume re-attaches to the work in flight", func(t *testing.T) {
		var asked []statechart.Child
		b := statechart.NewActor(m, &statechart.ActorOptions{Snapshot: snap, Resume: func(c statechart.Child) statechart.ActorLogic {
			asked = append(asked, c)
			return statechart.Promise(func(context.Context, any) (any, error) { return "from the job already running", nil })
		}})
		require.NoError(t, b.Start(ctx))
		s := waitFor(t, b, func(s *statechart.Snapshot) bool { return s.Matches("ready") })
		assert.Equal(t, "from the job already running", s.Context()["user"])
		require.Len(t, asked, 1)
		assert.Equal(t, c.Session, asked[0].Session)
		assert.Equal(t, int32(2), calls.Load(), "the src's own logic did not run again")
	})
	close(block)
}

func TestActorStopEndsEveryChild(t *testing.T) {
	ctx := context.Background()
	cancelled := make(chan struct{}, 2)
	impl := statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"wait": statechart.Promise(func(ctx context.Context, _ any) (any, error) {
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		}),
	}}
	m := compileWith(t, `{"id": "m", "initial": "a", "states": {"a": {
		"entry": {"type": "xstate.spawnChild", "params": {"src": "wait", "id": "spawned"}},
		"invoke": {"src": "wait", "id": "invoked"}}}}`, impl)
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	require.Len(t, a.Snapshot().Children(), 2)
	a.Stop()
	<-cancelled
	<-cancelled
	assert.Equal(t, statechart.StatusStopped, a.Snapshot().Status())
	assert.NoError(t, a.Send(ctx, statechart.NewEvent("ANY")), "events to a stopped actor are ignored")
}

func TestActorDeliversWorkRunElsewhere(t *testing.T) {
	ctx := context.Background()
	m := compileWith(t, fetchMachine, statechart.Implementations{Actors: map[string]statechart.ActorLogic{"fetch": statechart.Promise(nil)}})
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	c, ok := a.Snapshot().Child("f")
	require.True(t, ok)
	assert.Equal(t, statechart.StatusActive, c.Status)
	require.NoError(t, a.Deliver(ctx, statechart.Report{Session: c.Session, Kind: statechart.ReportDone, Output: "ada"}))
	s := a.Snapshot()
	assert.True(t, s.Matches("ready"))
	assert.Equal(t, "ada", s.Context()["user"])
	assert.ErrorIs(t, a.Deliver(ctx, statechart.Report{Session: c.Session, Kind: statechart.ReportDone}), statechart.ErrNoChild)
}
