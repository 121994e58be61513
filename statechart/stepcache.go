// This file defines the step cache: what a microstep does to the
// configuration (the states it exits, in order, the transitions whose
// actions run, the states it enters and the configuration it leaves) is
// determined by the configuration and the transitions taken, so a runner
// records it the first time and replays it after. Guards are still
// evaluated and actions still run every time; only the computation of
// exit and entry sets is skipped. Microsteps that depend on more than the
// configuration (history) or that enter a final state are never cached:
// they take the general algorithm in algorithm.go. The steps of the
// machines of an actor system are cached too (the actions, sendTo and
// spawnChild included, and the start and stop of invoked children, run on
// replay as on the general path). fastStep is an Actor's whole macrostep from the
// cache, for a step nothing in can fail, with the eventless microsteps
// that follow it when their guards and plans are pure: those guards may
// read what the step assigned, so they are evaluated on replay, and when
// the cache lacks what they select the step is undone and the general
// path takes the event.

package statechart

import (
	"encoding/binary"
	"slices"
	"strings"
)

// maxCachedSteps bounds a runner's step cache; when it is full it is
// emptied and filled again with the steps seen next.
const maxCachedSteps = 256

// stepPlan is one recorded microstep.
type stepPlan struct {
	ids     []int         // the ids of the transitions selected, which with the configuration make the key
	ts      []*transition // the transitions taken (conflicts removed), in order
	exit    []int         // exitStates: the states exited, in order
	kept    []int         // s.nodes once they are exited
	enter   []int         // enterStates: the states entered, in order
	initial []bool        // per entered state: its initial actions run
	final   []int         // s.nodes at the end of the microstep
	moved   bool          // the configuration differs from the one before
	// still: no state is exited or entered, so s.nodes stays as it is,
	// in order (kept and final are the configuration's nodes).
	still bool
	// pure: every action it runs is a declarative assign (or a log, or a
	// missing implementation): none can fail, raise, schedule or see the
	// context, so an Actor may take it without a working copy (fastStep).
	pure bool
	// run: of a pure plan, the assigns it runs, in order (see replay).
	run []*action
	// slots: the entries of run's assigns, in order, when each has slot
	// entries that it sets one by one (see independentSlots): setting
	// them one by one in that order is running the assigns in order.
	slots []slotEntry
	// nums: slots as numAssigns, when each entry adds to its key's
	// number or sets a number literal (see assignNumbers).
	nums []numAssign
	// quiet: no state of final has an eventless transition, so none can
	// be selected after the step (see quietNodes).
	quiet bool
	// assigns: an action of the step may change the context.
	assigns bool
	// sends: the undelayed sendTo (sendParent, forwardTo) actions of a
	// step whose other actions are pure; messaging: the step has only
	// such actions and pure ones, so a cell may take it by fastStep once
	// every target exists (see sendTargetsExist).
	sends     []*sendDef
	messaging bool
	// invokes: a state it exits or enters invokes children, which it
	// stops or starts; quickInvokes: every such child can start and stop
	// without failing, and the step sends nothing, so that a cell may
	// take the step by fastStep when the children it stops have no
	// children (see runner.invokesCannotFail).
	invokes, quickInvokes bool
	// noChain: fastStep no longer takes the eventless microsteps that
	// may follow the step (see fastEventless): once, one of them or the
	// selection of one needed the general path (a guard or a plan that is
	// not pure, a configuration that is not a chain, a chain too long).
	noChain bool
	// closed: 1 once every eventless microstep that may follow the step
	// is known to be recorded and pure (see chainClosed); -1 when it was
	// not, with closedAt the number of plans recorded then.
	closed   int8
	closedAt int
	// next: the plans of the configuration final, once looked up.
	next *confPlans
}

// confPlans holds the recorded microsteps of one configuration, and the
// candidates of the events selected in it.
type confPlans struct {
	nodes []int // the configuration, in the order of s.nodes
	plans []*stepPlan
	sels  []selection
	// snap: the last plain snapshot of the configuration the pure API
	// returned (see runner.shared).
	snap *Snapshot
	// quiet: 1 when no state of the configuration has an eventless
	// transition, -1 when one has, 0 until asked (see runner.confQuiet).
	quiet int8
	// always: the eventless candidates of a chain configuration, once
	// alwaysOK is 1 (see runner.eventlessCandidates); alwaysOK is -1 when
	// fastStep cannot select eventless transitions in it.
	always      []*transition
	alwaysPlans []*stepPlan // per candidate of always, its plan once found
	alwaysOK    int8
}

// soloPlan returns the plan of configuration c that takes transition
// ts[i] alone, if one is recorded, remembered in (*memo)[i] once found: a
// configuration records one plan per set of transitions, and keeps it.
func (c *confPlans) soloPlan(ts []*transition, i int, memo *[]*stepPlan) *stepPlan {
	if i < len(*memo) && (*memo)[i] != nil {
		return (*memo)[i]
	}
	for _, p := range c.plans {
		if len(p.ids) == 1 && p.ids[0] == int(ts[i].id) {
			if len(*memo) != len(ts) {
				*memo = make([]*stepPlan, len(ts))
			}
			(*memo)[i] = p
			return p
		}
	}
	return nil
}

// selection lists the candidates of one event (by Machine.eventIDs; -1
// for types no descriptor names) in an ordinary configuration (see
// inspectConfiguration) in which no active state has a wildcard
// descriptor. transitionNode then walks the active states, deepest first
// and the regions of a parallel state in order, and takes at each the
// first transition of the event's descriptor whose guard passes, unless a
// state below it already gave one; so does selectFrom, from the record.
type selection struct {
	evID int32
	// ts: in a chain (no active parallel state), the candidates of the
	// active states, deepest first: the first whose guard passes is the
	// one taken.
	ts []*transition
	// tree: otherwise, the active states that have candidates, in the
	// order transitionNode finishes them (children first).
	tree []selNode
	// pure: every guard of ts is declarative (or none, or stateIn of a
	// state): evaluating them cannot fail nor hand the context out.
	pure bool
	// shared: two candidates of the tree have the same declarative guard.
	shared bool
	// plans: in a chain, per candidate of ts, its plan once found (see
	// confPlans.soloPlan).
	plans []*stepPlan
}

// selNode is one active state of a selection's tree: its candidates, and
// how many states of its subtree come before it in the tree.
type selNode struct {
	ts   []*transition
	span int32
}

// maxSelections bounds the selections kept per configuration.
const maxSelections = 16

// stepCache holds the plans of one runner. A lookup checks first the
// configuration the last step led to, and looks the configuration up by
// key only when the snapshot is in another one.
type stepCache struct {
	confs map[string]*confPlans // by confKey
	count int                   // the plans in confs
	cur   *confPlans            // the configuration last looked up or led to, if known
	// known: cur is the record of the configuration as it is now (nil if
	// it has none), until the configuration changes.
	known bool
	// exact: the snapshot an Actor's fastStep last changed, when cur is
	// nil or the record of its configuration (see fastStep); nil
	// otherwise. begin clears it.
	exact *Snapshot
	last  *stepPlan  // the plan last replayed, whose next is not known yet
	into  *confPlans // recordPlan: the configuration of the step being recorded; nil for a new one
	key   []byte     // the key of the configuration looked up
	// recording: the ids of the transitions of the step being recorded.
	recording []int
	off       bool // the cache is not used (tests compare with the general path)
	hits      int  // plans replayed, for tests
	fast      int  // events fastStep took, for tests
	chains    int  // eventless microsteps fastStep took, for tests
	// replayed counts the replays since the cache was last emptied; when
	// it was emptied for being full with few of them (a machine whose
	// steps rarely repeat within the bound), the cache rests for pause
	// microsteps instead of recording steps it would not replay.
	replayed, pause int
}

// cacheable reports whether the machine's microsteps may be cached:
// without history states (whose values the steps would depend on).
func (m *Machine) cacheable() bool { return !m.hasHistory }

// confKey writes the key of configuration nodes into the cache's buffer:
// their number, then each, in order (the order of s.nodes is XState's and
// a step keeps it), in two bytes each (four in a machine of more than
// 65,535 states).
func (r *runner) confKey(nodes []int) []byte {
	wide := len(r.m.nodes) >= 1<<16
	put := func(k []byte, v int) []byte {
		if wide {
			return binary.LittleEndian.AppendUint32(k, uint32(v))
		}
		return binary.LittleEndian.AppendUint16(k, uint16(v))
	}
	k := put(r.cache.key[:0], len(nodes))
	for _, n := range nodes {
		k = put(k, n)
	}
	r.cache.key = k
	return k
}

// cacheOn reports whether the runner may use its step cache.
func (r *runner) cacheOn() bool {
	return !r.deferCustom && !r.cache.off && r.cache.pause == 0 && r.m.cacheable()
}

// currentConf returns the recorded configuration r.s.nodes is in, if any.
func (r *runner) currentConf() *confPlans {
	if r.cache.known {
		return r.cache.cur
	}
	c := r.cache.cur
	if c == nil || !slices.Equal(c.nodes, r.s.nodes) {
		c = r.cache.confs[string(r.confKey(r.s.nodes))]
		r.cache.cur = c
	}
	r.cache.known = true
	return c
}

// selectCached selects the transitions of the event r.evID from the
// configuration's recorded selection, evaluating the guards in order; ok
// is false when there is none.
func (r *runner) selectCached(c *confPlans, ev Event) (ok bool) {
	for i := range c.sels {
		if sel := &c.sels[i]; sel.evID == r.evID {
			r.selectFrom(sel, ev)
			return true
		}
	}
	return false
}

// selectFrom appends to r.selected what transitionNode would select with
// the candidates of sel, evaluating the same guards in the same order.
func (r *runner) selectFrom(sel *selection, ev Event) {
	if sel.tree == nil {
		for _, t := range sel.ts {
			pass := t.guard == nil || r.evaluateGuard(t, ev)
			if r.err != nil {
				return
			}
			if pass {
				r.selected = append(r.selected, t)
				return
			}
		}
		return
	}
	// starts[i]: how many transitions were selected before tree[i]'s
	// subtree was walked; a state gives none once its subtree gave one.
	starts := r.selStarts[:0]
	// Regions often share a declarative guard: it sees the same context
	// and event in every one, so its answer is kept for the selection.
	memo := r.condMemo[:0]
	for i := range sel.tree {
		e := &sel.tree[i]
		starts = append(starts, int32(len(r.selected)))
		if int32(len(r.selected)) > starts[i-int(e.span)] {
			continue
		}
		for _, t := range e.ts {
			var pass bool
			if sel.shared {
				pass, memo = r.evaluateGuardOnce(t, ev, memo)
			} else {
				pass = t.guard == nil || r.evaluateGuard(t, ev)
			}
			if r.err != nil {
				r.selStarts = starts
				return
			}
			if pass {
				r.selected = append(r.selected, t)
				break
			}
		}
	}
	r.selStarts = starts
}

// passes is evaluateGuard for transition t whose guard is pure (see
// pureGuard), which cannot fail: a declarative guard is evaluated on the
// slots directly while they are live.
func (r *runner) passes(t *transition, ev *Event) bool {
	if t.guard == nil {
		return true // kept small enough to be inlined
	}
	return r.passesGuard(t, ev)
}

// passesGuard is passes for a transition with a guard.
func (r *runner) passesGuard(t *transition, ev *Event) bool {
	if g := t.guard; g.kind == guardNamed && g.slot != nil && r.slotCtx.live {
		if ts := g.slot.tests; ts != nil {
			if pass, done := r.slotCtx.tests(ts); done {
				return pass
			}
		}
		return r.evalSlots(g.slot, ev)
	}
	return r.evaluateGuard(t, *ev)
}

// evaluateGuardOnce is evaluateGuard, with the answers of declarative
// guards kept in memo: a guard already evaluated in this selection is not
// evaluated again.
func (r *runner) evaluateGuardOnce(t *transition, ev Event, memo []condAnswer) (bool, []condAnswer) {
	g := t.guard
	if g == nil || g.decl == nil {
		return r.evaluateGuard(t, ev), memo
	}
	for _, m := range memo {
		if m.c == g.decl {
			return m.pass, memo
		}
	}
	pass := r.evaluateGuard(t, ev)
	if len(memo) < cap(memo) {
		memo = append(memo, condAnswer{c: g.decl, pass: pass})
	}
	return pass, memo
}

// condAnswer is a declarative guard's answer in one selection.
type condAnswer struct {
	c    *cond
	pass bool
}

// recordSelection records the candidates of the event r.evID in
// configuration c, once inspectConfiguration found it complete (r.kid),
// unless an active state has a wildcard descriptor.
func (r *runner) recordSelection(c *confPlans, ev Event) {
	if len(c.sels) >= maxSelections {
		return
	}
	sel := selection{evID: r.evID, pure: true}
	chain := r.chainScratch[:0]
	for n := 0; ; n = int(r.kid[n]) {
		node := r.m.nodes[n]
		if len(node.wildcards) > 0 {
			r.chainScratch = chain
			return
		}
		if node.kind == kindParallel {
			chain = chain[:0]
			break
		}
		chain = append(chain, n)
		if node.kind != kindCompound {
			break
		}
	}
	r.chainScratch = chain
	if len(chain) > 0 {
		for i := len(chain) - 1; i >= 0; i-- {
			if g := r.exactGroup(r.m.nodes[chain[i]], ev); g != nil {
				sel.ts = append(sel.ts, g.transitions...)
			}
		}
		for _, t := range sel.ts {
			sel.pure = sel.pure && pureGuard(t.guard)
		}
	} else {
		tree, ok := r.selectionTree(0, ev, nil)
		if !ok {
			return
		}
		if tree == nil {
			tree = []selNode{} // no candidates at all: still a tree
		}
		sel.tree = tree
		var conds []*cond
		for _, e := range tree {
			for _, t := range e.ts {
				sel.pure = sel.pure && pureGuard(t.guard)
				if g := t.guard; g != nil && g.decl != nil {
					sel.shared = sel.shared || slices.Contains(conds, g.decl)
					conds = append(conds, g.decl)
				}
			}
		}
	}
	c.sels = append(c.sels, sel)
}

// selectionTree appends the states of n's active subtree that have
// candidates for the event, in the order transitionNode finishes them; ok
// is false when one has a wildcard descriptor.
func (r *runner) selectionTree(n int, ev Event, tree []selNode) (_ []selNode, ok bool) {
	node := r.m.nodes[n]
	if len(node.wildcards) > 0 {
		return nil, false
	}
	start := len(tree)
	switch node.kind {
	case kindCompound:
		if tree, ok = r.selectionTree(int(r.kid[n]), ev, tree); !ok {
			return nil, false
		}
	case kindParallel:
		for _, c := range node.regions {
			if tree, ok = r.selectionTree(c, ev, tree); !ok {
				return nil, false
			}
		}
	}
	if g := r.exactGroup(node, ev); g != nil && len(g.transitions) > 0 {
		tree = append(tree, selNode{ts: g.transitions, span: int32(len(tree) - start)})
	}
	return tree, true
}

// quietNodes reports whether no state of nodes, nor an ancestor of one,
// has an eventless transition: selectEventlessTransitions then selects
// none without evaluating a guard. Each state is looked at once.
func (r *runner) quietNodes(nodes []int) bool {
	m := r.m
	if len(m.alwaysNodes) == 0 {
		return true
	}
	r.quietSeen.clear(len(m.nodes))
	for _, n := range nodes {
		for s := n; s >= 0 && r.quietSeen.add(s); s = m.nodes[s].parent {
			if len(m.nodes[s].always) > 0 {
				return false
			}
		}
	}
	return true
}

// confQuiet is quietNodes of configuration c, computed once.
func (r *runner) confQuiet(c *confPlans) bool {
	if c.quiet == 0 {
		c.quiet = -1
		if r.quietNodes(c.nodes) {
			c.quiet = 1
		}
	}
	return c.quiet > 0
}

// pureGuard reports whether evaluating g cannot fail and hands no
// implementation the context: it is absent, declarative, a route, a
// stateIn of a state, or a combination of those.
func pureGuard(g *guard) bool {
	if g == nil {
		return true
	}
	switch g.kind {
	case guardAnd, guardOr, guardNot:
		for _, s := range g.subs {
			if !pureGuard(s) {
				return false
			}
		}
		return true
	case guardStateIn:
		return g.inNode >= 0
	case guardRoute:
		return true
	}
	return g.decl != nil
}

// classify folds actions, run by the step, into the plan's pure,
// messaging, assigns, sends and run.
func (p *stepPlan) classify(actions []*action) {
	for _, a := range actions {
		switch {
		case a.kind == actionAssign, a.kind == actionCustom && a.decl != nil:
			p.assigns = true
			if a.kind == actionAssign || a.impl != nil { // see executeActions
				p.run = append(p.run, a)
			}
		case a.kind == actionLog, a.kind == actionCustom && a.impl == nil:
		case a.kind == actionSendTo && !a.send.hasDelay:
			p.pure = false
			p.sends = append(p.sends, a.send)
		default:
			p.pure, p.messaging = false, false
		}
	}
}

// sendTargetsExist reports whether every send of plan p finds its target
// in the working snapshot, so that none can fail. The children found are
// left in r.knownTargets for the replay of p: a plan with sends neither
// starts nor stops a child (see classify), so they stay the targets
// throughout it.
func (r *runner) sendTargetsExist(p *stepPlan) bool {
	r.knownTargets = r.knownTargets[:0]
	for _, d := range p.sends {
		switch d.target {
		case sendToParent:
			if r.self.parent == nil {
				r.forgetTargets()
				return false
			}
		case sendToChild:
			l := r.s.x().children
			var c *cell
			if l != nil {
				if i, ok := l.find(d.to); ok {
					c = l.at(i).cell
				}
			}
			if c == nil {
				r.forgetTargets()
				return false
			}
			r.knownTargets = append(r.knownTargets, knownTarget{send: d, cell: c})
		}
	}
	return true
}

// knownTarget is a child a send of a replayed plan goes to.
type knownTarget struct {
	send *sendDef
	cell *cell
}

// knownTarget returns the child sendTargetsExist found for send d, nil
// outside the replay of its plan.
func (r *runner) knownTarget(d *sendDef) *cell {
	for _, k := range r.knownTargets {
		if k.send == d {
			return k.cell
		}
	}
	return nil
}

// forgetTargets empties r.knownTargets.
func (r *runner) forgetTargets() {
	for i := range r.knownTargets {
		r.knownTargets[i] = knownTarget{}
	}
	r.knownTargets = r.knownTargets[:0]
}

// cachedMicrostep replays the recorded plan of the microstep, if there is
// one, and reports whether it did. Otherwise, when the step may be cached,
// it returns record true: the caller takes the general path and calls
// recordPlan.
func (r *runner) cachedMicrostep(ts []*transition, ev Event) (done, record bool) {
	if r.cache.pause > 0 {
		r.cache.pause--
		return false, false
	}
	if !r.cacheOn() {
		return false, false
	}
	for _, t := range ts {
		if t.id < 0 {
			return false, false
		}
	}
	c := r.currentConf()
	if last := r.cache.last; last != nil {
		if c != nil && slices.Equal(last.final, c.nodes) {
			last.next = c
		}
		r.cache.last = nil
	}
	if c != nil {
		for _, p := range c.plans {
			if sameTransitions(p.ids, ts) {
				r.cache.hits++
				r.cache.replayed++
				r.startStep(c.nodes)
				r.replay(p, ev)
				r.cache.cur, r.cache.last = p.next, nil
				if p.next == nil {
					r.cache.last = p
				}
				return true, false
			}
		}
	}
	r.cache.into, r.cache.cur = c, nil
	r.cache.recording = r.cache.recording[:0]
	for _, t := range ts {
		r.cache.recording = append(r.cache.recording, int(t.id))
	}
	return false, true
}

// sameTransitions reports whether ts are the transitions of ids, in order.
func sameTransitions(ids []int, ts []*transition) bool {
	if len(ids) != len(ts) {
		return false
	}
	for i, t := range ts {
		if ids[i] != int(t.id) {
			return false
		}
	}
	return true
}

// replay does what the general microstep did when it recorded p, in the
// same order: exit actions with each state leaving the configuration after
// its own, the transitions' actions, then entry (and initial) actions with
// each state joining the configuration before its own.
func (r *runner) replay(p *stepPlan, ev Event) {
	if p.pure {
		// Its assigns do not see the configuration: it changes first, and
		// they run after, in order.
		if !p.still { // else it exits and enters no state
			for _, x := range p.exit {
				r.active[x] = false
			}
			for _, n := range p.enter {
				if !r.active[n] {
					r.activate(n)
				}
			}
			r.s.nodes = copyNodes(r.s.nodes, p.final)
		}
		if p.moved {
			r.changed = true
		}
		if len(p.run) == 0 {
			return
		}
		live := r.ownsContext && r.slotCtx.live
		if p.slots != nil && live {
			if p.nums != nil && !r.undoing {
				r.assignNumbers(p.nums)
			} else {
				r.assignSlots(p.slots, true, ev)
			}
			return
		}
		for _, a := range p.run {
			if a.slots != nil && live {
				r.assignSlots(a.slots, a.slotsSeq, ev)
				continue
			}
			entries := a.assign
			if a.kind == actionCustom {
				entries = a.decl
			}
			r.assignAction(a, entries, ev)
		}
		return
	}
	if p.invokes {
		r.leaveSlots() // an invoke's input may read the context
	}
	track := !p.still
	for _, x := range p.exit {
		r.executeActions(r.m.nodes[x].exit, ev, x)
		if r.err != nil {
			return
		}
		if p.invokes {
			if r.exitInvoking(x); r.err != nil {
				return
			}
		}
		r.active[x] = false
	}
	if track {
		r.s.nodes = append(r.s.nodes[:0], p.kept...)
	}
	for _, t := range p.ts {
		r.executeActions(t.actions, ev, int(t.source))
		if r.err != nil {
			return
		}
	}
	for i, n := range p.enter {
		if !r.active[n] {
			r.activate(n)
			if track {
				r.s.nodes = append(r.s.nodes, n)
			}
		}
		node := r.m.nodes[n]
		if p.invokes && len(node.invokes()) > 0 {
			if r.enterInvoking(node, n, ev, p.initial[i]); r.err != nil {
				return
			}
			continue
		}
		r.executeActions(node.entry, ev, n)
		if r.err != nil {
			return
		}
		if p.initial[i] {
			r.executeActions(node.initial.actions, ev, n)
			if r.err != nil {
				return
			}
		}
	}
	if !p.still {
		r.s.nodes = append(r.s.nodes[:0], p.final...)
	}
	if p.moved {
		r.changed = true
	}
}

// flatSlots returns the slot entries of assigns run, in order, when each
// sets its entries one by one (see stepPlan.slots); nil otherwise.
func flatSlots(run []*action) []slotEntry {
	var out []slotEntry
	for _, a := range run {
		if a.slots == nil || !a.slotsSeq {
			return nil
		}
		out = append(out, a.slots...)
	}
	return out
}

// copyNodes returns dst with the contents of src, reusing dst's array. A
// configuration is a few states: they are copied one by one, cheaper than
// a call to memmove.
func copyNodes(dst, src []int) []int {
	if cap(dst) < len(src) {
		return append(dst[:0], src...)
	}
	dst = dst[:len(src)]
	//lint:ignore S1001 copy calls memmove, which costs more than the loop for a few states.
	for i, n := range src {
		dst[i] = n
	}
	return dst
}

// recordPlan stores the plan of the microstep the general path just took
// (its key is in the buffer), unless it did something a plan cannot
// replay: entering a final state, starting or stopping an invoked actor.
func (r *runner) recordPlan() {
	if r.err != nil || r.s.status != StatusActive || r.historyChanged {
		return
	}
	for _, n := range r.order {
		if r.m.nodes[n].kind == kindFinal {
			return
		}
	}
	p := &stepPlan{
		ids:     make([]int, len(r.cache.recording)),
		ts:      append([]*transition(nil), r.filtered...),
		exit:    append([]int(nil), r.toExit...),
		kept:    append([]int(nil), r.exitKept...),
		enter:   append([]int(nil), r.order...),
		initial: make([]bool, len(r.order)),
		final:   append([]int(nil), r.s.nodes...),
		moved:   !r.sameNodes(),
	}
	p.still = len(p.exit) == 0 && len(p.enter) == 0 && slices.Equal(p.kept, r.prevNodes) && slices.Equal(p.final, r.prevNodes)
	copy(p.ids, r.cache.recording)
	p.quiet = r.quietNodes(p.final)
	p.pure, p.messaging = true, true
	for _, x := range p.exit {
		p.classify(r.m.nodes[x].exit)
		p.invokes = p.invokes || len(r.m.nodes[x].invokes()) > 0
	}
	for _, t := range p.ts {
		p.classify(t.actions)
	}
	for i, n := range r.order {
		node := r.m.nodes[n]
		p.initial[i] = r.defaultEntry.has[n] && node.initial != nil
		p.classify(node.entry)
		if p.initial[i] {
			p.classify(node.initial.actions)
		}
		p.invokes = p.invokes || len(node.invokes()) > 0
	}
	if p.invokes {
		// Children start or stop: see replay.
		p.pure = false
		p.quickInvokes = p.messaging && len(p.sends) == 0 && r.quickInvokes(p)
	}
	if !p.pure {
		p.run = nil
	}
	p.slots = flatSlots(p.run)
	p.nums = numAssigns(p.slots)
	if r.cache.count >= maxCachedSteps {
		// Start again; nothing refers to the old records any more.
		r.cache.confs, r.cache.count, r.cache.into = nil, 0, nil
		r.cache.cur, r.cache.last = nil, nil
		if r.cache.replayed < maxCachedSteps {
			r.cache.pause = 4 * maxCachedSteps
		}
		r.cache.replayed = 0
		if r.cache.pause > 0 {
			return
		}
	}
	c := r.cache.into
	if c == nil {
		if r.cache.confs == nil {
			r.cache.confs = map[string]*confPlans{}
		}
		c = &confPlans{nodes: append([]int(nil), r.prevNodes...)}
		r.cache.confs[string(r.confKey(c.nodes))] = c
	}
	c.plans = append(c.plans, p)
	r.cache.count++
	r.cache.into = nil
}

// fastStep is an Actor's macrostep for event ev when the step cache knows
// all of it and nothing in it can fail: the runner is synced with s (the
// Actor's current snapshot, the one its last call ended with), the
// configuration's record selects ev's transitions by pure guards, and the
// step's plan is pure (or, with messaging, for a cell of an actor system
// attached to the runner, pure but for undelayed sends whose targets
// exist: their effects join r.fx); and, for a cell, no state of the
// configuration it leads to has an eventless transition to try after it.
// An Actor takes the eventless microsteps after a pure step too (see
// fastEventless). The step then changes s in place: no working copy, and
// no undo log unless eventless microsteps follow, since nothing can fail. A step that runs actions
// needs ownContext: s's context is the Actor's alone (see grantContext).
// It reports false, having changed nothing, when the general path must
// take the event.
func (r *runner) fastStep(s *Snapshot, ev Event, ownContext, messaging, private bool) bool {
	c := r.cache.cur
	if s != r.cache.exact {
		if r.s != s || !r.synced || !r.cacheOn() || c == nil || !slices.Equal(c.nodes, s.nodes) {
			return false
		}
	} else if c == nil {
		// s is r.cache.exact: the snapshot of an Actor (private) whose
		// last call was fastStep, which found the runner synced with s
		// and the cache on, and left them so, with c the record of the
		// configuration it left s in, if any (by the key of its nodes,
		// see nextConf). Only the runner changes an Actor's current
		// snapshot and those fields; it does so in a call that starts
		// with begin, which clears exact, or in fastStep (see
		// TestActorExactConfiguration).
		return false
	}
	if ev.Type == EventStop || ev.Type == EventInit {
		return false
	}
	// eventID, spelled out: eventID itself is too large to be inlined,
	// and its first probe (nextType) finds most events here.
	evID, ok := r.nextType(ev.Type)
	if !ok {
		evID = r.eventIDScan(ev.Type)
	}
	var sel *selection
	for i := range c.sels {
		if c.sels[i].evID == evID {
			sel = &c.sels[i]
			break
		}
	}
	if sel == nil || !sel.pure {
		return false
	}
	r.evID = evID
	if ownContext && r.m.slots != nil {
		r.enterSlots(s.context)
	}
	// taken: in a chain, the one transition selected (the common case,
	// kept free of selectFrom's bookkeeping); otherwise r.selected.
	var taken *transition
	ti := 0
	if sel.tree == nil {
		for i, t := range sel.ts {
			if r.passes(t, &ev) {
				taken, ti = t, i
				break
			}
		}
	} else {
		r.selected = r.selected[:0]
		r.selectFrom(sel, ev)
	}
	if last := r.cache.last; last != nil {
		if slices.Equal(last.final, c.nodes) {
			last.next = c
		}
		r.cache.last = nil
	}
	if taken == nil && (sel.tree == nil || len(r.selected) == 0) {
		// No transition: the macrostep changes nothing, unless the event
		// is an unhandled actor error (the general path puts the machine
		// in error) or an eventless transition may be taken now.
		if strings.HasPrefix(ev.Type, errorActorPrefix) || !r.confQuiet(c) {
			return false
		}
		r.cache.fast++
		return true
	}
	var plan *stepPlan
	if taken != nil {
		plan = c.soloPlan(sel.ts, ti, &sel.plans)
	} else {
		for _, p := range c.plans {
			if sameTransitions(p.ids, r.selected) {
				plan = p
				break
			}
		}
	}
	if plan == nil || plan.assigns && !ownContext {
		return false
	}
	// chain: eventless transitions may be selected after the step. An
	// Actor takes them here after a pure step (see fastEventless).
	chain := !plan.quiet
	if (chain || !plan.pure) && !r.fastPlanAllowed(plan, chain, messaging) {
		return false
	}
	r.ownsContext, r.undoing = true, false
	r.cache.hits++
	r.cache.replayed++
	end := plan
	if chain {
		if end = r.fastChainStep(c, plan, ev, ownContext); end == nil {
			return false
		}
	} else {
		r.replay(plan, ev)
	}
	r.cache.fast++
	if len(r.knownTargets) > 0 {
		r.forgetTargets()
	}
	r.cache.cur, r.cache.known = end.next, false
	if end.next == nil {
		r.cache.last = end
	}
	if private && r.cache.exact != s {
		r.cache.exact = s
	}
	if len(r.activated) > 2*len(s.nodes)+32 {
		// active marks exactly s.nodes; activated need not list more.
		r.activated = append(r.activated[:0], s.nodes...)
	}
	return true
}

// fastPlanAllowed reports whether fastStep may replay plan, which is not
// pure or which eventless microsteps may follow (chain).
func (r *runner) fastPlanAllowed(plan *stepPlan, chain, messaging bool) bool {
	if chain && (messaging || plan.noChain || !plan.pure) {
		return false
	}
	if plan.invokes && (!plan.quickInvokes || !r.invokesCannotFail(plan)) {
		return false
	}
	return plan.pure || messaging && plan.messaging && r.sendTargetsExist(plan)
}

// fastChainStep is fastStep's replay of plan p from configuration c, for
// a pure plan that eventless microsteps may follow: it takes them too (see
// fastEventless) and returns the plan of the last microstep, or nil when
// the general path must take the event, having undone the step.
func (r *runner) fastChainStep(c *confPlans, p *stepPlan, ev Event, ownContext bool) *stepPlan {
	hits, replayed := r.cache.hits-1, r.cache.replayed-1 // fastStep counted p
	// undo: what the eventless microsteps find may send the event to the
	// general path, so the context's changes are logged to be undone;
	// not when every microstep they may take is recorded and pure.
	undo := !(ownContext && r.chainClosed(p))
	if undo {
		r.dropUndo()
		r.undoing = true
	}
	r.replay(p, ev)
	end, steps := r.fastEventless(p, ev, ownContext)
	if end == nil {
		r.undoFastStep(c)
		r.cache.hits, r.cache.replayed = hits, replayed
		return nil
	}
	if undo {
		r.dropUndo()
	}
	r.cache.chains += steps
	return end
}

// maxFastChain bounds the eventless microsteps fastStep takes after a
// step; a longer chain takes the general path.
const maxFastChain = 16

// chainLimit is the number of eventless microsteps fastStep may take
// after a step: maxFastChain, within the call's budgets.
func (r *runner) chainLimit() int {
	return min(maxFastChain, r.m.opts.MaxMicrosteps, r.m.opts.MaxSteps-1)
}

// nextConf returns the recorded plans of the configuration plan p leads
// to, nil if there are none, remembering them in p.
func (r *runner) nextConf(p *stepPlan) *confPlans {
	if p.next == nil {
		p.next = r.cache.confs[string(r.confKey(p.final))]
	}
	return p.next
}

// fastEventless takes, after plan p that fastStep replayed, the eventless
// microsteps that the general path would take (macrostepLoop): in a chain
// configuration, the first candidate whose guard passes, from the atomic
// state up, by its recorded plan, until no candidate passes, a microstep
// changes nothing, or the configuration has no eventless transition. It
// returns the plan of the last microstep taken and how many eventless ones
// it took, or nil when the general path must take the event (a record is
// missing, a guard or a plan is not pure, or the microsteps would reach
// the call's budget or maxFastChain): fastStep then undoes the step.
func (r *runner) fastEventless(p *stepPlan, ev Event, ownContext bool) (*stepPlan, int) {
	first := p
	limit := r.chainLimit()
	steps := 0
	for !p.quiet {
		c := r.nextConf(p)
		if c == nil {
			return nil, 0
		}
		ts, ok := r.eventlessCandidates(c)
		if !ok {
			first.noChain = true
			return nil, 0
		}
		ti := -1
		for i, t := range ts {
			if r.passes(t, &ev) {
				ti = i
				break
			}
		}
		if ti < 0 {
			break
		}
		if steps++; steps > limit {
			first.noChain = true
			return nil, 0
		}
		next := c.soloPlan(ts, ti, &c.alwaysPlans)
		if next == nil || next.assigns && !ownContext {
			return nil, 0
		}
		if !next.pure {
			first.noChain = true
			return nil, 0
		}
		r.cache.hits++
		r.cache.replayed++
		r.changed = false
		r.replay(next, ev)
		p = next
		if !r.changed {
			break // XState selects no eventless transition after such a step
		}
	}
	return p, steps
}

// chainClosed reports whether fastEventless, after plan p, cannot send
// the event to the general path: from the configuration p leads to, every
// eventless candidate has a recorded pure plan, and so on from where
// each leads, within the chain's limit, until configurations without
// eventless transitions. The step then needs no undo log (with the
// context its own: plans that assign need it). A true answer stays true,
// since records are only added until the cache is emptied with its
// plans; a false one is kept until another plan is recorded.
func (r *runner) chainClosed(p *stepPlan) bool {
	if p.closed > 0 {
		return true
	}
	if p.closed < 0 && p.closedAt == r.cache.count {
		return false
	}
	limit := r.chainLimit()
	visits := maxClosedVisits
	if r.closedFrom(p, 0, limit, &visits) {
		p.closed = 1
		return true
	}
	p.closed, p.closedAt = -1, r.cache.count
	return false
}

// maxClosedVisits bounds the plans chainClosed looks at for one step.
const maxClosedVisits = 64

// closedFrom is chainClosed after steps eventless microsteps, the last
// of plan p; it looks at no more than *visits plans.
func (r *runner) closedFrom(p *stepPlan, steps, limit int, visits *int) bool {
	if p.quiet {
		return true
	}
	if *visits--; *visits < 0 || steps >= limit {
		return false
	}
	c := r.nextConf(p)
	if c == nil {
		return false
	}
	ts, ok := r.eventlessCandidates(c)
	if !ok {
		return false
	}
	for i := range ts {
		next := c.soloPlan(ts, i, &c.alwaysPlans)
		if next == nil || !next.pure || !r.closedFrom(next, steps+1, limit, visits) {
			return false
		}
	}
	return true
}

// eventlessCandidates returns the eventless candidates of configuration c
// (see chainEventless), computed once; ok is false when fastEventless
// cannot select in c.
func (r *runner) eventlessCandidates(c *confPlans) (ts []*transition, ok bool) {
	if c.alwaysOK == 0 {
		c.alwaysOK = -1
		if ts, ok := r.m.chainEventless(c.nodes); ok {
			c.always, c.alwaysOK = ts, 1
		}
	}
	return c.always, c.alwaysOK > 0
}

// chainEventless returns the eventless transitions that
// selectEventlessTransitions considers in configuration nodes when it is a
// chain, one atomic (or final) state and exactly its ancestors: those of
// the state, then of each ancestor up to the root, in order; the first
// whose guard passes is selected, alone. ok is false for another
// configuration, or when a guard is not pure (see pureGuard).
func (m *Machine) chainEventless(nodes []int) (ts []*transition, ok bool) {
	leaf := -1
	for _, n := range nodes {
		switch m.nodes[n].kind {
		case kindAtomic, kindFinal:
			if leaf >= 0 {
				return nil, false
			}
			leaf = n
		case kindParallel:
			return nil, false
		}
	}
	if leaf < 0 || m.nodes[leaf].depth+1 != len(nodes) {
		return nil, false
	}
	for s := leaf; s >= 0; s = m.nodes[s].parent {
		if !slices.Contains(nodes, s) {
			return nil, false
		}
		for _, t := range m.nodes[s].always {
			if !pureGuard(t.guard) {
				return nil, false
			}
			ts = append(ts, t)
		}
	}
	return ts, true
}

// dropUndo empties the undo logs of the context and its slots, and stops
// recording them.
func (r *runner) dropUndo() {
	r.beginSlots()
	clear(r.undo)
	r.undo, r.undoing = r.undo[:0], false
}

// undoFastStep restores what fastStep changed before fastEventless sent
// the event to the general path: the context, from the undo logs, and the
// configuration c the step started from.
func (r *runner) undoFastStep(c *confPlans) {
	r.rollbackContext()
	for _, n := range r.s.nodes {
		r.active[n] = false
	}
	for _, n := range c.nodes {
		r.activate(n)
	}
	r.s.nodes = append(r.s.nodes[:0], c.nodes...)
	r.cache.cur, r.cache.known, r.cache.last = c, false, nil
	r.cache.exact = nil // the general path takes the event
}
