// This file defines Actor, one running instance of a machine: it holds the
// current snapshot, processes events one at a time, and fires delayed
// events from its clock.

package statechart

import (
	"context"
	"sync"
	"time"
)

// ActorOptions configures [NewActor]. The zero value (or nil) means the
// defaults.
type ActorOptions struct {
	// Clock drives delayed transitions. Default: the wall clock.
	Clock Clock
	// Snapshot, if set, is the state the actor starts from (for example one
	// restored with [Machine.Restore] or [Machine.ResolveState]) instead of
	// the machine's initial state. No entry actions run for it; its
	// pending delayed events are rescheduled on Clock.
	Snapshot *Snapshot
	// Context replaces the machine's initial context (ignored with Snapshot).
	Context map[string]any
	// Input is the machine's input (ignored with Snapshot): event.input of
	// its xstate.init event, as XState's createActor(machine, {input}).
	// nil means none; JSON null is written json.RawMessage("null"), and any
	// json.RawMessage is decoded.
	Input any
	// Resume, if set, is asked, when the actor starts from Snapshot, about
	// each active promise or callback child of the snapshot before it
	// starts again: XState restarts them from scratch with their input,
	// which is what happens when Resume returns nil. Returning logic
	// (typically a Promise that waits for the work already in flight, found
	// by the child's Session or Input) runs that logic in its place.
	Resume func(child Child) ActorLogic
	// Inspect, if set, is called, with the actor locked, for every event
	// an actor of the system takes from its mailbox: the root (Actor is
	// empty) and its descendants. It must not call the actor's methods.
	Inspect func(Inspection)
}

// Actor is one running instance of a machine. It is safe for concurrent
// use: events are processed one at a time, each as a complete macrostep.
type Actor struct {
	m     *Machine
	clock Clock
	opts  ActorOptions

	mu        sync.Mutex
	cur, work *Snapshot
	r         *runner
	started   bool
	ctx       context.Context
	armed     map[uint64]func() bool // clock registrations, by timer seq
	// plain: started without an actor system and without Inspect, so
	// that Send may take an event by fastStep; set by Start alone.
	plain bool
	// timersShared: a snapshot handed out (or given in ActorOptions)
	// shares cur's timer queue, so it must not change in place.
	timersShared bool
	// contextShared: cur's context map may be referenced outside the
	// actor (a snapshot handed out, an implementation that was handed it,
	// a context given at start); otherwise a macrostep may change it in
	// place (see runner.grantContext).
	contextShared bool
	subs          map[int]func(*Snapshot)
	nextSub       int

	// The actor system of a machine with actors (see system.go); nil on
	// the plain path.
	sys       *system
	cancel    context.CancelFunc
	listeners map[int]emitListener
	callErr   error // the error the root ended with during the current call
	// inbox: work from other goroutines (promise results, callbacks'
	// events), run in order by one goroutine at a time.
	inboxMu  sync.Mutex
	inbox    []func()
	draining bool
}

// emitListener is a function registered with On.
type emitListener struct {
	typ string
	f   func(Event)
}

// NewActor returns an actor for m. Call Start before sending events.
func NewActor(m *Machine, opts *ActorOptions) *Actor {
	a := &Actor{m: m, r: newRunner(m)}
	if opts != nil {
		a.opts = *opts
	}
	a.clock = a.opts.Clock
	if a.clock == nil {
		a.clock = RealClock{}
	}
	a.r.clock = a.clock
	return a
}

// Start enters the initial state (or adopts ActorOptions.Snapshot) and
// schedules pending delayed events. ctx is passed to guard and action
// implementations, including those run by delayed events; its
// cancellation does not stop the actor.
func (a *Actor) Start(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started {
		return nil
	}
	a.started = true
	a.ctx = context.WithoutCancel(ctx)
	if a.m.usesActors {
		return a.startSystem()
	}
	a.plain = a.opts.Inspect == nil
	var err error
	if a.opts.Snapshot != nil {
		a.cur = a.opts.Snapshot.clone()
		a.timersShared = true
	} else {
		var input any
		if input, err = decodeJSONValue(a.opts.Input); err != nil {
			return err
		}
		a.cur, err = a.m.start(ctx, a.opts.Context, initEvent(input, a.opts.Input != nil), a.clock.Now())
	}
	a.work = a.cur.clone()
	a.contextShared = true
	a.afterChange(nil, false)
	return err
}

// Send processes one event as a macrostep. Events sent to an actor that is
// not active are ignored, as in XState. If a guard or action fails, the
// actor keeps its previous state with status error and the error is
// returned. If the event needs more than [Options.MaxSteps] steps, the
// actor keeps its previous state, still active, and the
// [*StepBudgetError] is returned.
func (a *Actor) Send(ctx context.Context, ev Event) error {
	a.mu.Lock()
	if a.plain && a.cur.status == StatusActive &&
		a.r.fastStep(a.cur, ev, !a.contextShared && a.cur.context != nil, false, true) {
		// fastStep runs no implementation and arms no timer: the lock is
		// released without a deferred call, unless subscribers (code of
		// the caller's, which may panic) are told.
		if len(a.subs) == 0 && a.cur.status == StatusActive {
			a.mu.Unlock()
			return nil
		}
		a.afterFastStep()
		return nil
	}
	return a.sendLocked(ctx, ev)
}

// afterFastStep tells the subscribers of a fast step and unlocks the
// actor, even if one panics; apart from Send, whose fast path then sets up
// no deferred call.
func (a *Actor) afterFastStep() {
	defer a.mu.Unlock()
	a.afterChange(nil, true)
}

// sendLocked is Send with the actor locked, for an event that fastStep did
// not take; it unlocks the actor.
func (a *Actor) sendLocked(ctx context.Context, ev Event) error {
	defer a.mu.Unlock()
	if !a.started {
		return errNotStarted
	}
	if a.sys != nil {
		return a.sendSystem(ev)
	}
	if a.cur.status != StatusActive {
		return nil
	}
	var now time.Time
	if a.m.hasTimers {
		now = a.clock.Now() // only delayed events need the time
	}
	if a.opts.Inspect != nil {
		a.r.leaveSlots()
		a.opts.Inspect(Inspection{Event: ev, Snapshot: a.cur})
		if a.r.fastStep(a.cur, ev, !a.contextShared && a.cur.context != nil, false, true) {
			if len(a.subs) > 0 || a.cur.status != StatusActive { // a fast step arms no timer
				a.afterChange(nil, true)
			}
			return nil
		}
	}
	a.prepareWork()
	a.r.begin(ctx, a.work, now)
	if !a.contextShared && a.sys == nil {
		a.r.grantContext()
	}
	// Copy the timers before changing them: a Send that runs out of steps
	// leaves the actor's snapshot, timers included, as it was.
	a.r.logTimers = true
	a.r.macrostep(ev)
	if a.r.outOfSteps != nil {
		a.r.rollbackContext()
		a.contextShared = a.contextShared || a.r.contextSeen
		return a.r.runtimeError(ev)
	}
	return a.finish(ev)
}

// finish ends a macrostep run on the work buffer (prepared by
// prepareWork): the work buffer becomes current; if a guard or action
// failed, or a delayed event ran out of steps, the current snapshot keeps
// its state with status error instead.
func (a *Actor) finish(ev Event) error {
	var err error
	if a.r.err != nil {
		a.r.rollbackContext()
		a.contextShared = a.contextShared || a.r.contextSeen
		err = a.r.runtimeError(ev)
		a.cur.status, a.cur.err, a.cur.timers = StatusError, err, nil
	} else {
		if a.r.replacedContext {
			a.contextShared = a.r.contextSeen
		} else {
			a.contextShared = a.contextShared || a.r.contextSeen
		}
		a.cur, a.work = a.work, a.cur
		// The next call starts from a copy of cur, whose nodes the
		// runner's active states are.
		a.r.synced = a.sys == nil
		if a.r.copiedTimers {
			a.timersShared = false // the runner's copy is the actor's alone
		}
		if a.cur.status == StatusError {
			err = a.cur.err // an unhandled xstate.error.actor.* event
		}
	}
	a.afterChange(a.r.timerLog, true)
	return err
}

type actorError string

func (e actorError) Error() string { return string(e) }

const errNotStarted = actorError("statechart: actor not started")

// prepareWork copies the current snapshot into the work buffer, reusing
// its slices. The timer queue is shared: the runner copies it before
// changing it unless the actor lets it change it in place.
func (a *Actor) prepareWork() {
	w, c := a.work, a.cur
	nodes := w.nodes[:0]
	*w = *c
	w.nodes = append(nodes, c.nodes...)
}

// Snapshot returns the current snapshot.
func (a *Actor) Snapshot() *Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sys != nil {
		return a.sys.root.materialize()
	}
	if a.cur == nil {
		return nil
	}
	a.r.leaveSlots()
	a.timersShared, a.contextShared = true, true
	return a.cur.clone()
}

// Subscribe calls f with the new snapshot after every change, until the
// returned function is called. f runs with the actor locked: it must not
// call the actor's methods. (For a machine with actors, a change of a child
// alone does not call f.)
func (a *Actor) Subscribe(f func(*Snapshot)) (unsubscribe func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.subs == nil {
		a.subs = map[int]func(*Snapshot){}
	}
	id := a.nextSub
	a.nextSub++
	a.subs[id] = f
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.subs, id)
	}
}

// Stop stops the actor: pending delayed events are dropped, later events
// are ignored, and the status becomes stopped.
func (a *Actor) Stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sys != nil {
		a.stopSystem()
		return
	}
	if a.cur == nil {
		a.started = true
		a.cur = &Snapshot{machine: a.m, status: StatusStopped, context: map[string]any{}}
		return
	}
	if a.cur.status == StatusActive {
		a.cur.status = StatusStopped
	}
	a.cur.timers = nil
	a.afterChange(nil, false)
}

// afterChange keeps one clock registration per pending delayed event (as
// XState's scheduler does) and notifies subscribers. changes are the
// timer changes of the macrostep that made the current snapshot;
// incremental is false when the snapshot is new and is compared as a whole.
func (a *Actor) afterChange(changes []timerChange, incremental bool) {
	if incremental && len(changes) == 0 && len(a.subs) == 0 && a.cur.status == StatusActive {
		return // nothing to arm, stop or tell
	}
	switch {
	case a.cur.status != StatusActive:
		for seq, stop := range a.armed {
			stop()
			delete(a.armed, seq)
		}
	case !incremental:
		a.syncTimers()
	default:
		a.applyTimerChanges(changes)
	}
	if len(a.subs) > 0 {
		a.r.leaveSlots()
		s := a.cur.clone()
		a.timersShared, a.contextShared = true, true
		for _, f := range a.subs {
			f(s)
		}
	}
}

// syncTimers registers every pending delayed event with the clock, in
// scheduling order, and drops registrations of events no longer pending.
func (a *Actor) syncTimers() {
	if a.armed == nil {
		a.armed = map[uint64]func() bool{}
	}
	for seq, stop := range a.armed {
		if !a.cur.timers.has(seq) {
			stop()
			delete(a.armed, seq)
		}
	}
	now := a.clock.Now()
	for _, t := range a.cur.timers.bySeq() {
		if _, ok := a.armed[t.seq]; !ok {
			a.arm(t, now)
		}
	}
}

// applyTimerChanges does what syncTimers would, from the macrostep's
// changes alone: registrations of events that are gone are stopped, and
// events scheduled and still pending are registered, in scheduling order.
func (a *Actor) applyTimerChanges(changes []timerChange) {
	if a.armed == nil {
		a.armed = map[uint64]func() bool{}
	}
	for _, c := range changes {
		if stop, ok := a.armed[c.seq]; ok && !c.added {
			stop()
			delete(a.armed, c.seq)
		}
	}
	var now time.Time
	for _, c := range changes {
		if !c.added || !a.cur.timers.has(c.seq) {
			continue
		}
		if _, ok := a.armed[c.seq]; ok {
			continue
		}
		if now.IsZero() {
			now = a.clock.Now()
		}
		a.arm(a.cur.timers.heap[a.cur.timers.pos[c.seq]], now)
	}
}

// arm registers t with the clock. A timer already due (a negative delay,
// or a restored one) keeps its due time in the past, so that the clock
// fires it before later ones, as XState's SimulatedClock orders timeouts
// by due time; a real clock fires it at once.
func (a *Actor) arm(t timer, now time.Time) {
	seq := t.seq
	a.armed[seq] = a.clock.AfterFunc(t.due.Sub(now), func() { a.fire(seq) })
}

// fire processes the delayed event with the given seq, if still pending,
// as a macrostep.
func (a *Actor) fire(seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.armed, seq)
	if a.cur.status != StatusActive || !a.cur.timers.has(seq) {
		return
	}
	a.r.leaveSlots()
	a.prepareWork()
	a.r.begin(a.ctx, a.work, a.clock.Now())
	if !a.contextShared && a.sys == nil {
		a.r.grantContext()
	}
	// A delayed event that fails, or runs out of steps, ends in status
	// error, which drops the timers: they may change in place, unless a
	// snapshot handed out shares them.
	a.r.ownsTimers, a.r.logTimers = !a.timersShared, true
	ev := a.r.takeTimer(seq)
	if a.opts.Inspect != nil {
		a.opts.Inspect(Inspection{Event: ev, Snapshot: a.cur})
	}
	a.r.macrostep(ev)
	_ = a.finish(ev) // the error is in the snapshot
}
