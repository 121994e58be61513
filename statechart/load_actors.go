// This file defines how Compile reads what concerns other actors: a
// state's invoke (its children, their ids and their onDone, onError and
// onSnapshot transitions, in the order XState's formatTransitions gives
// them), and the declared actions xstate.sendTo, xstate.sendParent,
// xstate.forwardTo, xstate.spawnChild, xstate.stopChild, xstate.emit and
// xstate.enqueueActions.

package statechart

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Event type prefixes of the events actors send their parents.
const (
	doneActorPrefix     = "xstate.done.actor."
	errorActorPrefixDot = "xstate.error.actor."
	snapshotPrefix      = "xstate.snapshot."
)

var invokeKeys = []string{"src", "id", "systemId", "input", "onDone", "onError", "onSnapshot"}

// readInvokes reads the invoke of node i (an object or an array of
// objects). An invoke without id gets XState's default, "<index>.<state
// id>". The children's handlers are added to the node's transitions.
func (l *loader) readInvokes(i int, v gjson.Result, path jsonPath, set func(string, []*transition)) {
	n := l.m.nodes[i]
	var items []gjson.Result
	var paths []jsonPath
	switch {
	case v.IsArray():
		for j, e := range v.Array() {
			items, paths = append(items, e), append(paths, path.index(j))
		}
	case v.IsObject():
		items, paths = []gjson.Result{v}, []jsonPath{path}
	default:
		l.errorf(path, "must be an invoke object or an array of them, not %s", jsonx.Kind(v))
		return
	}
	for j, item := range items {
		p := paths[j]
		if !item.IsObject() {
			l.errorf(p, "an invoke must be an object with a \"src\", not %s", jsonx.Kind(item))
			continue
		}
		def := &spawnDef{invoke: true, id: fmt.Sprintf("%d.%s", j, n.id)}
		var onDone, onError, onSnapshot gjson.Result
		for _, mb := range jsonx.Members(item, func(k string) { l.errorf(p.key(k), "duplicate key %q", k) }) {
			mp := p.key(mb.Key)
			switch mb.Key {
			case "src":
				if mb.Value.Type != gjson.String {
					l.errorf(mp, "must be the name of an actor in the implementations, not %s", jsonx.Kind(mb.Value))
				}
				def.src = mb.Value.String()
			case "id":
				if mb.Value.Type != gjson.String {
					l.errorf(mp, "must be a string, not %s", jsonx.Kind(mb.Value))
				}
				def.id = mb.Value.String()
			case "systemId":
				if mb.Value.Type != gjson.String || mb.Value.String() == "" {
					l.errorf(mp, "must be a non-empty string, not %s", nonEmptyKind(mb.Value))
				}
				def.systemID = mb.Value.String()
			case "input":
				t, err := compileTemplate(mb.Value, mp, machineRoots)
				if err != nil {
					l.add(err)
				}
				def.input = t
			case "onDone":
				onDone = mb.Value
			case "onError":
				onError = mb.Value
			case "onSnapshot":
				onSnapshot = mb.Value
				def.sync = true
			default:
				l.warnf(mp, "unknown key %q%s", mb.Key, didYouMean(mb.Key, invokeKeys))
			}
		}
		if !item.Get("src").Exists() {
			l.errorf(p, `an invoke needs a "src": the name of an actor in the implementations`)
		}
		def.logic = l.opts.Implementations.Actors[def.src]
		if def.logic == nil && item.Get("src").Type == gjson.String {
			l.warnUnknownSrc(p.key("src"), def.src)
		}
		def.names = newChildNames(def.id)
		r := n.rares()
		r.invokes = append(r.invokes, def)
		l.m.usesActors = true
		for _, h := range []struct {
			v      gjson.Result
			key    string
			prefix string
		}{{onDone, "onDone", doneActorPrefix}, {onError, "onError", errorActorPrefixDot}, {onSnapshot, "onSnapshot", snapshotPrefix}} {
			if h.v.Exists() {
				ev := h.prefix + def.id
				set(ev, l.readTransitions(i, ev, h.v, p.lazy().key(h.key)))
			}
		}
	}
}

// warnUnknownSrc reports a src that names no actor logic: XState starts
// nothing for it (and fails to start when an initial state invokes it).
func (l *loader) warnUnknownSrc(path jsonPath, src string) {
	l.warnf(path, "no actor logic is named %q: XState starts nothing for it (and fails to start when an initial state invokes it)%s",
		src, l.hint(src, func() []string { return keysOf(l.opts.Implementations.Actors) }))
}

// checkParams reports params that are not allowed and missing ones.
func (l *loader) checkParams(name string, params gjson.Result, path jsonPath, required []string, optional ...string) bool {
	if !params.IsObject() {
		l.errorf(path, "%s needs params: an object with %s", name, quoteRoots(required))
		return false
	}
	ok := true
	allowed := append(append([]string(nil), required...), optional...)
	for _, mb := range jsonx.Members(params, nil) {
		found := false
		for _, a := range allowed {
			found = found || mb.Key == a
		}
		if !found {
			l.errorf(path.key(mb.Key), "unknown param %q of %s%s", mb.Key, name, didYouMean(mb.Key, allowed))
			ok = false
		}
	}
	for _, k := range required {
		if !params.Get(k).Exists() {
			l.errorf(path, "%s needs %q", name, k)
			ok = false
		}
	}
	return ok
}

// readActorAction reads the params of a declared action that concerns
// other actors into a.
func (l *loader) readActorAction(a *action, params gjson.Result, pp jsonPath) {
	l.m.usesActors = true
	switch a.name {
	case "xstate.sendTo", "xstate.sendParent", "xstate.forwardTo":
		a.kind = actionSendTo
		d := &sendDef{}
		a.send = d
		switch a.name {
		case "xstate.sendTo":
			if !l.checkParams(a.name, params, pp, []string{"to", "event"}, "delay", "id") {
				return
			}
		case "xstate.sendParent":
			d.target = sendToParent
			if !l.checkParams(a.name, params, pp, []string{"event"}, "delay", "id") {
				return
			}
		default:
			if !l.checkParams(a.name, params, pp, []string{"to"}) {
				return
			}
		}
		if a.name != "xstate.sendParent" {
			to := params.Get("to")
			if to.Type != gjson.String || to.String() == "" || to.String() == "#" {
				l.errorf(pp.key("to"), `must be the id of a child or "#" and a system id, not %s`, quoteJSON(to))
				return
			}
			d.to = to.String()
			if d.to[0] == '#' {
				d.target, d.to = sendToSystem, d.to[1:]
			}
		}
		if a.name != "xstate.forwardTo" {
			ev, err := compileEventTemplate(params.Get("event"), pp.key("event"), machineRoots, a.name)
			if err != nil {
				l.add(err)
				return
			}
			d.event = ev
		}
		d.hasDelay, d.delay, d.delayName = l.readDelay(params.Get("delay"), pp.key("delay"), "send")
		if id := params.Get("id"); id.Exists() {
			if id.Type != gjson.String {
				l.errorf(pp.key("id"), "must be a string, not %s", jsonx.Kind(id))
			}
			a.id = id.String()
		}
		l.m.hasTimers = l.m.hasTimers || d.hasDelay
	case "xstate.spawnChild":
		a.kind = actionSpawn
		if !l.checkParams(a.name, params, pp, []string{"src", "id"}, "input", "systemId", "syncSnapshot") {
			return
		}
		def := &spawnDef{}
		src, id := params.Get("src"), params.Get("id")
		if src.Type != gjson.String {
			l.errorf(pp.key("src"), "must be the name of an actor in the implementations, not %s", jsonx.Kind(src))
		}
		if id.Type != gjson.String {
			l.errorf(pp.key("id"), "must be a string, not %s", jsonx.Kind(id))
		}
		def.src, def.id = src.String(), id.String()
		if sys := params.Get("systemId"); sys.Exists() {
			if sys.Type != gjson.String || sys.String() == "" {
				l.errorf(pp.key("systemId"), "must be a non-empty string, not %s", nonEmptyKind(sys))
			}
			def.systemID = sys.String()
		}
		if in := params.Get("input"); in.Exists() {
			t, err := compileTemplate(in, pp.key("input"), machineRoots)
			if err != nil {
				l.add(err)
			}
			def.input = t
		}
		def.sync = params.Get("syncSnapshot").Type == gjson.True
		def.logic = l.opts.Implementations.Actors[def.src]
		if def.logic == nil && src.Type == gjson.String {
			l.warnUnknownSrc(pp.key("src"), def.src)
		}
		def.names = newChildNames(def.id)
		a.spawn = def
	case "xstate.stopChild":
		a.kind = actionStopChild
		if !l.checkParams(a.name, params, pp, []string{"id"}) {
			return
		}
		if id := params.Get("id"); id.Type != gjson.String {
			l.errorf(pp.key("id"), "must be the id of a child, not %s", jsonx.Kind(id))
		} else {
			a.id = id.String()
		}
	case "xstate.emit":
		a.kind = actionEmit
		if !l.checkParams(a.name, params, pp, []string{"event"}) {
			return
		}
		ev, err := compileEventTemplate(params.Get("event"), pp.key("event"), machineRoots, a.name)
		if err != nil {
			l.add(err)
			return
		}
		a.emit = ev
	case "xstate.enqueueActions":
		a.kind = actionEnqueue
		if !l.checkParams(a.name, params, pp, []string{"actions"}) {
			return
		}
		list := params.Get("actions")
		if !list.IsArray() {
			l.errorf(pp.key("actions"), "must be an array of actions and {\"if\", \"then\", \"else\"} items, not %s", jsonx.Kind(list))
			return
		}
		for j, item := range list.Array() {
			if it, ok := l.readEnqueueItem(item, pp.key("actions").index(j)); ok {
				a.enqueue = append(a.enqueue, it)
			}
		}
	}
}

// readEnqueueItem reads an item of xstate.enqueueActions.
func (l *loader) readEnqueueItem(v gjson.Result, path jsonPath) (enqueueItem, bool) {
	if !v.IsObject() || !v.Get("if").Exists() {
		a := l.readAction(v, path)
		return enqueueItem{action: a}, a != nil
	}
	var it enqueueItem
	for _, mb := range jsonx.Members(v, func(k string) { l.errorf(path.key(k), "duplicate key %q", k) }) {
		p := path.key(mb.Key)
		switch mb.Key {
		case "if":
			if mb.Value.Type == gjson.String {
				it.guard = l.readGuard(mb.Value, p)
				continue
			}
			c, err := compileCond(mb.Value, p)
			if err != nil {
				l.add(err)
				return it, false
			}
			it.cond = c
		case "then", "else":
			if !mb.Value.IsArray() {
				l.errorf(p, "must be an array of actions, not %s", jsonx.Kind(mb.Value))
				continue
			}
			acts := l.readActions(mb.Value, p)
			if mb.Key == "then" {
				it.then = acts
			} else {
				it.elze = acts
			}
		default:
			l.errorf(p, "unknown key %q%s", mb.Key, didYouMean(mb.Key, []string{"if", "then", "else"}))
		}
	}
	return it, true
}
