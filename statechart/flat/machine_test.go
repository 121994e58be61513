package flat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

const job = `{
	"id": "job",
	"initial": "idle",
	"states": {
		"idle":     {"on": {"START": "running", "PING": "idle"}},
		"running":  {"on": {"FINISH": "finished", "FAIL": "#job.failed", "RESET": "idle"}},
		"failed":   {"on": {"RETRY": {"target": "running"}}},
		"finished": {"type": "final", "on": {"RESET": "idle"}}
	}
}`

var (
	bg  = context.Background()
	now = time.Unix(1_700_000_000, 0)
)

func compile(t testing.TB, config string) *flat.Machine {
	t.Helper()
	m, err := flat.Compile([]byte(config))
	require.NoError(t, err)
	return m
}

func send(t testing.TB, m *flat.Machine, s statechart.State, ev string) statechart.State {
	t.Helper()
	next, err := m.Send(bg, s, statechart.NewEvent(ev), now)
	require.NoError(t, err)
	return next
}

func TestStartAndTransitions(t *testing.T) {
	m := compile(t, job)
	s, err := m.Start(bg, now)
	require.NoError(t, err)
	assert.Equal(t, "idle", s.Value())
	assert.Equal(t, statechart.StatusActive, s.Status())
	assert.Equal(t, map[string]any{}, s.Context())
	assert.NotNil(t, s.Context())
	assert.Equal(t, []string{"job", "job.idle"}, s.StateIDs())

	s = send(t, m, s, "START")
	assert.Equal(t, "running", s.Value())
	s = send(t, m, s, "FAIL") // a "#id" target
	assert.Equal(t, "failed", s.Value())
	assert.Equal(t, []string{"job", "job.failed"}, s.StateIDs())
	s = send(t, m, s, "RETRY") // an object target
	assert.Equal(t, "running", s.Value())
	assert.Equal(t, "running", s.(*flat.State).Name())
	assert.Same(t, m, s.(*flat.State).Machine())
}

func TestIgnoredEvents(t *testing.T) {
	m := compile(t, job)
	s, _ := m.Start(bg, now)
	for _, ev := range []statechart.Event{
		statechart.NewEvent("FINISH"),  // known to the machine, not to idle
		statechart.NewEvent("UNKNOWN"), // known nowhere
		statechart.NewEvent(""),
		{Type: "START.x", Data: map[string]any{"type": "START"}},
	} {
		next, err := m.Send(bg, s, ev, now)
		require.NoError(t, err, ev.Type)
		assert.Same(t, s, next, ev.Type)
	}
	// The event's data plays no part.
	next, err := m.Send(bg, s, statechart.Event{Type: "START", Data: map[string]any{"x": 1}}, now)
	require.NoError(t, err)
	assert.Equal(t, "running", next.Value())
}

func TestSelfLoop(t *testing.T) {
	m := compile(t, job)
	s, _ := m.Start(bg, now)
	next := send(t, m, s, "PING")
	assert.Equal(t, "idle", next.Value())
	assert.Equal(t, statechart.StatusActive, next.Status())
	ok, err := m.Can(bg, s, statechart.NewEvent("PING"))
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestDone(t *testing.T) {
	m := compile(t, job)
	s, _ := m.Start(bg, now)
	s = send(t, m, s, "START")
	s = send(t, m, s, "FINISH")
	assert.Equal(t, "finished", s.Value())
	assert.Equal(t, statechart.StatusDone, s.Status())
	// Every later event is ignored, even one the final state handles.
	for _, ev := range []string{"RESET", "START", "NOPE"} {
		next := send(t, m, s, ev)
		assert.Same(t, s, next, ev)
	}
	// Can follows XState's snapshot.can, which ignores the status.
	ok, err := m.Can(bg, s, statechart.NewEvent("RESET"))
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = m.Can(bg, s, statechart.NewEvent("START"))
	require.NoError(t, err)
	assert.False(t, ok)

	// A machine whose initial state is final is done from the start.
	m2 := compile(t, `{"initial": "end", "states": {"end": {"type": "final", "on": {"GO": "other"}}, "other": {}}}`)
	s2, err := m2.Start(bg, now)
	require.NoError(t, err)
	assert.Equal(t, statechart.StatusDone, s2.Status())
	assert.Same(t, s2, send(t, m2, s2, "GO"))
}

func TestCanAndAdvance(t *testing.T) {
	m := compile(t, job)
	s, _ := m.Start(bg, now)
	for ev, want := range map[string]bool{"START": true, "PING": true, "FINISH": false, "NOPE": false} {
		ok, err := m.Can(bg, s, statechart.NewEvent(ev))
		require.NoError(t, err)
		assert.Equal(t, want, ok, ev)
	}
	next, err := m.Advance(bg, s, now.Add(time.Hour))
	require.NoError(t, err)
	assert.Same(t, s, next)
}

func TestForeignStates(t *testing.T) {
	m, other := compile(t, job), compile(t, job)
	s, _ := other.Start(bg, now)
	full, err := statechart.Compile([]byte(job), nil)
	require.NoError(t, err)
	snap, err := full.Start(bg, now)
	require.NoError(t, err)
	for _, st := range []statechart.State{s, snap, nil, (*flat.State)(nil)} {
		_, err := m.Send(bg, st, statechart.NewEvent("START"), now)
		assert.ErrorContains(t, err, `does not belong to machine "job"`)
		_, err = m.Can(bg, st, statechart.NewEvent("START"))
		assert.Error(t, err)
		_, err = m.Advance(bg, st, now)
		assert.Error(t, err)
	}
}

func TestMarshalMatchesInterpreter(t *testing.T) {
	m := compile(t, job)
	full, err := statechart.Compile([]byte(job), nil)
	require.NoError(t, err)
	s, _ := m.Start(bg, now)
	snap, err := full.Start(bg, now)
	require.NoError(t, err)
	for _, ev := range []string{"", "START", "FAIL", "RETRY", "FINISH", "RESET"} {
		if ev != "" {
			s = send(t, m, s, ev)
			snap, err = full.Transition(bg, snap, statechart.NewEvent(ev), now)
			require.NoError(t, err)
		}
		got, err := json.Marshal(s)
		require.NoError(t, err)
		want, err := json.Marshal(snap)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "after %q", ev)

		// flat -> full and full -> flat
		back, err := full.Restore(got)
		require.NoError(t, err)
		assert.Equal(t, s.Value(), back.Value())
		assert.Equal(t, s.Status(), back.Status())
		restored, err := m.Restore(want)
		require.NoError(t, err)
		assert.Same(t, s, restored)
	}
}

func TestRestore(t *testing.T) {
	m := compile(t, job)
	for _, tt := range []struct{ in, value, status string }{
		{`{"status":"active","value":"running","context":{},"historyValue":{},"children":{}}`, "running", "active"},
		// XState's getPersistedSnapshot
		{`{"status":"done","value":"finished","historyValue":{},"context":{},"children":{}}`, "finished", "done"},
		{`{"value":"idle","nodes":["job.idle","job"],"seq":0,"extra":true,"output":null,"error":""}`, "idle", "active"},
		{`{"status":"stopped","value":"idle"}`, "idle", "stopped"},
	} {
		s, err := m.Restore([]byte(tt.in))
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.value, s.Value(), tt.in)
		assert.Equal(t, statechart.Status(tt.status), s.Status(), tt.in)
		b, err := json.Marshal(s)
		require.NoError(t, err)
		again, err := m.Restore(b)
		require.NoError(t, err)
		assert.Equal(t, s, again)
	}
	stopped, err := m.Restore([]byte(`{"status":"stopped","value":"idle"}`))
	require.NoError(t, err)
	assert.Same(t, stopped, send(t, m, stopped, "START"))

	for in, want := range map[string]string{
		`{"value":"idle"`:                                "flat: restore: malformed JSON: line 1, column 15: unexpected end of JSON input",
		`[]`:                                             "flat: restore: a persisted state must be a JSON object, not an array",
		`{"status":"active"}`:                            `flat: restore: value: must be the name of a state of machine "job", not nothing`,
		`{"value":{"idle":{}}}`:                          `flat: restore: value: must be the name of a state of machine "job", not an object`,
		`{"value":"runing"}`:                             `flat: restore: value: "runing" is not a state of machine "job" (did you mean "running"?)`,
		`{"value":"idle","status":"paused"}`:             `flat: restore: status: unknown status "paused"`,
		`{"value":"idle","status":1}`:                    `flat: restore: status: must be a string, not a number`,
		`{"value":"idle","status":"error"}`:              `flat: restore: status: a flat machine never fails, so it cannot restore status "error"`,
		`{"value":"idle","status":"done"}`:               `flat: restore: status: "idle" is not a final state, so the status cannot be "done"`,
		`{"value":"finished","status":"active"}`:         `flat: restore: status: "finished" is a final state, so the status is "done", not "active"`,
		`{"value":"idle","context":{"n":1}}`:             `flat: restore: context: must be empty for a flat machine, not {"n":1}`,
		`{"value":"idle","historyValue":{"x":[]}}`:       `flat: restore: historyValue: must be empty for a flat machine, not {"x":[]}`,
		`{"value":"idle","scheduledEvents":[{}]}`:        `flat: restore: scheduledEvents: must be empty for a flat machine, not [{}]`,
		`{"value":"idle","output":1}`:                    `flat: restore: output: a flat machine has no output, but got 1`,
		`{"value":"idle","error":"boom"}`:                `flat: restore: error: a flat machine never fails, but got "boom"`,
		`{"value":"idle","nodes":["job","job.running"]}`: `flat: restore: nodes: ["job","job.running"] does not match value "idle": want ["job", "job.idle"]`,
		`{"value":"idle","nodes":["job","job"]}`:         `flat: restore: nodes: ["job","job"] does not match value "idle": want ["job", "job.idle"]`,
		`{"value":"idle","nodes":"job"}`:                 `flat: restore: nodes: must be an array of state ids, not a string`,
		`{"value":"idle","value":"running"}`:             `flat: restore: duplicate key "value"`,
	} {
		_, err := m.Restore([]byte(in))
		assert.EqualError(t, err, want, in)
	}
}

// TestConcurrentInstances runs many instances of one shared Machine, each on
// its own goroutine; run it with -race.
func TestConcurrentInstances(t *testing.T) {
	m := compile(t, job)
	const goroutines, rounds = 64, 200
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			s, _ := m.Start(bg, now)
			for r := 0; r < rounds; r++ {
				var want string
				// Each goroutine walks its own path so that their states differ.
				for _, step := range [][2]string{{"START", "running"}, {"FAIL", "failed"}, {"RETRY", "running"}, {"RESET", "idle"}, {"PING", "idle"}} {
					if g%2 == 1 && step[0] == "FAIL" {
						step = [2]string{"NOPE", "running"}
					}
					if g%2 == 1 && step[0] == "RETRY" {
						continue
					}
					var err error
					if s, err = m.Send(bg, s, statechart.NewEvent(step[0]), now); err != nil {
						errs <- err
						return
					}
					want = step[1]
					if s.Value() != want {
						errs <- fmt.Errorf("goroutine %d round %d: after %s got %v, want %s", g, r, step[0], s.Value(), want)
						return
					}
					if ok, err := m.Can(bg, s, statechart.NewEvent("START")); err != nil || ok != (want == "idle") {
						errs <- fmt.Errorf("goroutine %d: Can(START) in %s = %v, %v", g, want, ok, err)
						return
					}
				}
			}
			s, _ = m.Send(bg, s, statechart.NewEvent("START"), now)
			s, _ = m.Send(bg, s, statechart.NewEvent("FINISH"), now)
			if s.Status() != statechart.StatusDone {
				errs <- fmt.Errorf("goroutine %d: status %s", g, s.Status())
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestStatesAreShared(t *testing.T) {
	m := compile(t, job)
	a, _ := m.Start(bg, now)
	b := send(t, m, send(t, m, a, "START"), "RESET")
	assert.Same(t, a, b)
	ids := a.StateIDs()
	ids[0] = "changed"
	assert.Equal(t, []string{"job", "job.idle"}, a.StateIDs())
	a.Context()["x"] = 1
	assert.Empty(t, a.Context())
}
