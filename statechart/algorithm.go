// This file defines the interpreter: macrostep, microstep and their helpers,
// named after the W3C SCXML algorithm (Appendix D,
// https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation) and after
// XState's packages/core/src/stateUtils.ts, so each function can be checked
// against both. Where XState departs from SCXML we follow XState, and the
// comment says "XState:". The cost of a microstep is linear in the active
// configuration and the transitions it takes (times the depth of the
// machine), never in the number of transitions squared: conflicts, exit and
// entry sets are computed from subtrees (see conflicts.go) and counted sets
// (see scratch.go).

package statechart

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// runner processes events on a working snapshot. Its buffers are reused
// between macrosteps, so an Actor can process events without allocating.
type runner struct {
	m   *Machine
	ctx context.Context
	s   *Snapshot // the working snapshot, modified in place
	now time.Time
	// clock: an Actor's, read by ActionArgs.RaiseAfter when now was not
	// (the Actor reads it only for machines with delayed events).
	clock Clock

	active         []bool // membership of s.nodes
	activated      []int  // the nodes set in active since begin (a superset of those still set)
	queue          eventQueue
	changed        bool // the microstep changed the snapshot (XState: a new snapshot object)
	historyChanged bool
	err            error
	errNode        int
	steps          int              // microsteps taken by this call, against Options.MaxSteps
	outOfSteps     *StepBudgetError // set, as err, when the call ran out of steps

	// ownsTimers: s.timers may be changed in place (else it is copied
	// first, see mutableTimers); copiedTimers: it was copied in this call.
	ownsTimers, copiedTimers bool
	ownsHistory              bool // s.history was copied in this call and may change in place
	// ownsContext: s.context may change in place: it was made by an
	// assign of this call, or it is an Actor's own (see grantContext),
	// and no implementation has been handed it since. undoing: it is the
	// Actor's, changed in place, with undo recording how to restore it.
	ownsContext, undoing bool
	undo                 []contextUndo
	// contextSeen: an implementation was handed s.context in this call;
	// replacedContext: the call replaced s.context by a new map.
	contextSeen, replacedContext bool
	assignVals                   []any                       // assignEntries: the values, computed before any is set
	slotCtx                      slotContext                 // the slots of an Actor's context (see slots.go)
	numbers                      numberBoxes                 // the numbers assigns compute
	cache                        stepCache                   // recorded microsteps (see stepcache.go)
	evID                         int32                       // the id of the event selectTransitions selects for (Machine.eventIDs), -1 if none
	recentTypes                  [4]recentType               // eventID's last lookups
	typeStrings                  [typeStringSlots]recentType // eventID's last strings, by address
	chainScratch                 []int                       // recordSelection's chain of active states
	selStarts                    []int32                     // selectFrom's scratch
	condMemo                     [8]condAnswer               // selectFrom's guard answers
	quietSeen                    stampSet                    // quietNodes' scratch
	recentNext, typeNext         int
	typeLast, typeCount          int           // eventID: the slot of typeStrings found last; the slots filled
	exitKept                     []int         // s.nodes after exitStates, while a microstep is recorded
	logTimers                    bool          // record timer changes in timerLog (for an Actor)
	timerLog                     []timerChange // this call's changes to s.timers

	value   any  // the state value of s, while valueOK
	valueOK bool // false once the configuration changes
	// stepStart: while a microstep runs its actions, the configuration it
	// started from, which guards see (XState's actions are given the
	// snapshot the microstep started from: its nodes change only at the
	// end); nil between microsteps. stepValue: its state value, while
	// stepValueOK.
	stepStart   []int
	stepValue   any
	stepValueOK bool
	// complete: inspectConfiguration's answer (and r.kid), while completeOK
	complete, completeOK bool

	// scratch
	kid, kidCount       []int32 // per compound: an active child, and how many
	kidTouched          []int
	below               []bool // nodes with an active proper descendant, while belowOK
	belowTouched        []int
	belowOK, belowAsked bool
	toEnter             entrySet
	enteringHistory     []int // addDescendantStatesToEnter: the history states it is entering
	defaultEntry        nodeSet
	toExit              []int
	exiting             stampSet // the members of toExit
	sortedNodes         []int
	order, prevNodes    []int
	targets, effective  []int
	domains             []int    // per transition id: its domain, while domainKnown has it
	domainKnown         stampSet // cleared every microstep
	effectiveSeen       stampSet
	picked              stampSet // transitions selected by selectEventlessTransitions
	regionsDone         stampSet // parallel states whose regions enterAncestor has entered
	selected            []*transition
	filtered, eventless []*transition
	conflicts           conflictSet
	hasFinal, completed stampSet // enterStates: compounds with an active final child; parallel states done
	finalCursor         []int32  // enterStates: per parallel state, the leading regions known final
	finalTouched        []int
	args                ActionArgs
	historyBuckets      map[int][]int
	exitDomains         []exitRegion
	// keptRegions: the exit regions of keptFor, the transitions
	// removeConflictingTransitions returned last (see exitRegions).
	keptRegions []exitRegion
	keptFor     []*transition
	exitSelves  []int

	// The actor system (system.go) of a machine with actors; nil for the
	// plain paths.
	sys  *system
	self *cell
	fx   []effect // the deferred effects of the call, in order
	// deferCustom: the initial macrostep of an actor, whose custom actions
	// XState runs only once the actor starts: a failure (customErr, in
	// state customNode) ends the start in status error without undoing
	// the snapshot, and the custom actions after it do not run.
	deferCustom bool
	customErr   error
	customNode  int
	// deferredInvokes: the invokes of the state being entered, whose
	// children a sendTo in its entry actions may name before they exist
	// (XState's deferredActorIds); pendingFx and pendingTimers are those
	// sends, resolved once the entry actions and the invokes ran.
	deferredInvokes []*spawnDef
	pendingFx       []int
	pendingTimers   []pendingTimer
	// knownTargets: the children sendTargetsExist found for the sends of
	// the plan fastStep replays, so that sendTo need not look them up
	// again; empty outside that replay.
	knownTargets []knownTarget
	ownsChildren bool // s.children was cloned in this call and may change in place
	// synced: the next begin is given a copy of the snapshot the last
	// call ended with, successfully, so active already marks its nodes
	// (an Actor sets it; begin clears it).
	synced bool
	// actorState: a field above was set in this call (attach, deferCustom),
	// so begin resets them; a plain call leaves them untouched.
	actorState bool
	// spare: a snapshot no one else holds, the buffer the next call of the
	// pure API works on (see workCopy).
	spare *Snapshot
}

// pendingTimer is a delayed send to a child of the state being entered.
type pendingTimer struct {
	seq uint64
	id  string
}

func newRunner(m *Machine) *runner {
	return &runner{m: m}
}

// begin makes s the working snapshot and starts a new call: the step count
// starts again from zero.
func (r *runner) begin(ctx context.Context, s *Snapshot, now time.Time) {
	r.beginSlots()
	r.ctx, r.s, r.now, r.err, r.errNode = ctx, s, now, nil, -1
	r.steps, r.outOfSteps, r.valueOK, r.value = 0, nil, false, nil
	r.ownsTimers, r.copiedTimers, r.logTimers, r.timerLog = false, false, false, r.timerLog[:0]
	r.ownsHistory, r.ownsContext, r.contextSeen, r.replacedContext = false, false, false, false
	r.undoing, r.undo = false, r.undo[:0]
	r.cache.exact = nil // the call may change s.nodes (see fastStep)
	if r.actorState {
		// Only a call for an actor system, or a start, sets these.
		r.sys, r.self, r.fx = nil, nil, r.fx[:0]
		r.deferCustom, r.customErr, r.customNode = false, nil, -1
		r.ownsChildren = false
		r.deferredInvokes, r.pendingFx, r.pendingTimers = nil, r.pendingFx[:0], r.pendingTimers[:0]
		r.actorState = false
	}
	if r.synced {
		// r.active marks exactly s.nodes already (see synced).
		r.synced = false
		r.activated = append(r.activated[:0], s.nodes...)
		r.queue.reset()
		r.configurationChanged()
		return
	}
	n := len(r.m.nodes)
	if len(r.active) != n {
		r.active = make([]bool, n)
		r.kid = make([]int32, n)
		r.kidCount = make([]int32, n)
		r.below = make([]bool, n)
		r.finalCursor = make([]int32, n)
		r.kidTouched, r.belowTouched, r.finalTouched = r.kidTouched[:0], r.belowTouched[:0], r.finalTouched[:0]
	} else {
		for _, n := range r.activated {
			r.active[n] = false
		}
	}
	r.activated = r.activated[:0]
	for _, n := range s.nodes {
		r.activate(n)
	}
	r.queue.reset()
	r.configurationChanged()
}

// activate marks node n active; begin clears what the call activated, so
// starting a call costs the configuration, not the machine.
func (r *runner) activate(n int) {
	r.active[n] = true
	r.activated = append(r.activated, n)
}

func (r *runner) fail(node int, err error) {
	if r.err == nil {
		r.err, r.errNode = err, node
	}
}

// runtimeError wraps r.err for the event the call processed (ev); a call
// that ran out of steps returns its *StepBudgetError.
func (r *runner) runtimeError(ev Event) error {
	if r.outOfSteps != nil {
		r.outOfSteps.Event = ev.Type
		return r.outOfSteps
	}
	re := &RuntimeError{Event: ev.Type, Err: r.err}
	if r.errNode >= 0 {
		re.State = r.m.nodes[r.errNode].id
	}
	return re
}

// step counts one microstep against the call's budget, and stops the call
// when the budget is spent.
func (r *runner) step(ev Event) bool {
	if r.steps++; r.steps <= r.m.opts.MaxSteps {
		return true
	}
	if r.err == nil {
		r.outOfSteps = &StepBudgetError{Event: ev.Type, Limit: r.m.opts.MaxSteps} // Event: see runtimeError
		r.err = r.outOfSteps
	}
	return false
}

// currentValue is the state value of the working snapshot, computed once
// per configuration (stateIn guards with a state value read it).
func (r *runner) currentValue() any {
	if !r.valueOK {
		r.value, r.valueOK = r.s.Value(), true
	}
	return r.value
}

// inState reports whether node n is in the configuration a guard sees:
// the one the current microstep started from, or between microsteps the
// current one.
func (r *runner) inState(n int) bool {
	if r.stepStart != nil {
		return slices.Contains(r.stepStart, n)
	}
	return r.active[n]
}

// guardValue is the state value of the configuration a guard sees (see
// inState).
func (r *runner) guardValue() any {
	if r.stepStart == nil {
		return r.currentValue()
	}
	if !r.stepValueOK {
		r.stepValue, r.stepValueOK = r.m.stateValue(r.stepStart), true
	}
	return r.stepValue
}

// startStep makes nodes, the configuration before the microstep, the one
// guards see until the microstep ends.
func (r *runner) startStep(nodes []int) {
	r.stepStart = nodes
	r.stepValue, r.stepValueOK = r.value, r.valueOK // the value of the same configuration, if known
}

// configurationChanged forgets what was derived from the configuration.
func (r *runner) configurationChanged() {
	r.valueOK, r.value, r.belowOK, r.belowAsked, r.completeOK = false, nil, false, false, false
	r.stepStart, r.stepValue, r.stepValueOK = nil, nil, false
	r.cache.known = false
	r.forgetDomains()
}

// forgetDomains empties the cache of domainOf.
func (r *runner) forgetDomains() {
	if len(r.domains) == r.m.transitions {
		r.domainKnown.clear(r.m.transitions)
	}
}

// attach makes the runner work for cell c of an actor system.
func (r *runner) attach(c *cell) {
	r.sys, r.self, r.actorState = c.sys, c, true
}

// deferCustomErrors makes the call an initial macrostep of an actor (see
// deferCustom).
func (r *runner) deferCustomErrors() {
	r.deferCustom, r.actorState = true, true
}

// customError is the error of the custom action that failed during an
// initial macrostep (see deferCustom).
func (r *runner) customError(ev Event) error {
	re := &RuntimeError{Event: ev.Type, Err: r.customErr}
	if r.customNode >= 0 {
		re.State = r.m.nodes[r.customNode].id
	}
	return re
}

// nextSeq returns the scheduling number of a new delayed event: counted
// for the whole actor system when there is one.
func (r *runner) nextSeq() uint64 {
	if r.sys != nil {
		seq := r.sys.seq
		r.sys.seq++
		return seq
	}
	seq := r.s.seq
	r.s.seq++
	return seq
}

// initialTransition enters the initial configuration and runs the initial
// macrostep (XState's getInitialSnapshot: initialMicrostep, then macrostep
// on xstate.init, which carries the machine's input).
func (r *runner) initialTransition(ev Event) {
	init := &transition{id: -1, source: 0, reenter: true}
	r.m.initialStateNodes(0, func(n int) { init.targets = append(init.targets, n) })
	r.microstep([]*transition{init}, ev, true)
	if r.err != nil {
		return
	}
	r.macrostepLoop(ev)
	r.stopChildrenIfEnded()
}

// initialStateNodes is XState's getInitialStateNodes(n): n and,
// recursively, the initial child of every compound and every region of
// every parallel state, in pre-order, each passed to add.
func (m *Machine) initialStateNodes(n int, add func(int)) {
	add(n)
	switch m.nodes[n].kind {
	case kindCompound:
		m.initialStateNodes(m.nodes[n].initial.targets[0], add)
	case kindParallel:
		for _, c := range m.nodes[n].regions {
			m.initialStateNodes(c, add)
		}
	}
}

// macrostep processes one external event to completion: its transitions,
// then eventless transitions and raised events until the machine is stable.
func (r *runner) macrostep(ev Event) {
	switch {
	case ev.Type == EventStop:
		// XState: stops the machine and its children; no transition is
		// selected.
		r.stopChildren(true)
		r.s.status = StatusStopped
		r.s.clearTimers()
		return
	case ev.Type == EventInit:
		// XState: selects no transition, only eventless ones.
		r.macrostepLoop(ev)
		r.stopChildrenIfEnded()
		return
	}
	ts := r.selectTransitions(ev)
	if r.err != nil {
		return
	}
	if len(ts) == 0 && strings.HasPrefix(ev.Type, errorActorPrefix) {
		// XState: an unhandled actor error puts the machine in error with
		// the event's error, and stops and removes its children.
		r.stopChildren(true)
		r.s.status = StatusError
		r.s.err = &RuntimeError{Event: ev.Type, Err: fmt.Errorf("unhandled error event: %w", errorOf(ev.Data["error"]))}
		r.s.clearTimers()
		r.changed = true
		return
	}
	r.microstep(ts, ev, false)
	if r.err != nil {
		return
	}
	r.macrostepLoop(ev)
	r.stopChildrenIfEnded()
}

// stopChildrenIfEnded stops the children of a machine that is no longer
// active at the end of a macrostep (XState's macrostep: they stay listed).
func (r *runner) stopChildrenIfEnded() {
	if r.err == nil && r.s.status != StatusActive {
		r.stopChildren(false)
	}
}

// stopChildren stops every child (XState's stopChildren), and with remove
// also takes it out of the snapshot. An entry left by an unknown src has
// no actor and stays.
func (r *runner) stopChildren(remove bool) {
	if r.sys == nil {
		return
	}
	for _, e := range r.s.x().children.all() {
		if e.cell == nil {
			continue
		}
		if remove {
			r.ownChildren().remove(e.id)
		}
		r.stopCell(e.cell)
		if r.err != nil {
			return
		}
	}
}

// macrostepLoop is the second half of XState's macrostep: after every
// microstep, eventless transitions are tried before the next internal event.
func (r *runner) macrostepLoop(ev Event) {
	shouldSelectEventless := true
	for steps := 0; r.s.status == StatusActive; steps++ {
		if steps > r.m.opts.MaxMicrosteps {
			r.fail(-1, fmt.Errorf("%w: more than %d microsteps without reaching a stable state", ErrInfiniteLoop, r.m.opts.MaxMicrosteps))
			return
		}
		var enabled []*transition
		if shouldSelectEventless && len(r.m.alwaysNodes) > 0 { // a machine without always transitions has none to select
			enabled = r.selectEventlessTransitions(ev)
			if r.err != nil {
				return
			}
		}
		eventless := len(enabled) > 0
		if !eventless {
			if r.queue.len() == 0 {
				return
			}
			ev = r.queue.pop()
			enabled = r.selectTransitions(ev)
			if r.err != nil {
				return
			}
		}
		r.microstep(enabled, ev, false)
		if r.err != nil {
			return
		}
		// XState: eventless transitions are selected again unless an
		// eventless microstep left the snapshot unchanged.
		shouldSelectEventless = !eventless || r.changed
	}
}

// selectTransitions finds the enabled transitions for an event by walking
// the active configuration (XState's transitionNode): the deepest handler
// wins, a parallel state collects one transition per region and consults
// its own transitions only when no region has one.
func (r *runner) selectTransitions(ev Event) []*transition {
	r.selected = r.selected[:0]
	r.evID = r.eventID(ev.Type)
	var c *confPlans // the step cache's record of the configuration
	if r.cacheOn() {
		if c = r.currentConf(); c != nil && r.selectCached(c, ev) {
			return r.selected
		}
	}
	if !r.completeOK {
		r.complete, r.completeOK = r.inspectConfiguration(), true
	}
	if !r.complete {
		// XState walks the state value; for a configuration its quirks
		// left incomplete, walk the value's shape exactly.
		r.transitionValue(0, r.m.adjacency(r.m.allStateNodes(r.s.nodes)), ev)
		return r.selected
	}
	if len(r.s.nodes) <= 16 || r.mayTake(ev) {
		r.transitionNode(0, ev)
	}
	if c != nil && r.err == nil {
		r.recordSelection(c, ev)
	}
	return r.selected
}

// mayTake reports whether an active node has transitions for the event
// (or a wildcard): if none has, no transition is selected and no guard is
// evaluated, so the walk is skipped. Done events of regions nobody waits
// for are typical. The answer costs at most the size of the configuration.
func (r *runner) mayTake(ev Event) bool {
	hs := r.m.handlers[ev.Type]
	if len(hs)+len(r.m.wildcardNodes) > len(r.s.nodes) {
		return true
	}
	for _, n := range hs {
		if r.active[n] {
			return true
		}
	}
	for _, n := range r.m.wildcardNodes {
		if r.active[n] {
			return true
		}
	}
	return false
}

// mayTakeEventless reports whether a node with eventless transitions is
// active or above an active node; if none is, the selection is empty.
func (r *runner) mayTakeEventless() bool {
	if len(r.m.alwaysNodes) > len(r.s.nodes) {
		return true
	}
	for _, n := range r.m.alwaysNodes {
		if r.active[n] || r.hasActiveBelow(n) {
			return true
		}
	}
	return false
}

// inspectConfiguration reports whether the configuration is an ordinary
// one: every active node's parent is active, every active compound state
// has exactly one active child and every active parallel state all its
// regions. It also records the active child of each compound state in
// r.kid. The cost is linear in the configuration.
func (r *runner) inspectConfiguration() bool {
	for _, p := range r.kidTouched {
		r.kidCount[p] = 0
	}
	r.kidTouched = r.kidTouched[:0]
	inner := 0 // active compound and parallel states
	for _, n := range r.s.nodes {
		node := r.m.nodes[n]
		if node.kind == kindCompound || node.kind == kindParallel {
			inner++
		}
		p := node.parent
		if p < 0 {
			continue
		}
		if !r.active[p] {
			return false
		}
		if r.kidCount[p] == 0 {
			r.kidTouched = append(r.kidTouched, p)
		}
		r.kidCount[p]++
		r.kid[p] = int32(n)
	}
	// Every active compound or parallel state must have active children
	// (it is then in kidTouched), in the right number.
	if len(r.kidTouched) != inner {
		return false
	}
	for _, p := range r.kidTouched {
		switch n := r.m.nodes[p]; n.kind {
		case kindCompound:
			// XState lets two transitions of one microstep enter two
			// children of one compound state; the value then lists both.
			if r.kidCount[p] != 1 {
				return false
			}
		case kindParallel:
			if int(r.kidCount[p]) != len(n.regions) {
				return false
			}
		}
	}
	return true
}

// jsKeyOrder orders sibling nodes the way Object.keys lists the keys of a
// state value: array-index keys ascending, then the rest in insertion order.
func (m *Machine) jsKeyOrder(nodes []int) []int {
	out := append([]int(nil), nodes...)
	slices.SortStableFunc(out, func(a, b int) int {
		x, xok := jsonx.ArrayIndex(m.nodes[a].key)
		y, yok := jsonx.ArrayIndex(m.nodes[b].key)
		switch {
		case xok && yok:
			return cmp.Compare(x, y)
		case xok:
			return -1
		case yok:
			return 1
		}
		return 0
	})
	return out
}

// transitionValue is XState's transitionNode(node, value(node)) over the
// adjacency of the completed configuration: a compound node whose first
// child is atomic has a string value; one key is walked like a compound
// node; zero or several keys like a parallel node.
func (r *runner) transitionValue(n int, adj map[int][]int, ev Event) {
	before := len(r.selected)
	kids := adj[n]
	switch {
	case len(kids) > 0 && r.m.nodes[n].kind == kindCompound && (r.m.nodes[kids[0]].kind == kindAtomic || r.m.nodes[kids[0]].kind == kindFinal):
		if t := r.next(kids[0], ev); t != nil {
			r.selected = append(r.selected, t)
		}
	default:
		if len(kids) > 1 {
			kids = r.m.jsKeyOrder(kids)
		}
		for _, c := range kids {
			r.transitionValue(c, adj, ev)
			if r.err != nil {
				return
			}
		}
	}
	if r.err != nil || len(r.selected) > before {
		return
	}
	if t := r.next(n, ev); t != nil {
		r.selected = append(r.selected, t)
	}
}

// next returns the first candidate of node n for the event whose guard
// passes (XState's StateNode.next). Candidates are the exact descriptor's
// transitions, then the matching wildcard descriptors, longest first
// (XState's getCandidates).
func (r *runner) next(n int, ev Event) *transition {
	node := r.m.nodes[n]
	if g := r.exactGroup(node, ev); g != nil {
		for _, t := range g.transitions {
			if ok := r.evaluateGuard(t, ev); r.err != nil || ok {
				return okTransition(ok, t)
			}
		}
	}
	if len(node.wildcards) > maxWildcardScan {
		return r.nextByPrefix(node, ev)
	}
	for _, g := range node.wildcards {
		if t, done := r.tryWildcard(g, ev); done {
			return t
		}
	}
	return nil
}

// eventID returns the id of an event type in Machine.eventIDs, -1 if no
// node has that descriptor. The last few types looked up are remembered:
// a stream of events usually repeats a few types, often the same strings.
// A string seen lately is found by its address and length alone
// (typeStrings; a string held there is not freed, so its address is not
// reused), one with the same bytes by comparing them (recentTypes).
func (r *runner) eventID(typ string) int32 {
	if id, ok := r.nextType(typ); ok {
		return id
	}
	return r.eventIDScan(typ)
}

// nextType is eventID for typ when it is the string that followed the one
// found last: a stream that repeats its strings in order finds each at
// the first look. Kept small enough to be inlined.
func (r *runner) nextType(typ string) (int32, bool) {
	i := r.typeLast + 1
	if i >= r.typeCount {
		i = 0
	}
	// A slot not filled yet (ok false) holds no string.
	if e := &r.typeStrings[i&(typeStringSlots-1)]; unsafe.StringData(e.typ) == unsafe.StringData(typ) && len(e.typ) == len(typ) && e.ok {
		r.typeLast = i
		return e.id, true
	}
	return 0, false
}

// eventIDScan is eventID for a string that did not follow the one found
// last.
func (r *runner) eventIDScan(typ string) int32 {
	p := unsafe.StringData(typ)
	// From the string found last: the same type again is found first.
	i, n := r.typeLast, r.typeCount
	for range n {
		if e := &r.typeStrings[i&(typeStringSlots-1)]; unsafe.StringData(e.typ) == p && len(e.typ) == len(typ) {
			r.typeLast = i
			return e.id
		}
		if i++; i >= n {
			i = 0
		}
	}
	return r.eventIDSlow(typ)
}

// typeStringSlots is the size of runner.typeStrings, a power of two.
const typeStringSlots = 8

// eventIDSlow is eventID for a string not in typeStrings, which it
// joins.
func (r *runner) eventIDSlow(typ string) int32 {
	id, found := int32(-1), false
	for i := range r.recentTypes {
		e := &r.recentTypes[i]
		if !e.ok || len(e.typ) != len(typ) {
			continue
		}
		// The same string (equal pointers) needs no comparison of bytes,
		// and a first byte that differs tells most others apart.
		if len(typ) == 0 || unsafe.StringData(e.typ) == unsafe.StringData(typ) || e.typ[0] == typ[0] && e.typ == typ {
			id, found = e.id, true
			break
		}
	}
	if !found {
		var ok bool
		if id, ok = r.m.eventIDs[typ]; !ok {
			id = -1
		}
		r.recentTypes[r.recentNext] = recentType{typ: typ, id: id, ok: true}
		r.recentNext = (r.recentNext + 1) % len(r.recentTypes)
	}
	r.typeLast = r.typeNext
	r.typeStrings[r.typeNext] = recentType{typ: typ, id: id, ok: true}
	r.typeNext = (r.typeNext + 1) % len(r.typeStrings)
	r.typeCount = max(r.typeCount, r.typeLast+1)
	return id
}

// recentType is an event type eventID looked up.
type recentType struct {
	typ string
	id  int32
	ok  bool
}

// exactGroup is node.byEvent[ev.Type], found by the event's id (r.evID,
// set by selectTransitions for ev).
func (r *runner) exactGroup(node *stateNode, ev Event) *eventGroup {
	if r.evID < 0 {
		return nil // no node has a descriptor equal to the event's type
	}
	if len(node.byEvent) > maxExactScan {
		return node.byEvent[ev.Type]
	}
	for _, s := range node.exact {
		if s.id == r.evID {
			return s.g
		}
	}
	return nil
}

// maxWildcardScan is the number of wildcard descriptors next compares with
// the event one by one; a node with more looks up the descriptors the
// event could match instead.
const maxWildcardScan = 8

// tryWildcard tries the transitions of a wildcard descriptor; done is true
// when it matched the event and a guard passed or failed with an error.
func (r *runner) tryWildcard(g *eventGroup, ev Event) (t *transition, done bool) {
	if g.descriptor == ev.Type || !matchesEventDescriptor(ev.Type, g.descriptor) {
		return nil, false
	}
	for _, t := range g.transitions {
		if ok := r.evaluateGuard(t, ev); r.err != nil || ok {
			return okTransition(ok, t), true
		}
	}
	return nil, false
}

// nextByPrefix tries, longest first, the only wildcard descriptors that
// can match the event: "p.*" for each prefix p of its type that ends
// before a "." (the empty one too), the type itself included, then "*". Matching descriptors
// differ in length, so this is the order of node.wildcards.
func (r *runner) nextByPrefix(node *stateNode, ev Event) *transition {
	for end := len(ev.Type); end >= 0; end = strings.LastIndexByte(ev.Type[:end], '.') {
		if g := node.byEvent[ev.Type[:end]+".*"]; g != nil {
			if t, done := r.tryWildcard(g, ev); done {
				return t
			}
		}
	}
	if g := node.byEvent["*"]; g != nil {
		if t, done := r.tryWildcard(g, ev); done {
			return t
		}
	}
	return nil
}

func okTransition(ok bool, t *transition) *transition {
	if ok {
		return t
	}
	return nil
}

func (r *runner) transitionNode(n int, ev Event) {
	before := len(r.selected)
	node := r.m.nodes[n]
	switch node.kind {
	case kindCompound:
		r.transitionNode(int(r.kid[n]), ev)
	case kindParallel:
		for _, c := range node.regions {
			r.transitionNode(c, ev)
			if r.err != nil {
				return
			}
		}
	}
	if r.err != nil || len(r.selected) > before {
		return
	}
	if t := r.next(n, ev); t != nil {
		r.selected = append(r.selected, t)
	}
}

// selectEventlessTransitions takes, for each atomic state in
// configuration order, the first enabled `always` transition of the state
// or its nearest ancestor that has one, then removes conflicts.
// XState: the configuration order is the insertion order of _nodes, not
// document order.
func (r *runner) selectEventlessTransitions(ev Event) []*transition {
	r.selected = r.selected[:0]
	if !r.mayTakeEventless() {
		r.eventless = r.eventless[:0]
		return r.eventless
	}
	r.picked.clear(r.m.transitions)
	for _, a := range r.s.nodes {
		if k := r.m.nodes[a].kind; k != kindAtomic && k != kindFinal {
			continue
		}
	loop:
		for s := a; s >= 0; s = r.m.nodes[s].parent {
			for _, t := range r.m.nodes[s].always {
				ok := r.evaluateGuard(t, ev)
				if r.err != nil {
					return nil
				}
				if ok {
					if r.picked.add(int(t.id)) {
						r.selected = append(r.selected, t)
					}
					break loop
				}
			}
		}
	}
	r.eventless = r.removeConflictingTransitions(r.selected, r.eventless[:0])
	return r.eventless
}

// microstep takes one set of enabled transitions: exit, transition actions,
// entry (https://www.w3.org/TR/scxml/#microstepProcedure). An empty set is
// a no-op, but still a step of the call's budget, as is every event taken.
func (r *runner) microstep(ts []*transition, ev Event, isInitial bool) {
	r.changed, r.historyChanged = false, false
	if !r.step(ev) || len(ts) == 0 {
		return
	}
	defer r.configurationChanged()
	record := false
	if !isInitial {
		var done bool
		if done, record = r.cachedMicrostep(ts, ev); done {
			return
		}
	}
	r.filtered = r.removeConflictingTransitions(ts, r.filtered[:0])
	filtered := r.filtered
	r.prevNodes = append(r.prevNodes[:0], r.s.nodes...)
	r.startStep(r.prevNodes)
	if !isInitial {
		r.exitStates(filtered, ev)
		if r.err != nil {
			return
		}
		if record {
			r.exitKept = append(r.exitKept[:0], r.s.nodes...)
		}
	}
	for _, t := range filtered {
		r.executeActions(t.actions, ev, int(t.source))
		if r.err != nil {
			return
		}
	}
	r.enterStates(filtered, ev, isInitial)
	if r.err != nil {
		return
	}
	if r.s.status == StatusDone {
		// XState: reaching a top-level final state runs the exit actions of
		// every active state, in reverse document order.
		all := append([]int(nil), r.s.nodes...)
		sortDescending(all)
		for _, n := range all {
			r.executeActions(r.m.nodes[n].exit, ev, n)
			if r.err != nil {
				return
			}
		}
		r.s.clearTimers()
		r.changed = true
	}
	if !r.sameNodes() {
		r.changed = true
	} else if !r.historyChanged {
		// XState keeps the previous _nodes (and so its order) when a
		// microstep ends with the same set of nodes and history.
		r.s.nodes = append(r.s.nodes[:0], r.prevNodes...)
	}
	if record {
		r.recordPlan()
	}
}

// sameNodes reports whether the configuration has the same members as
// before the microstep (XState's areStateNodeCollectionsEqual).
func (r *runner) sameNodes() bool {
	if len(r.prevNodes) != len(r.s.nodes) {
		return false
	}
	for _, n := range r.prevNodes {
		if !r.active[n] {
			return false
		}
	}
	return true
}

// getEffectiveTargetStates replaces history targets by the states they
// remember, or by their default targets. The result is appended to out,
// each state once.
func (r *runner) getEffectiveTargetStates(t *transition, out []int) []int {
	if len(t.targets) == 1 && r.m.nodes[t.targets[0]].kind != kindHistory {
		return append(out, t.targets[0])
	}
	r.effectiveSeen.clear(len(r.m.nodes))
	return r.addEffectiveTargetStates(t, out)
}

func (r *runner) addEffectiveTargetStates(t *transition, out []int) []int {
	for _, tg := range t.targets {
		if r.m.nodes[tg].kind != kindHistory {
			if r.effectiveSeen.add(tg) {
				out = append(out, tg)
			}
			continue
		}
		if h, ok := r.s.history[tg]; ok {
			for _, n := range h {
				if r.effectiveSeen.add(n) {
					out = append(out, n)
				}
			}
			continue
		}
		out = r.addEffectiveTargetStates(r.m.historyDefaultTransition(tg), out)
	}
	return out
}

// historyDefaultTransition is XState's resolveHistoryDefaultTransition: the
// history state's own target, else its parent's initial transition, else
// (parallel parent) the parent itself.
func (m *Machine) historyDefaultTransition(h int) *transition {
	n := m.nodes[h]
	if n.historyDef() != nil {
		return n.historyDef()
	}
	p := m.nodes[n.parent]
	if p.kind == kindParallel {
		return n.parallelDef()
	}
	return p.initial
}

// domainOf is getTransitionDomain, computed once per transition while the
// history values stay the same (conflicts, exit set and entry set all need
// it; recording history forgets the answers, as a domain depends on the
// states a history target stands for).
func (r *runner) domainOf(t *transition) int {
	if t.staticDomain {
		return int(t.domain)
	}
	if t.id < 0 {
		return r.getTransitionDomain(t)
	}
	if len(r.domains) != r.m.transitions {
		r.domains = make([]int, r.m.transitions)
		r.domainKnown.clear(r.m.transitions)
	}
	if r.domainKnown.add(int(t.id)) {
		r.domains[t.id] = r.getTransitionDomain(t)
	}
	return r.domains[t.id]
}

// getTransitionDomain returns the state whose descendants the transition
// exits and enters; -1 means the root itself is exited and re-entered.
// XState: the least common ancestor may be a parallel state (SCXML's LCCA
// would skip it), and `reenter: false` keeps the source when every target is
// inside it.
func (r *runner) getTransitionDomain(t *transition) int {
	targets := r.getEffectiveTargetStates(t, r.effective[:0])
	r.effective = targets
	return r.m.domainOfTargets(t, targets)
}

// domainOfTargets is getTransitionDomain for the effective targets of t.
func (m *Machine) domainOfTargets(t *transition, targets []int) int {
	if !t.reenter {
		inside := true
		for _, tg := range targets {
			if tg != int(t.source) && !m.isDescendant(tg, int(t.source)) {
				inside = false
				break
			}
		}
		if inside {
			return int(t.source)
		}
	}
	// findLeastCommonAncestor(targets + source)
	head := int(t.source)
	if len(targets) > 0 {
		head = targets[0]
	}
	for anc := m.nodes[head].parent; anc >= 0; anc = m.nodes[anc].parent {
		all := true
		for _, tg := range targets[min(1, len(targets)):] {
			if !m.isDescendant(tg, anc) {
				all = false
				break
			}
		}
		if all && (len(targets) == 0 || m.isDescendant(int(t.source), anc)) {
			return anc
		}
	}
	if t.reenter {
		return -1
	}
	return 0
}

// exitStates exits the exit set in reverse document order, recording
// history first (https://www.w3.org/TR/scxml/#exitStates). The transitions
// are free of conflicts, so their exit sets are disjoint: each is the
// active nodes inside its domain (a range of node indexes), plus the
// domain itself when the transition re-enters its source.
func (r *runner) exitStates(ts []*transition, ev Event) {
	r.toExit = r.toExit[:0]
	r.exitSelves = r.exitSelves[:0]
	r.exitDomains = r.exitDomains[:0]
	for _, e := range r.exitRegions(ts) {
		if !e.empty {
			r.exitDomains = append(r.exitDomains, e)
		}
	}
	if len(r.exitDomains) == 0 {
		return
	}
	r.exiting.clear(len(r.m.nodes))
	nodes := r.s.nodes
	if len(r.exitDomains) > 1 {
		// Several domains: find the active nodes of each by binary search.
		nodes = append(r.sortedNodes[:0], r.s.nodes...)
		slices.Sort(nodes)
		r.sortedNodes = nodes
	}
	for _, e := range r.exitDomains {
		in := nodes
		if e.domain >= 0 && len(r.exitDomains) > 1 {
			from, _ := slices.BinarySearch(nodes, e.domain+1)
			to, _ := slices.BinarySearch(nodes, r.m.nodes[e.domain].end)
			in = nodes[from:to]
		}
		for _, n := range in {
			if r.m.isDescendant(n, e.domain) && r.exiting.add(n) {
				r.toExit = append(r.toExit, n)
			}
		}
		if e.self && r.exiting.add(e.domain) {
			r.toExit = append(r.toExit, e.domain)
		}
	}
	sortDescending(r.toExit)
	r.recordHistory()
	for _, x := range r.toExit {
		r.executeActions(r.m.nodes[x].exit, ev, x)
		if r.err != nil {
			return
		}
		if r.exitInvoking(x); r.err != nil {
			return
		}
		r.active[x] = false
	}
	kept := r.s.nodes[:0]
	for _, n := range r.s.nodes {
		if r.active[n] {
			kept = append(kept, n)
		}
	}
	clear(r.s.nodes[len(kept):])
	r.s.nodes = kept
}

// recordHistory sets the value of every history state of an exited state,
// from the configuration before the exit: for a shallow history the active
// children of its parent, for a deep one the active atomic descendants, in
// configuration order.
func (r *runner) recordHistory() {
	if !r.m.hasHistory {
		return
	}
	any := false
	for _, x := range r.toExit {
		if len(r.m.nodes[x].histories()) > 0 {
			any = true
			break
		}
	}
	if !any {
		return
	}
	if r.historyBuckets == nil {
		r.historyBuckets = map[int][]int{}
	}
	buckets := r.historyBuckets
	clear(buckets)
	for _, n := range r.s.nodes {
		node := r.m.nodes[n]
		if p := node.parent; p >= 0 && r.exiting.has(p) && len(r.m.nodes[p].histories()) > 0 {
			buckets[2*p] = append(buckets[2*p], n) // shallow: children of p
		}
		if node.kind != kindAtomic && node.kind != kindFinal {
			continue
		}
		for a := node.parent; a >= 0; a = r.m.nodes[a].parent {
			if r.exiting.has(a) && len(r.m.nodes[a].histories()) > 0 {
				buckets[2*a+1] = append(buckets[2*a+1], n) // deep: atomic descendants of a
			}
		}
	}
	// The history map is shared with the snapshot the call started from:
	// copy it once per call, then change the copy.
	hist := r.s.history
	if !r.ownsHistory || hist == nil {
		hist = make(map[int][]int, len(r.s.history)+1)
		for k, v := range r.s.history {
			hist[k] = v
		}
		r.ownsHistory = true
	}
	for _, x := range r.toExit {
		for _, h := range r.m.nodes[x].histories() {
			key := 2 * x
			if r.m.nodes[h].deep() {
				key++
			}
			hist[h] = append([]int{}, buckets[key]...)
		}
	}
	clear(buckets)
	r.s.history = hist
	r.changed, r.historyChanged = true, true
	r.forgetDomains()
}

// enterStates enters the entry set in document order, running entry
// actions (and the initial actions of states entered by default), and
// raises done events for completed compound and parallel states
// (https://www.w3.org/TR/scxml/#enterStates).
func (r *runner) enterStates(ts []*transition, ev Event, isInitial bool) {
	r.toEnter.reset(r.m)
	r.defaultEntry.reset(len(r.m.nodes))
	r.regionsDone.clear(len(r.m.nodes))
	if r.computeEntrySet(ts); r.err != nil {
		return
	}
	if isInitial {
		r.defaultEntry.add(0)
	}
	r.order = r.order[:0]
	if len(r.toEnter.list) == 0 {
		return
	}
	order := append(r.order[:0], r.toEnter.list...)
	r.order = order
	slices.Sort(order)
	finalChecks := false
	for _, n := range order {
		node := r.m.nodes[n]
		if !r.active[n] {
			r.activate(n)
			r.s.nodes = append(r.s.nodes, n)
		}
		if len(node.invokes()) > 0 {
			if r.enterInvoking(node, n, ev, r.defaultEntry.has[n] && node.initial != nil); r.err != nil {
				return
			}
		} else {
			r.executeActions(node.entry, ev, n)
			if r.err != nil {
				return
			}
			if r.defaultEntry.has[n] && node.initial != nil {
				r.executeActions(node.initial.actions, ev, n)
				if r.err != nil {
					return
				}
			}
		}
		if node.kind != kindFinal {
			continue
		}
		if !finalChecks {
			r.startFinalChecks()
			finalChecks = true
		}
		parent := node.parent
		if parent >= 0 {
			r.hasFinal.add(parent)
		}
		ancestor := -1
		if parent >= 0 {
			if r.m.nodes[parent].kind == kindParallel {
				ancestor = parent
			} else {
				ancestor = r.m.nodes[parent].parent
			}
		}
		completion := n
		if ancestor >= 0 {
			completion = ancestor
		}
		if parent >= 0 && r.m.nodes[parent].kind == kindCompound {
			done := Event{Type: doneStatePrefix + r.m.nodes[parent].id}
			r.leaveSlots() // the output may read the context
			if out, ok := node.output().resolve(scope{context: r.s.context, event: ev}); ok {
				done.Data = map[string]any{"output": out}
			}
			r.queue.push(done)
		}
		for ancestor >= 0 && r.m.nodes[ancestor].kind == kindParallel && !r.completed.has(ancestor) && r.parallelIsFinal(ancestor) {
			r.completed.add(ancestor)
			r.queue.push(Event{Type: doneStatePrefix + r.m.nodes[ancestor].id})
			completion = ancestor
			ancestor = r.m.nodes[ancestor].parent
		}
		if ancestor >= 0 {
			continue
		}
		r.s.status = StatusDone
		r.s.setOutput(r.machineOutput(completion, ev))
	}
}

// startFinalChecks prepares parallelIsFinal for one enterStates, when it
// enters its first final state: the compound states that have an active
// final child, and no region known final yet.
func (r *runner) startFinalChecks() {
	r.hasFinal.clear(len(r.m.nodes))
	r.completed.clear(len(r.m.nodes))
	for _, p := range r.finalTouched {
		r.finalCursor[p] = 0
	}
	r.finalTouched = r.finalTouched[:0]
	for _, n := range r.s.nodes {
		if r.m.nodes[n].kind == kindFinal && r.m.nodes[n].parent >= 0 {
			r.hasFinal.add(r.m.nodes[n].parent)
		}
	}
}

// parallelIsFinal is isInFinalState for a parallel state during
// enterStates. States are only added while entering, so a region once
// final stays final: each parallel state keeps a cursor past its leading
// final regions, and the checks of one microstep cost, in total, the
// regions plus one region per check.
func (r *runner) parallelIsFinal(p int) bool {
	regions := r.m.nodes[p].regions
	c := int(r.finalCursor[p])
	for c < len(regions) && r.regionIsFinal(regions[c]) {
		if c == 0 {
			r.finalTouched = append(r.finalTouched, p)
		}
		c++
		r.finalCursor[p] = int32(c)
	}
	return c == len(regions)
}

func (r *runner) regionIsFinal(n int) bool {
	switch r.m.nodes[n].kind {
	case kindCompound:
		return r.hasFinal.has(n)
	case kindParallel:
		return r.parallelIsFinal(n)
	}
	return r.m.nodes[n].kind == kindFinal
}

// machineOutput is XState's getMachineOutput: the root's output, computed
// from the context and the done event of the state that completed the
// root (whose output is that state's, when it has one and a parent).
func (r *runner) machineOutput(completion int, ev Event) (any, bool) {
	root := r.m.nodes[0]
	if root.output() == nil {
		return nil, false
	}
	if !root.output().hasRef {
		return cloneValue(root.output().value), true
	}
	done := Event{Type: doneStatePrefix + r.m.nodes[completion].id}
	r.leaveSlots() // the outputs may read the context
	if c := r.m.nodes[completion]; c.parent >= 0 && c.kind == kindFinal {
		if out, ok := c.output().resolve(scope{context: r.s.context, event: ev}); ok {
			done.Data = map[string]any{"output": out}
		}
	}
	return root.output().resolve(scope{context: r.s.context, event: done})
}

// isInFinalState: a compound state is in a final state when a final child
// is active; a parallel state when every region is.
func (m *Machine) isInFinalState(active []bool, n int) bool {
	node := m.nodes[n]
	switch node.kind {
	case kindCompound:
		for _, c := range node.children {
			if m.nodes[c].kind == kindFinal && active[c] {
				return true
			}
		}
		return false
	case kindParallel:
		for _, c := range node.regions {
			if !m.isInFinalState(active, c) {
				return false
			}
		}
		return true
	}
	return node.kind == kindFinal
}

// computeEntrySet fills toEnter with the states the transitions enter, and
// defaultEntry with those entered by default (whose initial actions run).
func (r *runner) computeEntrySet(ts []*transition) {
	for _, t := range ts {
		domain := r.domainOf(t)
		for _, s := range t.targets {
			if r.m.nodes[s].kind != kindHistory && (int(t.source) != s || int(t.source) != domain || t.reenter) {
				r.toEnter.add(s)
				r.defaultEntry.add(s)
			}
			r.addDescendantStatesToEnter(s)
		}
		r.targets = r.getEffectiveTargetStates(t, r.targets[:0])
		for _, s := range r.targets {
			reentrancy := domain
			if t.source == 0 && t.reenter {
				reentrancy = -2 // no reentrancy domain
			}
			// the ancestors of s below the domain, and the domain itself
			// when it is a parallel state
			r.addAncestorStatesToEnter(s, domain, domain >= 0 && r.m.nodes[domain].kind == kindParallel, reentrancy)
		}
	}
}

func sortDescending(s []int) {
	slices.Sort(s)
	slices.Reverse(s)
}

func (r *runner) addDescendantStatesToEnter(s int) {
	node := r.m.nodes[s]
	if node.kind == kindHistory {
		// A history state that is the initial state of its parent is part
		// of XState's configuration (and state value) after a default
		// entry, so it can remember itself; entering it again would
		// never end (XState overflows its stack). The step fails instead.
		if slices.Contains(r.enteringHistory, s) {
			r.fail(s, fmt.Errorf("%w: history state %q is entered through its own remembered value", ErrInfiniteLoop, node.id))
			return
		}
		r.enteringHistory = append(r.enteringHistory, s)
		defer func() { r.enteringHistory = r.enteringHistory[:len(r.enteringHistory)-1] }()
		if h, ok := r.s.history[s]; ok {
			for _, n := range h {
				r.toEnter.add(n)
				if r.addDescendantStatesToEnter(n); r.err != nil {
					return
				}
			}
			for _, n := range h {
				r.addProperAncestorStatesToEnter(n, node.parent)
			}
			return
		}
		def := r.m.historyDefaultTransition(s)
		parent := r.m.nodes[node.parent]
		for _, n := range def.targets {
			r.toEnter.add(n)
			if def == parent.initial {
				r.defaultEntry.add(node.parent)
			}
			r.addDescendantStatesToEnter(n)
		}
		for _, n := range def.targets {
			r.addProperAncestorStatesToEnter(n, node.parent)
		}
		return
	}
	switch node.kind {
	case kindCompound:
		init := node.initial.targets[0]
		if r.m.nodes[init].kind != kindHistory {
			r.toEnter.add(init)
			r.defaultEntry.add(init)
		}
		r.addDescendantStatesToEnter(init)
		r.addProperAncestorStatesToEnter(init, s)
	case kindParallel:
		for _, c := range node.regions {
			if r.toEnter.hasDescendant(c) {
				continue
			}
			r.toEnter.add(c)
			r.defaultEntry.add(c)
			r.addDescendantStatesToEnter(c)
		}
	}
}

// addAncestorStatesToEnter enters the proper ancestors of n below to (and
// to itself if withTo), nearest first: those inside the reentrancy domain
// (-2 means all), and the other regions of any parallel ancestor. XState:
// regions entered this way do not run initial actions.
func (r *runner) addAncestorStatesToEnter(n, to int, withTo bool, reentrancy int) {
	if n == to {
		if withTo {
			r.enterAncestor(to, reentrancy)
		}
		return
	}
	for anc := r.m.nodes[n].parent; anc >= 0; anc = r.m.nodes[anc].parent {
		if anc == to {
			if withTo {
				r.enterAncestor(anc, reentrancy)
			}
			return
		}
		r.enterAncestor(anc, reentrancy)
	}
}

func (r *runner) enterAncestor(anc, reentrancy int) {
	if reentrancy == -2 || r.m.isDescendant(anc, reentrancy) {
		r.toEnter.add(anc)
	}
	// The entry set only grows, so once the regions of anc are entered a
	// second pass over them would change nothing.
	if r.m.nodes[anc].kind != kindParallel || !r.regionsDone.add(anc) {
		return
	}
	for _, c := range r.m.nodes[anc].regions {
		if r.toEnter.hasDescendant(c) {
			continue
		}
		r.toEnter.add(c)
		r.addDescendantStatesToEnter(c)
	}
}

func (r *runner) addProperAncestorStatesToEnter(n, to int) {
	r.addAncestorStatesToEnter(n, to, false, -2)
}
