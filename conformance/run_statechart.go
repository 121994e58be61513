// This file defines RunStatechart, which replays a case (format v1 or v2)
// on the statechart interpreter: an Actor on the case's clock, with its
// input and declarative actors, the steps of both formats, and the v2 keys
// of the snapshots (children, received, emitted, persisted, answer).

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// caseClock is a clock a case runs on: a [statechart.SimulatedClock] or a
// [statechart.EventLoopClock].
type caseClock interface {
	statechart.Clock
	Advance(time.Duration)
}

// RunStatechart runs a case on the statechart interpreter with XState's
// late failure of missing guards. Its persist steps persist with
// [statechart.Snapshot.MarshalJSON]; the step records the persisted
// snapshot without chartgate's own keys (see [XStateShape]), and a restore
// step restores what Go persisted as XState restores a snapshot
// ([statechart.Machine.RestoreLikeXState]: the configuration from the
// value, no pending delayed events, where [statechart.Machine.Restore]
// keeps both). So every case also checks that Go reads back what it
// writes.
func RunStatechart(ctx context.Context, c *Case) ([]map[string]any, bool, error) {
	return runStatechart(ctx, c, false)
}

// RunStatechartFromXState is [RunStatechart], except that a restore step
// restores the snapshot XState persisted (the `persisted` recorded at the
// persist step): every case with a restore step then checks that a
// snapshot persisted by XState restores in chartgate and goes on as it
// does in XState.
func RunStatechartFromXState(ctx context.Context, c *Case) ([]map[string]any, bool, error) {
	return runStatechart(ctx, c, true)
}

// Implementations returns the case's declarative guards, actions, delays
// and actors (child machines compiled with XState's late failure of
// missing guards, as the case's machine is).
func (c *Case) Implementations() (statechart.Implementations, error) {
	return statechart.ParseImplementationsWith(c.raw, &statechart.Options{AllowMissingGuards: true})
}

// caseRun is one run of a case.
type caseRun struct {
	ctx       context.Context
	c         *Case
	m         *statechart.Machine
	v2        bool
	clock     caseClock
	elapsed   time.Duration
	actor     *statechart.Actor
	received  []any
	emitted   []any
	errored   bool
	persisted map[string]json.RawMessage
}

func runStatechart(ctx context.Context, c *Case, fromXState bool) ([]map[string]any, bool, error) {
	run, err := newCaseRun(ctx, c)
	if err != nil {
		return nil, false, err
	}
	return run.steps(fromXState)
}

// PersistedByGo runs the case on the statechart interpreter and returns
// what each persist step persisted, by name (the last one of a name wins):
// the snapshots chartgate writes, for a test that restores them in XState.
func PersistedByGo(ctx context.Context, c *Case) (map[string]json.RawMessage, error) {
	run, err := newCaseRun(ctx, c)
	if err != nil {
		return nil, err
	}
	if _, _, err := run.steps(false); err != nil {
		return nil, err
	}
	return run.persisted, nil
}

func newCaseRun(ctx context.Context, c *Case) (*caseRun, error) {
	impl, err := c.Implementations()
	if err != nil {
		return nil, err
	}
	m, err := statechart.Compile(c.Machine, &statechart.Options{Implementations: impl, AllowMissingGuards: true})
	if err != nil {
		return nil, err
	}
	return &caseRun{ctx: ctx, c: c, m: m, v2: len(c.V2Features()) > 0, persisted: map[string]json.RawMessage{}}, nil
}

// steps runs the case; fromXState: see RunStatechartFromXState.
func (run *caseRun) steps(fromXState bool) ([]map[string]any, bool, error) {
	ctx, c := run.ctx, run.c
	run.clock = run.newClock()
	opts := run.actorOptions()
	switch {
	case len(c.Snapshot) > 0:
		snap, err := run.m.RestoreLikeXState(c.Snapshot)
		if err != nil {
			return nil, false, fmt.Errorf("snapshot: %w", err)
		}
		opts.Snapshot = snap
	case len(c.Input) > 0:
		opts.Input = json.RawMessage(c.Input)
	}
	run.start(opts)
	snaps := []map[string]any{run.take(nil)}
	persisted := run.persisted
	for i, s := range c.Steps {
		extra := map[string]any{}
		switch {
		case s.Event != nil:
			if run.actor.Send(ctx, *s.Event) != nil {
				run.errored = true
			}
		case s.Advance != nil:
			d := time.Duration(*s.Advance * float64(time.Millisecond))
			run.elapsed += d
			run.clock.Advance(d)
		case s.Persist != nil:
			data, err := json.Marshal(run.actor.Snapshot())
			if err != nil {
				return nil, false, fmt.Errorf("steps[%d]: persist: %w", i, err)
			}
			shape, err := XStateShape(data)
			if err != nil {
				return nil, false, fmt.Errorf("steps[%d]: persist: %w", i, err)
			}
			persisted[*s.Persist] = data
			extra["persisted"] = shape
			if fromXState && i+1 < len(c.Expected) {
				var recorded struct {
					Persisted json.RawMessage `json:"persisted"`
				}
				if json.Unmarshal(c.Expected[i+1], &recorded) == nil && len(recorded.Persisted) > 0 {
					persisted[*s.Persist] = recorded.Persisted
				}
			}
		case s.Restore != nil:
			snap, err := run.m.RestoreLikeXState(persisted[*s.Restore])
			if err != nil {
				return nil, false, fmt.Errorf("steps[%d]: restore: %w", i, err)
			}
			run.actor.Stop()
			run.received, run.emitted = nil, nil
			run.clock = run.newClock()
			opts := run.actorOptions()
			opts.Snapshot = snap
			run.start(opts)
		case s.Query != nil:
			answer, err := run.query(s.Query)
			if err != nil {
				return nil, false, fmt.Errorf("steps[%d]: query: %w", i, err)
			}
			extra["answer"] = answer
		}
		snaps = append(snaps, run.take(extra))
	}
	run.actor.Stop()
	return snaps, run.errored, nil
}

// newClock returns a clock of the case's kind at the run's current time.
func (run *caseRun) newClock() caseClock {
	var clock caseClock = statechart.NewSimulatedClock()
	if run.c.Clock != nil && *run.c.Clock == ClockEventLoop {
		clock = statechart.NewEventLoopClock()
	}
	clock.Advance(run.elapsed)
	return clock
}

func (run *caseRun) actorOptions() *statechart.ActorOptions {
	return &statechart.ActorOptions{
		Clock: run.clock,
		Inspect: func(in statechart.Inspection) {
			if len(in.Actor) == 0 {
				run.received = append(run.received, in.Event.Type)
			}
		},
	}
}

// start starts a new actor, which records the events the root emits.
func (run *caseRun) start(opts *statechart.ActorOptions) {
	run.actor = statechart.NewActor(run.m, opts)
	run.actor.On("*", func(ev statechart.Event) {
		run.emitted = append(run.emitted, normalize(ev))
	})
	if run.actor.Start(run.ctx) != nil {
		run.errored = true
	}
}

// take returns the comparable snapshot after a step, with the step's
// received and emitted events and the extra keys.
func (run *caseRun) take(extra map[string]any) map[string]any {
	snap := run.actor.Snapshot()
	run.errored = run.errored || snap.Status() == statechart.StatusError
	out := Snapshot(snap)
	if run.v2 {
		out["received"] = append([]any{}, run.received...)
	}
	if len(run.emitted) > 0 {
		out["emitted"] = run.emitted
	}
	for k, v := range extra {
		out[k] = v
	}
	run.received, run.emitted = nil, nil
	return out
}

// query answers a query step on the current snapshot.
func (run *caseRun) query(q *Query) (any, error) {
	snap := run.actor.Snapshot()
	switch {
	case q.Can != nil:
		return run.m.Can(run.ctx, snap, *q.Can)
	case q.Matches != nil:
		var v any
		if err := json.Unmarshal(q.Matches, &v); err != nil {
			return nil, err
		}
		return snap.Matches(v), nil
	case q.HasTag != nil:
		return snap.HasTag(*q.HasTag), nil
	}
	return snap.Meta(), nil
}

// The keys chartgate adds to XState's persisted snapshot (see
// statechart.Snapshot.MarshalJSON) and to its children's entries.
var (
	chartgateSnapshotKeys = []string{"nodes", "scheduledEvents", "seq", "sessions", "errorMessage"}
	chartgateChildKeys    = []string{"session"}
)

// XStateShape returns a snapshot persisted by chartgate as XState would
// have persisted it: without chartgate's own keys (the pending delayed
// events, the order of the configuration, the session counter and ids, the
// message of a Go error), at every level of children.
func XStateShape(data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	stripPersisted(v, chartgateSnapshotKeys)
	return v, nil
}

// stripPersisted deletes keys from a persisted snapshot and from its
// children's, and chartgate's keys from the children's entries.
func stripPersisted(v any, keys []string) {
	snap, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, k := range keys {
		delete(snap, k)
	}
	children, _ := snap["children"].(map[string]any)
	for _, c := range children {
		entry, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range chartgateChildKeys {
			delete(entry, k)
		}
		stripPersisted(entry["snapshot"], keys)
	}
}
