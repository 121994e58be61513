// This file tells whether a machine ever looks at an event's data, so that
// a caller that builds events can leave the data out when nothing would
// read it.

package statechart

// ReadsEventData reports whether processing an event can depend on its
// Data, or pass it on, rather than on its type alone. It answers from the
// compiled machine, conservatively: true when some guard other than
// xstate.stateIn (and xstate.and, xstate.or, xstate.not of them), some
// action other than a raise, a cancel, a declarative assign without an
// "event" $ref, or an unimplemented one, a state's invoke or output, or
// any actor (a spawn, a send, an emit) is in the machine. A machine for
// which it returns false goes to the same state, with the same context,
// whatever the data of the events it is sent.
func (m *Machine) ReadsEventData() bool {
	if m.usesActors {
		return true
	}
	for _, n := range m.nodes {
		if actionsRead(n.entry) || actionsRead(n.exit) || transitionReads(n.initial) {
			return true
		}
		for _, g := range n.on {
			for _, t := range g.transitions {
				if transitionReads(t) {
					return true
				}
			}
		}
		for _, t := range n.always {
			if transitionReads(t) {
				return true
			}
		}
		if r := n.rare; r != nil {
			if len(r.invokes) > 0 || r.output != nil || transitionReads(r.historyDef) || transitionReads(r.parallelDef) {
				return true
			}
		}
	}
	return false
}

// ReadsEventData reports whether the machine reads event data
// ([Machine.ReadsEventData]).
func (e machineEngine) ReadsEventData() bool { return e.m.ReadsEventData() }

// transitionReads reports whether a transition's guard or actions may read
// its event's data; t may be nil.
func transitionReads(t *transition) bool {
	return t != nil && (guardReads(t.guard) || actionsRead(t.actions))
}

// guardReads reports whether a guard (nil: none) may read the event's
// data: any guard but xstate.stateIn and the logic of such guards may.
func guardReads(g *guard) bool {
	if g == nil {
		return false
	}
	switch g.kind {
	case guardStateIn:
		return false
	case guardAnd, guardOr, guardNot:
		for _, s := range g.subs {
			if guardReads(s) {
				return true
			}
		}
		return false
	}
	return true
}

// actionsRead reports whether any of the actions may read the event's
// data.
func actionsRead(as []*action) bool {
	for _, a := range as {
		switch a.kind {
		case actionRaise, actionCancel:
			continue // a fixed event; a fixed id
		case actionAssign:
			if assignReads(a.assign) {
				return true
			}
		case actionCustom:
			if a.impl == nil {
				continue // not implemented: a no-op
			}
			if a.decl == nil || assignReads(a.decl) {
				return true // Go code, or an assign of the event's data
			}
		default:
			return true
		}
	}
	return false
}

// assignReads reports whether a declarative assign takes a value from the
// event.
func assignReads(entries []assignEntry) bool {
	for _, e := range entries {
		if exprReads(e.expr) {
			return true
		}
	}
	return false
}

// exprReads reports whether an assign expression refers to the event.
func exprReads(e *expr) bool {
	for ; e != nil; e = e.push {
		if e.kind == exprRef && len(e.ref) > 0 && e.ref[0] == "event" {
			return true
		}
	}
	return false
}
