// This file defines the pure functions of a Machine, XState's
// transition.ts: the initial snapshot, the next snapshot for an event, the
// processing of due delayed events, and Can. None of them modify their
// input; all are safe for concurrent use.

package statechart

import (
	"context"
	"reflect"
	"time"
)

// getRunner takes a runner from the machine's pool; putRunner returns it.
func (m *Machine) getRunner() *runner {
	if r, ok := m.runners.Get().(*runner); ok {
		return r
	}
	return newRunner(m)
}

func (m *Machine) putRunner(r *runner) {
	r.ctx, r.s, r.err, r.clock = nil, nil, nil, nil
	m.runners.Put(r)
}

// Start returns the initial snapshot: the initial states are entered, their
// entry actions run, and eventless transitions and raised events are
// processed (XState's initialTransition). now is the time delayed
// transitions are scheduled from. If a guard fails, or the start needs
// more than [Options.MaxSteps] steps, the snapshot has status error and
// holds only the root, and the error is returned; if a custom action
// fails, the snapshot is the initial one with status error, as in XState,
// which runs custom actions of the initial macrostep once the snapshot is
// computed. For a machine with actors, see [Machine.StartEffects].
func (m *Machine) Start(ctx context.Context, now time.Time) (*Snapshot, error) {
	return m.StartWithContext(ctx, nil, now)
}

// StartWithContext is Start with an initial context that replaces the
// machine's own (like XState's input-driven context). A nil context means
// the machine's context.
func (m *Machine) StartWithContext(ctx context.Context, context map[string]any, now time.Time) (*Snapshot, error) {
	if m.usesActors {
		s, _, err := m.StartEffects(ctx, &StartOptions{Context: context}, now)
		return s, err
	}
	return m.start(ctx, context, Event{Type: EventInit}, now)
}

// start computes the initial snapshot of a machine without actors.
func (m *Machine) start(ctx context.Context, context map[string]any, init Event, now time.Time) (s *Snapshot, err error) {
	m.initialSnapshot(ctx, context, init, now, nil, func(r *runner, computed, failed *Snapshot) {
		switch {
		case failed != nil:
			s, err = failed, failed.err
		case r.customErr != nil:
			s, err = computed, r.customError(init)
			s.status, s.err, s.timers = StatusError, err, nil
		default:
			s = computed
		}
	})
	return s, err
}

// initialSnapshot computes XState's getInitialSnapshot with the given
// context (nil: the machine's), for the actor c of a system (nil for a
// machine without actors), and calls done before the runner goes back to
// its pool: with the computed snapshot, or, when a guard or a built-in
// action failed or the start ran out of steps, with the snapshot XState
// keeps then, the pre-initial one (only the root, the context before any
// action ran). A custom action that failed is in r.customErr: XState runs
// custom actions of the initial macrostep once the snapshot is computed.
func (m *Machine) initialSnapshot(ctx context.Context, context map[string]any, init Event, now time.Time, c *cell, done func(r *runner, computed, failed *Snapshot)) {
	if context == nil {
		context = cloneValue(m.context).(map[string]any)
	}
	preInitial := context
	s := &Snapshot{machine: m, status: StatusActive, context: context, nodes: []int{0}}
	r := m.getRunner()
	defer m.putRunner(r)
	r.begin(ctx, s, now)
	if c != nil {
		r.attach(c)
	}
	r.deferCustomErrors()
	r.initialTransition(init)
	r.endChildren()
	if r.err != nil {
		err := r.runtimeError(init)
		done(r, nil, &Snapshot{machine: m, status: StatusError, err: err, context: preInitial, nodes: []int{0}})
		return
	}
	done(r, s, nil)
}

// Transition returns the snapshot after processing one event as a
// macrostep. An event sent to a snapshot that is not active is ignored, as
// in XState: the same snapshot is returned. If a guard or action fails, the
// result is the snapshot as it was before the event, with status error, and
// the error is returned too. If the event needs more than
// [Options.MaxSteps] steps, the result is s itself, unchanged, with a
// [*StepBudgetError]. For a machine with actors, Transition drops the
// effects that [Machine.TransitionEffects] returns.
//
// Snapshots are immutable, so two calls that end in the same state with
// nothing else to tell them apart (active, the same configuration, the
// same context map or an empty one, no delayed event, history or child)
// may return the same *Snapshot; a call that takes an event never returns
// s itself.
func (m *Machine) Transition(ctx context.Context, s *Snapshot, ev Event, now time.Time) (*Snapshot, error) {
	s = s.Clone()
	if s.status != StatusActive {
		return s, nil
	}
	if m.usesActors {
		next, _, err := m.TransitionEffects(ctx, s, ev, now)
		return next, err
	}
	r := m.getRunner()
	defer m.putRunner(r)
	next := r.workCopy(s)
	r.begin(ctx, next, now)
	r.macrostep(ev)
	if r.outOfSteps != nil {
		r.spare = next
		return s, r.runtimeError(ev)
	}
	if r.err != nil {
		r.spare = next
		return failed(s, r.runtimeError(ev))
	}
	if next.status == StatusError {
		return next, next.err // an unhandled xstate.error.actor.* event
	}
	if shared := r.shared(s, next); shared != nil {
		r.spare = next
		return shared, nil
	}
	return next, nil
}

// workCopy returns a copy of s for a call of the pure API to work on: in
// the runner's spare buffer when it has one (the work of a call whose
// result was a shared snapshot, see shared).
func (r *runner) workCopy(s *Snapshot) *Snapshot {
	w := r.spare
	if w == nil {
		return s.clone()
	}
	r.spare = nil
	nodes := w.nodes[:0]
	*w = *s
	w.nodes = append(nodes, s.nodes...)
	return w
}

// shared returns a snapshot equal to next, the result of a call on s, that
// an earlier call returned, or nil. A snapshot is immutable, so every call
// that ends in the same configuration with nothing else that differs
// (plain: active, no delayed event, history, child or output, the same
// context map or an empty one) may return the same one; each recorded
// configuration of the step cache keeps the last plain snapshot returned
// in it. It is never s itself: a caller may take the return of s for an
// event that changed nothing.
func (r *runner) shared(s, next *Snapshot) *Snapshot {
	if !r.cacheOn() || !next.plain() {
		return nil
	}
	c := r.currentConf()
	if c == nil {
		return nil
	}
	if k := c.snap; k != nil && k != s && k.seq == next.seq && sameContext(k.context, next.context) {
		return k
	}
	c.snap = next // returned: immutable from now on
	return nil
}

// plain reports whether the snapshot is active and holds nothing but its
// configuration, its context and its scheduling counter.
func (s *Snapshot) plain() bool {
	return s.status == StatusActive && s.err == nil && s.timers.len() == 0 && s.history == nil && s.ext == nil
}

// sameContext reports whether two contexts are the same map, or both
// empty maps.
func sameContext(a, b map[string]any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func failed(s *Snapshot, err error) (*Snapshot, error) {
	f := s.clone()
	f.status, f.err, f.timers = StatusError, err, nil
	return f, err
}

// Advance processes, in order, every delayed event due at or before now,
// each as its own macrostep, and returns the resulting snapshot. Events
// scheduled while advancing are scheduled from now (as XState's
// SimulatedClock does), and processed too if they are due. All of them
// share one step budget ([Options.MaxSteps]): past it, Advance returns s
// itself, unchanged, with a [*StepBudgetError] — delayed events that keep
// scheduling more that are already due end this way. If a guard or action
// fails, the result is s with status error. For a machine with actors,
// Advance drops the effects that [Machine.AdvanceEffects] returns.
func (m *Machine) Advance(ctx context.Context, s *Snapshot, now time.Time) (*Snapshot, error) {
	s = s.Clone()
	if m.usesActors {
		next, _, err := m.AdvanceEffects(ctx, s, now)
		return next, err
	}
	if t, ok := s.timers.next(); s.status != StatusActive || !ok || t.due.After(now) {
		return s, nil
	}
	next := s.clone()
	r := m.getRunner()
	defer m.putRunner(r)
	r.begin(ctx, next, now)
	if ev, ok := r.advance(); !ok {
		if r.outOfSteps != nil {
			return s, r.runtimeError(ev)
		}
		return failed(s, r.runtimeError(ev))
	}
	if next.status == StatusError {
		return next, next.err
	}
	return next, nil
}

// advance processes the timers of the working snapshot that are due at
// r.now. It stops at the first error, and returns the event it was
// processing.
func (r *runner) advance() (Event, bool) {
	for r.s.status == StatusActive {
		t, ok := r.s.timers.next()
		if !ok || t.due.After(r.now) {
			break
		}
		ev := r.takeTimer(t.seq)
		r.macrostep(ev)
		if r.err != nil {
			return ev, false
		}
	}
	return Event{}, true
}

// Can reports whether the event would be handled in this snapshot: some
// transition is enabled (guards evaluated) and it has a target or actions.
// Eventless follow-ups are not considered. This is XState's snapshot.can.
func (m *Machine) Can(ctx context.Context, s *Snapshot, ev Event) (bool, error) {
	s.flush()
	r := m.getRunner()
	defer m.putRunner(r)
	r.begin(ctx, s, time.Time{})
	ts := r.selectTransitions(ev)
	if r.err != nil {
		return false, r.runtimeError(ev)
	}
	for _, t := range ts {
		if t.targets != nil || len(t.actions) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// Events returns every event descriptor the machine handles anywhere, in
// document order, without duplicates (XState's machine.events), including
// the generated done and after events.
func (m *Machine) Events() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range m.nodes {
		for _, g := range n.on {
			if !seen[g.descriptor] {
				seen[g.descriptor] = true
				out = append(out, g.descriptor)
			}
		}
	}
	return out
}
