package random

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Kind is the type of a state node in the model.
type Kind uint8

// State node kinds.
const (
	Atomic Kind = iota
	Compound
	Parallel
	Final
	History
)

func (k Kind) String() string {
	return [...]string{"atomic", "compound", "parallel", "final", "history"}[k]
}

// Machine is a generated machine, its implementations and its steps, kept
// as a tree so that it can be shrunk structurally and written as a case.
type Machine struct {
	Seed  uint64
	Index int

	ID      string
	Context obj // initial context, in key order
	Root    *State
	// Guards, Actions and Delays hold every named implementation the
	// machine may refer to; a case carries only the referenced ones.
	Guards  map[string]any
	Actions map[string]any
	Delays  map[string]float64
	// Bounds maps a counter key of the context to its limit; see
	// Transition.Bound.
	Bounds map[string]int
	Steps  []Step
	// Actors holds the declarative actors (case format v2) the machine may
	// invoke or spawn, by src; a case carries only the referenced ones.
	// Clock is the case's clock ("" for the default) and Input the
	// machine's input when HasInput.
	Actors   map[string]any
	Clock    string
	Input    any
	HasInput bool

	disabled map[string]bool // Config.Disable, respected by shrinking too
}

// Invoke is one invoke of a state.
type Invoke struct {
	Src      string
	ID       string // "" for XState's default id, <index>.<state id>
	SystemID string
	Input    any // written when HasInput
	HasInput bool
	// Handlers of the child's done, error and snapshot events.
	OnDone, OnError, OnSnapshot []*Transition
}

// State is one state node.
type State struct {
	Key    string
	ID     string // custom id, "" for XState's default
	Kind   Kind
	Parent *State

	// History nodes.
	Deep       bool
	HistTrue   bool   // written as "history": true (shallow)
	HistTarget *State // default target, a descendant of the parent (written as a path from it); nil for none

	Initial        *State
	InitialActions []*Action // written as {"target", "actions"} when non-nil
	InitialObject  bool      // write initial as an object even without actions
	Children       []*State

	Entry, Exit []*Action
	On          []*Handler
	After       []*Handler
	Always      []*Transition
	OnDone      []*Transition
	Tags        []string
	Output      any
	HasOutput   bool
	// TypeExplicit writes "type" for compound and atomic nodes too.
	TypeExplicit bool
	// Meta adds "description" and "meta", which change nothing.
	Meta bool
	// Invokes are the state's invoked children.
	Invokes []*Invoke
}

// Handler is one key of "on" (an event descriptor) or of "after" (a delay).
type Handler struct {
	Event string
	Ts    []*Transition
	Array bool // always write an array, even for one transition
}

// Transition is one transition candidate.
type Transition struct {
	Targets []*State
	// Style picks how targets are written: 0 "#id", 1 relative to the
	// source ("child" via ".x", sibling via "x") when possible, 2 a custom
	// id of an ancestor plus a path.
	Style   int
	Guard   *Guard
	Actions []*Action
	Reenter bool
	// Bound names a context counter: the transition is only enabled while
	// the counter is below Machine.Bounds[Bound], and increments it. It
	// keeps eventless, raised-event, done-event and wildcard transitions
	// from looping forever.
	Bound string
	// Form picks the written form of a transition with no target, guard,
	// actions or reenter: 0 "", 1 {}, 2 {"target": ""}; and of a plain
	// single target: 0 a string, else an object.
	Form int
	// Meta adds "description" and "meta", which change nothing.
	Meta bool
}

// Guard is a guard reference: a name, a declared combination or stateIn.
type Guard struct {
	Op     string // "name", "and", "or", "not", "in"
	Name   string
	Object bool // write a name as {"type": name}
	Subs   []*Guard
	In     *State
	// InStyle picks the stateIn argument: 0 "#id", 1 a state value object,
	// 2 a dotted string of keys.
	InStyle int
	// Named writes stateIn as a named guard of the case,
	// {"stateIn": "#id"}, instead of the inline xstate.stateIn.
	Named bool
}

// Action is an action reference: a named implementation or an inline
// declared built-in (xstate.raise, xstate.assign, xstate.cancel, xstate.log),
// or, with Checks, an xstate.enqueueActions that checks guards.
type Action struct {
	Name   string
	Object bool // write a name as {"type": name}
	Inline any
	// Checks makes the action an xstate.enqueueActions with one item per
	// check: if the guard passes (XState's check), push Then to the log,
	// else push Else.
	Checks []*Check
}

// Check is an item of an enqueueActions action: its guard is a named one
// (enqueueActions' "if" takes a name), so a stateIn is written Named.
type Check struct {
	If         *Guard
	Then, Else string
}

// Step is one step of a case: an event, an advance, or (format v2) a
// persist, a restore or a query.
type Step struct {
	Event   obj     // the event object, "type" first; nil for the other steps
	Advance float64 // milliseconds, when Event, Persist, Restore and Query are unset
	Persist string  // the name of the snapshot to persist
	Restore string  // the name of the snapshot to restore
	Query   obj     // {"can": event}, {"matches": value}, {"hasTag": tag} or {"getMeta": {}}
}

// isAdvance reports whether the step is an advance.
func (s Step) isAdvance() bool {
	return s.Event == nil && s.Persist == "" && s.Restore == "" && s.Query == nil
}

// ---------------------------------------------------------------------------
// Ordered JSON objects

type kv struct {
	K string
	V any
}

// obj is a JSON object that keeps its key order.
type obj []kv

// MarshalJSON writes the members in order (see jsonx.Object).
func (o obj) MarshalJSON() ([]byte, error) {
	var jo jsonx.Object
	for _, e := range o {
		jo.Set(e.K, e.V)
	}
	return jo.MarshalJSON()
}

func (o obj) get(k string) (any, bool) {
	for _, e := range o {
		if e.K == k {
			return e.V, true
		}
	}
	return nil, false
}

// cloneJSON deep-copies a JSON-shaped value built of obj, []any and
// scalars (jsonx.Clone, with obj copied member by member).
func cloneJSON(v any) any {
	return jsonx.Clone(v, func(leaf any) any {
		o, ok := leaf.(obj)
		if !ok {
			return leaf
		}
		out := make(obj, len(o))
		for i, e := range o {
			out[i] = kv{e.K, cloneJSON(e.V)}
		}
		return out
	})
}

// ---------------------------------------------------------------------------
// Tree helpers

// walk calls f on s and every descendant, in document (pre-)order.
func (s *State) walk(f func(*State)) {
	f(s)
	for _, c := range s.Children {
		c.walk(f)
	}
}

// States returns every state node in pre-order, root first.
func (m *Machine) States() []*State {
	var out []*State
	m.Root.walk(func(s *State) { out = append(out, s) })
	return out
}

// isDescendantOrSelf reports whether s is d or below d.
func (s *State) isDescendantOrSelf(d *State) bool {
	for x := s; x != nil; x = x.Parent {
		if x == d {
			return true
		}
	}
	return false
}

func (s *State) depth() int {
	d := 0
	for x := s.Parent; x != nil; x = x.Parent {
		d++
	}
	return d
}

// transitions returns every transition of s, with the list it belongs to.
func (s *State) transitionLists() []*[]*Transition {
	var out []*[]*Transition
	for _, h := range s.On {
		out = append(out, &h.Ts)
	}
	for _, h := range s.After {
		out = append(out, &h.Ts)
	}
	out = append(out, &s.Always, &s.OnDone)
	for _, inv := range s.Invokes {
		out = append(out, &inv.OnDone, &inv.OnError, &inv.OnSnapshot)
	}
	return out
}

// actionLists returns every action list of s, transitions included.
func (s *State) actionLists() []*[]*Action {
	out := []*[]*Action{&s.Entry, &s.Exit}
	if s.InitialActions != nil {
		out = append(out, &s.InitialActions)
	}
	for _, l := range s.transitionLists() {
		for _, t := range *l {
			out = append(out, &t.Actions)
		}
	}
	return out
}

// Clone deep-copies the machine; state pointers are remapped.
func (m *Machine) Clone() *Machine {
	c := *m
	c.Context = cloneJSON(m.Context).(obj)
	if c.Context == nil {
		c.Context = obj{}
	}
	c.Steps = make([]Step, len(m.Steps))
	for i, s := range m.Steps {
		c.Steps[i] = Step{Advance: s.Advance, Persist: s.Persist, Restore: s.Restore}
		if s.Event != nil {
			c.Steps[i].Event = cloneJSON(s.Event).(obj)
		}
		if s.Query != nil {
			c.Steps[i].Query = cloneJSON(s.Query).(obj)
		}
	}
	// Implementations are never mutated in place, so maps are shared
	// copy-on-write: copy them to be safe anyway.
	c.Guards = copyMap(m.Guards)
	c.Actions = copyMap(m.Actions)
	c.Delays = copyMap(m.Delays)
	c.Bounds = copyMap(m.Bounds)
	c.Actors = copyMap(m.Actors)
	c.Input = cloneJSON(m.Input)

	remap := map[*State]*State{}
	var cp func(s, parent *State) *State
	cp = func(s, parent *State) *State {
		n := *s
		n.Parent = parent
		remap[s] = &n
		n.Children = nil
		for _, ch := range s.Children {
			n.Children = append(n.Children, cp(ch, &n))
		}
		return &n
	}
	c.Root = cp(m.Root, nil)
	st := func(s *State) *State {
		if s == nil {
			return nil
		}
		return remap[s]
	}
	var cpGuard func(g *Guard) *Guard
	cpGuard = func(g *Guard) *Guard {
		if g == nil {
			return nil
		}
		n := *g
		n.In = st(g.In)
		n.Subs = nil
		for _, s := range g.Subs {
			n.Subs = append(n.Subs, cpGuard(s))
		}
		return &n
	}
	cpActions := func(as []*Action) []*Action {
		if as == nil {
			return nil
		}
		out := make([]*Action, len(as))
		for i, a := range as {
			n := *a
			n.Inline = cloneJSON(a.Inline)
			n.Checks = nil
			for _, c := range a.Checks {
				n.Checks = append(n.Checks, &Check{If: cpGuard(c.If), Then: c.Then, Else: c.Else})
			}
			out[i] = &n
		}
		return out
	}
	cpTs := func(ts []*Transition) []*Transition {
		if ts == nil {
			return nil
		}
		out := make([]*Transition, len(ts))
		for i, t := range ts {
			n := *t
			n.Targets = nil
			for _, x := range t.Targets {
				n.Targets = append(n.Targets, st(x))
			}
			if t.Targets != nil && n.Targets == nil {
				n.Targets = []*State{}
			}
			n.Guard = cpGuard(t.Guard)
			n.Actions = cpActions(t.Actions)
			out[i] = &n
		}
		return out
	}
	cpHandlers := func(hs []*Handler) []*Handler {
		if hs == nil {
			return nil
		}
		out := make([]*Handler, len(hs))
		for i, h := range hs {
			out[i] = &Handler{Event: h.Event, Array: h.Array, Ts: cpTs(h.Ts)}
		}
		return out
	}
	c.Root.walk(func(n *State) {
		n.HistTarget = st(n.HistTarget)
		n.Initial = st(n.Initial)
		n.InitialActions = cpActions(n.InitialActions)
		n.Entry = cpActions(n.Entry)
		n.Exit = cpActions(n.Exit)
		n.On = cpHandlers(n.On)
		n.After = cpHandlers(n.After)
		n.Always = cpTs(n.Always)
		n.OnDone = cpTs(n.OnDone)
		n.Tags = append([]string(nil), n.Tags...)
		n.Output = cloneJSON(n.Output)
		if n.Invokes != nil {
			invs := make([]*Invoke, len(n.Invokes))
			for i, inv := range n.Invokes {
				x := *inv
				x.Input = cloneJSON(inv.Input)
				x.OnDone, x.OnError, x.OnSnapshot = cpTs(inv.OnDone), cpTs(inv.OnError), cpTs(inv.OnSnapshot)
				invs[i] = &x
			}
			n.Invokes = invs
		}
	})
	return &c
}

func copyMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ---------------------------------------------------------------------------
// Writing the case

// escapeKey escapes the dots of a state key for a state path.
func escapeKey(k string) string { return strings.ReplaceAll(k, ".", `\.`) }

// relPath is the escaped dotted path of keys from ancestor a down to s.
func relPath(a, s *State) string {
	var keys []string
	for x := s; x != a; x = x.Parent {
		keys = append(keys, escapeKey(x.Key))
	}
	for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
		keys[i], keys[j] = keys[j], keys[i]
	}
	return strings.Join(keys, ".")
}

// nodeID is XState's id of s: its custom id, or the machine id and the
// keys of its path joined by dots (unescaped).
func (m *Machine) nodeID(s *State) string {
	if s.ID != "" {
		return s.ID
	}
	id := m.ID
	var keys []string
	for x := s; x != m.Root; x = x.Parent {
		keys = append([]string{x.Key}, keys...)
	}
	if len(keys) > 0 {
		id += "." + strings.Join(keys, ".")
	}
	return id
}

// idRef is "#id" for s: its custom id, or the machine id plus its path.
func (m *Machine) idRef(s *State) string {
	if s.ID != "" {
		return "#" + escapeKey(s.ID)
	}
	if s == m.Root {
		return "#" + m.ID
	}
	return "#" + m.ID + "." + relPath(m.Root, s)
}

func (m *Machine) targetString(src, t *State, style int) string {
	switch style {
	case 1:
		// XState resolves ".x" from source key k as the sibling path
		// "k.x" without escaping k, so a key with a dot needs "#".
		if t != src && t.isDescendantOrSelf(src) && !strings.Contains(src.Key, ".") {
			return "." + relPath(src, t)
		}
		if src.Parent != nil && t != src.Parent && t.isDescendantOrSelf(src.Parent) {
			return relPath(src.Parent, t)
		}
	case 2:
		for a := t; a != nil; a = a.Parent {
			if a.ID != "" {
				if a == t {
					return "#" + escapeKey(a.ID)
				}
				return "#" + escapeKey(a.ID) + "." + relPath(a, t)
			}
		}
	}
	return m.idRef(t)
}

// stateValue is the state value object naming s (keys from the root).
func stateValue(root, s *State) any {
	if s == root {
		return obj{}
	}
	var v any = s.Key
	for x := s.Parent; x != root; x = x.Parent {
		v = obj{{x.Key, v}}
	}
	return v
}

type writer struct {
	m       *Machine
	guards  obj
	actions obj
	delays  obj
	actors  obj
	seenG   map[string]bool
	seenA   map[string]bool
	seenD   map[string]bool
	seenR   map[string]bool
	inNames map[namedIn]string // the named stateIn guards written so far
}

func (w *writer) useActor(name string) {
	if w.seenR[name] {
		return
	}
	w.seenR[name] = true
	if def, ok := w.m.Actors[name]; ok {
		w.actors = append(w.actors, kv{name, def})
	}
}

func (w *writer) useGuard(name string) {
	if w.seenG[name] {
		return
	}
	w.seenG[name] = true
	if def, ok := w.m.Guards[name]; ok {
		w.guards = append(w.guards, kv{name, def})
	}
}

func (w *writer) useAction(name string) {
	if w.seenA[name] {
		return
	}
	w.seenA[name] = true
	if def, ok := w.m.Actions[name]; ok {
		w.actions = append(w.actions, kv{name, def})
	}
}

func (w *writer) useDelay(name string) {
	if w.seenD[name] {
		return
	}
	w.seenD[name] = true
	if d, ok := w.m.Delays[name]; ok {
		w.delays = append(w.delays, kv{name, d})
	}
}

func (w *writer) guard(g *Guard) any {
	switch g.Op {
	case "and", "or":
		subs := make([]any, len(g.Subs))
		for i, s := range g.Subs {
			subs[i] = w.guard(s)
		}
		return obj{{"type", "xstate." + g.Op}, {"params", obj{{"guards", subs}}}}
	case "not":
		return obj{{"type", "xstate.not"}, {"params", obj{{"guard", w.guard(g.Subs[0])}}}}
	case "in":
		var v any
		switch g.InStyle {
		case 1:
			v = stateValue(w.m.Root, g.In)
		case 2:
			v = relPath(w.m.Root, g.In)
		default:
			v = w.m.idRef(g.In)
		}
		if g.Named {
			return w.namedStateIn(g, v)
		}
		return obj{{"type", "xstate.stateIn"}, {"params", obj{{"stateValue", v}}}}
	}
	w.useGuard(g.Name)
	if g.Object {
		return obj{{"type", g.Name}}
	}
	return g.Name
}

// namedStateIn returns the name of the case's guard {"stateIn": v} for
// g, defining it on first use: "in_<key>" for the "#id" form (with a
// suffix for the other forms, and a number when another state has the key).
func (w *writer) namedStateIn(g *Guard, v any) string {
	k := namedIn{g.In, g.InStyle}
	if name, ok := w.inNames[k]; ok {
		return name
	}
	base := "in_" + g.In.Key
	if g.In == w.m.Root {
		base = "in_root"
	}
	base += [...]string{"", "_v", "_p"}[g.InStyle]
	name := base
	for i := 2; w.seenG[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	if w.inNames == nil {
		w.inNames = map[namedIn]string{}
	}
	w.inNames[k], w.seenG[name] = name, true
	w.guards = append(w.guards, kv{name, obj{{"stateIn", v}}})
	return name
}

// namedIn is a named stateIn guard: the state and the form of its argument.
type namedIn struct {
	s     *State
	style int
}

func (w *writer) action(a *Action) any {
	if a.Checks != nil {
		items := make([]any, len(a.Checks))
		for i, c := range a.Checks {
			push := func(label string) []any {
				return []any{obj{{"type", "xstate.assign"}, {"params", obj{{"log", obj{{"$push", label}}}}}}}
			}
			items[i] = obj{{"if", w.guard(c.If)}, {"then", push(c.Then)}, {"else", push(c.Else)}}
		}
		return obj{{"type", "xstate.enqueueActions"}, {"params", obj{{"actions", items}}}}
	}
	if a.Inline != nil {
		w.useInline(a.Inline)
		return a.Inline
	}
	w.useAction(a.Name)
	if a.Object {
		return obj{{"type", a.Name}}
	}
	return a.Name
}

// useInline carries the delays, actors, guards and actions an inline
// declared action refers to (xstate.enqueueActions nests actions).
func (w *writer) useInline(v any) {
	o, ok := v.(obj)
	if !ok {
		if arr, ok := v.([]any); ok {
			for _, x := range arr {
				w.useInline(x)
			}
		}
		return
	}
	typ, _ := o.get("type")
	p, _ := o.get("params")
	po, _ := p.(obj)
	if d, ok := po.get("delay"); ok {
		if name, ok := d.(string); ok {
			w.useDelay(name)
		}
	}
	if typ == "xstate.spawnChild" {
		if src, ok := po.get("src"); ok {
			w.useActor(src.(string))
		}
	}
	if typ == "xstate.enqueueActions" {
		items, _ := po.get("actions")
		for _, it := range items.([]any) {
			if io, ok := it.(obj); ok {
				if c, ok := io.get("if"); ok {
					if name, ok := c.(string); ok {
						w.useGuard(name)
					}
					for _, k := range []string{"then", "else"} {
						if list, ok := io.get(k); ok {
							for _, x := range list.([]any) {
								w.useItem(x)
							}
						}
					}
					continue
				}
			}
			w.useItem(it)
		}
	}
}

// useItem carries what an action written in a declared action refers to.
func (w *writer) useItem(x any) {
	if name, ok := x.(string); ok {
		w.useAction(name)
		return
	}
	w.useInline(x)
}

func (w *writer) actionList(as []*Action) any {
	if len(as) == 1 {
		return w.action(as[0])
	}
	out := make([]any, len(as))
	for i, a := range as {
		out[i] = w.action(a)
	}
	return out
}

func (w *writer) transition(src *State, t *Transition) any {
	g := t.Guard
	var actions []*Action
	if t.Bound != "" {
		lt, inc := "lt_"+t.Bound, "inc_"+t.Bound
		bg := &Guard{Op: "name", Name: lt}
		if g == nil {
			g = bg
		} else {
			g = &Guard{Op: "and", Subs: []*Guard{bg, g}}
		}
		actions = append(actions, &Action{Name: inc})
	}
	actions = append(actions, t.Actions...)

	var target any
	switch {
	case t.Targets == nil:
	case len(t.Targets) == 1:
		target = w.m.targetString(src, t.Targets[0], t.Style)
	default:
		ts := make([]any, len(t.Targets))
		for i, x := range t.Targets {
			ts[i] = w.m.targetString(src, x, t.Style)
		}
		target = ts
	}
	if g == nil && len(actions) == 0 && !t.Reenter && !t.Meta {
		if target == nil {
			switch t.Form % 3 {
			case 0:
				return ""
			case 1:
				return obj{}
			default:
				return obj{{"target", ""}}
			}
		}
		if s, ok := target.(string); ok && t.Form%3 == 0 {
			return s
		}
	}
	var o obj
	if target != nil {
		o = append(o, kv{"target", target})
	} else if t.Form%3 == 2 {
		o = append(o, kv{"target", ""})
	}
	if g != nil {
		o = append(o, kv{"guard", w.guard(g)})
	}
	if len(actions) > 0 {
		o = append(o, kv{"actions", w.actionList(actions)})
	}
	if t.Reenter {
		o = append(o, kv{"reenter", true})
	}
	if t.Meta {
		o = append(o, kv{"description", "a transition"}, kv{"meta", obj{{"note", []any{1, "x"}}}})
	}
	if o == nil {
		o = obj{}
	}
	return o
}

func (w *writer) transitions(src *State, ts []*Transition, array bool) any {
	if len(ts) == 1 && !array {
		return w.transition(src, ts[0])
	}
	out := make([]any, len(ts))
	for i, t := range ts {
		out[i] = w.transition(src, t)
	}
	return out
}

func (w *writer) node(s *State) obj {
	var o obj
	if s == w.m.Root {
		o = append(o, kv{"id", w.m.ID})
		o = append(o, kv{"context", w.m.Context})
	} else if s.ID != "" {
		o = append(o, kv{"id", s.ID})
	}
	switch s.Kind {
	case Parallel:
		o = append(o, kv{"type", "parallel"})
	case Final:
		o = append(o, kv{"type", "final"})
	case History:
		o = append(o, kv{"type", "history"})
		switch {
		case s.Deep:
			o = append(o, kv{"history", "deep"})
		case s.HistTrue:
			o = append(o, kv{"history", true})
		default:
			o = append(o, kv{"history", "shallow"})
		}
		if s.HistTarget != nil {
			o = append(o, kv{"target", relPath(s.Parent, s.HistTarget)})
		}
	case Compound, Atomic:
		if s.TypeExplicit {
			o = append(o, kv{"type", s.Kind.String()})
		}
	}
	if len(s.Tags) == 1 {
		o = append(o, kv{"tags", s.Tags[0]})
	} else if len(s.Tags) > 1 {
		o = append(o, kv{"tags", s.Tags})
	}
	if s.Kind == Compound && s.Initial != nil {
		if s.InitialActions != nil || s.InitialObject {
			io := obj{{"target", s.Initial.Key}}
			if len(s.InitialActions) > 0 {
				io = append(io, kv{"actions", w.actionList(s.InitialActions)})
			}
			o = append(o, kv{"initial", io})
		} else {
			o = append(o, kv{"initial", s.Initial.Key})
		}
	}
	if len(s.Entry) > 0 {
		o = append(o, kv{"entry", w.actionList(s.Entry)})
	}
	if len(s.Exit) > 0 {
		o = append(o, kv{"exit", w.actionList(s.Exit)})
	}
	if len(s.On) > 0 {
		var on obj
		for _, h := range s.On {
			on = append(on, kv{h.Event, w.transitions(s, h.Ts, h.Array)})
		}
		o = append(o, kv{"on", on})
	}
	if len(s.After) > 0 {
		var after obj
		for _, h := range s.After {
			if _, err := strconv.ParseFloat(h.Event, 64); err != nil {
				w.useDelay(h.Event)
			}
			after = append(after, kv{h.Event, w.transitions(s, h.Ts, h.Array)})
		}
		o = append(o, kv{"after", after})
	}
	if len(s.Always) > 0 {
		o = append(o, kv{"always", w.transitions(s, s.Always, false)})
	}
	if len(s.OnDone) > 0 {
		o = append(o, kv{"onDone", w.transitions(s, s.OnDone, false)})
	}
	if len(s.Invokes) > 0 {
		invs := make([]any, len(s.Invokes))
		for i, inv := range s.Invokes {
			w.useActor(inv.Src)
			io := obj{{"src", inv.Src}}
			if inv.ID != "" {
				io = append(io, kv{"id", inv.ID})
			}
			if inv.SystemID != "" {
				io = append(io, kv{"systemId", inv.SystemID})
			}
			if inv.HasInput {
				io = append(io, kv{"input", inv.Input})
			}
			for _, h := range []struct {
				key string
				ts  []*Transition
			}{{"onDone", inv.OnDone}, {"onError", inv.OnError}, {"onSnapshot", inv.OnSnapshot}} {
				if len(h.ts) > 0 {
					io = append(io, kv{h.key, w.transitions(s, h.ts, false)})
				}
			}
			invs[i] = io
		}
		if len(invs) == 1 {
			o = append(o, kv{"invoke", invs[0]})
		} else {
			o = append(o, kv{"invoke", invs})
		}
	}
	if s.HasOutput {
		o = append(o, kv{"output", s.Output})
	}
	if s.Meta {
		o = append(o, kv{"description", "state " + s.Key}, kv{"meta", obj{{"key", s.Key}, {"n", 1}}})
	}
	if len(s.Children) > 0 {
		var states obj
		for _, c := range s.Children {
			states = append(states, kv{c.Key, w.node(c)})
		}
		o = append(o, kv{"states", states})
	}
	if o == nil {
		o = obj{}
	}
	return o
}

// Name is the case name of the machine: random/<seed>-<index>.
func (m *Machine) Name() string { return fmt.Sprintf("random/%d-%d", m.Seed, m.Index) }

// CaseJSON writes the machine as a conformance case without "expected".
func (m *Machine) CaseJSON(name, description string) []byte {
	w := &writer{m: m, seenG: map[string]bool{}, seenA: map[string]bool{}, seenD: map[string]bool{}, seenR: map[string]bool{}}
	machine := w.node(m.Root)
	// Delayed raises may name delays inside inline actions.
	c := obj{{"name", name}}
	if description != "" {
		c = append(c, kv{"description", description})
	}
	if m.Clock != "" {
		c = append(c, kv{"clock", m.Clock})
	}
	if m.HasInput {
		c = append(c, kv{"input", m.Input})
	}
	c = append(c, kv{"machine", machine})
	if len(w.guards) > 0 {
		c = append(c, kv{"guards", w.guards})
	}
	if len(w.actions) > 0 {
		c = append(c, kv{"actions", w.actions})
	}
	if len(w.delays) > 0 {
		c = append(c, kv{"delays", w.delays})
	}
	if len(w.actors) > 0 {
		c = append(c, kv{"actors", w.actors})
	}
	steps := make([]any, len(m.Steps))
	for i, s := range m.Steps {
		switch {
		case s.Event != nil:
			steps[i] = obj{{"event", s.Event}}
		case s.Persist != "":
			steps[i] = obj{{"persist", s.Persist}}
		case s.Restore != "":
			steps[i] = obj{{"restore", s.Restore}}
		case s.Query != nil:
			steps[i] = obj{{"query", s.Query}}
		default:
			steps[i] = obj{{"advance", s.Advance}}
		}
	}
	c = append(c, kv{"steps", steps})
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // only JSON-shaped values are ever stored
	}
	return b
}
