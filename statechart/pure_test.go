// This file tests the pure API with effects, as a stateless server uses
// it: every call starts from a snapshot read from a store (JSON, possibly
// in another process), external children run as jobs outside the call, and
// their results come back with Deliver.

package statechart_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

const jobMachine = `{"id": "w", "context": {"n": 0}, "initial": "idle", "states": {
	"idle": {"on": {"BUILD": "building"}},
	"building": {
		"entry": {"type": "xstate.emit", "params": {"event": {"type": "started", "rev": {"$ref": "event.rev"}}}},
		"invoke": {"src": "build", "id": "job", "input": {"rev": {"$ref": "event.rev"}},
			"onDone": {"target": "built", "actions": {"type": "xstate.assign", "params": {"artifact": {"$ref": "event.output"}}}},
			"onError": {"target": "broken", "actions": {"type": "xstate.assign", "params": {"why": {"$ref": "event.error"}}}}},
		"after": {"60000": "timedOut"},
		"on": {"CANCEL": "idle"}},
	"built": {"type": "final"}, "broken": {}, "timedOut": {}}}`

// store is a stateless server's store: snapshots as JSON.
type store map[string][]byte

func (st store) put(t *testing.T, key string, s *statechart.Snapshot) {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	st[key] = b
}

// jobMachineFor compiles jobMachine anew, as another process would.
func jobMachineFor(t *testing.T) *statechart.Machine {
	return compileWith(t, jobMachine, statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"build": statechart.Promise(func(context.Context, any) (any, error) {
			t.Error("the pure API never runs a promise itself")
			return nil, nil
		}),
	}})
}

// get restores the snapshot with a machine compiled anew.
func (st store) get(t *testing.T, key string) (*statechart.Machine, *statechart.Snapshot) {
	t.Helper()
	m := jobMachineFor(t)
	s, err := m.Restore(st[key])
	require.NoError(t, err)
	return m, s
}

func effectsOf[T statechart.Effect](fx []statechart.Effect) []T {
	var out []T
	for _, e := range fx {
		if x, ok := e.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

func TestPureAPIRunsAJobAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMilli(1000).UTC()
	st := store{}

	m := jobMachineFor(t)
	s, fx, err := m.StartEffects(ctx, nil, now)
	require.NoError(t, err)
	assert.Empty(t, fx)
	st.put(t, "wf", s)

	// Process 1: the event that starts the job.
	m, s = st.get(t, "wf")
	s, fx, err = m.TransitionEffects(ctx, s, statechart.Event{Type: "BUILD", Data: map[string]any{"rev": "abc"}}, now)
	require.NoError(t, err)
	starts := effectsOf[statechart.StartChild](fx)
	require.Len(t, starts, 1)
	job := starts[0]
	assert.Equal(t, []string{"job"}, job.Child.Path)
	assert.Equal(t, "build", job.Child.Src)
	assert.Equal(t, map[string]any{"rev": "abc"}, job.Input)
	assert.NotEmpty(t, job.Child.Session)
	assert.Equal(t, []statechart.Emitted{{Event: statechart.Event{Type: "started", Data: map[string]any{"rev": "abc"}}}}, effectsOf[statechart.Emitted](fx))
	sched := effectsOf[statechart.Scheduled](fx)
	require.Len(t, sched, 1)
	assert.Equal(t, now.Add(time.Minute), sched[0].Due)
	c, ok := s.Child("job")
	require.True(t, ok)
	assert.Equal(t, statechart.StatusActive, c.Status)
	assert.IsType(t, statechart.Promise(nil), c.Logic, "what the caller runs for the child")
	st.put(t, "wf", s)

	// Process 2, later: the job's result.
	m, s = st.get(t, "wf")
	c, ok = s.Child("job")
	require.True(t, ok)
	assert.IsType(t, statechart.Promise(nil), c.Logic, "a restored child names its logic too")
	s, fx, err = m.Deliver(ctx, s, statechart.Report{Session: job.Child.Session, Kind: statechart.ReportDone, Output: "app.tar"}, now.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, s.Matches("built"))
	assert.Equal(t, statechart.StatusDone, s.Status())
	assert.Equal(t, "app.tar", s.Context()["artifact"])
	assert.Equal(t, []statechart.Cancelled{{ID: "xstate.after.60000.w.building"}}, effectsOf[statechart.Cancelled](fx))
	st.put(t, "wf", s)

	// A second report of the same job changes nothing.
	m, s = st.get(t, "wf")
	again, fx, err := m.Deliver(ctx, s, statechart.Report{Session: job.Child.Session, Kind: statechart.ReportDone, Output: "again"}, now)
	require.ErrorIs(t, err, statechart.ErrNoChild)
	assert.Same(t, s, again)
	assert.Empty(t, fx)
}

func TestPureAPIStopsAJobWhenItsStateIsLeft(t *testing.T) {
	ctx := context.Background()
	st := store{}
	m := jobMachineFor(t)
	s, _, err := m.StartEffects(ctx, nil, time.Time{})
	require.NoError(t, err)
	s, fx, err := m.TransitionEffects(ctx, s, statechart.NewEvent("BUILD"), time.Time{})
	require.NoError(t, err)
	job := effectsOf[statechart.StartChild](fx)[0]
	assert.False(t, job.HasInput == false, "input {rev: missing} is still an input")
	st.put(t, "wf", s)

	m, s = st.get(t, "wf")
	s, fx, err = m.TransitionEffects(ctx, s, statechart.NewEvent("CANCEL"), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, []statechart.StopChild{{Child: job.Child}}, effectsOf[statechart.StopChild](fx))
	assert.Empty(t, s.Children())

	// The result of the cancelled job finds no child.
	_, _, err = m.Deliver(ctx, s, statechart.Report{Session: job.Child.Session, Kind: statechart.ReportDone}, time.Time{})
	assert.ErrorIs(t, err, statechart.ErrNoChild)

	// Building again starts a new job, with a new session.
	_, fx, err = m.TransitionEffects(ctx, s, statechart.NewEvent("BUILD"), time.Time{})
	require.NoError(t, err)
	assert.NotEqual(t, job.Child.Session, effectsOf[statechart.StartChild](fx)[0].Child.Session)
}

func TestPureAPIErrorsAndTimeouts(t *testing.T) {
	ctx := context.Background()
	m := jobMachineFor(t)
	s0, _, err := m.StartEffects(ctx, nil, time.UnixMilli(0))
	require.NoError(t, err)
	s0, fx, err := m.TransitionEffects(ctx, s0, statechart.NewEvent("BUILD"), time.UnixMilli(0))
	require.NoError(t, err)
	job := effectsOf[statechart.StartChild](fx)[0]

	failed, _, err := m.Deliver(ctx, s0, statechart.Report{Session: job.Child.Session, Kind: statechart.ReportError, Error: map[string]any{"code": 3}}, time.UnixMilli(5))
	require.NoError(t, err)
	assert.True(t, failed.Matches("broken"))
	assert.Equal(t, map[string]any{"code": 3}, failed.Context()["why"])

	// Nothing is due before the timeout; at the timeout the job stops.
	same, fx, err := m.AdvanceEffects(ctx, s0, time.UnixMilli(59_999))
	require.NoError(t, err)
	assert.Same(t, s0, same)
	assert.Empty(t, fx)
	due, ok := s0.NextDue()
	require.True(t, ok)
	timedOut, fx, err := m.AdvanceEffects(ctx, s0, due)
	require.NoError(t, err)
	assert.True(t, timedOut.Matches("timedOut"))
	assert.Equal(t, []statechart.StopChild{{Child: job.Child}}, effectsOf[statechart.StopChild](fx))
}

func TestPureAPIRunsChildMachinesAndTalksToExternalCallbacks(t *testing.T) {
	ctx := context.Background()
	child, err := statechart.Compile([]byte(`{"id": "echo", "initial": "on", "states": {"on": {"on": {
		"PING": {"actions": {"type": "xstate.sendParent", "params": {"event": {"type": "PONG", "n": {"$ref": "event.n"}}}}}}}}}`), nil)
	require.NoError(t, err)
	impl := statechart.Implementations{Actors: map[string]statechart.ActorLogic{
		"echo": child,
		"feed": statechart.Callback(func(context.Context, statechart.CallbackArgs) func() {
			t.Error("the pure API never runs a callback itself")
			return nil
		}),
	}}
	m := compileWith(t, `{"id": "m", "context": {"got": []}, "initial": "a", "states": {"a": {
		"invoke": [{"src": "echo", "id": "e"}, {"src": "feed", "id": "f"}],
		"on": {
			"ASK": {"actions": [
				{"type": "xstate.sendTo", "params": {"to": "e", "event": {"type": "PING", "n": 1}}},
				{"type": "xstate.sendTo", "params": {"to": "f", "event": {"type": "PING", "n": 2}}}]},
			"PONG": {"actions": {"type": "xstate.assign", "params": {"got": {"$push": {"$ref": "event.n"}}}}}}}}}`, impl)
	s, fx, err := m.StartEffects(ctx, nil, time.Time{})
	require.NoError(t, err)
	starts := effectsOf[statechart.StartChild](fx)
	require.Len(t, starts, 1, "only the callback is external")
	feed := starts[0].Child

	s, fx, err = m.TransitionEffects(ctx, s, statechart.NewEvent("ASK"), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, []any{1.0}, s.Context()["got"], "the child machine answered within the call")
	assert.Equal(t, []statechart.SendToChild{{Child: feed, Event: statechart.Event{Type: "PING", Data: map[string]any{"n": 2.0}}}}, effectsOf[statechart.SendToChild](fx))

	// The callback answers later.
	s, _, err = m.Deliver(ctx, s, statechart.Report{Session: feed.Session, Kind: statechart.ReportEvent, Event: statechart.Event{Type: "PONG", Data: map[string]any{"n": 3}}}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, []any{1.0, 3}, s.Context()["got"])
}

func TestPureAPIRunsOutOfStepsWithoutChangingAnything(t *testing.T) {
	ctx := context.Background()
	child, err := statechart.Compile([]byte(`{"id": "c", "initial": "on", "states": {"on": {"on": {
		"PING": {"actions": {"type": "xstate.sendParent", "params": {"event": {"type": "PONG"}}}}}}}}`), nil)
	require.NoError(t, err)
	m, err := statechart.Compile([]byte(`{"id": "m", "initial": "a", "states": {"a": {
		"invoke": {"src": "c", "id": "c"},
		"on": {"PONG": {"actions": {"type": "xstate.sendTo", "params": {"to": "c", "event": {"type": "PING"}}}},
			"GO": {"actions": {"type": "xstate.sendTo", "params": {"to": "c", "event": {"type": "PING"}}}}}}}}`),
		&statechart.Options{MaxSteps: 1000, Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"c": child}}})
	require.NoError(t, err)
	s, _, err := m.StartEffects(ctx, nil, time.Time{})
	require.NoError(t, err)
	next, fx, err := m.TransitionEffects(ctx, s, statechart.NewEvent("GO"), time.Time{})
	require.ErrorIs(t, err, statechart.ErrStepBudget)
	assert.Same(t, s, next)
	assert.Empty(t, fx)

	// An Actor ends in status error: there is no caller to give the
	// snapshot back to.
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	err = a.Send(ctx, statechart.NewEvent("GO"))
	var budget *statechart.StepBudgetError
	require.True(t, errors.As(err, &budget), "%v", err)
	assert.Equal(t, statechart.StatusError, a.Snapshot().Status())
}

func TestEngineGivesTheEffects(t *testing.T) {
	ctx := context.Background()
	m := jobMachineFor(t)
	e, ok := m.Engine().(statechart.EffectEngine)
	require.True(t, ok)
	assert.True(t, e.UsesActors())
	s, _, err := e.StartEffects(ctx, nil, time.Time{})
	require.NoError(t, err)
	s, fx, err := e.SendEffects(ctx, s, statechart.NewEvent("BUILD"), time.Time{})
	require.NoError(t, err)
	job := effectsOf[statechart.StartChild](fx)[0]
	s, _, err = e.Deliver(ctx, s, statechart.Report{Session: job.Child.Session, Kind: statechart.ReportDone, Output: 1}, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, statechart.StatusDone, s.Status())
	// The plain Engine drops the effects, and still runs the machine.
	s2, err := e.Send(ctx, mustStart(t, e), statechart.NewEvent("BUILD"), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, "building", s2.Value())
}

func mustStart(t *testing.T, e statechart.Engine) statechart.State {
	s, err := e.Start(context.Background(), time.Time{})
	require.NoError(t, err)
	return s
}

func TestRestoreLikeXStateRebuildsTheConfigurationFromTheValue(t *testing.T) {
	ctx := context.Background()
	// A shallow history of a parallel state, entered before it remembers
	// anything, leaves a configuration without s18's descendants; XState's
	// value still names them (random/6-121).
	m, err := statechart.Compile([]byte(`{"id": "m", "type": "parallel", "states": {
		"s1": {"type": "parallel", "states": {"h": {"type": "history"}, "s15": {"on": {"B": "#m.s1.h"}}}},
		"s18": {"initial": "s21", "states": {"s21": {"initial": "s26", "states": {"s26": {"tags": "idle"}}}}}}}`), nil)
	require.NoError(t, err)
	s, err := m.Start(ctx, time.Time{})
	require.NoError(t, err)
	s, err = m.Transition(ctx, s, statechart.NewEvent("B"), time.Time{})
	require.NoError(t, err)
	require.False(t, s.HasTag("idle"))
	data, err := json.Marshal(s)
	require.NoError(t, err)

	exact, err := m.Restore(data)
	require.NoError(t, err)
	assert.False(t, exact.HasTag("idle"), "Restore keeps the configuration as it was")
	like, err := m.RestoreLikeXState(data)
	require.NoError(t, err)
	assert.True(t, like.HasTag("idle"), "XState rebuilds it from the value")
	assert.Equal(t, s.Value(), like.Value())
}

func TestPersistedValueKeepsXStatesKeyOrder(t *testing.T) {
	m, err := statechart.Compile([]byte(`{"id": "m", "type": "parallel", "states": {
		"b": {}, "10": {}, "a": {"initial": "x", "states": {"x": {}}}, "2": {}}}`), nil)
	require.NoError(t, err)
	s, err := m.Start(context.Background(), time.Time{})
	require.NoError(t, err)
	data, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"value":{"2":{},"10":{},"b":{},"a":"x"}`)
}
