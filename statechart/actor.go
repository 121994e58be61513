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
	subs      map[int]func(*Snapshot)
	nextSub   int
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
	var err error
	if a.opts.Snapshot != nil {
		a.cur = a.opts.Snapshot.clone()
	} else {
		a.cur, err = a.m.StartWithContext(ctx, a.opts.Context, a.clock.Now())
	}
	a.work = a.cur.clone()
	a.afterChange()
	return err
}

// Send processes one event as a macrostep. Events sent to an actor that is
// not active are ignored, as in XState. If a guard or action fails, the
// actor keeps its previous state with status error and the error is
// returned.
func (a *Actor) Send(ctx context.Context, ev Event) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		return errNotStarted
	}
	if a.cur.status != StatusActive {
		return nil
	}
	var now time.Time
	if a.m.hasTimers {
		now = a.clock.Now() // only delayed events need the time
	}
	a.prepareWork()
	return a.process(ctx, ev, now)
}

// process runs one macrostep on the work buffer (prepared by prepareWork)
// and makes it current; if a guard or action fails, the current snapshot
// keeps its state with status error instead.
func (a *Actor) process(ctx context.Context, ev Event, now time.Time) error {
	a.r.begin(ctx, a.work, now)
	a.r.macrostep(ev)
	var err error
	if a.r.err != nil {
		err = a.r.runtimeError(ev)
		a.cur.status, a.cur.err, a.cur.timers = StatusError, err, nil
	} else {
		a.cur, a.work = a.work, a.cur
	}
	a.afterChange()
	return err
}

type actorError string

func (e actorError) Error() string { return string(e) }

const errNotStarted = actorError("statechart: actor not started")

// prepareWork copies the current snapshot into the work buffer, reusing
// its slices.
func (a *Actor) prepareWork() {
	w, c := a.work, a.cur
	nodes, timers := w.nodes[:0], w.timers[:0]
	*w = *c
	w.nodes = append(nodes, c.nodes...)
	w.timers = append(timers, c.timers...)
}

// Snapshot returns the current snapshot.
func (a *Actor) Snapshot() *Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cur == nil {
		return nil
	}
	return a.cur.clone()
}

// Subscribe calls f with the new snapshot after every change, until the
// returned function is called. f runs with the actor locked: it must not
// call the actor's methods.
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
	if a.cur == nil {
		a.started = true
		a.cur = &Snapshot{machine: a.m, status: StatusStopped, context: map[string]any{}}
		return
	}
	if a.cur.status == StatusActive {
		a.cur.status = StatusStopped
	}
	a.cur.timers = nil
	a.afterChange()
}

// afterChange keeps one clock registration per pending delayed event (as
// XState's scheduler does) and notifies subscribers.
func (a *Actor) afterChange() {
	if len(a.armed) > 0 || len(a.cur.timers) > 0 {
		a.syncTimers()
	}
	if len(a.subs) > 0 {
		s := a.cur.clone()
		for _, f := range a.subs {
			f(s)
		}
	}
}

func (a *Actor) syncTimers() {
	if a.armed == nil {
		a.armed = map[uint64]func() bool{}
	}
	active := a.cur.status == StatusActive
	for seq, stop := range a.armed {
		pending := false
		for _, t := range a.cur.timers {
			pending = pending || t.seq == seq
		}
		if !pending || !active {
			stop()
			delete(a.armed, seq)
		}
	}
	if !active {
		return
	}
	now := a.clock.Now()
	for _, t := range a.cur.timers {
		if _, ok := a.armed[t.seq]; ok {
			continue
		}
		seq := t.seq
		a.armed[seq] = a.clock.AfterFunc(max(0, t.due.Sub(now)), func() { a.fire(seq) })
	}
}

// fire processes the delayed event with the given seq, if still pending,
// as a macrostep.
func (a *Actor) fire(seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.armed, seq)
	if a.cur.status != StatusActive {
		return
	}
	idx := -1
	for i, t := range a.cur.timers {
		if t.seq == seq {
			idx = i
		}
	}
	if idx < 0 {
		return
	}
	a.prepareWork()
	_ = a.process(a.ctx, a.work.takeTimer(idx), a.clock.Now()) // the error is in the snapshot
}
