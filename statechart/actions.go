// This file defines how guards are evaluated and actions executed, with the
// arguments implementations receive, and the declared built-ins
// (xstate.and/or/not/stateIn, xstate.assign/raise/cancel/log; those that
// concern other actors are in runner_actors.go).

package statechart

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// GuardArgs is what a guard implementation receives.
type GuardArgs struct {
	Context map[string]any // the context before the transition; do not modify
	Event   Event          // the event being processed
	Params  map[string]any // the params of the guard reference, if any
	r       *runner
}

// InState reports whether the machine is in a state: "#id" tests whether
// the state node with that id is active; a state value (or dotted string)
// is matched like [Snapshot.Matches]. It is XState's stateIn. A guard
// checked by an action (xstate.enqueueActions) sees the configuration from
// before the microstep that runs the action, as in XState.
func (a GuardArgs) InState(v any) (bool, error) {
	if a.r == nil {
		return false, nil
	}
	if id, ok := v.(string); ok && len(id) > 0 && id[0] == '#' {
		n, ok := a.r.m.stateByRef(id)
		if !ok {
			return false, fmt.Errorf("stateIn: %q is not a state id", id)
		}
		return a.r.inState(n), nil
	}
	return matchesState(v, a.r.guardValue()), nil
}

// stateByRef resolves "#id" or "#id.child.path" like XState's
// getStateNodeById: an id, then a path of child keys below it.
func (m *Machine) stateByRef(ref string) (int, bool) {
	segs := jsonx.StatePath(strings.TrimPrefix(ref, "#"))
	n, ok := m.byID[segs[0]]
	if !ok {
		return 0, false
	}
	for _, key := range segs[1:] {
		if key == "" {
			break
		}
		next := -1
		for _, c := range m.nodes[n].children {
			if m.nodes[c].key == key {
				next = c
				break
			}
		}
		if next < 0 {
			return 0, false
		}
		n = next
	}
	return n, true
}

func (a GuardArgs) scope() scope { return scope{context: a.Context, event: a.Event} }

// ActionArgs is what an action implementation receives.
type ActionArgs struct {
	Context map[string]any // the current context; do not modify, use Assign
	Event   Event          // the event being processed
	Params  map[string]any // the params of the action reference, if any
	r       *runner
}

// Assign sets top-level context keys, like XState's assign. Later actions
// of the same microstep see the new context.
func (a *ActionArgs) Assign(updates map[string]any) {
	if a.r == nil || len(updates) == 0 {
		return
	}
	a.r.assign(updates)
	a.Context = a.r.s.context
}

// Unset removes top-level context keys, as assigning undefined does in
// XState (the key is gone once the context is serialized). Later actions
// of the same microstep see the new context.
func (a *ActionArgs) Unset(keys ...string) {
	if a.r == nil || len(keys) == 0 {
		return
	}
	updates := make(map[string]any, len(keys))
	for _, k := range keys {
		updates[k] = undefined{}
	}
	a.r.assign(updates)
	a.Context = a.r.s.context
}

// Raise queues an internal event, processed before the next external event,
// like XState's raise.
func (a *ActionArgs) Raise(ev Event) {
	if a.r != nil {
		a.r.queue.push(ev)
	}
}

// RaiseAfter schedules ev to be processed as an external event after
// delay, like XState's raise with a delay; a non-empty id is its send id,
// which Cancel (and xstate.cancel) take. A negative delay counts as zero.
func (a *ActionArgs) RaiseAfter(ev Event, delay time.Duration, id string) {
	if a.r == nil {
		return
	}
	if a.r.now.IsZero() && a.r.clock != nil {
		a.r.now = a.r.clock.Now()
	}
	a.r.scheduleRaise(ev, max(delay, 0), id)
}

// scheduleRaise schedules a delayed raise. XState's scheduler maps an id to
// the latest event scheduled with it; an earlier one keeps its timer but
// can no longer be cancelled.
func (r *runner) scheduleRaise(ev Event, delay time.Duration, id string) {
	seq := r.nextSeq()
	r.mutableTimers().push(timer{id: id, event: ev, due: r.now.Add(delay), seq: seq}, true)
	r.logTimer(seq, true)
}

// SendParent sends ev to the actor's parent, after delay when it is
// positive, like XState's sendParent; a non-empty id is the send id of a
// delayed send, which Cancel takes. It returns an error, and sends
// nothing, when the actor has no parent.
func (a *ActionArgs) SendParent(ev Event, delay time.Duration, id string) error {
	r := a.r
	if r == nil || r.self == nil || r.self.parent == nil {
		return fmt.Errorf("cannot send %q to the parent: the actor has no parent", ev.Type)
	}
	r.sendDelayed(sendDef{target: sendToParent}, ev, delay, id)
	return nil
}

// sendDelayed sends ev as d says, after delay when it is positive.
func (r *runner) sendDelayed(d sendDef, ev Event, delay time.Duration, id string) {
	if delay > 0 && r.now.IsZero() && r.clock != nil {
		r.now = r.clock.Now()
	}
	d.hasDelay, d.delay = delay > 0, delay
	r.sendTo(&action{kind: actionSendTo, id: id, send: &d}, ev, -1)
}

// SendTo sends ev to the child with id to, after delay when it is
// positive, like XState's sendTo; a non-empty id is the send id of a
// delayed send, which Cancel takes. It returns an error, and sends
// nothing, when the actor has no such child.
func (a *ActionArgs) SendTo(to string, ev Event, delay time.Duration, id string) error {
	r := a.r
	if r == nil || r.sys == nil {
		return fmt.Errorf("cannot send %q to actor %q: the machine has no children", ev.Type, to)
	}
	if !invokesID(r.deferredInvokes, to) {
		if e, ok := r.s.x().children.get(to); !ok || e.cell == nil {
			return fmt.Errorf("cannot send %q to actor %q: the machine has no child with that id", ev.Type, to)
		}
	}
	r.sendDelayed(sendDef{target: sendToChild, to: to}, ev, delay, id)
	return nil
}

// Cancel cancels the delayed event scheduled with send id id, if it is
// still pending, like XState's cancel.
func (a *ActionArgs) Cancel(id string) {
	if a.r == nil {
		return
	}
	a.r.cancelTimer(id)
}

// cancelTimer cancels the pending delayed event with send id id, if any.
func (r *runner) cancelTimer(id string) {
	if _, ok := r.s.timers.keyedSeq(id); ok {
		seq, _ := r.mutableTimers().cancel(id)
		r.logTimer(seq, false)
		if r.sys != nil {
			r.fx[len(r.fx)-1].id = id
		}
	}
}

func (r *runner) assign(updates map[string]any) {
	r.exposeContext() // the caller's action sees the new one next
	ctx := make(map[string]any, len(r.s.context)+len(updates))
	maps.Copy(ctx, r.s.context)
	for k, v := range updates {
		if _, ok := v.(undefined); ok {
			delete(ctx, k)
			continue
		}
		ctx[k] = v
	}
	r.s.context = ctx
	r.replacedContext = true
	r.changed = true
}

// assignAction runs the declarative assign of action a, entries: on the
// slots while they are live (see slots.go).
func (r *runner) assignAction(a *action, entries []assignEntry, ev Event) {
	if r.slotCtx.live {
		if a.slots != nil && r.ownsContext {
			r.assignSlots(a.slots, a.slotsSeq, ev)
			return
		}
		r.leaveSlots()
	}
	r.assignEntries(entries, ev)
}

// assignEntries is XState's assign with a property map: every value is
// computed from the context before the assign, then set in one new context.
// The context is copied only when the runner does not own it (see
// ownsContext): at most once per call, and not at all for an Actor whose
// context nobody else holds, which is changed in place with an undo log.
func (r *runner) assignEntries(entries []assignEntry, ev Event) {
	r.leaveSlots()
	old := r.s.context
	if r.ownsContext && independent(entries) {
		r.assignInPlace(entries, ev)
		return
	}
	sc := scope{context: old, event: ev, moved: r.movedOutput()}
	vals := r.assignVals[:0]
	undoing := r.undoing && r.ownsContext // the writes below change old in place
	for _, e := range entries {
		prev, had := old[e.key]
		if e.expr.kind == exprInc {
			n, _ := prev.(float64)
			vals = append(vals, r.numbers.box(n+e.expr.inc))
		} else {
			vals = append(vals, e.expr.eval(sc, prev))
		}
		if undoing {
			r.undo = append(r.undo, contextUndo{key: e.key, value: prev, had: had})
		}
	}
	ctx := old
	if !r.ownsContext {
		ctx = make(map[string]any, len(old)+len(entries))
		maps.Copy(ctx, old)
		r.ownsContext, r.replacedContext = r.sys == nil, true
	}
	for i, e := range entries {
		if _, ok := vals[i].(undefined); ok {
			delete(ctx, e.key)
			continue
		}
		ctx[e.key] = vals[i]
	}
	clear(vals)
	r.assignVals = vals[:0]
	r.s.context = ctx
	r.changed = true
}

// independent reports whether setting entries one after the other gives
// what computing them all first does: each value depends on the context
// only through its own key's value before the assign ($inc, or a literal),
// and no key is set twice. One entry always is.
func independent(entries []assignEntry) bool {
	if len(entries) == 1 {
		return true
	}
	if len(entries) > 4 {
		return false
	}
	for i, e := range entries {
		if k := e.expr.kind; k != exprLiteral && k != exprInc {
			return false
		}
		for _, f := range entries[:i] {
			if f.key == e.key {
				return false
			}
		}
	}
	return true
}

// assignInPlace is assignEntries on a context the runner owns, for
// independent entries: each key is read once and set once, without
// collecting the values first.
func (r *runner) assignInPlace(entries []assignEntry, ev Event) {
	ctx := r.s.context
	for _, e := range entries {
		var prev any
		had := false
		if r.undoing || e.expr.kind != exprLiteral { // a literal needs the old value only to undo
			prev, had = ctx[e.key]
		}
		var v any
		if e.expr.kind == exprInc {
			n, _ := prev.(float64)
			v = r.numbers.box(n + e.expr.inc)
		} else {
			v = e.expr.eval(scope{context: ctx, event: ev, moved: r.movedOutput()}, prev)
		}
		if r.undoing {
			r.undo = append(r.undo, contextUndo{key: e.key, value: prev, had: had})
		}
		if _, ok := v.(undefined); ok {
			delete(ctx, e.key)
			continue
		}
		ctx[e.key] = v
	}
	r.changed = true
}

// contextUndo restores one key of a context changed in place.
type contextUndo struct {
	key   string
	value any
	had   bool
}

// grantContext lets the call change s.context in place: an Actor, or a
// machine cell of an actor system, whose context map nobody else holds
// calls it after begin. If the call fails, the caller restores the map
// with rollbackContext.
func (r *runner) grantContext() {
	if r.s.context != nil {
		r.ownsContext, r.undoing = true, true
	}
}

// rollbackContext undoes the in-place changes of the call, in reverse.
func (r *runner) rollbackContext() {
	if !r.undoing {
		return
	}
	r.rollbackSlots()
	ctx := r.s.context
	for i := len(r.undo) - 1; i >= 0; i-- {
		u := r.undo[i]
		if u.had {
			ctx[u.key] = u.value
		} else {
			delete(ctx, u.key)
		}
	}
	clear(r.undo)
	r.undo, r.undoing = r.undo[:0], false
}

// exposeContext is called before s.context is handed to an
// implementation, which may keep it: the call stops changing it in place.
// A map the call changed in place is then the Actor's, restored at once,
// and the call goes on with a copy.
func (r *runner) exposeContext() {
	r.leaveSlots()
	if r.undoing {
		if len(r.undo) > 0 {
			ctx := maps.Clone(r.s.context)
			r.rollbackContext()
			r.s.context, r.replacedContext = ctx, true
		}
		clear(r.undo)
		r.undo, r.undoing = r.undo[:0], false
	}
	r.ownsContext, r.contextSeen = false, true
}

// evaluateGuard reports whether transition t's guard passes.
func (r *runner) evaluateGuard(t *transition, ev Event) bool {
	if t.guard == nil {
		return true
	}
	ok, err := r.evalGuard(t.guard, ev)
	if err != nil {
		r.fail(int(t.source), fmt.Errorf("guard %q in transition for event %q: %w", t.guard.String(), ev.Type, err))
		return false
	}
	return ok
}

func (r *runner) evalGuard(g *guard, ev Event) (bool, error) {
	switch g.kind {
	case guardAnd:
		for _, s := range g.subs {
			if ok, err := r.evalGuard(s, ev); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case guardOr:
		for _, s := range g.subs {
			if ok, err := r.evalGuard(s, ev); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case guardNot:
		ok, err := r.evalGuard(g.subs[0], ev)
		return !ok && err == nil, err
	case guardStateIn:
		if g.inNode >= 0 {
			return r.inState(g.inNode), nil
		}
		return matchesState(g.inValue, r.guardValue()), nil
	case guardRoute:
		to, ok := ev.Data["to"].(string)
		return ok && to == g.to, nil
	}
	if g.decl != nil {
		if r.slotCtx.live {
			if g.slot != nil {
				return r.evalSlots(g.slot, &ev), nil
			}
			r.leaveSlots()
		}
		return g.decl.eval(&scope{context: r.s.context, event: ev}), nil
	}
	if g.impl == nil {
		return false, fmt.Errorf("%w: %q", ErrGuardNotImplemented, g.name)
	}
	r.exposeContext() // the guard may keep the map
	return g.impl(r.ctx, GuardArgs{Context: r.s.context, Event: ev, Params: g.params, r: r})
}

// executeActions runs actions in order; node is the state node they belong
// to, for error messages.
func (r *runner) executeActions(actions []*action, ev Event, node int) {
	for _, a := range actions {
		switch a.kind {
		case actionCustom:
			if a.impl == nil || r.customErr != nil {
				continue // XState: a missing action implementation is a no-op
			}
			if a.decl != nil {
				r.assignAction(a, a.decl, ev)
				continue
			}
			r.exposeContext() // the action may keep the map
			r.args = ActionArgs{Context: r.s.context, Event: ev, Params: a.params, r: r}
			if err := a.impl(r.ctx, &r.args); err != nil {
				if r.deferCustom {
					// The initial macrostep goes on; the failure ends the start.
					r.customErr, r.customNode = fmt.Errorf("action %q: %w", a.name, err), node
					continue
				}
				r.fail(node, fmt.Errorf("action %q: %w", a.name, err))
				return
			}
		case actionAssign:
			r.assignAction(a, a.assign, ev)
		case actionRaise:
			if !a.hasDelay {
				// XState: a raise without a resolved delay is an internal event.
				r.queue.push(a.event)
				continue
			}
			r.scheduleRaise(a.event, a.delay, a.id)
		case actionCancel:
			r.cancelTimer(a.id)
		case actionLog:
		default:
			if r.executeActorAction(a, ev, node); r.err != nil {
				return
			}
		}
	}
}

// executeActorAction executes an action that concerns other actors.
func (r *runner) executeActorAction(a *action, ev Event, node int) {
	switch a.kind {
	case actionSpawn:
		r.spawnChild(a.spawn, ev, node)
	case actionStopChild:
		r.stopChildByID(a.id)
	case actionSendTo:
		r.sendTo(a, ev, node)
	case actionEmit:
		r.fx = append(r.fx, effect{kind: fxEmit, event: a.emit.resolve(scope{context: r.s.context, event: ev})})
	case actionEnqueue:
		r.enqueueActions(a.enqueue, ev, node)
	}
}
