// This file defines removeConflictingTransitions, which drops the enabled
// transitions whose exit sets intersect, and the exit regions it works on.
// XState (and SCXML) compare the exit sets of every pair of transitions;
// here an exit set is described by its domain, a subtree, so two exit sets
// intersect exactly when their domains are on one branch of the tree (with
// the details exitRegion spells out), and the conflicts of a transition are
// found by walking the ancestors of its domain and by counts kept on them.
// The result is the same as XState's; the cost is linear in the number of
// transitions times the depth of the machine, not quadratic.

package statechart

// exitRegion describes the exit set of one transition: the active proper
// descendants of domain (every active node when domain is -1), plus domain
// itself when self.
type exitRegion struct {
	domain int
	self   bool // reenter && source == domain: the domain is exited too
	inner  bool // the domain has an active proper descendant
	empty  bool // the exit set is empty (no targets, or nothing to exit)
	// visible: the exit set meets the exit set of any transition whose
	// domain is a proper ancestor of domain (it holds an active node).
	visible bool
}

func (r *runner) exitRegionOf(t *transition) exitRegion {
	if len(t.targets) == 0 {
		return exitRegion{domain: -1, empty: true}
	}
	d := r.domainOf(t)
	e := exitRegion{domain: d, self: t.reenter && int(t.source) == d, inner: r.hasActiveBelow(d)}
	e.empty = !e.self && !e.inner
	e.visible = e.inner || (e.self && r.active[d])
	return e
}

// hasActiveBelow reports whether an active node is a proper descendant of
// d (of the whole machine for d == -1). The first question about a
// configuration is answered by a scan; from the second on, the answer for
// every node is computed once.
func (r *runner) hasActiveBelow(d int) bool {
	if d < 0 {
		return len(r.s.nodes) > 0
	}
	if !r.belowOK && !r.belowAsked {
		r.belowAsked = true
		for _, n := range r.s.nodes {
			if r.m.isDescendant(n, d) {
				return true
			}
		}
		return false
	}
	if !r.belowOK {
		for _, n := range r.belowTouched {
			r.below[n] = false
		}
		r.belowTouched = r.belowTouched[:0]
		for _, n := range r.s.nodes {
			for p := r.m.nodes[n].parent; p >= 0 && !r.below[p]; p = r.m.nodes[p].parent {
				r.below[p] = true
				r.belowTouched = append(r.belowTouched, p)
			}
		}
		r.belowOK = true
	}
	return r.below[d]
}

// conflictSet holds the transitions kept so far by
// removeConflictingTransitions, indexed by the domains of their exit sets
// (slot d+1 for domain d, so that -1, above the root, is slot 0).
type conflictSet struct {
	kept    []keptTransition
	at      []int32 // per domain: 1 + the index in kept of the transition whose domain it is, or 0
	count   []int32 // per domain: visible kept transitions whose domain is a proper descendant
	sum     []int64 // per domain: the sum of 1 + their indexes in kept
	touched []int   // slots to clear
	found   []int   // conflicts of the transition being added
}

type keptTransition struct {
	t       *transition
	e       exitRegion
	removed bool
}

func (cs *conflictSet) reset(nodes int) {
	if len(cs.at) != nodes+1 {
		cs.at = make([]int32, nodes+1)
		cs.count = make([]int32, nodes+1)
		cs.sum = make([]int64, nodes+1)
	} else {
		for _, i := range cs.touched {
			cs.at[i], cs.count[i], cs.sum[i] = 0, 0, 0
		}
	}
	cs.touched = cs.touched[:0]
	cs.kept = cs.kept[:0]
}

// removeConflictingTransitions keeps, of two transitions whose exit sets
// intersect, the one whose source is a descendant of the other's source;
// otherwise the earlier one (document order of selection). The result is
// appended to kept, which must not alias ts.
//
// Two non-empty exit sets with domains d1 and d2 intersect when d1 == d2
// and (the domain has an active descendant, or both exit the domain
// itself); or when d1 is a proper ancestor of d2 and the exit set of d2 is
// visible (see exitRegion); and in no other case, as disjoint subtrees
// share no node. So the kept transitions have at most one per domain, and
// the visible ones have domains on distinct branches: a new transition
// conflicts with the kept ones at the ancestors of its domain, at its
// domain, and with the visible ones below it, and it can only win against
// one of the latter.
func (r *runner) removeConflictingTransitions(ts, kept []*transition) []*transition {
	if len(ts) <= 1 {
		return append(kept, ts...)
	}
	cs := &r.conflicts
	cs.reset(len(r.m.nodes))
	for _, t1 := range ts {
		e1 := r.exitRegionOf(t1)
		if e1.empty {
			cs.kept = append(cs.kept, keptTransition{t: t1, e: e1})
			continue
		}
		cs.found = cs.found[:0]
		preempted := false
		// wins reports whether t1 replaces the kept transition k.
		wins := func(k int) bool {
			if r.m.isDescendant(int(t1.source), int(cs.kept[k].t.source)) {
				cs.found = append(cs.found, k)
				return true
			}
			preempted = true
			return false
		}
		slot := e1.domain + 1
		if k := cs.at[slot] - 1; k >= 0 {
			if e2 := cs.kept[k].e; e1.inner || (e1.self && e2.self) {
				wins(int(k))
			}
		}
		if !preempted && e1.visible {
			for a := e1.domain; a >= 0 && !preempted; {
				a = r.m.nodes[a].parent
				if k := cs.at[a+1] - 1; k >= 0 {
					wins(int(k))
				}
			}
		}
		if !preempted {
			switch cs.count[slot] {
			case 0:
			case 1:
				wins(int(cs.sum[slot] - 1))
			default:
				preempted = true // t1's source is inside at most one of theirs
			}
		}
		if preempted {
			continue
		}
		for _, k := range cs.found {
			cs.unregister(r.m, k)
		}
		cs.kept = append(cs.kept, keptTransition{t: t1, e: e1})
		cs.register(r.m, len(cs.kept)-1)
	}
	r.keptRegions = r.keptRegions[:0]
	for _, k := range cs.kept {
		if !k.removed {
			kept = append(kept, k.t)
			r.keptRegions = append(r.keptRegions, k.e)
		}
	}
	r.keptFor = kept
	return kept
}

// exitRegions returns the exit regions of ts: those removeConflictingTransitions
// computed, when ts is the list it returned last (the configuration has not
// changed since: exitStates follows it in the same microstep), else
// computed now.
func (r *runner) exitRegions(ts []*transition) []exitRegion {
	if len(ts) > 1 && len(r.keptFor) == len(ts) && &r.keptFor[0] == &ts[0] {
		return r.keptRegions
	}
	r.keptRegions = r.keptRegions[:0]
	for _, t := range ts {
		r.keptRegions = append(r.keptRegions, r.exitRegionOf(t))
	}
	return r.keptRegions
}

func (cs *conflictSet) register(m *Machine, k int) {
	cs.update(m, k, 1)
}

func (cs *conflictSet) unregister(m *Machine, k int) {
	cs.update(m, k, -1)
	cs.kept[k].removed = true
}

// update adds (sign 1) or removes (sign -1) kept transition k at its
// domain, and for a visible one in the counts of every proper ancestor.
func (cs *conflictSet) update(m *Machine, k int, sign int32) {
	e := cs.kept[k].e
	slot := e.domain + 1
	if sign > 0 {
		cs.at[slot] = int32(k) + 1
	} else {
		cs.at[slot] = 0
	}
	cs.touched = append(cs.touched, slot)
	if !e.visible {
		return
	}
	for a := e.domain; a >= 0; {
		a = m.nodes[a].parent
		cs.count[a+1] += sign
		cs.sum[a+1] += int64(sign) * int64(k+1)
		cs.touched = append(cs.touched, a+1)
	}
}
