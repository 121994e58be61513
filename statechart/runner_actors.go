// This file defines the actions of the interpreter that concern other
// actors, resolved as XState's builtin actions resolve them while a
// macrostep is computed: spawnChild (and the start of invoked children),
// stopChild (and the stop of invoked children when their state is
// exited), sendTo, sendParent and forwardTo, and enqueueActions. What they
// do to other actors waits, as a deferred effect, until the snapshot is in
// place (see system.go).

package statechart

import (
	"fmt"
	"reflect"
)

// enterInvoking runs what entering node n, which invokes children, does
// (XState's enterStates): its entry actions, the start of its children,
// then, with initial (it is entered by default), its initial actions; a
// sendTo in these actions may name the children before they exist.
func (r *runner) enterInvoking(node *stateNode, n int, ev Event, initial bool) {
	r.deferredInvokes = node.invokes()
	r.executeActions(node.entry, ev, n)
	if r.err == nil {
		for _, inv := range node.invokes() {
			if r.spawnChild(inv, ev, n); r.err != nil {
				break
			}
		}
	}
	if r.err == nil && initial {
		r.executeActions(node.initial.actions, ev, n)
	}
	if r.err == nil {
		r.resolvePendingSends()
	}
	r.deferredInvokes = nil
}

// exitInvoking stops the children node x invoked, as it is exited, after
// its exit actions (XState's exitStates).
func (r *runner) exitInvoking(x int) {
	for _, inv := range r.m.nodes[x].invokes() {
		if r.stopChildByID(inv.id); r.err != nil {
			return
		}
	}
}

// quickInvokes reports whether the children that plan p starts and stops
// can do so without failing: each has logic and no system id (which
// another actor might hold), and a child machine has no input (so its
// initial snapshot is its machine's, see Machine.plainInitial).
func (r *runner) quickInvokes(p *stepPlan) bool {
	ok := func(n int) bool {
		for _, def := range r.m.nodes[n].invokes() {
			if def.logic == nil || def.systemID != "" {
				return false
			}
			if _, machine := def.logic.(*Machine); machine && def.input != nil {
				return false
			}
		}
		return true
	}
	for _, x := range p.exit {
		if !ok(x) {
			return false
		}
	}
	for _, n := range p.enter {
		if !ok(n) {
			return false
		}
	}
	return true
}

// invokesCannotFail reports whether replaying plan p (whose quickInvokes
// holds) in the cell attached to r can neither fail nor run out of steps:
// no child it stops has children of its own (a stop fails on a
// descendant an unknown src left), and the system's step budget has room
// for the step and the initial microsteps of the child machines it
// starts, which are known.
func (r *runner) invokesCannotFail(p *stepPlan) bool {
	c := r.self
	if c == nil || c.proc != procRunning {
		return false
	}
	for _, x := range p.exit {
		for _, def := range r.m.nodes[x].invokes() {
			e, ok := r.s.x().children.get(def.id)
			if ok && e.cell != nil && e.cell.kind == cellMachine && e.cell.snap.x().children.len() > 0 {
				return false
			}
		}
	}
	steps := c.sys.steps + 2 // the step and the macrostep, see cell.fastStep
	for _, n := range p.enter {
		for _, def := range r.m.nodes[n].invokes() {
			if m, ok := def.logic.(*Machine); ok {
				t := m.plainInitial.Load()
				if t == nil {
					return false
				}
				steps += t.steps
			}
		}
	}
	return steps <= c.sys.maxSteps
}

// invokesID reports whether one of the invokes has the id.
func invokesID(invokes []*spawnDef, id string) bool {
	for _, inv := range invokes {
		if inv.id == id {
			return true
		}
	}
	return false
}

// spawnChild is XState's spawnChild: the child is created now, its input
// computed from the context and event of the microstep, and it is listed
// under its id (an unknown src leaves the id with no actor); it starts
// once the snapshot is in place.
func (r *runner) spawnChild(def *spawnDef, ev Event, node int) {
	var input any
	hasInput := false
	if def.input != nil {
		input, hasInput = def.input.resolve(scope{context: r.s.context, event: ev})
	}
	c, err := r.sys.createChild(r.self, def, input, hasInput)
	if err != nil {
		r.fail(node, err)
		return
	}
	e := childEntry{id: def.id, cell: c}
	if c == nil {
		e.src = def.src // for the error of a start that finds no actor
	}
	r.ownChildren().set(e)
	r.changed = true
	if c != nil {
		r.fx = append(r.fx, effect{kind: fxStart, cell: c})
	}
}

// ownChildren returns the working snapshot's children, ready to be
// changed: a copy, the first time in a call.
func (r *runner) ownChildren() *childList {
	if !r.ownsChildren {
		if c := r.self; c != nil && !c.sys.pure {
			c.ownChildren(r.s)
		} else {
			e := r.s.ownExt()
			e.children = e.children.clone()
		}
		r.ownsChildren = true
	}
	return r.s.ext.children
}

// endChildren drops what the call removed from the children, once it is
// over.
func (r *runner) endChildren() {
	if r.ownsChildren {
		if c := r.self; c != nil && c.madeList != nil && r.s.ext.children == c.madeList {
			if c.madeList.compactInPlace() {
				r.s.ext.children = nil
				c.putList(c.madeList)
				c.madeList = nil
			}
		} else {
			r.s.ext.children = r.s.ext.children.compact()
		}
		r.ownsChildren = false
	}
}

// ownChildren gives s, the working snapshot of a macrostep of c, an ext
// and a children list of its own, copies of those it shares, made in the
// buffers that the cell's earlier snapshots left (see retire), and
// remembers them as made by this macrostep.
func (c *cell) ownChildren(s *Snapshot) {
	e := c.spareExt
	if e == nil {
		e = new(snapshotExt)
	}
	c.spareExt = nil
	l := c.takeList()
	if s.ext != nil {
		*e = *s.ext
	} else {
		*e = snapshotExt{}
	}
	l.copyFrom(e.children)
	e.children = l
	s.ext = e
	c.madeExt, c.madeList = e, l
}

// retire is the end of a macrostep of c that replaced its snapshot old
// by next: the ext and children list of old that the cell's macrosteps
// made, and that no one else holds, become the buffers of the next
// change; those of next that this macrostep made are the cell's.
func (c *cell) retire(old, next *Snapshot) {
	c.retireParts(old.ext, old.x().children, next)
}

// retireParts is retire given the ext and children list the old snapshot
// had (next may be the old snapshot, changed in place).
func (c *cell) retireParts(oldExt *snapshotExt, ol *childList, next *Snapshot) {
	nl := next.x().children
	if next.ext != oldExt {
		if oldExt != nil && oldExt == c.myExt {
			*oldExt = snapshotExt{}
			c.spareExt = oldExt
		}
		c.myExt = nil
		if next.ext != nil && next.ext == c.madeExt {
			c.myExt = next.ext
		}
	}
	if nl != ol {
		if ol != nil && ol == c.myList {
			ol.reset()
			c.putList(ol)
		}
		c.myList = nil
		if nl != nil && nl == c.madeList {
			c.myList = nl
		}
	}
	c.madeExt, c.madeList = nil, nil
}

// putList keeps l, which no one holds, for a later change of the
// children; a cell keeps two (a macrostep changes the children of one
// snapshot while its predecessor's list is still snap's).
func (c *cell) putList(l *childList) {
	for i, x := range c.spareLists {
		if x == nil || x == l {
			c.spareLists[i] = l
			return
		}
	}
}

// takeList returns an empty list, a spare one when the cell has one.
func (c *cell) takeList() *childList {
	for i, x := range c.spareLists {
		if x != nil {
			c.spareLists[i] = nil
			return x
		}
	}
	return new(childList)
}

// shareSnapshot notes that a snapshot sharing parts of c's snapshot was
// handed out: its ext and children list are no longer the cell's alone.
func (c *cell) shareSnapshot(s *Snapshot) {
	if s.ext == c.snap.ext {
		c.myExt = nil
	}
	if l := s.x().children; l != nil && l == c.snap.x().children {
		c.myList = nil
	}
}

// stopChildByID is XState's stopChild with an id: the child leaves the
// snapshot and is stopped.
func (r *runner) stopChildByID(id string) {
	e, ok := r.s.x().children.get(id)
	if !ok || e.cell == nil {
		return
	}
	r.ownChildren().remove(id)
	r.changed = true
	r.stopCell(e.cell)
}

// stopCell stops a child (XState's executeStop): its system ids are free
// at once; a child that has not started is stopped now, so that it never
// starts, and a running one once the snapshot is in place, after the
// events sent to it before. An actor that has not started yet (its
// initial macrostep) defers all of it to its start, as XState defers the
// execution of every action then: the system ids stay taken meanwhile.
func (r *runner) stopCell(c *cell) {
	if r.self.proc != procRunning {
		r.fx = append(r.fx, effect{kind: fxStopExec, cell: c})
		return
	}
	if err := r.sys.stopExec(c, func() { r.fx = append(r.fx, effect{kind: fxStop, cell: c}) }); err != nil {
		r.fail(-1, err)
	}
}

// stopExec is the execution of a stop: the child's system ids are freed,
// and it is stopped now when it has not started, or by defer otherwise.
func (sys *system) stopExec(c *cell, deferStop func()) error {
	if err := sys.unregisterRecursively(c); err != nil {
		return err
	}
	if c.proc != procRunning {
		c.stop()
		return nil
	}
	deferStop()
	return nil
}

// sendTo is XState's sendTo (and sendParent, forwardTo): the target is
// resolved now, the event sent once the snapshot is in place, or, with a
// delay, scheduled as a delayed event of this actor.
func (r *runner) sendTo(a *action, ev Event, node int) {
	d := a.send
	out := ev
	switch {
	case d.event != nil && d.event.data == nil:
		out = Event{Type: d.event.typ}
	case d.event != nil:
		r.leaveSlots() // the event may read the context
		out = d.event.resolve(scope{context: r.s.context, event: ev})
	default:
		r.keepEventData(ev)
	}
	var target *cell
	pending := ""
	switch d.target {
	case sendToParent:
		target = r.self.parent
		if target == nil {
			r.failSend(node, out.Type, "")
			return
		}
	case sendToSystem:
		// XState: no actor under the system id resolves to no target,
		// which sends to the machine itself.
		if target = r.sys.keyed[d.to]; target == nil {
			target = r.self
		}
	default:
		if invokesID(r.deferredInvokes, d.to) {
			pending = d.to
			break
		}
		if target = r.knownTarget(d); target != nil {
			break
		}
		e, ok := r.s.x().children.get(d.to)
		if !ok || e.cell == nil {
			r.failSend(node, out.Type, d.to)
			return
		}
		target = e.cell
	}
	if d.hasDelay {
		r.sendLater(a, out, target, pending)
		return
	}
	r.fx = append(r.fx, effect{kind: fxSend, cell: target, event: out, id: pending})
	if pending != "" {
		r.pendingFx = append(r.pendingFx, len(r.fx)-1)
	}
}

// failSend fails a sendTo of an event of type typ to the child to, or to
// the parent when to is "", that does not exist.
func (r *runner) failSend(node int, typ, to string) {
	if to == "" {
		r.fail(node, fmt.Errorf("cannot send %q to the parent: machine %q has no parent", typ, r.m.id))
		return
	}
	r.fail(node, fmt.Errorf("cannot send %q to actor %q: machine %q has no child with that id", typ, to, r.m.id))
}

// sendLater is sendTo with a delay: the event is scheduled as a delayed
// event of this actor, for the target (the actor itself when nil), or for
// the child pending invokes once it exists. (Apart from sendTo, whose
// every event pays for the frame of what is rare.)
func (r *runner) sendLater(a *action, out Event, target *cell, pending string) {
	seq := r.nextSeq()
	t := timer{id: a.id, event: out, due: r.now.Add(a.send.delay), seq: seq}
	if target != nil && target != r.self {
		t.to = target.sessionID()
	}
	r.mutableTimers().push(t, true)
	if pending != "" {
		r.pendingTimers = append(r.pendingTimers, pendingTimer{seq: seq, id: pending})
	}
	r.logTimer(seq, true)
}

// keepEventData notes that ev, forwarded, outlives the macrostep: when
// its data is the system's lent done-event map, the event keeps it, and
// the system makes another.
func (r *runner) keepEventData(ev Event) {
	if sys := r.sys; sys != nil && sys.doneLent && sameMap(ev.Data, sys.doneData) {
		sys.doneData, sys.doneLent = nil, false
	}
}

// noActor is the target of a delayed send to an invoked child that never
// came to exist: no session has it, so the event is dropped.
const noActor = "-"

// resolvePendingSends resolves the sends of an entry to the children its
// state invoked (XState's retryResolve), now that they exist.
func (r *runner) resolvePendingSends() {
	for _, i := range r.pendingFx {
		if e, ok := r.s.x().children.get(r.fx[i].id); ok {
			r.fx[i].cell = e.cell
		}
	}
	r.pendingFx = r.pendingFx[:0]
	for _, p := range r.pendingTimers {
		q := r.mutableTimers()
		i, ok := q.pos[p.seq]
		if !ok {
			continue
		}
		q.heap[i].to = noActor
		if e, ok := r.s.x().children.get(p.id); ok && e.cell != nil {
			q.heap[i].to = e.cell.sessionID()
		}
	}
	r.pendingTimers = r.pendingTimers[:0]
}

// enqueueActions is XState's enqueueActions: every condition is evaluated
// first, against the context as it is now, then the actions enqueued run in
// order.
func (r *runner) enqueueActions(items []enqueueItem, ev Event, node int) {
	var acts []*action
	for _, it := range items {
		switch {
		case it.action != nil:
			acts = append(acts, it.action)
			continue
		case it.cond != nil:
			if it.cond.eval(&scope{context: r.s.context, event: ev}) {
				acts = append(acts, it.then...)
			} else {
				acts = append(acts, it.elze...)
			}
			continue
		}
		ok, err := r.evalGuard(it.guard, ev)
		if err != nil {
			r.fail(node, fmt.Errorf("guard %q in xstate.enqueueActions: %w", it.guard.String(), err))
			return
		}
		if ok {
			acts = append(acts, it.then...)
		} else {
			acts = append(acts, it.elze...)
		}
	}
	r.executeActions(acts, ev, node)
}

// movedOutput returns where the output of the declarative promise that
// settled last waits, for an assign of the machine to keep it without a
// copy (a $ref to event.output of its done event); nil when a copy is
// needed. The template that made the output made a copy of its own, the
// promise's snapshot gives copies of it, and the done event is the
// machine's alone: no inspection, no Go guard or action sees it, which
// might change the value once the context holds it.
func (r *runner) movedOutput() *any {
	sys := r.sys
	if sys == nil || sys.moved == nil || sys.inspect != nil {
		return nil
	}
	if impl := &r.m.opts.Implementations; len(impl.Guards) > 0 || len(impl.Actions) > 0 {
		return nil
	}
	return &sys.moved
}

// sameReference reports whether a and b are the same JSON object or array
// (not merely equal ones).
func sameReference(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && cap(x) > 0 && &x[:1][0] == &y[:1][0]
	}
	return false
}
