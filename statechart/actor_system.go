// This file defines how an Actor runs a machine with actors: it holds the
// actor system for its whole life, runs the children's logic (promises in
// goroutines, callbacks, declarative actors on its clock), delivers their
// results in order, and gives the root's emitted events to the functions
// registered with On.

package statechart

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
)

// startSystem is Start for a machine with actors.
func (a *Actor) startSystem() error {
	ctx, cancel := context.WithCancel(a.ctx)
	a.cancel = cancel
	sys := newSystem(ctx, a.m)
	sys.clock = a.clock
	sys.enter = a.enterLocked
	sys.post = a.post
	sys.resume = a.opts.Resume
	sys.inspect = a.opts.Inspect
	sys.emit = a.emitted
	sys.changed = a.notifySubscribers
	sys.rootErr = func(err error, _ any) {
		if a.callErr == nil {
			a.callErr = err
		}
	}
	a.sys = sys
	a.callErr = nil
	var root *cell
	if a.opts.Snapshot != nil {
		root = sys.adoptRoot(a.m, a.opts.Snapshot, true)
		sys.root = root
	} else {
		input, err := decodeJSONValue(a.opts.Input)
		if err != nil {
			return err
		}
		root = &cell{sys: sys, session: rootSession, numbered: true, m: a.m, kind: cellMachine, input: input, hasInput: a.opts.Input != nil}
		sys.root = root
		sys.register(root)
		if err := root.initMachine(cloneContext(a.opts.Context)); err != nil && a.callErr == nil {
			a.callErr = err
		}
	}
	_ = root.start() // a root has no system id, so its start cannot fail
	a.afterEntry()
	return a.callResult()
}

// sendSystem is Send for a machine with actors.
func (a *Actor) sendSystem(ev Event) error {
	root := a.sys.root
	if root.proc != procRunning {
		return nil
	}
	a.callErr, a.sys.steps = nil, 0
	root.send(ev)
	a.afterEntry()
	return a.callResult()
}

// callResult is the error of the current call: the one the root ended
// with, or the step budget's.
func (a *Actor) callResult() error {
	if h := a.sys.halted; h != nil {
		return h
	}
	err := a.callErr
	a.callErr = nil
	return err
}

// afterEntry ends an entry point: promise settlements queued meanwhile are
// delivered (after the SimulatedClock's whole walk when it is the clock
// that called, as XState's SimulatedClock does), and a system that ran out
// of steps stops.
func (a *Actor) afterEntry() {
	sys := a.sys
	if sys.pendingMicro() && sys.halted == nil {
		if sc, ok := a.clock.(*SimulatedClock); ok && sc.deferIfFlushing(func() { a.enterLocked(func() {}) }) {
			return
		}
		sys.drain()
	}
	if len(sys.retired) > 0 {
		sys.recycle()
	}
	if h := sys.halted; h != nil && sys.root.proc != procStopped {
		// No caller can be told which event was too much: the root keeps
		// its state with status error, and the system stops.
		sys.root.snap = failedSnapshot(sys.root.snap, h)
		sys.stopAll()
		a.notifySubscribers()
	}
}

// enterLocked runs f as an entry point of the actor: for its clock's
// timers and the declarative actors' timers.
func (a *Actor) enterLocked(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sys == nil {
		return
	}
	a.sys.steps = 0 // a new call, with its own step budget
	f()
	a.afterEntry()
}

// post runs f later as an entry point: for promise results and callbacks'
// events from other goroutines, one at a time, in the order they came.
func (a *Actor) post(f func()) {
	a.inboxMu.Lock()
	a.inbox = append(a.inbox, f)
	start := !a.draining
	a.draining = true
	a.inboxMu.Unlock()
	if start {
		go a.runInbox()
	}
}

func (a *Actor) runInbox() {
	for {
		a.inboxMu.Lock()
		if len(a.inbox) == 0 {
			a.draining = false
			a.inboxMu.Unlock()
			return
		}
		f := a.inbox[0]
		a.inbox[0] = nil
		a.inbox = a.inbox[1:]
		a.inboxMu.Unlock()
		a.enterLocked(f)
	}
}

// stopSystem is Stop for a machine with actors: the root processes
// xstate.stop (its children stop), then whatever else still runs in the
// system ends.
func (a *Actor) stopSystem() {
	a.sys.root.stop()
	a.sys.stopAll()
	if a.cancel != nil {
		a.cancel()
	}
	a.notifySubscribers()
}

// notifySubscribers calls the functions registered with Subscribe with the
// root's snapshot.
func (a *Actor) notifySubscribers() {
	if len(a.subs) == 0 || a.sys == nil {
		return
	}
	s := a.sys.root.materialize()
	for _, f := range a.subs {
		f(s)
	}
}

// On registers f for the events the actor's machine emits (xstate.emit)
// whose type is typ, or every one for "*", until the returned function is
// called. As in XState, the functions for the type run before those for
// "*"; they run with the actor locked, once the macrostep that emitted
// the event is over, and must not call the actor's methods.
func (a *Actor) On(typ string, f func(Event)) (unsubscribe func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.listeners == nil {
		a.listeners = map[int]emitListener{}
	}
	id := a.nextSub
	a.nextSub++
	a.listeners[id] = emitListener{typ: typ, f: f}
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.listeners, id)
	}
}

// emitted delivers an event the root emitted.
func (a *Actor) emitted(ev Event) {
	ids := make([]int, 0, len(a.listeners))
	for id := range a.listeners {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, pass := range []bool{false, true} {
		for _, id := range ids {
			l := a.listeners[id]
			if (l.typ == "*") == pass && (pass || l.typ == ev.Type) {
				l.f(ev)
			}
		}
	}
}

// Deliver feeds back what a child of the actor's system reports, as
// [Machine.Deliver] does for the pure API: typically a child whose logic
// is a nil [Promise], run elsewhere, found by its session in
// [Snapshot.Children]. A report for a child that is no longer running
// changes nothing and returns [ErrNoChild].
func (a *Actor) Deliver(ctx context.Context, rep Report) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sys == nil {
		return ErrNoChild
	}
	c := a.sys.lookup(rep.Session)
	if c == nil || c.kind == cellMachine || c.proc != procRunning || c.status != StatusActive {
		return ErrNoChild
	}
	a.callErr, a.sys.steps = nil, 0
	c.deliver(rep)
	a.afterEntry()
	return a.callResult()
}

// sessionIDs hands out session ids, "x:N", as substrings of one string
// that holds the ids of a run of numbers with as many digits: an actor
// system that starts many children allocates once per run rather than once
// per child. A run grows with the ids handed out, up to maxSessionRun.
type sessionIDs struct {
	ids        string // the ids of from, from+1, … from+n-1, each w bytes long
	from, n, w uint64
	handed     uint64
}

const maxSessionRun = 32

// id returns the session id of number n.
func (s *sessionIDs) id(n uint64) string {
	if n < s.from || n-s.from >= s.n {
		s.fill(n)
	}
	s.handed++
	i := (n - s.from) * s.w
	return s.ids[i : i+s.w]
}

// fill writes the ids of a run that starts at n.
func (s *sessionIDs) fill(n uint64) {
	// room: the numbers from n on with as many digits as n.
	digits, limit := uint64(1), uint64(10)
	for n >= limit && limit <= math.MaxUint64/10 {
		digits, limit = digits+1, limit*10
	}
	room := limit - n
	if n >= limit { // 20 digits: the numbers up to math.MaxUint64
		digits, room = digits+1, math.MaxUint64-n+1
	}
	run := min(max(s.handed, 1), maxSessionRun, room)
	s.from, s.n, s.w = n, run, digits+2
	var b strings.Builder
	b.Grow(int(run * s.w))
	var d [20]byte
	for k := range run {
		b.WriteString("x:")
		b.Write(strconv.AppendUint(d[:0], n+k, 10))
	}
	s.ids = b.String()
}
