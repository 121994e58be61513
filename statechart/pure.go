// This file defines the pure API with effects: StartEffects,
// TransitionEffects, AdvanceEffects and Deliver compute the next snapshot
// of a whole actor system (the root and its child machines) and return
// what the caller must carry out (see Effect), so that a stateless server
// can keep a machine with actors in a store: run a promise child as an
// external job, and feed its result back with Deliver later, in another
// process if need be.

package statechart

import (
	"container/heap"
	"context"
	"errors"
	"time"
)

// StartOptions configures [Machine.StartEffects] and is what an
// [ActorOptions] holds for a fresh start. The zero value means the
// defaults.
type StartOptions struct {
	// Input is the machine's input: event.input of its xstate.init event
	// (XState's createActor(machine, {input})). nil means none; JSON null
	// is written json.RawMessage("null"), and any json.RawMessage is
	// decoded.
	Input any
	// Context replaces the machine's initial context (nil: the machine's).
	Context map[string]any
}

// ErrNoChild is returned by [Machine.Deliver] when the report's session
// names no child that is still running: its result changes nothing, as in
// XState (the child was stopped, its state left, or it already finished).
var ErrNoChild = errors.New("statechart: no running child has that session")

// StartEffects is [Machine.Start] for a machine with actors, with input:
// the initial snapshot, and the effects of the start (the external
// children to start, the events emitted, the delayed events scheduled).
// Child machines start, and run, inside the call.
func (m *Machine) StartEffects(ctx context.Context, opts *StartOptions, now time.Time) (*Snapshot, []Effect, error) {
	var o StartOptions
	if opts != nil {
		o = *opts
	}
	input, err := decodeJSONValue(o.Input)
	if err != nil {
		return nil, nil, err
	}
	sys := newPureSystem(ctx, m, now)
	root := &cell{sys: sys, session: rootSession, numbered: true, m: m, kind: cellMachine, input: input, hasInput: o.Input != nil}
	sys.root = root
	sys.register(root)
	_ = root.initMachine(cloneContext(o.Context))
	_ = root.start() // a root has no system id, so its start cannot fail
	if sys.halted != nil {
		err := error(sys.halted)
		return &Snapshot{machine: m, status: StatusError, err: err, context: cloneContextOr(o.Context, m), nodes: []int{0}}, nil, err
	}
	return sys.result(nil)
}

// TransitionEffects is [Machine.Transition] for a machine with actors: the
// event is processed by the root, and so is everything it causes inside
// the system (child machines answering, their done events) until every
// actor is idle. It returns the next snapshot and the effects. When the
// call runs out of steps it returns s and no effects, with the
// [*StepBudgetError]; when the root ends in status error, the error.
func (m *Machine) TransitionEffects(ctx context.Context, s *Snapshot, ev Event, now time.Time) (*Snapshot, []Effect, error) {
	s = s.Clone()
	if s.status != StatusActive {
		return s, nil, nil
	}
	sys := continuePure(ctx, m, s, now)
	sys.root.send(ev)
	return sys.result(s)
}

// AdvanceEffects is [Machine.Advance] for a machine with actors: every
// delayed event of the system (the root's and its child machines') due at
// or before now is processed, earliest first (ties in scheduling order),
// each with what it causes. When none is due it returns s.
func (m *Machine) AdvanceEffects(ctx context.Context, s *Snapshot, now time.Time) (*Snapshot, []Effect, error) {
	s = s.Clone()
	if s.status != StatusActive {
		return s, nil, nil
	}
	sys := continuePure(ctx, m, s, now)
	root := sys.root
	sys.due = &dueHeap{}
	sys.collectDue(root)
	fired := false
	for sys.halted == nil && root.statusNow() == StatusActive && sys.due.Len() > 0 {
		d := heap.Pop(sys.due).(dueTimer)
		if d.c.proc != procRunning || !d.c.snap.timers.has(d.t.seq) {
			continue // cancelled, fired, or its actor stopped
		}
		sys.fire(d.c, d.t.seq)
		fired = true
	}
	if !fired {
		return s, nil, nil
	}
	return sys.result(s)
}

// dueTimer is a delayed event of a machine cell that is due.
type dueTimer struct {
	c *cell
	t timer
}

// dueHeap orders the due delayed events of a system as they fire: by due
// time, then scheduling order (the seq of the whole system).
type dueHeap []dueTimer

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return compareTimers(h[i].t, h[j].t) < 0 }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueTimer)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// collectDue adds the due delayed events of c and its running child
// machines to the system's heap.
func (sys *system) collectDue(c *cell) {
	if c.kind != cellMachine || c.proc != procRunning {
		return
	}
	if q := c.snap.timers; q.len() > 0 {
		for _, t := range q.heap {
			if !t.due.After(sys.now) {
				heap.Push(sys.due, dueTimer{c, t})
			}
		}
	}
	for _, e := range c.snap.x().children.all() {
		if e.cell != nil {
			sys.collectDue(e.cell)
		}
	}
}

// Deliver feeds back what an external child reports: its output (the
// promise resolved), its error, or an event it sends to its parent. The
// child is the one its [StartChild] effect named by Report.Session. Its
// parent processes the done or error event (xstate.done.actor.<id> with
// event.output, xstate.error.actor.<id> with event.error) or the event, as
// in XState, with everything it causes. A report for a child that is no
// longer running changes nothing and returns s with [ErrNoChild].
func (m *Machine) Deliver(ctx context.Context, s *Snapshot, rep Report, now time.Time) (*Snapshot, []Effect, error) {
	s = s.Clone()
	if s.status != StatusActive {
		return s, nil, ErrNoChild
	}
	sys := continuePure(ctx, m, s, now)
	c := sys.lookup(rep.Session)
	if c == nil || c.kind == cellMachine || c.proc != procRunning || c.status != StatusActive {
		return s, nil, ErrNoChild
	}
	c.deliver(rep)
	return sys.result(s)
}

// deliver gives a child what it reports.
func (c *cell) deliver(rep Report) {
	switch rep.Kind {
	case ReportDone:
		c.settle(rep.Output, true, nil)
	case ReportError:
		errValue := rep.Error
		if errValue == nil {
			errValue = errors.New("the child failed")
		}
		c.settle(nil, false, errValue)
	case ReportEvent:
		if c.parent != nil {
			c.parent.send(rep.Event)
		}
	}
}

func newPureSystem(ctx context.Context, m *Machine, now time.Time) *system {
	sys := newSystem(ctx, m)
	sys.pure, sys.now = true, now
	return sys
}

// continuePure builds the system of snapshot s for one pure call.
func continuePure(ctx context.Context, m *Machine, s *Snapshot, now time.Time) *system {
	sys := newPureSystem(ctx, m, now)
	sys.root = sys.adoptRoot(m, s, false)
	return sys
}

// result is the outcome of a pure call: the root's snapshot and the
// effects; in is the snapshot the call started from (nil for a start),
// returned unchanged when the call ran out of steps.
func (sys *system) result(in *Snapshot) (*Snapshot, []Effect, error) {
	if sys.halted != nil {
		return in, nil, sys.halted
	}
	snap := sys.root.materialize()
	var err error
	if snap.status == StatusError && (in == nil || in.status != StatusError) {
		err = snap.err
	}
	return snap, sys.effects, err
}

func cloneContext(ctx map[string]any) map[string]any {
	if ctx == nil {
		return nil
	}
	return cloneValue(ctx).(map[string]any)
}

func cloneContextOr(ctx map[string]any, m *Machine) map[string]any {
	if ctx != nil {
		return cloneContext(ctx)
	}
	return cloneValue(m.context).(map[string]any)
}
