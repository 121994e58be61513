// This file reads and validates a flat machine config. Every problem is
// collected with its JSON path; keys that XState understands but the flat
// form does not are reported as needing the full interpreter.

package flat

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/internal/hint"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
)

// defaultID is XState's id of a machine whose config has none.
const defaultID = "(machine)"

// xstateKeys are the keys of an XState state node config (the root's
// context and version included), used for suggestions.
var xstateKeys = []string{
	"id", "type", "initial", "states", "on", "always", "after", "onDone",
	"entry", "exit", "output", "history", "target", "tags", "meta",
	"description", "context", "version",
}

// transitionKeys are the keys of an XState transition config.
var transitionKeys = []string{"target", "guard", "actions", "reenter", "description", "meta"}

// notFlat names, for each XState key the flat form leaves out, what it
// would have brought.
var notFlat = map[string]string{
	"states":  "nested states",
	"initial": "nested states",
	"always":  "eventless transitions",
	"after":   "delayed transitions",
	"onDone":  "done transitions",
	"entry":   "entry actions",
	"exit":    "exit actions",
	"output":  "output",
	"history": "history states",
	"target":  "history states",
	"tags":    "tags",
	"id":      "custom state ids",
	"on":      "transitions on the machine root",
	"context": "context",
	"guard":   "guards",
	"actions": "actions",
	"reenter": "reentering transitions",
}

func notFlatMsg(what string) string {
	return fmt.Sprintf("the flat form has no %s; use the full interpreter (statechart.Compile)", what)
}

type loader struct {
	m     *Machine
	errs  statechart.ErrorList
	byID  map[string]int // state ids ("#" targets): the root is -1
	keyd  map[string]int // state keys
	hints hint.Budget    // the did-you-mean work of this document
}

func (l *loader) errorf(p jsonx.Path, format string, args ...any) {
	l.errs = append(l.errs, &statechart.Error{Path: string(p), Msg: fmt.Sprintf(format, args...)})
}

func (l *loader) dups(p jsonx.Path) func(string) {
	return func(k string) { l.errorf(p.Key(k), "duplicate key %q", k) }
}

// parse reads a flat config into a Machine whose transition table is not
// built yet. It returns the errors when the config is not valid.
func parse(data []byte) (*Machine, statechart.ErrorList) {
	if e := checkDocument(data); e != nil {
		return nil, statechart.ErrorList{e}
	}
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return nil, statechart.ErrorList{{Msg: "a machine config must be a JSON object, not " + jsonx.Kind(root)}}
	}
	l := &loader{m: &Machine{id: defaultID, initial: -1}}
	var initial, states gjson.Result
	for _, mb := range jsonx.Members(root, l.dups("")) {
		p := jsonx.Path("").Key(mb.Key)
		v := mb.Value
		switch mb.Key {
		case "id":
			switch {
			case v.Type != gjson.String:
				l.errorf(p, "must be a non-empty string, not %s", jsonx.Kind(v))
			case v.String() == "":
				l.errorf(p, "cannot be empty")
			default:
				l.m.id = v.String()
			}
		case "initial":
			initial = v
		case "states":
			states = v
		case "description":
			l.m.description = l.description(v, p)
		case "meta":
			l.m.meta = jsonx.GoValue(v)
		case "version":
			// metadata that XState ignores
		case "context":
			if !v.IsObject() {
				l.errorf(p, "must be an object, not %s", jsonx.Kind(v))
			} else if !isEmpty(v) {
				l.errorf(p, "%s", notFlatMsg("context"))
			}
		case "type":
			switch {
			case v.Type == gjson.String && v.String() == "compound":
			case v.Type == gjson.String && isStateType(v.String()):
				l.errorf(p, "%s", notFlatMsg(fmt.Sprintf("%q machine root (it is compound)", v.String())))
			default:
				l.badType(v, p)
			}
		default:
			l.otherKey(mb.Key, p)
		}
	}
	l.readStates(states)
	if len(l.m.nodes) > 0 {
		l.readInitial(initial)
		for i := range l.m.nodes {
			l.readOn(i)
		}
	}
	if len(l.errs) > 0 {
		return nil, l.errs
	}
	return l.m, nil
}

func isStateType(s string) bool {
	switch s {
	case "atomic", "compound", "parallel", "final", "history":
		return true
	}
	return false
}

func (l *loader) badType(v gjson.Result, p jsonx.Path) {
	if v.Type != gjson.String {
		l.errorf(p, `must be "atomic" or "final", not %s`, jsonx.Kind(v))
		return
	}
	l.errorf(p, "%q is not a state type (atomic, compound, parallel, final, history)%s",
		v.String(), didYouMean(v.String(), []string{"atomic", "compound", "parallel", "final", "history"}))
}

func (l *loader) description(v gjson.Result, p jsonx.Path) string {
	if v.Type != gjson.String {
		l.errorf(p, "must be a string, not %s", jsonx.Kind(v))
	}
	return v.String()
}

// otherKey reports a key that is not in the flat form: an XState key that
// needs the full interpreter, or an unknown one.
func (l *loader) otherKey(k string, p jsonx.Path) {
	if what, ok := notFlat[k]; ok {
		l.errorf(p, "%s", notFlatMsg(what))
		return
	}
	switch k {
	case "invoke":
		l.errorf(p, "invoke is not supported by the flat engine: statechart.Compile runs actors")
	case "cond":
		l.errorf(p, `"cond" was renamed to "guard" in XState v5, and %s`, notFlatMsg("guards"))
	default:
		l.errorf(p, "unknown key %q%s", k, didYouMean(k, xstateKeys))
	}
}

// readStates reads the states: their keys, types and raw transitions.
func (l *loader) readStates(states gjson.Result) {
	switch {
	case !states.Exists():
		l.errorf("", `a flat machine needs "states": an object of states`)
		return
	case !states.IsObject():
		l.errorf("states", "must be an object of states, not %s", jsonx.Kind(states))
		return
	}
	sp := jsonx.Path("states")
	l.byID = map[string]int{l.m.id: -1}
	l.keyd = map[string]int{}
	for _, mb := range jsonx.Members(states, l.dups(sp)) {
		if mb.Key == "" {
			l.errorf(sp, "a state key cannot be empty")
			continue
		}
		if len(l.m.nodes) == MaxStates {
			l.errorf(sp, "more than %d states", MaxStates)
			return
		}
		p := sp.Key(mb.Key)
		n := node{key: mb.Key, id: l.m.id + "." + mb.Key, path: p}
		if !mb.Value.IsObject() {
			l.errorf(p, "a state must be an object, not %s", jsonx.Kind(mb.Value))
		} else {
			for _, f := range jsonx.Members(mb.Value, l.dups(p)) {
				fp := p.Key(f.Key)
				switch f.Key {
				case "on":
					n.on = f.Value
				case "type":
					switch t := f.Value.String(); {
					case f.Value.Type == gjson.String && t == "final":
						n.final = true
					case f.Value.Type == gjson.String && t == "atomic":
					case f.Value.Type == gjson.String && isStateType(t):
						l.errorf(fp, "%s", notFlatMsg(t+" states"))
					default:
						l.badType(f.Value, fp)
					}
				case "description":
					n.description = l.description(f.Value, fp)
				case "meta":
					n.meta = jsonx.GoValue(f.Value)
				default:
					l.otherKey(f.Key, fp)
				}
			}
		}
		l.byID[n.id] = len(l.m.nodes)
		l.keyd[n.key] = len(l.m.nodes)
		l.m.nodes = append(l.m.nodes, n)
	}
	if len(l.m.nodes) == 0 && len(l.errs) == 0 {
		l.errorf(sp, "a flat machine needs at least one state")
	}
}

// readInitial resolves "initial": the key of a state, as in XState.
func (l *loader) readInitial(v gjson.Result) {
	switch {
	case !v.Exists():
		l.errorf("", `the machine has no "initial"; add "initial": %q`, l.m.nodes[0].key)
	case v.IsObject():
		l.errorf("initial", `must be the name of a state, not an object (initial actions need the full interpreter, statechart.Compile)`)
	case v.Type != gjson.String:
		l.errorf("initial", "must be the name of a state, not %s", jsonx.Kind(v))
	default:
		for i, n := range l.m.nodes {
			if n.key == v.String() {
				l.m.initial = i
				return
			}
		}
		l.errorf("initial", "%q is not a state%s", v.String(), l.hints.DidYouMean(v.String(), l.keys))
	}
}

func (l *loader) keys() []string {
	out := make([]string, len(l.m.nodes))
	for i, n := range l.m.nodes {
		out[i] = n.key
	}
	return out
}

// readOn reads the transitions of state i.
func (l *loader) readOn(i int) {
	n := &l.m.nodes[i]
	on := n.on
	n.on = gjson.Result{} // keep no part of the document once compiled
	if !on.Exists() {
		return
	}
	op := n.path.Key("on")
	if !on.IsObject() {
		l.errorf(op, "must be an object mapping events to target states, not %s", jsonx.Kind(on))
		return
	}
	for _, mb := range jsonx.Members(on, l.dups(op)) {
		ev, p := mb.Key, op.Key(mb.Key)
		switch {
		case ev == "":
			l.errorf(op, "an event name cannot be empty")
			continue
		case ev == "*" || strings.HasSuffix(ev, ".*"):
			l.errorf(p, "%s", notFlatMsg(`wildcard events ("*", "prefix.*")`))
			continue
		case strings.Contains(strings.TrimSuffix(ev, "*"), "*"):
			l.errorf(p, `"*" can only be the whole event descriptor or its last token ("prefix.*")`)
			continue
		case strings.HasPrefix(ev, "xstate."):
			l.errorf(p, "%s", notFlatMsg(`handlers of XState's own events ("xstate.*")`))
			continue
		}
		if t, ok := l.readTransition(i, mb.Value, p); ok {
			n.transitions = append(n.transitions, edge{event: ev, target: t})
		}
	}
}

// readTransition reads one transition: a target string, or an object with
// a "target" (and only a description or meta besides).
func (l *loader) readTransition(src int, v gjson.Result, p jsonx.Path) (int, bool) {
	target, tp := v, p
	switch {
	case v.Type == gjson.String:
	case v.IsObject():
		target = gjson.Result{}
		for _, f := range jsonx.Members(v, l.dups(p)) {
			fp := p.Key(f.Key)
			switch f.Key {
			case "target":
				target, tp = f.Value, fp
			case "description", "meta":
			case "internal":
				l.errorf(fp, `"internal" was replaced by "reenter" in XState v5, and %s`, notFlatMsg("reentering transitions"))
			case "guard", "actions", "reenter", "cond":
				l.otherKey(f.Key, fp)
			default:
				l.errorf(fp, "unknown key %q%s", f.Key, didYouMean(f.Key, transitionKeys))
			}
		}
		if !target.Exists() {
			l.errorf(p, `a transition needs a "target"; %s`, notFlatMsg("targetless transitions"))
			return 0, false
		}
	case v.IsArray():
		l.errorf(p, "%s", notFlatMsg("lists of candidate transitions"))
		return 0, false
	default:
		l.errorf(p, "a transition must be the name of the target state, not %s", jsonx.Kind(v))
		return 0, false
	}
	switch {
	case target.IsArray():
		l.errorf(tp, "%s", notFlatMsg("multiple targets"))
		return 0, false
	case target.Type != gjson.String:
		l.errorf(tp, "a target must be the name of a state, not %s", jsonx.Kind(target))
		return 0, false
	case target.String() == "":
		l.errorf(tp, "a target cannot be empty; %s", notFlatMsg("targetless transitions"))
		return 0, false
	}
	t := target.String()
	if strings.HasPrefix(t, ".") {
		l.errorf(tp, "%q is relative to %q; %s", t, l.m.nodes[src].key, notFlatMsg("child states"))
		return 0, false
	}
	var idx int
	var ok bool
	if strings.HasPrefix(t, "#") {
		idx, ok = l.resolveID(t)
	} else {
		idx, ok = l.walk(-1, jsonx.StatePath(t))
	}
	switch {
	case !ok && strings.HasPrefix(t, "#"):
		l.errorf(tp, "%q is not a state id%s", t, l.hints.DidYouMean(t, l.ids))
	case !ok:
		l.errorf(tp, "%q is not a state%s", t, l.hints.DidYouMean(t, l.keys))
	case idx < 0:
		l.errorf(tp, "%q is the machine root; %s", t, notFlatMsg("transitions to the root"))
	default:
		return idx, true
	}
	return 0, false
}

// resolveID resolves "#id" or "#id.key" as XState does: the first segment
// is a state id, the rest a path of keys below that state. The root is -1.
func (l *loader) resolveID(t string) (int, bool) {
	segs := jsonx.StatePath(t[1:])
	cur, ok := l.byID[segs[0]]
	if !ok {
		return 0, false
	}
	return l.walk(cur, segs[1:])
}

// walk follows a path of state keys down from cur (-1 is the root); an
// empty segment ends the path and a "#id" segment jumps to that state, as
// in XState's getStateNodeByPath.
func (l *loader) walk(cur int, segs []string) (int, bool) {
	for _, s := range segs {
		switch {
		case s == "":
			return cur, true
		case strings.HasPrefix(s, "#"):
			var ok bool
			if cur, ok = l.resolveID(s); !ok {
				return 0, false
			}
		case cur >= 0:
			return 0, false // a flat state has no children
		default:
			i, ok := l.keyd[s]
			if !ok {
				return 0, false
			}
			cur = i
		}
	}
	return cur, true
}

func (l *loader) ids() []string {
	out := []string{"#" + l.m.id}
	for _, n := range l.m.nodes {
		out = append(out, "#"+n.id)
	}
	return out
}
