// This file defines the actor system a machine with actors runs in: the
// root and its descendants as cells (XState's Actor class), each with its
// mailbox, processing status and deferred effects, and the system that
// relays events between them, keeps their system ids and runs the
// promise settlements queued as microtasks. It follows XState's
// createActor.ts and system.ts step by step, because the order in which
// XState starts children, flushes deferred effects and processes mailboxes
// is observable: which of two events due at once comes first, whether a
// child hears an event sent in an exit action, what a parent receives
// during its own start.
//
// An Actor runs a system for its whole life; the pure functions of a
// machine with actors build one from the snapshot for each call (the
// children's states are part of the snapshot), in which promise and
// callback children are external: starting, stopping or sending to them
// becomes an Effect for the caller.

package statechart

import (
	"container/heap"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
)

// procStatus is XState's ProcessingStatus of an actor.
type procStatus uint8

const (
	procNotStarted procStatus = iota
	procRunning
	procStopped
)

// cellKind is the kind of logic a cell runs.
type cellKind uint8

const (
	cellMachine cellKind = iota
	cellPromise
	cellCallback
	cellDeclPromise
	cellDeclCallback
)

func kindOf(l ActorLogic) cellKind {
	switch l.(type) {
	case Promise:
		return cellPromise
	case Callback:
		return cellCallback
	case *declPromise:
		return cellDeclPromise
	case *declCallback:
		return cellDeclCallback
	}
	return cellMachine
}

// cell is one actor of a running system.
type cell struct {
	sys    *system
	parent *cell
	id     string // its id under the parent; "" for the root
	// session: its session id; for a numbered cell, "x:<sessionN>", made
	// when first asked for (see sessionID), since most are never read.
	session  string
	sessionN uint64
	numbered bool
	src      string
	systemID string
	sync     bool // syncSnapshot: relays its snapshots to the parent once started
	logic    ActorLogic
	kind     cellKind
	restored bool       // built from a snapshot given to an Actor (see ActorOptions.Resume)
	run      ActorLogic // the logic running: logic, or what ActorOptions.Resume gave

	proc       procStatus
	queue      []Event // the mailbox: the events from qhead on wait
	qhead      int
	processing bool     // the mailbox is being flushed
	mbActive   bool     // the mailbox was started
	deferred   []effect // the effects from dhead on wait
	dhead      int
	initialFx  bool // deferred holds the effects of the initial macrostep (see executeInitialEffects)

	// machine cells
	m     *Machine
	snap  *Snapshot
	armed map[uint64]func() bool // clock registrations of its delayed events
	// mine is the snapshot processMachine last made, while it is snap:
	// no one else holds it (every snapshot handed out is a clone), so
	// once replaced it becomes spare, the buffer the next macrostep
	// works on.
	mine, spare *Snapshot
	// r: the runner of the cell's macrosteps, taken from the machine's
	// pool at the first and given back when the cell stops, so that its
	// buffers and step cache stay with the cell. synced: the snapshot
	// whose nodes r's active states are (the one its last macrostep made),
	// while it is snap.
	r      *runner
	synced *Snapshot
	// ctxOwned: snap's context map is the cell's alone (made by one of
	// its macrosteps, never handed out since: materialize shares it), so
	// a macrostep may assign in place, with an undo log.
	ctxOwned bool
	// goCode: the machine has a Go guard or action (1) or none (-1); 0
	// until asked (see lendDoneData).
	goCode int8
	// myExt, myList: snap's ext and children list, when the cell's
	// macrosteps made them and no snapshot handed out shares them;
	// madeExt, madeList: those the macrostep under way made; spareExt,
	// spareLists: buffers no one holds, for the next change of the
	// children (see cell.ownChildren and cell.retire).
	myExt, madeExt, spareExt *snapshotExt
	myList, madeList         *childList
	spareLists               [2]*childList

	// promise and callback cells
	status    Status
	input     any
	hasInput  bool
	output    any
	hasOutput bool
	errValue  any
	cancel    context.CancelFunc // Go logic: cancels its context
	cleanup   func()             // a Callback's cleanup
	stops     []func() bool      // clock registrations of declarative logic
	cb        *callbackGate      // a Go Callback's sendBack and receive functions

	names childNames // of a child
	// first: room for the initial snapshot of a child machine, in the
	// cell's allocation (see machineCell), until initMachine uses it;
	// home: that room, for as long as the cell lives, so that a cell used
	// again (see recycle) has it for its next initial snapshot.
	first, home *snapshotPair
	// parented: the cell has had a child, whose parent it stays even
	// once stopped, so it is never used again for another actor.
	parented bool
}

// childNames are what the events a child sends its parent about itself
// carry: the done event's type and the id as an event field, made once
// per invoke or spawn rather than once per event.
type childNames struct {
	doneType string // "" until needed, in a child adopted from a snapshot
	id       any
}

func newChildNames(id string) childNames {
	return childNames{doneType: doneActorPrefix + id, id: id}
}

// effectKind is the kind of a deferred effect (XState's actorScope.defer).
type effectKind uint8

const (
	fxArm      effectKind = iota // register a delayed event with the clock
	fxDisarm                     // cancel it
	fxStart                      // start a child
	fxStop                       // stop a child
	fxSend                       // relay an event to an actor
	fxEmit                       // emit an event to the actor's listeners
	fxFail                       // a custom action of the initial macrostep failed: nothing after it runs
	fxStopExec                   // a stop decided during an initial macrostep (see runner.stopCell)
)

// effect is one deferred effect of a cell: what XState's built-in actions
// defer while a transition is computed, run in order once the snapshot is
// in place.
type effect struct {
	kind  effectKind
	cell  *cell // fxStart, fxStop: the child; fxSend: the target
	seq   uint64
	event Event
	id    string // fxSend: the id of a child invoked by the state being entered, until it exists; fxDisarm: the send id
	err   error  // fxFail
}

// Inspection is one event an actor of an [Actor]'s system takes from its
// mailbox (see [ActorOptions.Inspect]).
type Inspection struct {
	// Actor is the path of child ids from the root to the actor; empty
	// for the root.
	Actor []string
	Event Event
	// Snapshot is the actor's snapshot before it takes the event (nil for
	// an actor that is not a machine), to be read during the call only.
	Snapshot *Snapshot
}

// system is a running actor system.
type system struct {
	ctx       context.Context
	root      *cell
	clock     Clock // nil in the pure mode
	now       time.Time
	pure      bool
	sessions  uint64
	ids       sessionIDs       // the strings of the session ids
	bySession map[uint64]*cell // by the number of a session id "x:N" (see sessionNumber)
	byOther   map[string]*cell // by any other session id (one a snapshot from elsewhere gave)
	keyed     map[string]*cell // by system id
	seq       uint64           // scheduling counter of every delayed event of the system
	micro     []microtask      // promise settlements waiting for the synchronous work to end, from mhead on
	mhead     int
	moved     any      // the output of the declarative promise that settled last, a copy no one else holds (see runner.movedOutput)
	effects   []Effect // pure mode: for the caller
	due       *dueHeap // pure mode, AdvanceEffects: the delayed events due, in firing order
	maxSteps  int
	steps     int
	halted    *StepBudgetError // the call ran out of steps: everything stops

	// doneData: the data map of done events, lent to one at a time while
	// no one can keep the event (see cell.doneEventData); doneLent: lent
	// to an event not processed yet.
	doneData map[string]any
	doneLent bool
	// retired: cells that ended during the entry point under way and may
	// be used again (see retire); free, freeMachines: declarative promise
	// cells and child machine cells no one refers to any more, for
	// createChild to use again (see recycle).
	retired, free, freeMachines []*cell

	// Set by an Actor.
	inspect func(Inspection)
	emit    func(Event)                   // the root emitted an event
	changed func()                        // the root's snapshot changed
	enter   func(func())                  // run f now as an entry point (locks the actor)
	post    func(func())                  // run f later as an entry point, in order
	resume  func(Child) ActorLogic        // ActorOptions.Resume
	rootErr func(err error, errValue any) // the root ended in status error
}

func newSystem(ctx context.Context, m *Machine) *system {
	return &system{
		ctx:       ctx,
		bySession: map[uint64]*cell{},
		keyed:     map[string]*cell{},
		maxSteps:  m.opts.MaxSteps,
		sessions:  1, // x:0 is the root
	}
}

const rootSession = "x:0"

// nextSession returns the number of a new session.
func (sys *system) nextSession() uint64 {
	n := sys.sessions
	sys.sessions++
	return n
}

// sessionNumber returns N for a session id "x:N" written as sessionIDs
// writes it (decimal, no leading zero).
func sessionNumber(s string) (uint64, bool) {
	if len(s) < 3 || s[:2] != "x:" || (s[2] == '0' && len(s) > 3) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[2:], 10, 64)
	return n, err == nil
}

// setSession gives c session id s.
func (c *cell) setSession(s string) {
	c.session = s
	c.sessionN, c.numbered = sessionNumber(s)
}

// sessionID returns c's session id.
func (c *cell) sessionID() string {
	if c.session == "" {
		c.session = c.sys.ids.id(c.sessionN)
	}
	return c.session
}

// lookup returns the cell registered under session id s, nil when none is.
func (sys *system) lookup(s string) *cell {
	if n, ok := sessionNumber(s); ok {
		return sys.bySession[n]
	}
	return sys.byOther[s]
}

func (sys *system) timeNow() time.Time {
	if sys.clock != nil {
		return sys.clock.Now()
	}
	return sys.now
}

// count charges one processed event and its microsteps to the call's step
// budget; past it the system halts.
func (sys *system) count(steps int, ev Event) bool {
	if sys.halted != nil {
		return false
	}
	sys.steps += steps
	if sys.steps > sys.maxSteps {
		sys.halted = &StepBudgetError{Event: ev.Type, Limit: sys.maxSteps}
		return false
	}
	return true
}

func (sys *system) register(c *cell) {
	if c.numbered {
		sys.bySession[c.sessionN] = c
		return
	}
	if sys.byOther == nil {
		sys.byOther = map[string]*cell{}
	}
	sys.byOther[c.session] = c
}

func (sys *system) unregister(c *cell) {
	if c.numbered {
		if sys.bySession[c.sessionN] == c {
			delete(sys.bySession, c.sessionN)
		}
	} else if sys.byOther[c.session] == c {
		delete(sys.byOther, c.session)
	}
	if c.systemID != "" && sys.keyed[c.systemID] == c {
		delete(sys.keyed, c.systemID)
	}
}

// unregisterRecursively unregisters a child about to be stopped and its
// descendants, so that their system ids are free at once (XState's
// executeStop). Like XState, it fails on the entry an invoke or spawn of
// an unknown src left among a descendant's children.
func (sys *system) unregisterRecursively(c *cell) error {
	if c.kind == cellMachine && c.snap != nil {
		for _, e := range c.snap.x().children.all() {
			if e.cell == nil {
				return fmt.Errorf("cannot stop actor %q: its child %q has no actor logic (unknown src)", c.id, e.id)
			}
			if err := sys.unregisterRecursively(e.cell); err != nil {
				return err
			}
		}
	}
	sys.unregister(c)
	return nil
}

// ghostError is the error of a start that finds, among the children, the
// entry an invoke or spawn of an unknown src left.
func ghostError(e childEntry) error {
	if e.src != "" {
		return fmt.Errorf("invoke or spawn of %q (id %q): no actor logic is named %q", e.src, e.id, e.src)
	}
	return fmt.Errorf("invoke or spawn of %q: no actor logic has that src", e.id)
}

// setSystemID registers c under its system id; another actor holding it is
// an error, as in XState.
func (sys *system) setSystemID(c *cell) error {
	if other, ok := sys.keyed[c.systemID]; ok && other != c {
		return fmt.Errorf("actor with system ID %q already exists", c.systemID)
	}
	sys.keyed[c.systemID] = c
	return nil
}

// path returns the ids from the root's child down to c.
func (c *cell) path() []string {
	if c.parent == nil {
		return nil
	}
	return append(c.parent.path(), c.id)
}

func (c *cell) ref() ChildRef {
	return ChildRef{Session: c.sessionID(), Path: c.path(), Src: c.src, SystemID: c.systemID}
}

// statusNow is the status of the cell's snapshot.
func (c *cell) statusNow() Status {
	if c.kind == cellMachine {
		return c.snap.status
	}
	return c.status
}

// external reports whether the cell's logic runs outside the system: in
// the pure mode, every promise and callback.
func (c *cell) external() bool { return c.sys.pure && c.kind != cellMachine }

// initEvent is xstate.init, with the input when there is one.
func initEvent(input any, hasInput bool) Event {
	ev := Event{Type: EventInit}
	if hasInput {
		ev.Data = map[string]any{"input": input}
	}
	return ev
}

// createChild is XState's createActor for a spawned or invoked child: the
// cell, registered under its system id, and for a child machine its
// initial snapshot, computed now with its deferred effects kept for its
// start. It returns nil for a src without logic.
func (sys *system) createChild(parent *cell, def *spawnDef, input any, hasInput bool) (*cell, error) {
	if def.logic == nil {
		return nil, nil
	}
	// A child machine whose initial snapshot is its machine's gets it, and
	// the spare buffer of its first macrostep, in the cell's allocation.
	var c *cell
	var pair *snapshotPair
	if _, ok := def.logic.(*declPromise); ok {
		c = popCell(&sys.free)
	} else if m, ok := def.logic.(*Machine); ok && !hasInput {
		if t := m.plainInitial.Load(); t != nil && len(t.nodes) <= len(snapshotCell{}.nodes) {
			if c = popCell(&sys.freeMachines); c != nil {
				pair = c.home
			} else {
				mc := new(machineCell)
				c, pair = &mc.cell, &mc.first
			}
		}
	}
	if c == nil {
		c = new(cell)
	}
	*c = cell{
		sys: sys, parent: parent, id: def.id, sessionN: sys.nextSession(), numbered: true, src: def.src,
		systemID: def.systemID, sync: def.sync, logic: def.logic, kind: kindOf(def.logic),
		input: input, hasInput: hasInput, names: def.names, first: pair, home: pair,
	}
	if parent != nil {
		parent.parented = true
	}
	if c.systemID != "" {
		if err := sys.setSystemID(c); err != nil {
			return nil, err
		}
	}
	sys.register(c)
	if c.kind == cellMachine {
		c.m = def.logic.(*Machine)
		c.initMachine(nil)
		if c.snap.status != StatusActive && c.systemID != "" && sys.keyed[c.systemID] == c {
			delete(sys.keyed, c.systemID)
		}
	} else {
		c.status = StatusActive
	}
	return c, nil
}

// initMachine computes the initial snapshot of a machine cell (XState's
// getInitialSnapshot) with the given context (nil: the machine's). The
// effects of the initial macrostep wait for the cell's start; when a custom
// action failed, the start ends the cell in status error, and nothing else
// runs, as in XState, which runs custom actions of the initial macrostep
// only once the actor starts.
func (c *cell) initMachine(context map[string]any) (err error) {
	ev := initEvent(c.input, c.hasInput)
	plain := context == nil && !c.hasInput
	if t := c.m.plainInitial.Load(); plain && t != nil {
		c.sys.count(t.steps, ev)
		c.snap, c.spare = t.snapshot(c.m, c.first, c.sys.inspect == nil)
		c.first = nil
		c.deferred, c.initialFx = nil, true
		return nil
	}
	c.m.initialSnapshot(c.sys.ctx, context, ev, c.sys.timeNow(), c, func(r *runner, computed, failed *Snapshot) {
		c.sys.count(r.steps, ev)
		switch {
		case failed != nil:
			c.snap, err = failed, failed.err
		case r.customErr != nil:
			c.snap, c.deferred = computed, []effect{{kind: fxFail, err: r.customError(ev)}}
		default:
			c.snap, c.deferred, c.initialFx = computed, append([]effect(nil), r.fx...), true
			if plain {
				c.m.rememberInitial(r, computed)
			}
		}
	})
	return err
}

// initialTemplate is the initial snapshot of a machine started without
// input or context, when nothing but the machine decided it: its
// configuration and context, and the microsteps it took.
type initialTemplate struct {
	nodes []int
	// context: never handed out; shared by the snapshots snapshot makes
	// when shared, for a machine whose guards and actions are
	// declarative: nothing changes a context map in place but a cell's
	// assigns, and only in a map one of its macrosteps made (see
	// cell.ctxOwned), and materialize gives a copy of it.
	context map[string]any
	shared  bool
	steps   int
}

// rememberInitial keeps s, the initial snapshot runner r just computed
// for a start without input or context, as the machine's plainInitial
// when its steps were the machine's alone: no implementation saw the
// context (a Go guard or action may decide otherwise next time), no
// effect, child, delayed event, history or output came of it.
func (m *Machine) rememberInitial(r *runner, s *Snapshot) {
	if r.contextSeen || len(r.fx) > 0 || r.customErr != nil || s.status != StatusActive ||
		s.ext != nil || s.history != nil || s.timers != nil || s.seq != 0 || m.plainInitial.Load() != nil {
		return
	}
	t := &initialTemplate{nodes: slices.Clone(s.nodes), steps: r.steps}
	if s.context != nil {
		t.context = cloneContext(s.context)
	}
	t.shared = !m.opts.Implementations.hasGoCode()
	m.plainInitial.Store(t)
}

// hasGoCode reports whether a guard or action of impl is a Go function
// (one ParseImplementations did not make as a declarative guard or
// assign), which is given the context.
func (impl *Implementations) hasGoCode() bool {
	for name, f := range impl.Guards {
		if impl.declared.guard(name, f) == nil {
			return true
		}
	}
	for name, f := range impl.Actions {
		if impl.declared.action(name, f) == nil {
			return true
		}
	}
	return false
}

// snapshot returns a new snapshot of the template, whose context is the
// caller's own unless the template's is shared and share allows it (no
// inspection would see the map; materialize hands out a copy), and a
// spare buffer for the first macrostep from it (nil
// when it could not share the snapshot's allocation), made in pair when
// pair is not nil (the configuration then fits in it).
func (t *initialTemplate) snapshot(m *Machine, pair *snapshotPair, share bool) (s, spare *Snapshot) {
	ctx := t.context
	if !t.shared || !share {
		ctx = cloneContext(ctx)
	}
	if pair != nil && len(t.nodes) <= len(snapshotCell{}.nodes) {
		return pair.fill(m, t.nodes, ctx)
	}
	return newSnapshotWithSpare(m, t.nodes, ctx)
}

// machineCell is the allocation of a child machine's cell with room for
// its initial snapshot and spare buffer.
type machineCell struct {
	cell  cell
	first snapshotPair
}

// executeInitialEffects is the first of the two rounds in which XState
// runs the effects of an initial macrostep, once the actor starts: each
// action is executed, in order, which for a stop of a child that has not
// started stops it at once, and defers everything else to the second
// round. So a child spawned and stopped during the initial macrostep never
// starts, whatever came between.
func (c *cell) executeInitialEffects() {
	first := c.deferred[c.dhead:]
	c.deferred, c.dhead = nil, 0
	for _, e := range first {
		switch e.kind {
		case fxFail:
			c.deferred = []effect{e}
			return
		case fxStopExec:
			if err := c.sys.stopExec(e.cell, func() { c.deferred = append(c.deferred, effect{kind: fxStop, cell: e.cell}) }); err != nil {
				c.deferred = []effect{{kind: fxFail, err: err}}
				return
			}
		default:
			c.deferred = append(c.deferred, e)
		}
	}
}

// start is XState's Actor.start. Like XState, it registers the actor's
// system id again, and fails, before the actor runs, when another actor
// took the id meanwhile (one created while this one was done at creation,
// so unregistered); the action or logic that started it fails with it.
func (c *cell) start() error {
	sys := c.sys
	if c.proc == procRunning || sys.halted != nil {
		return nil
	}
	sys.register(c)
	if c.systemID != "" {
		if err := sys.setSystemID(c); err != nil {
			return err
		}
	}
	c.proc = procRunning
	switch c.statusNow() {
	case StatusDone:
		c.update(nil)
		return nil
	case StatusError:
		c.reportError()
		return nil
	}
	if c.parent == nil && c.restored && sys.clock != nil {
		c.armAll() // a restored snapshot's pending delayed events
	}
	switch c.kind {
	case cellMachine:
		// XState's machine logic start: the children of the snapshot that
		// are active start now, before any deferred effect.
		for _, e := range c.snap.x().children.all() {
			if e.ghost() {
				// XState reads the snapshot of an actor that is not there.
				c.snap = failedSnapshot(c.snap, &RuntimeError{Event: EventInit, Err: ghostError(e)})
				c.reportError()
				return nil
			}
			if e.cell.statusNow() == StatusActive {
				if err := e.cell.start(); err != nil {
					c.snap = failedSnapshot(c.snap, &RuntimeError{Event: EventInit, Err: err})
					c.reportError()
					return nil
				}
			}
		}
	default:
		if err := c.startLogic(); err != nil {
			c.status, c.errValue = StatusError, err
			c.reportError()
			return nil
		}
	}
	c.update(nil)
	c.mbActive = true
	if !c.processing && c.qhead < len(c.queue) {
		c.flushMailbox()
	}
	return nil
}

// send is XState's Actor._send: the event goes to the mailbox, and is
// processed at once when the mailbox is started and idle.
func (c *cell) send(ev Event) {
	if c.proc == procStopped || c.sys.halted != nil {
		return
	}
	if c.processing || !c.mbActive || c.qhead < len(c.queue) {
		c.queue = append(c.queue, ev)
		if !c.processing && c.mbActive {
			c.flushMailbox()
		}
		return
	}
	// An idle, empty mailbox: the event is processed at once, without
	// passing through the queue (which a child that takes one event,
	// xstate.stop, would allocate for it alone).
	c.processing = true
	c.process(ev)
	c.flushQueue()
}

func (c *cell) flushMailbox() {
	c.processing = true
	c.flushQueue()
}

// flushQueue processes the mailbox's events until none is left, and ends
// the flush.
func (c *cell) flushQueue() {
	for c.qhead < len(c.queue) && c.sys.halted == nil {
		ev := c.queue[c.qhead]
		c.queue[c.qhead] = Event{}
		c.qhead++
		c.process(ev)
	}
	if c.qhead == len(c.queue) {
		c.queue, c.qhead = c.queue[:0], 0 // keep the array for the next events
	}
	c.processing = false
}

// clearMailbox drops the events waiting in the mailbox (XState's
// mailbox.clear keeps only the one being processed).
func (c *cell) clearMailbox() {
	clear(c.queue[c.qhead:])
	c.queue, c.qhead = c.queue[:0], 0
}

// process is XState's Actor._process for one event of the mailbox.
func (c *cell) process(ev Event) {
	sys := c.sys
	if sys.inspect != nil && ev.Type != EventStop {
		c.leaveSlots()
		sys.inspect(Inspection{Actor: c.path(), Event: ev, Snapshot: c.snap})
	}
	if c.kind == cellMachine {
		c.processMachine(ev)
		if sys.doneLent && sameMap(ev.Data, sys.doneData) {
			sys.doneLent = false // the event is over
		}
		return
	}
	if !sys.count(1, ev) {
		return
	}
	if ev.Type == EventStop {
		c.stopLogic()
		c.update(nil)
		c.stopProcedure()
		return
	}
	c.receive(ev)
	c.update(nil)
}

// processMachine computes the macrostep of a machine cell for the event;
// when a guard or action fails, the cell keeps its snapshot with status
// error, as XState does.
func (c *cell) processMachine(ev Event) {
	sys := c.sys
	if ev.Type == EventStop {
		c.leaveSlots()
		if c.stopWithoutChildren(ev) {
			return
		}
	}
	r := c.r
	if r == nil {
		r = c.m.getRunner()
		c.r = r
	}
	c.madeExt, c.madeList = nil, nil
	if c.synced == c.snap && c.synced != nil {
		r.synced = true // see runner.synced
		if c.fastStep(ev) {
			return
		}
	}
	r.leaveSlots()
	next := c.work()
	c.synced = nil
	// Only delayed events need the time: a clock is read for machines
	// that have some (and, through r.clock, for a RaiseAfter of a Go
	// action).
	now := sys.now
	if sys.clock != nil && c.m.hasTimers {
		now = sys.clock.Now()
	}
	r.begin(sys.ctx, next, now)
	r.clock = sys.clock
	r.attach(c)
	if c.ctxOwned && sys.inspect == nil {
		r.grantContext()
	}
	r.macrostep(ev)
	r.endChildren()
	if !sys.count(r.steps+1, ev) {
		r.rollbackContext()
		c.ctxOwned = c.ctxOwned && !r.contextSeen
		c.spare = next
		c.idleRunner()
		return
	}
	if r.err != nil {
		r.rollbackContext()
		c.ctxOwned = false
		err := r.runtimeError(ev)
		c.spare = next
		c.idleRunner()
		c.snap = failedSnapshot(c.snap, err)
		c.reportError()
		return
	}
	// The runner's effects join the deferred ones before they run: the
	// effects may stop the cell, which gives its runner back.
	var fx []effect
	if c.initialFx {
		fx = append(fx, r.fx...)
	} else {
		c.takeEffects(r)
	}
	clear(r.fx)
	if r.replacedContext {
		c.ctxOwned = !r.contextSeen // a map this macrostep made
	} else {
		c.ctxOwned = c.ctxOwned && !r.contextSeen
	}
	c.idleRunner()
	if c.snap == c.mine {
		c.spare = c.snap
	}
	c.retire(c.snap, next)
	c.snap, c.mine = next, next
	if c.r != nil {
		c.synced = next
	}
	c.update(fx)
	if ev.Type == EventStop {
		c.stopProcedure()
	}
}

// stopWithoutChildren is processMachine for xstate.stop, ev, when the
// cell has no children and its initial effects have run: the macrostep
// only sets the status to stopped and drops the delayed events (see
// runner.macrostep), so no runner is needed. It reports false, having
// changed nothing, when the general path must take the event.
func (c *cell) stopWithoutChildren(ev Event) bool {
	if c.initialFx || c.snap.x().children.len() > 0 {
		return false
	}
	if !c.sys.count(1, ev) { // the macrostep, which takes no microstep
		return true
	}
	next := c.snap
	if next != c.mine {
		next = c.work()
		if c.synced == c.snap {
			c.synced = next // the same nodes
		}
		c.retire(c.snap, next)
		c.snap, c.mine = next, next
	}
	next.status = StatusStopped
	next.clearTimers()
	c.update(nil)
	c.stopProcedure()
	if c.parent != nil {
		c.sys.retire(c)
	}
	return true
}

// fastStep takes the macrostep of ev on next, a copy of the cell's
// snapshot, by runner.fastStep, when the step cache knows all of it and
// nothing in it can fail (declarative guards and assigns, and sends to
// actors that exist, whose effects run after, as on the general path),
// and the system's step budget has room for it. It
// reports false, having changed nothing, when the general path must take
// the event.
func (c *cell) fastStep(ev Event) bool {
	sys, r := c.sys, c.r
	// A step counts as one microstep and the macrostep itself (see
	// processMachine).
	if sys.inspect != nil || sys.halted != nil || c.initialFx || sys.steps+2 > sys.maxSteps {
		return false
	}
	// The step changes next in place, c.snap itself when no one else
	// holds it: nothing in the step can fail.
	next, inPlace := c.snap, c.snap == c.mine
	if !inPlace {
		next = c.work()
	}
	oldExt, oldList := next.ext, next.x().children
	r.s = next
	r.attach(c)
	r.fx, r.deferredInvokes, r.pendingFx, r.pendingTimers = r.fx[:0], nil, r.pendingFx[:0], r.pendingTimers[:0]
	r.ownsChildren = false
	if !r.fastStep(next, ev, c.ctxOwned, true, false) {
		r.s = nil
		if !inPlace {
			c.spare = next
		}
		return false
	}
	r.endChildren()
	r.synced = false
	c.takeEffects(r)
	c.idleRunner()
	sys.count(2, ev)
	if !inPlace && c.snap == c.mine {
		c.spare = c.snap
	}
	c.retireParts(oldExt, oldList, next)
	c.snap, c.mine, c.synced = next, next, next
	c.update(nil)
	return true
}

// takeEffects moves the effects of the macrostep r ran to the cell's
// deferred ones: when none waits, by trading the two slices' arrays
// rather than copying.
func (c *cell) takeEffects(r *runner) {
	if c.dhead == len(c.deferred) {
		c.deferred, r.fx, c.dhead = r.fx, c.deferred[:0], 0
		return
	}
	c.deferred = append(c.deferred, r.fx...)
	clear(r.fx)
	r.fx = r.fx[:0]
}

// idleRunner drops what the cell's runner holds of the macrostep it ran
// (putRunner's part), keeping the runner for the next; the system of one
// pure call gives it back at once.
func (c *cell) idleRunner() {
	if c.sys.pure {
		c.releaseRunner()
		return
	}
	r := c.r
	r.ctx, r.s, r.err, r.clock = nil, nil, nil, nil
}

// leaveSlots writes the context keys the cell's fast steps keep in its
// runner's slots back to its snapshot's context map (see slots.go).
func (c *cell) leaveSlots() {
	if c.r != nil {
		c.r.leaveSlots()
	}
}

// releaseRunner gives the cell's runner back to the machine's pool.
func (c *cell) releaseRunner() {
	if c.r != nil {
		c.r.leaveSlots()
		c.r.synced = false
		c.m.putRunner(c.r)
		c.r, c.synced = nil, nil
	}
}

// work returns the snapshot a macrostep of the cell works on: a copy of
// its snapshot, in the spare buffer when there is one.
func (c *cell) work() *Snapshot {
	w := c.spare
	if w == nil {
		return c.snap.clone()
	}
	c.spare = nil
	nodes := w.nodes[:0]
	*w = *c.snap
	w.nodes = append(nodes, c.snap.nodes...)
	return w
}

// failedSnapshot is s with status error: XState keeps the snapshot of
// before the event, children included.
func failedSnapshot(s *Snapshot, err error) *Snapshot {
	f := s.clone()
	f.status, f.err, f.timers = StatusError, err, nil
	return f
}

// update is XState's Actor.update: the deferred effects run, in order, and
// then the status decides: an active actor notifies, a done one stops and
// tells its parent, an errored one stops and reports its error.
func (c *cell) update(fx []effect) {
	sys := c.sys
	if c.initialFx {
		c.initialFx = false
		c.executeInitialEffects()
	}
	if len(fx) > 0 {
		c.deferred = append(c.deferred, fx...)
	}
	for c.dhead < len(c.deferred) && sys.halted == nil {
		e := c.deferred[c.dhead]
		c.deferred[c.dhead] = effect{}
		c.dhead++
		if err := c.exec(e); err != nil {
			c.dropDeferred()
			if c.kind == cellMachine {
				c.snap = failedSnapshot(c.snap, err)
			} else {
				c.status, c.errValue = StatusError, err
			}
		}
	}
	if c.dhead == len(c.deferred) {
		c.deferred, c.dhead = c.deferred[:0], 0 // keep the array for the next effects
	}
	switch c.statusNow() {
	case StatusActive:
		c.notify()
	case StatusDone:
		c.notify()
		c.stopProcedure()
		if c.parent != nil {
			if c.names.doneType == "" { // adopted from a snapshot
				c.names = newChildNames(c.id)
			}
			out, ok := c.outputNow()
			data := c.doneEventData()
			data["actorId"] = c.names.id
			if ok {
				data["output"] = out
			}
			c.parent.send(Event{Type: c.names.doneType, Data: data})
			sys.retire(c)
		}
	case StatusError:
		c.reportError()
		return
	}
	if c.parent == nil && sys.changed != nil {
		sys.changed()
	}
}

// doneEventData returns an empty map for the data of the done event c
// sends its parent: the system's map, lent until the parent has processed
// the event, when nothing can keep the event after that — no inspection,
// no Go guard or action of the parent, no caller of the pure API; a
// forwardTo keeps the map (see runner.keepEventData) — and a new one
// otherwise.
func (c *cell) doneEventData() map[string]any {
	sys, p := c.sys, c.parent
	if sys.pure || sys.inspect != nil || sys.doneLent || p.proc != procRunning || p.kind != cellMachine {
		return make(map[string]any, 2)
	}
	if p.goCode == 0 {
		p.goCode = -1
		if p.m.opts.Implementations.hasGoCode() {
			p.goCode = 1
		}
	}
	if p.goCode > 0 {
		return make(map[string]any, 2)
	}
	if sys.doneData == nil {
		sys.doneData = make(map[string]any, 2)
	} else {
		clear(sys.doneData)
	}
	sys.doneLent = true
	return sys.doneData
}

// maxFreeCells bounds the cells of each kind a system keeps for reuse.
const maxFreeCells = 8

// retire notes that c, done or stopped, may be used again once the entry
// point is over (see recycle), in a system that hands no cell out (no
// inspection, not the pure API): a declarative promise that settled at
// once, or a child machine in the allocation of a machineCell that never
// had a child (which would keep it as its parent) nor a delayed event
// (whose clock registration names it).
func (sys *system) retire(c *cell) {
	if sys.pure || sys.inspect != nil || c.restored {
		return
	}
	switch c.kind {
	case cellDeclPromise:
		if l, ok := c.run.(*declPromise); !ok || l.after > 0 {
			return
		}
	case cellMachine:
		if c.home == nil || c.parented || c.armed != nil {
			return
		}
	default:
		return
	}
	sys.retired = append(sys.retired, c)
}

// recycle, at the end of an entry point whose settlements all ran, keeps
// for createChild the retired cells nothing refers to: stopped, and no
// longer among their parent's children. Nothing else keeps a cell past
// its entry point: its effects and events have run, its microtasks too,
// it is unregistered, and every snapshot handed out holds records of
// children, not cells, with copies of a child machine's snapshot (see
// materialize), never the cell's own.
func (sys *system) recycle() {
	if sys.halted == nil && !sys.pendingMicro() {
		for _, c := range sys.retired {
			free := &sys.free
			if c.kind == cellMachine {
				free = &sys.freeMachines
			}
			if c.proc != procStopped || c.parent == nil || len(*free) >= maxFreeCells {
				continue
			}
			if e, ok := c.parent.snap.x().children.get(c.id); ok && e.cell == c {
				continue
			}
			*free = append(*free, c)
		}
	}
	clear(sys.retired)
	sys.retired = sys.retired[:0]
}

// popCell takes the last cell of free, nil when there is none.
func popCell(free *[]*cell) *cell {
	n := len(*free)
	if n == 0 {
		return nil
	}
	c := (*free)[n-1]
	(*free)[n-1] = nil
	*free = (*free)[:n-1]
	return c
}

// sameMap reports whether a and b are the same map (not merely equal
// ones); nil maps are never the same.
func sameMap(a, b map[string]any) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// dropDeferred drops the effects that wait.
func (c *cell) dropDeferred() {
	clear(c.deferred[c.dhead:])
	c.deferred, c.dhead = c.deferred[:0], 0
}

func (c *cell) outputNow() (any, bool) {
	if c.kind == cellMachine {
		return c.snap.x().output, c.snap.x().hasOutput
	}
	return c.output, c.hasOutput
}

func (c *cell) errValueNow() any {
	if c.kind == cellMachine {
		return c.snap.errorValue()
	}
	return c.errValue
}

// notify relays the snapshot of a child with syncSnapshot to its parent
// (XState's subscription made at start), while it is active.
func (c *cell) notify() {
	if !c.sync || c.parent == nil || c.proc != procRunning || c.statusNow() != StatusActive {
		return
	}
	var snap any
	if c.kind == cellMachine {
		snap = c.materialize()
	} else {
		m := map[string]any{"status": string(c.status)}
		if c.hasInput {
			m["input"] = cloneValue(c.input)
		}
		snap = m
	}
	c.parent.send(Event{Type: snapshotPrefix + c.id, Data: map[string]any{"snapshot": snap}})
}

// reportError is XState's Actor._error: the actor stops, and its parent
// gets xstate.error.actor.<id>.
func (c *cell) reportError() {
	c.stopProcedure()
	errValue := c.errValueNow()
	if c.parent == nil {
		if c.sys.rootErr != nil {
			c.sys.rootErr(errorOf(errValue), errValue)
		}
		if c.sys.changed != nil {
			c.sys.changed()
		}
		return
	}
	c.parent.send(Event{Type: errorActorPrefixDot + c.id, Data: map[string]any{"error": eventError(errValue), "actorId": c.id}})
}

// eventError is what an error event carries: a JSON value as it is, a Go
// error wrapped so that it reads, through JSON, as XState's Error object:
// {}.
func eventError(v any) any {
	if err, ok := v.(error); ok {
		if _, wrapped := err.(*ErrorObject); !wrapped {
			return &ErrorObject{Err: err}
		}
	}
	return v
}

// stopProcedure is XState's Actor._stopProcedure: the actor's delayed
// events are cancelled, its mailbox emptied, and it is unregistered.
func (c *cell) stopProcedure() {
	if c.proc != procRunning {
		return
	}
	c.disarmAll()
	c.clearMailbox()
	c.proc = procStopped
	c.spare = nil
	c.releaseRunner()
	c.sys.unregister(c)
}

// stop is XState's Actor._stop: a started actor processes xstate.stop.
func (c *cell) stop() {
	switch c.proc {
	case procStopped:
		return
	case procNotStarted:
		c.clearMailbox()
		c.proc = procStopped
		return
	}
	c.clearMailbox()
	c.send(Event{Type: EventStop})
}

// exec runs one deferred effect of c.
func (c *cell) exec(e effect) error {
	sys := c.sys
	switch e.kind {
	case fxFail:
		return e.err
	case fxStopExec:
		return sys.stopExec(e.cell, func() { c.deferred = append(c.deferred, effect{kind: fxStop, cell: e.cell}) })
	case fxArm:
		c.arm(e.seq)
	case fxDisarm:
		if stop, ok := c.armed[e.seq]; ok {
			stop()
			delete(c.armed, e.seq)
		}
		if sys.pure {
			sys.effects = append(sys.effects, Cancelled{Actor: c.path(), ID: e.id})
		}
	case fxStart:
		if e.cell.proc != procStopped {
			return e.cell.start()
		}
	case fxStop:
		e.cell.stop()
	case fxSend:
		if e.cell == nil {
			return fmt.Errorf("cannot send %q to %q: there is no such actor", e.event.Type, e.id)
		}
		e.cell.send(e.event)
	case fxEmit:
		if c.parent == nil {
			if sys.emit != nil {
				sys.emit(e.event)
			}
			if sys.pure {
				sys.effects = append(sys.effects, Emitted{Event: e.event})
			}
		}
	}
	return nil
}

// arm registers the pending delayed event seq of c with the clock (XState's
// scheduler.schedule); in the pure mode it becomes a Scheduled effect.
func (c *cell) arm(seq uint64) {
	sys := c.sys
	q := c.snap.timers
	if !q.has(seq) {
		return // cancelled in the same macrostep
	}
	t := q.heap[q.pos[seq]]
	if sys.pure {
		if sys.due != nil && !t.due.After(sys.now) {
			heap.Push(sys.due, dueTimer{c, t}) // due within the advance under way
		}
		to := c.path()
		if t.to != "" {
			if target := sys.lookup(t.to); target != nil {
				to = target.path()
			}
		}
		sys.effects = append(sys.effects, Scheduled{Actor: c.path(), To: to, ID: t.id, Event: t.event, Due: t.due})
		return
	}
	if sys.clock == nil {
		return
	}
	if c.armed == nil {
		c.armed = map[uint64]func() bool{}
	}
	if _, ok := c.armed[seq]; ok {
		return
	}
	d := max(0, t.due.Sub(sys.clock.Now()))
	c.armed[seq] = sys.clock.AfterFunc(d, func() { sys.enter(func() { sys.fire(c, seq) }) })
}

// armAll registers every pending delayed event of a restored machine cell
// and of its child machines, in scheduling order.
func (c *cell) armAll() {
	type pending struct {
		c   *cell
		seq uint64
	}
	var all []pending
	var walk func(x *cell)
	walk = func(x *cell) {
		if x.kind != cellMachine {
			return
		}
		for _, t := range x.snap.timers.bySeq() {
			all = append(all, pending{x, t.seq})
		}
		for _, e := range x.snap.x().children.all() {
			if e.cell != nil && e.cell.statusNow() == StatusActive {
				walk(e.cell)
			}
		}
	}
	walk(c)
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].seq < all[j-1].seq; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	for _, p := range all {
		p.c.arm(p.seq)
	}
}

func (c *cell) disarmAll() {
	for seq, stop := range c.armed {
		stop()
		delete(c.armed, seq)
	}
}

// fire delivers the delayed event seq of c, which is due: it leaves c's
// snapshot and goes to its target's mailbox.
func (sys *system) fire(c *cell, seq uint64) {
	delete(c.armed, seq)
	if c.kind != cellMachine || !c.snap.timers.has(seq) {
		return
	}
	s := c.snap.clone()
	s.timers = s.timers.clone()
	t := s.timers.take(seq)
	c.snap = s
	target := c
	if t.to != "" {
		target = sys.lookup(t.to)
		if target == nil {
			return // the target was stopped
		}
	}
	target.send(t.event)
}

// startLogic starts the logic of a promise or callback cell (XState's
// logic.start). A callback that panics fails the child.
func (c *cell) startLogic() error {
	sys := c.sys
	if c.status != StatusActive {
		return nil
	}
	if c.external() {
		sys.effects = append(sys.effects, StartChild{Child: c.ref(), Input: c.input, HasInput: c.hasInput})
		return nil
	}
	c.run = c.logic
	if c.restored && sys.resume != nil {
		if l := sys.resume(c.record().public(c.id)); l != nil {
			c.run = l
		}
	}
	switch l := c.run.(type) {
	case Promise:
		if l == nil {
			return nil // runs elsewhere: see Actor.Deliver
		}
		ctx, cancel := context.WithCancel(sys.ctx)
		c.cancel = cancel
		input := c.input
		post := sys.post
		go func() {
			out, err := runPromise(ctx, l, input)
			post(func() {
				if err != nil {
					c.settle(nil, false, err)
				} else {
					c.settle(out, true, nil)
				}
			})
		}()
	case Callback:
		if l == nil {
			return nil
		}
		return c.startCallback(l)
	case *declPromise:
		if l.after <= 0 {
			sys.micro = append(sys.micro, microtask{c: c, p: l})
		} else if sys.clock != nil {
			c.stops = append(c.stops, sys.clock.AfterFunc(l.after, func() {
				sys.enter(func() { sys.micro = append(sys.micro, microtask{c: c, p: l}) })
			}))
		}
	case *declCallback:
		sc := scope{input: c.input, hasInput: c.hasInput, actorScope: true}
		for _, s := range l.sends {
			ev := s.event.resolve(sc)
			if s.at <= 0 {
				c.parent.send(ev)
				continue
			}
			if sys.clock != nil {
				c.stops = append(c.stops, sys.clock.AfterFunc(s.at, func() {
					sys.enter(func() {
						if c.status != StatusStopped {
							c.parent.send(ev)
						}
					})
				}))
			}
		}
	}
	return nil
}

// runPromise calls a Promise; a panic becomes its error.
func runPromise(ctx context.Context, p Promise, input any) (out any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("promise panicked: %v", v)
		}
	}()
	return p(ctx, input)
}

// settle is the settlement of a promise cell: done with its output, or
// error. A settlement of a child that is no longer active is dropped, as
// in XState.
func (c *cell) settle(output any, hasOutput bool, errValue any) {
	if c.status != StatusActive || c.proc != procRunning || c.sys.halted != nil {
		return
	}
	c.cancelLogic()
	if errValue != nil {
		c.status, c.errValue = StatusError, errValue
	} else {
		c.status, c.output, c.hasOutput = StatusDone, output, hasOutput
	}
	c.hasInput, c.input = false, nil
	c.update(nil)
}

// receive gives an event sent to a promise or callback cell to its logic.
func (c *cell) receive(ev Event) {
	if c.external() {
		c.sys.effects = append(c.sys.effects, SendToChild{Child: c.ref(), Event: ev})
		return
	}
	if l, ok := c.run.(*declCallback); ok {
		for _, a := range l.answers[ev.Type] {
			c.parent.send(a.resolve(scope{input: c.input, hasInput: c.hasInput, actorScope: true, hasEvent: true, event: ev}))
		}
		return
	}
	if c.cb != nil {
		receivers := c.cb.receiversNow()
		_ = c.gated(func() {
			for _, f := range receivers {
				f(ev)
			}
		})
	}
}

// stopLogic is the xstate.stop transition of a promise or callback cell.
func (c *cell) stopLogic() {
	if c.external() && c.status == StatusActive {
		c.sys.effects = append(c.sys.effects, StopChild{Child: c.ref()})
	}
	c.cancelLogic()
	if c.cb != nil {
		c.cb.stop()
	}
	if c.cleanup != nil {
		f := c.cleanup
		c.cleanup = nil
		f()
	}
	switch c.kind {
	case cellPromise, cellDeclPromise:
		c.hasInput, c.input = false, nil
		if c.status == StatusActive {
			c.status = StatusStopped
		}
	default:
		c.status, c.errValue = StatusStopped, nil
	}
}

// cancelLogic cancels what the logic of a cell still has running: its
// context and its timers.
func (c *cell) cancelLogic() {
	if c.cancel != nil {
		c.cancel()
	}
	for _, stop := range c.stops {
		stop()
	}
	c.stops = nil
}

// materialize returns the snapshot of a machine cell with its children's
// state frozen into records: what Actor.Snapshot and the pure API return.
func (c *cell) materialize() *Snapshot {
	c.leaveSlots()
	c.ctxOwned = false // s shares the context map
	s := c.snap.clone()
	if t := c.m.plainInitial.Load(); t != nil && t.shared && sameMap(s.context, t.context) {
		s.context = cloneContext(s.context) // the template's stays private
	}
	defer c.shareSnapshot(s)
	if kids := s.x().children; kids.len() > 0 {
		s.setChildren(kids.mapEntries(func(e childEntry) childEntry {
			if e.cell != nil {
				return childEntry{id: e.id, rec: e.cell.record()}
			}
			return e
		}))
	}
	s.seq = c.sys.seq // the system's counter numbers every delayed event of it
	if c.parent == nil {
		s.setSessions(c.sys.sessions)
	}
	return s
}

// record freezes the state of a child cell.
func (c *cell) record() *childRecord {
	r := &childRecord{
		src: c.src, systemID: c.systemID, session: c.sessionID(), sync: c.sync, logic: c.logic,
		input: c.input, hasInput: c.hasInput,
	}
	if c.kind == cellMachine {
		r.snap = c.materialize()
		r.status = r.snap.status
		r.output, r.hasOutput = r.snap.x().output, r.snap.x().hasOutput
		if r.status == StatusError {
			r.errValue = r.snap.errorValue()
		}
		return r
	}
	r.status, r.output, r.hasOutput, r.errValue = c.status, c.output, c.hasOutput, c.errValue
	return r
}

// adoptRoot builds the cells of a snapshot: the root and, recursively, its
// children. With restore (an Actor started from a snapshot), every cell is
// not started yet, and the root's start starts the active ones, as XState
// does with a persisted snapshot; otherwise (the pure API continuing a
// system) active cells are running and the others stopped.
func (sys *system) adoptRoot(m *Machine, s *Snapshot, restore bool) *cell {
	if n := s.x().sessions; n > sys.sessions {
		sys.sessions = n
	}
	if s.seq > sys.seq {
		sys.seq = s.seq
	}
	root := &cell{sys: sys, session: rootSession, numbered: true, m: m, kind: cellMachine, restored: restore}
	sys.register(root)
	root.snap = sys.adoptChildren(root, s, restore)
	if !restore {
		root.proc = procStopped
		if s.status == StatusActive {
			root.proc, root.mbActive = procRunning, true
		}
	}
	return root
}

// adoptChildren returns s with a live cell for each child.
func (sys *system) adoptChildren(parent *cell, s *Snapshot, restore bool) *Snapshot {
	if s.x().children.len() == 0 {
		return s
	}
	out := s.clone()
	out.setChildren(s.x().children.mapEntries(func(e childEntry) childEntry {
		if e.rec != nil {
			return childEntry{id: e.id, cell: sys.adopt(parent, e.id, e.rec, restore)}
		}
		return e
	}))
	return out
}

func (sys *system) adopt(parent *cell, id string, rec *childRecord, restore bool) *cell {
	c := &cell{
		sys: sys, parent: parent, id: id, src: rec.src, systemID: rec.systemID,
		sync: rec.sync, logic: rec.logic, kind: kindOf(rec.logic), restored: restore,
		status: rec.status, input: rec.input, hasInput: rec.hasInput, output: rec.output,
		hasOutput: rec.hasOutput, errValue: rec.errValue,
	}
	if parent != nil {
		parent.parented = true
	}
	if rec.session == "" {
		c.sessionN, c.numbered = sys.nextSession(), true
	} else {
		c.setSession(rec.session)
	}
	sys.register(c)
	if c.kind == cellMachine {
		c.m = rec.logic.(*Machine)
		c.snap = sys.adoptChildren(c, rec.snap, restore)
	}
	active := c.statusNow() == StatusActive
	if c.systemID != "" && active {
		sys.keyed[c.systemID] = c
	}
	if !restore {
		c.proc = procStopped
		if active {
			c.proc, c.mbActive = procRunning, true
		}
	}
	return c
}

// microtask is a queued settlement of the declarative promise p, run by
// cell c.
type microtask struct {
	c *cell
	p *declPromise
}

// run settles the promise with its value.
func (t microtask) run() {
	c, l := t.c, t.p
	v, ok := l.value.resolve(scope{input: c.input, hasInput: c.hasInput, actorScope: true})
	if l.reject {
		c.settle(nil, false, v)
	} else {
		c.sys.moved = v // a fresh copy, for its done event's output
		c.settle(v, ok, nil)
	}
}

// pendingMicro reports whether settlements wait.
func (sys *system) pendingMicro() bool { return sys.mhead < len(sys.micro) }

// drain runs the queued promise settlements, and the ones they queue,
// until none is left (what Node does with microtasks once the synchronous
// work is over).
func (sys *system) drain() {
	for sys.mhead < len(sys.micro) && sys.halted == nil {
		t := sys.micro[sys.mhead]
		sys.micro[sys.mhead] = microtask{}
		sys.mhead++
		t.run()
	}
	clear(sys.micro[sys.mhead:])
	sys.micro, sys.mhead = sys.micro[:0], 0 // keep the array for the next ones
}

// stopAll ends every piece of logic still running in the system (an
// Actor's Stop): contexts cancelled, timers stopped, cleanups run.
func (sys *system) stopAll() {
	for _, c := range sys.bySession {
		c.stopNow()
	}
	for _, c := range sys.byOther {
		c.stopNow()
	}
	sys.micro, sys.mhead = nil, 0
}

// stopNow ends c's logic, for stopAll.
func (c *cell) stopNow() {
	c.disarmAll()
	if c.kind != cellMachine && c.status == StatusActive {
		c.stopLogic()
	}
	c.proc = procStopped
	c.releaseRunner()
}

// callbackGate holds what a Go Callback's functions share with other
// goroutines: its receive functions, and the events sendBack gets while
// the callback function or a receive function runs, which are delivered
// when it returns.
type callbackGate struct {
	mu        sync.Mutex
	depth     int
	pending   []Event
	receivers []func(Event)
	stopped   bool
}

func (g *callbackGate) receiversNow() []func(Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.receivers)
}

func (g *callbackGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped, g.pending, g.receivers = true, nil, nil
}

// startCallback runs a Go Callback.
func (c *cell) startCallback(f Callback) error {
	sys := c.sys
	ctx, cancel := context.WithCancel(sys.ctx)
	c.cancel = cancel
	g := &callbackGate{}
	c.cb = g
	args := CallbackArgs{
		Input: c.input,
		SendBack: func(ev Event) {
			g.mu.Lock()
			if g.stopped {
				g.mu.Unlock()
				return
			}
			if g.depth > 0 {
				g.pending = append(g.pending, ev)
				g.mu.Unlock()
				return
			}
			g.mu.Unlock()
			sys.post(func() {
				if c.status == StatusActive && c.parent != nil {
					c.parent.send(ev)
				}
			})
		},
		Receive: func(fn func(Event)) {
			g.mu.Lock()
			defer g.mu.Unlock()
			if !g.stopped {
				g.receivers = append(g.receivers, fn)
			}
		},
	}
	return c.gated(func() { c.cleanup = f(ctx, args) })
}

// gated runs f, a callback's own code, then delivers the events it sent
// back meanwhile. A panic in f becomes the error returned.
func (c *cell) gated(f func()) (err error) {
	g := c.cb
	g.mu.Lock()
	g.depth++
	g.mu.Unlock()
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("callback panicked: %v", v)
			}
		}()
		f()
	}()
	g.mu.Lock()
	g.depth--
	var evs []Event
	if g.depth == 0 {
		evs, g.pending = g.pending, nil
	}
	g.mu.Unlock()
	for _, ev := range evs {
		if c.status == StatusActive && c.parent != nil {
			c.parent.send(ev)
		}
	}
	return err
}
