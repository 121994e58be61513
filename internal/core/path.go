// This file computes the shortest sequence of tool calls that makes a
// hidden tool visible: a breadth-first search over the machine's structure
// (statechart.Node and TransitionInfo), from the current configuration.
//
// The search follows XState's algorithm on configurations (sets of active
// state nodes): transition selection (XState's transitionNode for events,
// the atomic states outwards for eventless transitions), conflict removal, transition domains, exit and entry sets with initial
// states and parallel regions, eventless (always) transitions and done
// events. What it cannot know, it treats as follows:
//
//   - Guards are assumed satisfiable either way: a guarded transition may
//     be taken or not, so each possibility is a separate outcome of the
//     step. A path is therefore the shortest one that can work; the guards
//     it relies on are reported with each step.
//   - History states are entered as their parent is entered by default.
//   - Context is not modelled; delayed (after) transitions are not steps,
//     since no tool call causes them.

package core

import (
	"slices"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

type nodeKind uint8

const (
	kAtomic nodeKind = iota
	kCompound
	kParallel
	kFinal
	kHistory
)

// mtrans is a transition of the model.
type mtrans struct {
	idx     int // unique, for deduplication
	source  int
	event   string // "" for eventless
	targets []int
	guard   string
	reenter bool
	effect  bool // it has a target or actions (XState's can)
}

// Model is the structure of a machine, indexed like Engine.Nodes.
type Model struct {
	ids      []string
	parent   []int
	children [][]int
	kind     []nodeKind
	initial  []int // compound nodes: the initial child; -1 otherwise
	on       [][]*mtrans
	always   [][]*mtrans
}

// NewModel returns the model of the machine whose nodes are given, with
// byID mapping a node's id to its index.
func NewModel(nodes []statechart.Node, byID map[string]int) *Model {
	n := len(nodes)
	m := &Model{
		ids:      make([]string, n),
		parent:   make([]int, n),
		children: make([][]int, n),
		kind:     make([]nodeKind, n),
		initial:  make([]int, n),
		on:       make([][]*mtrans, n),
		always:   make([][]*mtrans, n),
	}
	for i, nd := range nodes {
		m.ids[i] = nd.ID
		m.parent[i] = -1
		if p, ok := byID[nd.Parent]; ok && nd.Parent != "" {
			m.parent[i] = p
			m.children[p] = append(m.children[p], i)
		}
		switch nd.Type {
		case "compound":
			m.kind[i] = kCompound
		case "parallel":
			m.kind[i] = kParallel
		case "final":
			m.kind[i] = kFinal
		case "history":
			m.kind[i] = kHistory
		}
		m.initial[i] = -1
		if j, ok := byID[nd.Initial]; ok && nd.Initial != "" {
			m.initial[i] = j
		}
	}
	idx := 0
	for i, nd := range nodes {
		for _, ti := range nd.Transitions {
			t := &mtrans{idx: idx, source: i, event: ti.Event, guard: ti.Guard, reenter: ti.Reenter}
			idx++
			for _, id := range ti.Targets {
				j, ok := byID[id]
				if !ok {
					continue
				}
				if m.kind[j] == kHistory && m.parent[j] >= 0 {
					j = m.parent[j] // entered as its parent by default
				}
				t.targets = append(t.targets, j)
			}
			t.effect = len(t.targets) > 0 || len(ti.Actions) > 0
			if ti.Event == "" {
				m.always[i] = append(m.always[i], t)
			} else {
				m.on[i] = append(m.on[i], t)
			}
		}
	}
	return m
}

// isDescendant reports whether a is a proper descendant of anc.
func (m *Model) isDescendant(a, anc int) bool {
	for p := m.parent[a]; p >= 0; p = m.parent[p] {
		if p == anc {
			return true
		}
	}
	return false
}

// leaves returns the active atomic states of c, in document order.
func (m *Model) leaves(c Bitset) []int {
	var out []int
	for i := range m.ids {
		if !c.Has(i) {
			continue
		}
		leaf := true
		for _, ch := range m.children[i] {
			if c.Has(ch) {
				leaf = false
				break
			}
		}
		if leaf {
			out = append(out, i)
		}
	}
	return out
}

// alternative is one possible set of transitions an event selects.
type alternative struct {
	ts     []*mtrans
	guards []string // guards assumed to pass
}

const maxAlternatives = 16

// selectTransitions returns the possible transition sets for an event (ev
// "" selects eventless transitions), one per combination of guard outcomes.
func (m *Model) selectTransitions(c Bitset, ev string) []alternative {
	var alts []alternative
	if ev == "" {
		alts = m.selectEventlessTransitions(c)
	} else {
		alts = m.transitionNode(0, c, ev)
	}
	for i := range alts {
		alts[i].ts = m.removeConflicts(c, alts[i].ts)
	}
	return alts
}

// transitionNode is XState's transitionNode on the model: the deepest
// handler wins; a compound node consults its own transitions only when its
// active child selected none, a parallel node only when none of its
// regions did (unlike SCXML, where each atomic state walks up on its own).
func (m *Model) transitionNode(n int, c Bitset, ev string) []alternative {
	inner := []alternative{{}}
	switch m.kind[n] {
	case kCompound:
		for _, ch := range m.children[n] {
			if c.Has(ch) {
				inner = m.transitionNode(ch, c, ev)
				break
			}
		}
	case kParallel:
		for _, ch := range m.children[n] {
			if c.Has(ch) {
				inner = product(inner, m.transitionNode(ch, c, ev))
			}
		}
	}
	var own []alternative
	var out []alternative
	for _, alt := range inner {
		if len(alt.ts) > 0 {
			out = append(out, alt)
			continue
		}
		if own == nil {
			own = m.next(n, ev)
		}
		for _, o := range own {
			out = append(out, alternative{ts: o.ts, guards: joinGuards(alt.guards, o.guards)})
		}
	}
	if len(out) > maxAlternatives {
		// Too many combinations: keep the first ones, where the first
		// candidates are taken.
		out = out[:maxAlternatives]
	}
	return out
}

// next is XState's StateNode.next on the model: the possible outcomes of
// node n's own candidates for an event, in XState's order (the exact
// descriptor, then wildcards, longest first). A guarded candidate may be
// taken or not; an unguarded one ends the list; if every candidate is
// guarded, taking none is possible too.
func (m *Model) next(n int, ev string) []alternative {
	var exact, wild []*mtrans
	for _, t := range m.on[n] {
		switch {
		case t.event == ev:
			exact = append(exact, t)
		case MatchesEvent(ev, t.event):
			wild = append(wild, t)
		}
	}
	slices.SortStableFunc(wild, func(a, b *mtrans) int { return len(b.event) - len(a.event) })
	var out []alternative
	for _, t := range append(exact, wild...) {
		if t.guard == "" {
			return append(out, alternative{ts: []*mtrans{t}})
		}
		out = append(out, alternative{ts: []*mtrans{t}, guards: []string{t.guard}})
	}
	return append(out, alternative{})
}

// product combines the alternatives of parallel regions.
func product(a, b []alternative) []alternative {
	out := make([]alternative, 0, min(len(a)*len(b), maxAlternatives))
	for _, x := range a {
		for _, y := range b {
			out = append(out, alternative{
				ts:     append(append([]*mtrans(nil), x.ts...), y.ts...),
				guards: joinGuards(x.guards, y.guards),
			})
			if len(out) == maxAlternatives {
				return out
			}
		}
	}
	return out
}

// selectEventlessTransitions returns the possible sets of eventless
// transitions: XState (like SCXML) takes, for each atomic state, the first
// enabled always transition of the state or its nearest ancestor that has
// one.
func (m *Model) selectEventlessTransitions(c Bitset) []alternative {
	leaves := m.leaves(c)
	type option struct{ t *mtrans } // t nil: no transition from this leaf
	opts := make([][]option, len(leaves))
	total := 1
	for li, leaf := range leaves {
		var os []option
		stop := false
		for s := leaf; s >= 0 && !stop; s = m.parent[s] {
			for _, t := range m.always[s] {
				os = append(os, option{t})
				if t.guard == "" {
					stop = true
					break
				}
			}
		}
		if !stop {
			os = append(os, option{})
		}
		opts[li] = os
		total *= len(os)
		if total > maxAlternatives {
			total = maxAlternatives + 1
		}
	}
	var alts []alternative
	pick := make([]int, len(leaves))
	for {
		var alt alternative
		seen := map[int]bool{}
		for li := range leaves {
			t := opts[li][pick[li]].t
			if t == nil || seen[t.idx] {
				continue
			}
			seen[t.idx] = true
			alt.ts = append(alt.ts, t)
			if t.guard != "" {
				alt.guards = append(alt.guards, t.guard)
			}
		}
		alts = append(alts, alt)
		if total > maxAlternatives {
			// Too many combinations: assume the first candidate of every
			// atomic state is taken.
			break
		}
		li := len(pick) - 1
		for li >= 0 {
			pick[li]++
			if pick[li] < len(opts[li]) {
				break
			}
			pick[li] = 0
			li--
		}
		if li < 0 {
			break
		}
	}
	return alts
}

// domain is XState's getTransitionDomain; -1 when the transition has no
// targets.
func (m *Model) domain(t *mtrans) int {
	if len(t.targets) == 0 {
		return -1
	}
	if !t.reenter {
		inside := true
		for _, tg := range t.targets {
			if tg != t.source && !m.isDescendant(tg, t.source) {
				inside = false
				break
			}
		}
		if inside {
			return t.source
		}
	}
	head := t.targets[0]
	for anc := m.parent[head]; anc >= 0; anc = m.parent[anc] {
		ok := m.isDescendant(t.source, anc)
		for _, tg := range t.targets[1:] {
			ok = ok && m.isDescendant(tg, anc)
		}
		if ok {
			return anc
		}
	}
	return 0
}

// exitSet returns the active nodes a transition exits.
func (m *Model) exitSet(c Bitset, t *mtrans) Bitset {
	out := NewBitset(len(m.ids))
	d := m.domain(t)
	if d < 0 {
		return out
	}
	for i := range m.ids {
		if c.Has(i) && m.isDescendant(i, d) {
			out.Set(i)
		}
	}
	return out
}

// removeConflicts is XState's removeConflictingTransitions: of two
// transitions whose exit sets intersect, the one from the deeper source
// wins, otherwise the earlier one.
func (m *Model) removeConflicts(c Bitset, ts []*mtrans) []*mtrans {
	var kept []*mtrans
	var exits []Bitset
	for _, t := range ts {
		ex := m.exitSet(c, t)
		preempted := false
		var drop []int
		for k, t2 := range kept {
			if !ex.Intersects(exits[k]) {
				continue
			}
			if m.isDescendant(t.source, t2.source) {
				drop = append(drop, k)
			} else {
				preempted = true
				break
			}
		}
		if preempted {
			continue
		}
		for i := len(drop) - 1; i >= 0; i-- {
			kept = append(kept[:drop[i]], kept[drop[i]+1:]...)
			exits = append(exits[:drop[i]], exits[drop[i]+1:]...)
		}
		kept = append(kept, t)
		exits = append(exits, ex)
	}
	return kept
}

// apply takes a set of transitions (one microstep) and returns the new
// configuration and the nodes entered.
func (m *Model) apply(c Bitset, ts []*mtrans) (Bitset, Bitset) {
	next := c.Clone()
	for _, t := range ts {
		ex := m.exitSet(c, t)
		for i := range next {
			next[i] &^= ex[i]
		}
	}
	entered := NewBitset(len(m.ids))
	for _, t := range ts {
		d := m.domain(t)
		if d < 0 {
			continue
		}
		for _, tg := range t.targets {
			if tg == t.source && tg == d && !t.reenter {
				// XState's computeEntrySet: a transition to its own source
				// that does not reenter enters the source's defaults, not
				// the source (which stays inactive if another transition
				// exited it).
				m.enterDescendants(tg, next, entered)
				continue
			}
			m.enterDefault(tg, next, entered)
			if tg == d {
				continue
			}
			for anc := m.parent[tg]; anc >= 0; anc = m.parent[anc] {
				if anc == d {
					if m.kind[anc] == kParallel {
						m.fillRegions(anc, next, entered)
					}
					break
				}
				if !next.Has(anc) {
					next.Set(anc)
					entered.Set(anc)
				}
				if m.kind[anc] == kParallel {
					m.fillRegions(anc, next, entered)
				}
			}
		}
	}
	return next, entered
}

// enterDefault enters a node and its default descendants.
func (m *Model) enterDefault(n int, c, entered Bitset) {
	if !c.Has(n) {
		entered.Set(n)
	}
	c.Set(n)
	m.enterDescendants(n, c, entered)
}

// enterDescendants enters the default descendants of a node.
func (m *Model) enterDescendants(n int, c, entered Bitset) {
	switch m.kind[n] {
	case kCompound:
		if m.initial[n] >= 0 {
			m.enterDefault(m.initial[n], c, entered)
		}
	case kParallel:
		m.fillRegions(n, c, entered)
	}
}

// fillRegions enters, with their defaults, the regions of a parallel node
// that have no active descendant.
func (m *Model) fillRegions(p int, c, entered Bitset) {
	for _, ch := range m.children[p] {
		if m.kind[ch] == kHistory || c.Has(ch) {
			continue
		}
		m.enterDefault(ch, c, entered)
	}
}

// outcome is one possible configuration after a step.
type outcome struct {
	config Bitset
	guards []string
	done   bool // the machine reached a top-level final state
}

const (
	maxOutcomes    = 16
	maxMicrosteps  = 32
	maxSearchNodes = 4096
	maxPathLength  = 64
)

// macrostep returns the possible configurations after an external event.
func (m *Model) macrostep(c Bitset, ev string) []outcome {
	var outs []outcome
	for _, alt := range m.selectTransitions(c, ev) {
		if !hasTargets(alt.ts) {
			continue // no configuration change
		}
		next, entered := m.apply(c, alt.ts)
		m.settle(next, m.doneEvents(next, entered), alt.guards, 0, &outs)
		if len(outs) >= maxOutcomes {
			break
		}
	}
	return outs
}

func hasTargets(ts []*mtrans) bool {
	for _, t := range ts {
		if len(t.targets) > 0 {
			return true
		}
	}
	return false
}

// settle runs eventless transitions and done events until the
// configuration is stable, branching on guards.
func (m *Model) settle(c Bitset, queue []string, guards []string, depth int, outs *[]outcome) {
	if len(*outs) >= maxOutcomes {
		return
	}
	if m.isDone(c) {
		*outs = append(*outs, outcome{config: c, guards: guards, done: true})
		return
	}
	if depth < maxMicrosteps {
		alts := m.selectTransitions(c, "")
		moved := false
		for _, alt := range alts {
			if !hasTargets(alt.ts) {
				continue
			}
			moved = true
			next, entered := m.apply(c, alt.ts)
			m.settle(next, append(append([]string(nil), queue...), m.doneEvents(next, entered)...), joinGuards(guards, alt.guards), depth+1, outs)
		}
		// The outcome with no eventless transition exists only if some
		// alternative takes none.
		none := false
		for _, alt := range alts {
			if !hasTargets(alt.ts) {
				none = true
			}
		}
		if moved && !none {
			return
		}
		if len(queue) > 0 {
			ev, rest := queue[0], queue[1:]
			handled := false
			for _, alt := range m.selectTransitions(c, ev) {
				if !hasTargets(alt.ts) {
					continue
				}
				handled = true
				next, entered := m.apply(c, alt.ts)
				m.settle(next, append(append([]string(nil), rest...), m.doneEvents(next, entered)...), joinGuards(guards, alt.guards), depth+1, outs)
			}
			if !handled {
				m.settle(c, rest, guards, depth+1, outs)
			}
			return
		}
	}
	*outs = append(*outs, outcome{config: c, guards: guards})
}

func joinGuards(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	return append(append([]string(nil), a...), b...)
}

// doneEvents returns the done events raised by entering final states.
func (m *Model) doneEvents(c, entered Bitset) []string {
	var out []string
	for i := range m.ids {
		if !entered.Has(i) || m.kind[i] != kFinal {
			continue
		}
		p := m.parent[i]
		if p <= 0 {
			continue // the root: the machine is done
		}
		out = append(out, "xstate.done.state."+m.ids[p])
		if gp := m.parent[p]; gp >= 0 && m.kind[gp] == kParallel && m.regionsFinal(c, gp) {
			out = append(out, "xstate.done.state."+m.ids[gp])
		}
	}
	return out
}

// regionsFinal reports whether every region of a parallel node is in a
// final state.
func (m *Model) regionsFinal(c Bitset, p int) bool {
	for _, r := range m.children[p] {
		if m.kind[r] == kHistory {
			continue
		}
		final := false
		for _, ch := range m.children[r] {
			if c.Has(ch) && m.kind[ch] == kFinal {
				final = true
			}
		}
		if !final {
			return false
		}
	}
	return true
}

// isDone reports whether a top-level final state is active, or every
// region of a parallel root is final.
func (m *Model) isDone(c Bitset) bool {
	if len(m.ids) == 0 {
		return false
	}
	switch m.kind[0] {
	case kParallel:
		return m.regionsFinal(c, 0)
	default:
		for _, ch := range m.children[0] {
			if c.Has(ch) && m.kind[ch] == kFinal {
				return true
			}
		}
	}
	return false
}

// Move is a tool call the search may make, or a wait for an actor's
// result (actor is its id).
type Move struct {
	Tool  string
	Actor string
	Info  *ToolInfo
}

// ActorWaits returns the waits for the results of the actors the states
// invoke, as moves of the path search: possible while the invoking state
// is active.
func ActorWaits(nodes []statechart.Node) []Move {
	var out []Move
	for i, n := range nodes {
		for _, inv := range n.Invokes {
			if !inv.Known {
				continue
			}
			in := NewBitset(len(nodes))
			in.Set(i)
			for _, prefix := range []string{"xstate.done.actor.", "xstate.error.actor."} {
				out = append(out, Move{Actor: inv.ID, Info: &ToolInfo{Mode: ModeStates, Nodes: in, Event: prefix + inv.ID}})
			}
		}
	}
	return out
}

// StructurallyVisible reports whether a tool may be visible in a
// configuration (guards assumed satisfiable).
func (m *Model) StructurallyVisible(c Bitset, ti *ToolInfo, done bool) bool {
	if ti.Deny != nil && ti.Deny.Intersects(c) {
		return false
	}
	switch ti.Mode {
	case ModeStates:
		return ti.Nodes.Intersects(c)
	case ModeCan:
		if done {
			return false
		}
		for _, alt := range m.selectTransitions(c, ti.Event) {
			for _, t := range alt.ts {
				if t.effect {
					return true
				}
			}
		}
		return false
	case ModeDenied:
		return false
	}
	return true
}

// ShortestPath searches for the fewest tool calls after which target is
// visible. found is false when no sequence within the search limits does it.
func (m *Model) ShortestPath(start Bitset, target *ToolInfo, moves []Move) (path []gate.Step, found bool) {
	type qnode struct {
		config Bitset
		done   bool
		prev   int
		step   gate.Step
		depth  int
	}
	startDone := m.isDone(start)
	if m.StructurallyVisible(start, target, startDone) {
		return nil, true
	}
	nodes := []qnode{{config: start, done: startDone, prev: -1}}
	seen := map[string]bool{ConfigKey(start): true}
	for head := 0; head < len(nodes); head++ {
		cur := nodes[head]
		if cur.done || cur.depth >= maxPathLength {
			continue
		}
		for _, mv := range moves {
			if !m.StructurallyVisible(cur.config, mv.Info, cur.done) {
				continue
			}
			for _, out := range m.macrostep(cur.config, mv.Info.Event) {
				k := ConfigKey(out.config)
				if seen[k] {
					continue
				}
				seen[k] = true
				nodes = append(nodes, qnode{
					config: out.config, done: out.done, prev: head, depth: cur.depth + 1,
					step: gate.Step{Tool: mv.Tool, Event: mv.Info.Event, Actor: mv.Actor, Guards: out.guards},
				})
				if m.StructurallyVisible(out.config, target, out.done) {
					for i := len(nodes) - 1; i > 0; i = nodes[i].prev {
						path = append(path, nodes[i].step)
					}
					for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
						path[l], path[r] = path[r], path[l]
					}
					return path, true
				}
				if len(nodes) >= maxSearchNodes {
					return nil, false
				}
			}
		}
	}
	return nil, false
}

// ConfigKey returns a map key for the configuration c.
func ConfigKey(c Bitset) string {
	b := make([]byte, 0, len(c)*8)
	for _, w := range c {
		for k := 0; k < 8; k++ {
			b = append(b, byte(w>>(8*k)))
		}
	}
	return string(b)
}
