// This file defines the interpreter: macrostep, microstep and their helpers,
// named after the W3C SCXML algorithm (Appendix D,
// https://www.w3.org/TR/scxml/#AlgorithmforSCXMLInterpretation) and after
// XState's packages/core/src/stateUtils.ts, so each function can be checked
// against both. Where XState departs from SCXML we follow XState, and the
// comment says "XState:".

package statechart

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// runner processes events on a working snapshot. Its buffers are reused
// between macrosteps, so an Actor can process events without allocating.
type runner struct {
	m   *Machine
	ctx context.Context
	s   *Snapshot // the working snapshot, modified in place
	now time.Time

	active         []bool // membership of s.nodes
	queue          []Event
	changed        bool // the microstep changed the snapshot (XState: a new snapshot object)
	historyChanged bool
	err            error
	errNode        int

	// scratch
	toEnter, defaultEntry nodeSet
	toExit                []int
	order, prevNodes      []int
	targets               []int
	exitA, exitB          nodeSet
	selected              []*transition
	filtered, eventless   []*transition
	effective             []int
	args                  ActionArgs
}

// nodeSet is a set of node indexes with insertion order and O(1) membership.
type nodeSet struct {
	has  []bool
	list []int
}

func (ns *nodeSet) reset(n int) {
	if len(ns.has) != n {
		ns.has = make([]bool, n)
		ns.list = ns.list[:0]
		return
	}
	for _, i := range ns.list {
		ns.has[i] = false
	}
	ns.list = ns.list[:0]
}

func (ns *nodeSet) add(i int) {
	if !ns.has[i] {
		ns.has[i] = true
		ns.list = append(ns.list, i)
	}
}

func newRunner(m *Machine) *runner {
	return &runner{m: m}
}

// begin makes s the working snapshot.
func (r *runner) begin(ctx context.Context, s *Snapshot, now time.Time) {
	r.ctx, r.s, r.now, r.err, r.errNode = ctx, s, now, nil, -1
	if len(r.active) != len(r.m.nodes) {
		r.active = make([]bool, len(r.m.nodes))
	} else {
		clear(r.active)
	}
	for _, n := range s.nodes {
		r.active[n] = true
	}
	r.queue = r.queue[:0]
}

func (r *runner) fail(node int, err error) {
	if r.err == nil {
		r.err, r.errNode = err, node
	}
}

// runtimeError wraps r.err for the event being processed.
func (r *runner) runtimeError(ev Event) error {
	re := &RuntimeError{Event: ev.Type, Err: r.err}
	if r.errNode >= 0 {
		re.State = r.m.nodes[r.errNode].id
	}
	return re
}

// initialTransition enters the initial configuration and runs the initial
// macrostep (XState's getInitialSnapshot: initialMicrostep, then macrostep
// on xstate.init).
func (r *runner) initialTransition() {
	init := &transition{source: 0, reenter: true}
	r.m.initialStateNodes(0, func(n int) { init.targets = append(init.targets, n) })
	ev := Event{Type: EventInit}
	r.microstep([]*transition{init}, ev, true)
	if r.err != nil {
		return
	}
	r.macrostepLoop(ev)
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
		for _, c := range m.nodes[n].children {
			if m.nodes[c].kind != kindHistory {
				m.initialStateNodes(c, add)
			}
		}
	}
}

// macrostep processes one external event to completion: its transitions,
// then eventless transitions and raised events until the machine is stable.
func (r *runner) macrostep(ev Event) {
	switch {
	case ev.Type == EventStop:
		// XState: stops the machine; no transition is selected.
		r.s.status = StatusStopped
		r.s.timers = r.s.timers[:0]
		return
	case ev.Type == EventInit:
		// XState: selects no transition, only eventless ones.
		r.macrostepLoop(ev)
		return
	}
	ts := r.selectTransitions(ev)
	if r.err != nil {
		return
	}
	if len(ts) == 0 && strings.HasPrefix(ev.Type, errorActorPrefix) {
		// XState: an unhandled actor error puts the machine in error.
		r.fail(-1, fmt.Errorf("unhandled error event %q: %v", ev.Type, ev.Data["error"]))
		return
	}
	r.microstep(ts, ev, false)
	if r.err != nil {
		return
	}
	r.macrostepLoop(ev)
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
		if shouldSelectEventless {
			enabled = r.selectEventlessTransitions(ev)
			if r.err != nil {
				return
			}
		}
		eventless := len(enabled) > 0
		if !eventless {
			if len(r.queue) == 0 {
				return
			}
			ev = r.queue[0]
			n := copy(r.queue, r.queue[1:]) // keep the buffer's capacity for reuse
			r.queue[n] = Event{}
			r.queue = r.queue[:n]
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
	if !r.m.isComplete(r.s.nodes, r.active) {
		// XState walks the state value; for a configuration its quirks
		// left incomplete, walk the value's shape exactly.
		r.transitionValue(0, r.m.adjacency(r.m.allStateNodes(r.s.nodes)), ev)
		return r.selected
	}
	r.transitionNode(0, ev)
	return r.selected
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

func (r *runner) transitionNode(n int, ev Event) {
	before := len(r.selected)
	node := r.m.nodes[n]
	switch node.kind {
	case kindCompound:
		for _, c := range node.children {
			if r.active[c] {
				r.transitionNode(c, ev)
				break
			}
		}
	case kindParallel:
		for _, c := range node.children {
			if r.active[c] {
				r.transitionNode(c, ev)
				if r.err != nil {
					return
				}
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
	if g := node.byEvent[ev.Type]; g != nil {
		for _, t := range g.transitions {
			if ok := r.evaluateGuard(t, ev); r.err != nil || ok {
				return okTransition(ok, t)
			}
		}
	}
	for _, g := range node.wildcards {
		if g.descriptor == ev.Type || !matchesEventDescriptor(ev.Type, g.descriptor) {
			continue
		}
		for _, t := range g.transitions {
			if ok := r.evaluateGuard(t, ev); r.err != nil || ok {
				return okTransition(ok, t)
			}
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

// selectEventlessTransitions takes, for each atomic state in
// configuration order, the first enabled `always` transition of the state
// or its nearest ancestor that has one, then removes conflicts.
// XState: the configuration order is the insertion order of _nodes, not
// document order.
func (r *runner) selectEventlessTransitions(ev Event) []*transition {
	r.selected = r.selected[:0]
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
					if !containsTransition(r.selected, t) {
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

func containsTransition(ts []*transition, t *transition) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// microstep takes one set of enabled transitions: exit, transition actions,
// entry (https://www.w3.org/TR/scxml/#microstepProcedure). An empty set is
// a no-op.
func (r *runner) microstep(ts []*transition, ev Event, isInitial bool) {
	r.changed, r.historyChanged = false, false
	if len(ts) == 0 {
		return
	}
	r.filtered = r.removeConflictingTransitions(ts, r.filtered[:0])
	filtered := r.filtered
	r.prevNodes = append(r.prevNodes[:0], r.s.nodes...)
	if !isInitial {
		r.exitStates(filtered, ev)
		if r.err != nil {
			return
		}
	}
	for _, t := range filtered {
		r.executeActions(t.actions, ev, t.source)
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
		r.s.timers = r.s.timers[:0]
		r.changed = true
	}
	if !r.sameNodes() {
		r.changed = true
	} else if !r.historyChanged {
		// XState keeps the previous _nodes (and so its order) when a
		// microstep ends with the same set of nodes and history.
		r.s.nodes = append(r.s.nodes[:0], r.prevNodes...)
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

// removeConflictingTransitions keeps, of two transitions whose exit sets
// intersect, the one whose source is a descendant of the other's source;
// otherwise the earlier one (document order of selection). The result is
// appended to kept, which must not alias ts.
func (r *runner) removeConflictingTransitions(ts, kept []*transition) []*transition {
	if len(ts) <= 1 {
		return append(kept, ts...)
	}
	for _, t1 := range ts {
		preempted := false
		var remove []*transition
		r.exitA.reset(len(r.m.nodes))
		r.computeExitSet(t1, &r.exitA)
		for _, t2 := range kept {
			r.exitB.reset(len(r.m.nodes))
			r.computeExitSet(t2, &r.exitB)
			if !intersects(&r.exitA, &r.exitB) {
				continue
			}
			if r.m.isDescendant(t1.source, t2.source) {
				remove = append(remove, t2)
			} else {
				preempted = true
				break
			}
		}
		if preempted {
			continue
		}
		if len(remove) > 0 {
			k := kept[:0]
			for _, t := range kept {
				if !containsTransition(remove, t) {
					k = append(k, t)
				}
			}
			kept = k
		}
		kept = append(kept, t1)
	}
	return kept
}

func intersects(a, b *nodeSet) bool {
	for _, i := range a.list {
		if b.has[i] {
			return true
		}
	}
	return false
}

// isDescendant reports whether a is a proper descendant of b; b == -1
// stands for "above the root", of which every node (root included) is a
// descendant, as in XState.
func (m *Machine) isDescendant(a, b int) bool {
	if b < 0 {
		return true
	}
	for p := m.nodes[a].parent; p >= 0; p = m.nodes[p].parent {
		if p == b {
			return true
		}
	}
	return false
}

// getEffectiveTargetStates replaces history targets by the states they
// remember, or by their default targets.
func (r *runner) getEffectiveTargetStates(t *transition, out []int) []int {
	for _, tg := range t.targets {
		if r.m.nodes[tg].kind == kindHistory {
			if h, ok := r.s.history[tg]; ok {
				for _, n := range h {
					out = appendUnique(out, n)
				}
			} else {
				def := r.m.historyDefaultTransition(tg)
				for _, n := range r.getEffectiveTargetStates(def, nil) {
					out = appendUnique(out, n)
				}
			}
			continue
		}
		out = appendUnique(out, tg)
	}
	return out
}

func appendUnique(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// historyDefaultTransition is XState's resolveHistoryDefaultTransition: the
// history state's own target, else its parent's initial transition, else
// (parallel parent) the parent itself.
func (m *Machine) historyDefaultTransition(h int) *transition {
	n := m.nodes[h]
	if n.historyDef != nil {
		return n.historyDef
	}
	p := m.nodes[n.parent]
	if p.kind == kindParallel {
		return &transition{source: h, targets: []int{n.parent}}
	}
	return p.initial
}

// getTransitionDomain returns the state whose descendants the transition
// exits and enters; -1 means the root itself is exited and re-entered.
// XState: the least common ancestor may be a parallel state (SCXML's LCCA
// would skip it), and `reenter: false` keeps the source when every target is
// inside it.
func (r *runner) getTransitionDomain(t *transition) int {
	targets := r.getEffectiveTargetStates(t, r.effective[:0])
	r.effective = targets
	if !t.reenter {
		inside := true
		for _, tg := range targets {
			if tg != t.source && !r.m.isDescendant(tg, t.source) {
				inside = false
				break
			}
		}
		if inside {
			return t.source
		}
	}
	// findLeastCommonAncestor(targets + source)
	head := t.source
	if len(targets) > 0 {
		head = targets[0]
	}
	for anc := r.m.nodes[head].parent; anc >= 0; anc = r.m.nodes[anc].parent {
		all := true
		for _, tg := range targets[min(1, len(targets)):] {
			if !r.m.isDescendant(tg, anc) {
				all = false
				break
			}
		}
		if all && (len(targets) == 0 || r.m.isDescendant(t.source, anc)) {
			return anc
		}
	}
	if t.reenter {
		return -1
	}
	return 0
}

// computeExitSet adds to set the active states a transition exits.
func (r *runner) computeExitSet(t *transition, set *nodeSet) {
	if len(t.targets) == 0 {
		return
	}
	domain := r.getTransitionDomain(t)
	if t.reenter && t.source == domain {
		set.add(domain)
	}
	for _, n := range r.s.nodes {
		if r.m.isDescendant(n, domain) {
			set.add(n)
		}
	}
}

// exitStates exits the exit set in reverse document order, recording
// history first (https://www.w3.org/TR/scxml/#exitStates).
func (r *runner) exitStates(ts []*transition, ev Event) {
	r.exitA.reset(len(r.m.nodes))
	for _, t := range ts {
		r.computeExitSet(t, &r.exitA)
	}
	if len(r.exitA.list) == 0 {
		return
	}
	r.toExit = append(r.toExit[:0], r.exitA.list...)
	sortDescending(r.toExit)

	var hist map[int][]int
	for _, x := range r.toExit {
		for _, h := range r.m.nodes[x].children {
			hn := r.m.nodes[h]
			if hn.kind != kindHistory {
				continue
			}
			if hist == nil {
				hist = make(map[int][]int, len(r.s.history)+1)
				for k, v := range r.s.history {
					hist[k] = v
				}
			}
			var remembered []int
			for _, n := range r.s.nodes {
				if hn.deep {
					if k := r.m.nodes[n].kind; (k == kindAtomic || k == kindFinal) && r.m.isDescendant(n, x) {
						remembered = append(remembered, n)
					}
				} else if r.m.nodes[n].parent == x {
					remembered = append(remembered, n)
				}
			}
			hist[h] = remembered
		}
	}
	if hist != nil {
		r.s.history = hist
		r.changed, r.historyChanged = true, true
	}
	for _, x := range r.toExit {
		r.executeActions(r.m.nodes[x].exit, ev, x)
		if r.err != nil {
			return
		}
		r.removeNode(x)
	}
}

func (r *runner) removeNode(x int) {
	if !r.active[x] {
		return
	}
	r.active[x] = false
	for i, n := range r.s.nodes {
		if n == x {
			r.s.nodes = append(r.s.nodes[:i], r.s.nodes[i+1:]...)
			return
		}
	}
}

// enterStates enters the entry set in document order, running entry
// actions (and the initial actions of states entered by default), and
// raises done events for completed compound and parallel states
// (https://www.w3.org/TR/scxml/#enterStates).
func (r *runner) enterStates(ts []*transition, ev Event, isInitial bool) {
	r.toEnter.reset(len(r.m.nodes))
	r.defaultEntry.reset(len(r.m.nodes))
	r.computeEntrySet(ts)
	if isInitial {
		r.defaultEntry.add(0)
	}
	if len(r.toEnter.list) == 0 {
		return
	}
	order := append(r.order[:0], r.toEnter.list...)
	r.order = order
	slices.Sort(order)
	var completed []int
	for _, n := range order {
		node := r.m.nodes[n]
		if !r.active[n] {
			r.active[n] = true
			r.s.nodes = append(r.s.nodes, n)
		}
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
		if node.kind != kindFinal {
			continue
		}
		parent := node.parent
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
			if node.hasOutput {
				done.Data = map[string]any{"output": cloneValue(node.output)}
			}
			r.queue = append(r.queue, done)
		}
		for ancestor >= 0 && r.m.nodes[ancestor].kind == kindParallel && !containsInt(completed, ancestor) && r.m.isInFinalState(r.active, ancestor) {
			completed = append(completed, ancestor)
			r.queue = append(r.queue, Event{Type: doneStatePrefix + r.m.nodes[ancestor].id})
			completion = ancestor
			ancestor = r.m.nodes[ancestor].parent
		}
		if ancestor >= 0 {
			continue
		}
		r.s.status = StatusDone
		r.s.output, r.s.hasOutput = r.machineOutput(completion)
	}
}

// machineOutput is XState's getMachineOutput: the root's static output.
func (r *runner) machineOutput(completion int) (any, bool) {
	root := r.m.nodes[0]
	if !root.hasOutput {
		return nil, false
	}
	return cloneValue(root.output), true
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
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
		for _, c := range node.children {
			if m.nodes[c].kind != kindHistory && !m.isInFinalState(active, c) {
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
		domain := r.getTransitionDomain(t)
		for _, s := range t.targets {
			if r.m.nodes[s].kind != kindHistory && (t.source != s || t.source != domain || t.reenter) {
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
		if h, ok := r.s.history[s]; ok {
			for _, n := range h {
				r.toEnter.add(n)
				r.addDescendantStatesToEnter(n)
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
		for _, c := range node.children {
			if r.m.nodes[c].kind == kindHistory || r.hasDescendantToEnter(c) {
				continue
			}
			r.toEnter.add(c)
			r.defaultEntry.add(c)
			r.addDescendantStatesToEnter(c)
		}
	}
}

func (r *runner) hasDescendantToEnter(c int) bool {
	for _, s := range r.toEnter.list {
		if r.m.isDescendant(s, c) {
			return true
		}
	}
	return false
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
	if r.m.nodes[anc].kind != kindParallel {
		return
	}
	for _, c := range r.m.nodes[anc].children {
		if r.m.nodes[c].kind == kindHistory || r.hasDescendantToEnter(c) {
			continue
		}
		r.toEnter.add(c)
		r.addDescendantStatesToEnter(c)
	}
}

func (r *runner) addProperAncestorStatesToEnter(n, to int) {
	r.addAncestorStatesToEnter(n, to, false, -2)
}
