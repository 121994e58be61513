package random

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Config shapes the generated machines. The zero value means the defaults.
type Config struct {
	MinDepth  int // nesting depth every machine reaches (default 4)
	MaxDepth  int // deepest nesting (default 5)
	MaxStates int // soft limit on state nodes (default 28)
	MinSteps  int // default 6
	MaxSteps  int // default 20
	// Disable turns generator features off, to keep a known difference
	// from hiding others. See Features.
	Disable map[string]bool
}

// Features lists the names Config.Disable accepts.
var Features = map[string]string{
	"dots":                "state keys and custom ids that contain dots (escaped in targets)",
	"parallel-history":    "history states whose parent is a parallel state",
	"history":             "history states",
	"null-output":         "a null machine output",
	"after-array-strings": `"after" candidate arrays holding plain target strings`,
	"delayed-raise":       "xstate.raise with a delay, and xstate.cancel",
	"integer-keys":        "integer-like state keys (JavaScript orders them first)",
	"missing-guard":       "guards without an implementation (XState errors when it evaluates one)",
	"final-transitions":   "transitions on final states",
	"fake-done-events":    "external events named like done events (xstate.done.state.<id>)",
	"cancel-after":        "xstate.cancel of the id of an after timer",
	"actors":              "invoke, spawn, sendTo, forwardTo, emit and enqueueActions with declarative promise, callback and machine actors (format v2), machine input, the event-loop clock",
}

func (c Config) withDefaults() Config {
	if c.MinDepth <= 0 {
		c.MinDepth = 4
	}
	if c.MaxDepth < c.MinDepth {
		c.MaxDepth = c.MinDepth + 1
	}
	if c.MaxStates <= 0 {
		c.MaxStates = 28
	}
	if c.MinSteps <= 0 {
		c.MinSteps = 6
	}
	if c.MaxSteps < c.MinSteps {
		c.MaxSteps = c.MinSteps + 14
	}
	return c
}

// Generator produces a deterministic sequence of machines for one seed:
// machine n depends only on the seed, n and the Config.
type Generator struct {
	Seed   uint64
	Config Config
	next   int
}

// NewGenerator returns a generator with the default Config.
func NewGenerator(seed uint64) *Generator { return &Generator{Seed: seed} }

// Next returns the next machine of the sequence.
func (g *Generator) Next() *Machine {
	m := GenerateWith(g.Seed, g.next, g.Config)
	g.next++
	return m
}

// Generate returns machine index of the sequence of seed, with the default
// Config.
func Generate(seed uint64, index int) *Machine { return GenerateWith(seed, index, Config{}) }

// The event alphabet. External events are sent by steps and by delayed
// raises; internal events are raised without delay, and every transition
// that can take one is bounded by a counter (see Transition.Bound).
var (
	externalEvents = []string{"A", "B", "C", "D", "E", "E.x", "E.y"}
	internalEvents = []string{"R1", "R2"}
	unknownEvents  = []string{"UNKNOWN", "E.z.deep", "xstate.nothing", "E.x.y", "E.*"}
	payloads       = []any{0, 1, 2, 3, 2.5, -1, "2", true, false, nil, []any{1, 2}, obj{{"a", 1}}}
	counters       = []string{"k0", "k1", "k2"}
	afterDelays    = []string{"5", "10", "20", "50", "100", "SHORT", "LONG", "3", "0"}
	advances       = []float64{0, 1, 3, 5, 10, 15, 20, 50, 100}
)

// GenerateWith returns machine index of the sequence of seed.
func GenerateWith(seed uint64, index int, cfg Config) *Machine {
	cfg = cfg.withDefaults()
	g := &gen{
		r:   rand.New(rand.NewPCG(seed, uint64(index)^0x9e3779b97f4a7c15)),
		cfg: cfg,
	}
	m := &Machine{
		Seed:    seed,
		Index:   index,
		ID:      []string{"m", "r", "machine"}[g.r.IntN(3)],
		Guards:  map[string]any{},
		Actions: map[string]any{},
		Delays:  map[string]float64{"SHORT": 7, "LONG": 40},
		Bounds:  map[string]int{},

		disabled: cfg.Disable,
	}
	g.m = m
	g.defineImplementations()
	g.setupActors(seed, index)

	m.Context = obj{{"log", []any{}}, {"n", 0}, {"flag", false}}
	for _, k := range counters {
		m.Context = append(m.Context, kv{k, 0})
		m.Bounds[k] = 2 + g.r.IntN(3)
		m.Guards["lt_"+k] = obj{{"field", "context." + k}, {"op", "lt"}, {"value", m.Bounds[k]}}
		m.Actions["inc_"+k] = obj{{"assign", obj{{k, obj{{"$inc", 1}}}}}}
	}
	reset := obj{}
	for _, k := range counters {
		reset = append(reset, kv{k, 0})
	}
	m.Actions["reset"] = obj{{"assign", reset}}
	extras := []kv{
		{"s", "text"}, {"o", obj{{"a", 1}, {"b", []any{true, nil}}}}, {"z", nil},
		{"f", 1.5}, {"arr", []any{1, "two", obj{{"three", 3}}}},
	}
	for _, e := range extras {
		if g.r.IntN(3) == 0 {
			m.Context = append(m.Context, e)
		}
	}

	root := &State{Key: ""}
	m.Root = root
	if g.r.IntN(4) == 0 {
		root.Kind = Parallel
	} else {
		root.Kind = Compound
	}
	g.states = 1
	g.build(root, 0, cfg.MinDepth)
	g.decorate()
	g.invokes()
	for _, s := range m.States() {
		g.behave(s)
		g.actorBehaviour(s)
	}
	g.steps()
	g.v2Steps()
	return m
}

type gen struct {
	r      *rand.Rand
	cfg    Config
	m      *Machine
	keyN   int
	labelN int
	states int
	all    []*State // filled by decorate
	// afterIDs are the ids of the after timers of the machine, for
	// xstate.cancel.
	afterIDs []string
	// Actors (see actors.go): their own random stream, whether the
	// machine uses them, the ids of invoked children.
	ra       *rand.Rand
	actors   bool
	childIDs []string
	invokeN  int
	leaving  bool // the actions being made are a transition's that may leave its source
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](g *gen, xs []T) T { return xs[g.r.IntN(len(xs))] }

func (g *gen) on(feature string) bool { return !g.cfg.Disable[feature] }

func (g *gen) newKey() string {
	g.keyN++
	switch {
	case g.chance(0.08) && g.on("integer-keys"):
		return strconv.Itoa(g.keyN) // integer-like: JavaScript orders it first
	case g.chance(0.02) && g.on("dots"):
		return fmt.Sprintf("d.%d", g.keyN) // a key with a dot
	}
	return fmt.Sprintf("s%d", g.keyN)
}

// build adds the children of s (compound or parallel) at depth, recursing.
// deep > 0 forces the first child to nest at least that much further.
func (g *gen) build(s *State, depth, deep int) {
	n := 2 + g.r.IntN(3)
	if s.Kind == Parallel {
		n = 2 + g.r.IntN(2)
	}
	for i := 0; i < n; i++ {
		c := &State{Key: g.newKey(), Parent: s}
		g.states++
		s.Children = append(s.Children, c)
		childDeep := 0
		if i == 0 && deep > 1 {
			childDeep = deep - 1
		}
		switch {
		case i == 0 && deep > 1:
			c.Kind = Compound
			if g.chance(0.3) {
				c.Kind = Parallel
			}
		case depth+1 >= g.cfg.MaxDepth || g.states >= g.cfg.MaxStates:
			c.Kind = Atomic
			if g.chance(0.25) {
				c.Kind = Final
			}
		default:
			switch x := g.r.Float64(); {
			case x < 0.3:
				c.Kind = Compound
			case x < 0.42:
				c.Kind = Parallel
			case x < 0.82:
				c.Kind = Atomic
			default:
				c.Kind = Final
			}
		}
		if c.Kind == Compound || c.Kind == Parallel {
			g.build(c, depth+1, childDeep)
		}
	}
	// A compound state needs a non-final start most of the time.
	if s.Kind == Compound {
		var nonFinal []*State
		for _, c := range s.Children {
			if c.Kind != Final {
				nonFinal = append(nonFinal, c)
			}
		}
		if len(nonFinal) == 0 {
			s.Children[0].Kind = Atomic // a final state has no children
			nonFinal = append(nonFinal, s.Children[0])
		}
		cands := nonFinal
		if s.Parent != nil && g.chance(0.1) {
			cands = s.Children
		}
		s.Initial = pick(g, cands)
	}
	// History.
	if g.chance(0.3) && g.states < g.cfg.MaxStates+4 && g.on("history") && (s.Kind != Parallel || g.on("parallel-history")) {
		h := &State{Key: g.newKey(), Parent: s, Kind: History}
		g.states++
		switch g.r.IntN(3) {
		case 0:
			h.Deep = true
		case 1:
			h.HistTrue = true
		}
		if g.chance(0.5) {
			var cands []*State
			for _, c := range s.Children {
				c.walk(func(x *State) {
					if x.Kind != History {
						cands = append(cands, x)
					}
				})
			}
			h.HistTarget = pick(g, cands)
		}
		at := g.r.IntN(len(s.Children) + 1)
		s.Children = append(s.Children[:at], append([]*State{h}, s.Children[at:]...)...)
		// History as the initial state needs a default target (without
		// one XState recurses forever).
		if s.Kind == Compound && h.HistTarget != nil && g.chance(0.15) {
			s.Initial = h
		}
	}
	if s.Kind == Compound && g.chance(0.1) {
		s.InitialObject = true
	}
	s.Meta = g.chance(0.03)
	if g.chance(0.05) {
		s.TypeExplicit = true
	}
}

// decorate adds custom ids, tags and outputs.
func (g *gen) decorate() {
	g.all = g.m.States()
	for _, s := range g.all {
		if s == g.m.Root {
			continue
		}
		if s.Kind != History && g.chance(0.15) {
			s.ID = "id_" + s.Key
			if g.chance(0.2) && g.on("dots") {
				s.ID = "id.dot." + s.Key
			}
		}
		if s.Kind != History && g.chance(0.15) {
			s.Tags = append(s.Tags, pick(g, []string{"busy", "idle", "t1", "t2"}))
			if g.chance(0.3) {
				s.Tags = append(s.Tags, pick(g, []string{"busy", "idle", "t1", "t2"}))
			}
		}
		if s.Kind == Final && g.chance(0.6) {
			s.HasOutput, s.Output = true, g.jsonValue(2)
		}
		if s.Kind == Atomic && s.Parent.Kind != Parallel && g.chance(0.03) {
			s.TypeExplicit = true
		}
	}
	if g.chance(0.4) {
		g.m.Root.HasOutput, g.m.Root.Output = true, g.jsonValue(2)
		for g.m.Root.Output == nil && !g.on("null-output") {
			g.m.Root.Output = g.jsonValue(2)
		}
	}
}

func (g *gen) jsonValue(depth int) any {
	switch g.r.IntN(8) {
	case 0:
		return nil
	case 1:
		return g.chance(0.5)
	case 2:
		return g.r.IntN(100) - 20
	case 3:
		return []float64{0.5, -1.25, 1e3, 0}[g.r.IntN(4)]
	case 4:
		return pick(g, []string{"", "done", "ünï", "a\"q"})
	case 5:
		if depth <= 0 {
			return "leaf"
		}
		n := g.r.IntN(3)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = g.jsonValue(depth - 1)
		}
		return arr
	default:
		if depth <= 0 {
			return 7
		}
		o := obj{}
		for i := 0; i < g.r.IntN(3); i++ {
			o = append(o, kv{pick(g, []string{"x", "y", "10", "2", "k"}) + strconv.Itoa(i), g.jsonValue(depth - 1)})
		}
		return o
	}
}

func push(label any) obj {
	return obj{{"assign", obj{{"log", obj{{"$push", label}}}}}}
}

// defineImplementations fills the named guards and actions a machine may
// use; the case only carries those it refers to.
func (g *gen) defineImplementations() {
	G, A := g.m.Guards, g.m.Actions
	cond := func(field, op string, value any) obj {
		c := obj{{"field", field}, {"op", op}}
		if op != "exists" && op != "not_exists" {
			c = append(c, kv{"value", value})
		}
		return c
	}
	G["n_gt_1"] = cond("context.n", "gt", 1)
	G["n_lte_2"] = cond("context.n", "lte", 2)
	G["n_is_ev"] = cond("context.n", "eq", obj{{"$ref", "event.v"}})
	G["ev_gte_2"] = cond("event.v", "gte", 2)
	G["ev_lt_2"] = cond("event.v", "lt", 2)
	G["ev_v"] = cond("event.v", "exists", nil)
	G["no_ev_v"] = cond("event.v", "not_exists", nil)
	G["flag"] = cond("context.flag", "eq", true)
	G["n_in"] = cond("context.n", "in", []any{1, 3, 5})
	G["n_neq_0"] = cond("context.n", "neq", 0)
	G["last_set"] = cond("context.last", "exists", nil)
	G["ev_is_A"] = cond("event.type", "eq", "A")
	G["type_has_x"] = cond("event.type", "contains", "x")
	G["flag_or_big"] = obj{{"or", []any{cond("context.flag", "eq", true), cond("context.n", "gte", 3)}}}
	G["not_flag"] = obj{{"not", cond("context.flag", "eq", true)}}
	G["both"] = obj{{"and", []any{cond("context.n", "gt", 0), obj{{"not", cond("event.v", "eq", 0)}}}}}
	G["ev_is_obj"] = cond("event.v", "eq", obj{{"a", 1}})
	G["ev_in_list"] = cond("event.v", "in", []any{"2", true, nil, []any{1, 2}})
	G["arr_has_two"] = cond("context.arr", "contains", "two")
	G["o_deep"] = cond("context.o", "eq", obj{{"b", []any{true, nil}}, {"a", 1}})
	G["o_a_1"] = cond("context.o.a", "gte", 1)
	G["arr_0"] = cond("context.arr.0", "eq", 1)
	G["s_has_ex"] = cond("context.s", "contains", "ex")
	G["z_missing"] = cond("context.z", "not_exists", nil)
	G["last_is_ev"] = cond("context.last", "eq", obj{{"$ref", "event.v"}})
	G["log_has_ev"] = cond("context.log", "contains", obj{{"$ref", "event.type"}})

	A["inc_n"] = obj{{"assign", obj{{"n", obj{{"$inc", 1}}}}}}
	A["dec_n"] = obj{{"assign", obj{{"n", obj{{"$inc", -1}}}}}}
	A["set_flag"] = obj{{"assign", obj{{"flag", true}}}}
	A["clear_flag"] = obj{{"assign", obj{{"flag", false}}}}
	A["store_v"] = obj{{"assign", obj{{"last", obj{{"$ref", "event.v"}}}}}}
	A["log_type"] = push(obj{{"$ref", "event.type"}})
	A["log_out"] = push(obj{{"$ref", "event.output"}})
	A["log_n"] = push(obj{{"$ref", "context.n"}})
	A["raise_R1"] = obj{{"raise", obj{{"type", "R1"}}}}
	A["raise_R2"] = obj{{"raise", obj{{"type", "R2"}, {"v", 2}}}}
	A["copy_n"] = obj{{"assign", obj{{"last", obj{{"$ref", "context.n"}}}, {"n", obj{{"$inc", 1}}}}}}
	A["log_event"] = push(obj{{"$ref", "event"}})
	A["log_v"] = push(obj{{"$ref", "event.v"}})
	A["set_obj"] = obj{{"assign", obj{{"o", obj{{"a", 2}, {"b", []any{}}}}, {"arr", obj{{"$push", obj{{"$ref", "event.v"}}}}}}}}
}

// label returns a named action that pushes a new label onto context.log.
func (g *gen) label(prefix string) *Action {
	g.labelN++
	name := fmt.Sprintf("%s%d", prefix, g.labelN)
	g.m.Actions[name] = push(name)
	return &Action{Name: name, Object: g.chance(0.1)}
}

func (g *gen) labelNamed(name string) *Action {
	g.m.Actions[name] = push(name)
	return &Action{Name: name, Object: g.chance(0.1)}
}

// origin is what triggers a transition: an external event sent by a step,
// a timer (after, delayed raise) or something internal (always, raised or
// done events, unknown delays). Internal transitions are bounded by a
// counter; only external ones may reset the counters, so that every step
// does a bounded amount of work.
type origin int

const (
	fromExternal origin = iota
	fromTimer
	fromInternal
)

// extraAction is a context-changing, raising or built-in action. Only
// actions of transitions on external events may reset the counters.
func (g *gen) extraAction(canReset bool) *Action {
	switch x := g.r.IntN(20); {
	case x < 2:
		return &Action{Name: "inc_n"}
	case x < 3:
		return &Action{Name: "dec_n"}
	case x < 4:
		return &Action{Name: "set_flag"}
	case x < 5:
		return &Action{Name: "clear_flag"}
	case x < 6:
		return &Action{Name: "store_v"}
	case x < 8:
		return &Action{Name: "log_type"}
	case x < 9:
		return &Action{Name: "log_n"}
	case x < 11:
		return &Action{Name: pick(g, []string{"raise_R1", "raise_R2"})}
	case x < 12:
		ev := obj{{"type", pick(g, internalEvents)}}
		if g.chance(0.5) {
			ev = append(ev, kv{"v", g.r.IntN(4)})
		}
		return &Action{Inline: obj{{"type", "xstate.raise"}, {"params", obj{{"event", ev}}}}}
	case x < 15 && !g.on("delayed-raise"):
		return &Action{Name: "log_type"}
	case x < 14:
		// Delayed events are internal ones too: their transitions are
		// bounded, so that delayed raises cannot multiply without end.
		ev := obj{{"type", pick(g, internalEvents)}}
		if g.chance(0.5) {
			ev = append(ev, kv{"v", g.r.IntN(4)})
		}
		params := obj{{"event", ev}, {"delay", pick(g, []float64{0, 1, 5, 12, 30})}}
		if g.chance(0.7) {
			params = append(params, kv{"id", pick(g, []string{"d1", "d2"})})
		}
		return &Action{Inline: obj{{"type", "xstate.raise"}, {"params", params}}}
	case x < 15:
		return &Action{Inline: obj{{"type", "xstate.cancel"}, {"params", obj{{"sendId", pick(g, []string{"d1", "d2"})}}}}}
	case x < 17:
		g.labelN++
		p := obj{{"log", obj{{"$push", fmt.Sprintf("xa%d", g.labelN)}}}}
		if g.chance(0.5) {
			p = append(p, kv{"n", obj{{"$inc", 2}}})
		}
		return &Action{Inline: obj{{"type", "xstate.assign"}, {"params", p}}}
	case x < 18:
		return &Action{Inline: obj{{"type", "xstate.log"}}}
	case x < 19:
		if canReset {
			return &Action{Name: "reset"}
		}
		return &Action{Name: "inc_n"}
	case x < 20:
		switch g.r.IntN(8) {
		case 0:
			return &Action{Name: "not_implemented"}
		case 1:
			return &Action{Name: "copy_n"}
		case 2:
			return &Action{Name: "log_event"}
		case 3:
			return &Action{Name: "log_v"}
		case 4:
			return &Action{Name: "set_obj"}
		case 5:
			if g.on("delayed-raise") {
				// A named delay; an unknown one raises at once, so only
				// internal (bounded) events use it.
				ev := obj{{"type", pick(g, internalEvents)}}
				delay := "SHORT"
				if g.chance(0.4) {
					delay = "NOPE"
				}
				return &Action{Inline: obj{{"type", "xstate.raise"}, {"params", obj{{"event", ev}, {"delay", delay}, {"id", "d1"}}}}}
			}
		case 6:
			if g.on("cancel-after") && g.on("delayed-raise") && len(g.afterIDs) > 0 {
				return &Action{Inline: obj{{"type", "xstate.cancel"}, {"params", obj{{"sendId", pick(g, g.afterIDs)}}}}}
			}
		}
		return &Action{Name: "log_type"}
	}
	return &Action{Name: "log_type"}
}

func (g *gen) userGuard(depth int) *Guard {
	x := g.r.IntN(10)
	if depth > 1 {
		x = g.r.IntN(6)
	}
	switch {
	case x < 5:
		names := []string{"n_gt_1", "n_lte_2", "n_is_ev", "ev_gte_2", "ev_lt_2", "ev_v", "no_ev_v", "flag",
			"n_in", "n_neq_0", "last_set", "ev_is_A", "type_has_x", "flag_or_big", "not_flag", "both",
			"ev_is_obj", "ev_in_list", "arr_has_two", "o_deep", "o_a_1", "arr_0", "s_has_ex", "z_missing",
			"last_is_ev", "log_has_ev"}
		name := pick(g, names)
		if g.chance(0.01) && g.on("missing-guard") {
			name = "no_such_guard"
		}
		if g.chance(0.05) {
			name = "log_has_label"
			g.m.Guards[name] = obj{{"field", "context.log"}, {"op", "contains"}, {"value", fmt.Sprintf("t%d", 1+g.r.IntN(max(1, g.labelN)))}}
		}
		return &Guard{Op: "name", Name: name, Object: g.chance(0.2)}
	case x < 7:
		return g.configGuard(nil, g.chance(0.3))
	case x < 8:
		return &Guard{Op: "not", Subs: []*Guard{g.userGuard(depth + 1)}}
	default:
		op := "and"
		if g.chance(0.5) {
			op = "or"
		}
		n := 1 + g.r.IntN(3)
		gd := &Guard{Op: op}
		for i := 0; i < n; i++ {
			gd.Subs = append(gd.Subs, g.userGuard(depth+1))
		}
		return gd
	}
}

// configGuard returns a stateIn guard, Named or inline, of any form. Near
// src (when given) it favours states whose membership a microstep of src
// changes: src, its parent's other children, its children, and the
// states of the other regions of its parallel ancestors.
func (g *gen) configGuard(src *State, named bool) *Guard {
	in := pick(g, g.nonHistory())
	if src != nil && g.chance(0.7) {
		if cands := g.nearStates(src); len(cands) > 0 {
			in = pick(g, cands)
		}
	}
	style := g.r.IntN(3)
	if in == g.m.Root {
		style = 0
	}
	return &Guard{Op: "in", In: in, InStyle: style, Named: named}
}

// nearStates lists src, its siblings and children, and the states in the
// other regions of its parallel ancestors (no history states).
func (g *gen) nearStates(src *State) []*State {
	out := []*State{src}
	add := func(ss []*State) {
		for _, x := range ss {
			if x.Kind != History {
				out = append(out, x)
			}
		}
	}
	add(src.Children)
	if src.Parent != nil {
		add(src.Parent.Children)
	}
	for x := src; x.Parent != nil; x = x.Parent {
		if x.Parent.Kind != Parallel {
			continue
		}
		for _, region := range x.Parent.Children {
			if region != x {
				region.walk(func(y *State) {
					if y.Kind != History {
						out = append(out, y)
					}
				})
			}
		}
	}
	return out
}

func (g *gen) nonHistory() []*State {
	var out []*State
	for _, s := range g.all {
		if s.Kind != History {
			out = append(out, s)
		}
	}
	return out
}

func (g *gen) parallels() []*State {
	var out []*State
	for _, s := range g.all {
		if s.Kind == Parallel {
			out = append(out, s)
		}
	}
	return out
}

// target picks the targets of a transition from src; nil is targetless.
func (g *gen) targets(src *State) []*State {
	if g.chance(0.18) {
		return nil
	}
	if ps := g.parallels(); len(ps) > 0 && g.chance(0.1) {
		p := pick(g, ps)
		var regions []*State
		for _, c := range p.Children {
			if c.Kind != History {
				regions = append(regions, c)
			}
		}
		g.r.Shuffle(len(regions), func(i, j int) { regions[i], regions[j] = regions[j], regions[i] })
		n := 2 + g.r.IntN(len(regions)-1)
		var out []*State
		for _, reg := range regions[:n] {
			var cands []*State
			reg.walk(func(x *State) {
				if x.Kind != History {
					cands = append(cands, x)
				}
			})
			out = append(out, pick(g, cands))
		}
		return out
	}
	if src.Parent != nil && g.chance(0.4) {
		// Near: a sibling, a child or the source itself.
		var cands []*State
		cands = append(cands, src.Parent.Children...)
		cands = append(cands, src.Children...)
		return []*State{pick(g, cands)}
	}
	if g.chance(0.02) {
		return []*State{g.m.Root}
	}
	for {
		t := pick(g, g.all)
		if t != g.m.Root {
			return []*State{t}
		}
	}
}

func (g *gen) transition(src *State, from origin, allowUnguarded bool) *Transition {
	t := &Transition{Targets: g.targets(src), Style: g.r.IntN(3), Form: g.r.IntN(3)}
	if from == fromInternal {
		t.Bound = pick(g, counters)
	}
	if !allowUnguarded || g.chance(0.3) {
		t.Guard = g.userGuard(0)
	}
	if g.chance(0.6) {
		t.Actions = append(t.Actions, g.label("t"))
	}
	for g.chance(0.3) {
		t.Actions = append(t.Actions, g.extraAction(from == fromExternal))
	}
	if g.chance(0.2) {
		t.Reenter = true
	}
	t.Meta = g.chance(0.02)
	g.moreActions(src, t)
	return t
}

// candidates returns 1-3 transitions for one handler; all but the last
// are guarded.
func (g *gen) candidates(src *State, from origin) []*Transition {
	n := 1
	if g.chance(0.25) {
		n = 2 + g.r.IntN(2)
	}
	ts := make([]*Transition, n)
	for i := range ts {
		ts[i] = g.transition(src, from, i == n-1)
	}
	return ts
}

func (g *gen) behave(s *State) {
	if s.Kind == History {
		return
	}
	if g.chance(0.7) {
		s.Entry = append(s.Entry, g.labelNamed("en_"+s.Key))
	}
	if g.chance(0.6) {
		s.Exit = append(s.Exit, g.labelNamed("ex_"+s.Key))
	}
	for g.chance(0.15) {
		s.Entry = append(s.Entry, g.extraAction(false))
	}
	for g.chance(0.1) {
		s.Exit = append(s.Exit, g.extraAction(false))
	}
	if s.Kind == Compound && g.chance(0.12) {
		s.InitialActions = []*Action{g.label("i")}
		if g.chance(0.3) {
			s.InitialActions = append(s.InitialActions, g.extraAction(false))
		}
	}
	if s.Kind == Final && !(g.on("final-transitions") && g.chance(0.1)) {
		return
	}

	// on
	nOn := g.r.IntN(4)
	if s == g.m.Root {
		nOn = g.r.IntN(3)
	}
	used := map[string]bool{}
	for i := 0; i < nOn; i++ {
		var ev string
		bounded := false
		switch x := g.r.Float64(); {
		case x < 0.68:
			ev = pick(g, externalEvents)
		case x < 0.83:
			ev, bounded = pick(g, internalEvents), true
		case x < 0.87:
			ev = "E.*"
		case x < 0.9:
			ev = "E.x.*"
		case x < 0.95:
			ev, bounded = "*", true
		default:
			ev, bounded = "xstate.done.state.*", true
		}
		if used[ev] {
			continue
		}
		used[ev] = true
		from := fromExternal
		if bounded {
			from = fromInternal
		}
		s.On = append(s.On, &Handler{Event: ev, Ts: g.candidates(s, from), Array: g.chance(0.1)})
	}
	if ev := pick(g, externalEvents); g.chance(0.03) && !used[ev] {
		s.On = append(s.On, &Handler{Event: ev, Ts: nil, Array: true}) // "E": [] falls through
	}
	// after
	if g.chance(0.2) && (s.Kind != Final || g.chance(0.3)) {
		n := 1 + g.r.IntN(2)
		usedD := map[string]bool{}
		for i := 0; i < n; i++ {
			d := pick(g, afterDelays)
			bounded := false
			if g.chance(0.05) {
				d = "NOPE" // unknown delay: fires at once
			}
			// A zero or unknown delay can re-arm within one clock advance
			// (or one macrostep): bound it like an internal transition.
			bounded = d == "NOPE" || d == "0"
			if usedD[d] {
				continue
			}
			usedD[d] = true
			if _, err := strconv.ParseFloat(d, 64); err == nil || g.m.Delays[d] > 0 {
				g.afterIDs = append(g.afterIDs, "xstate.after."+d+"."+g.m.nodeID(s))
			}
			from := fromTimer
			if bounded {
				from = fromInternal
			}
			h := &Handler{Event: d, Ts: g.candidates(s, from), Array: g.chance(0.1)}
			if !g.on("after-array-strings") && (h.Array || len(h.Ts) > 1) {
				for _, t := range h.Ts {
					if t.Form == 0 {
						t.Form = 1
					}
				}
			}
			s.After = append(s.After, h)
		}
	}
	// always
	if g.chance(0.15) && (s.Kind != Final || g.chance(0.3)) {
		s.Always = g.candidates(s, fromInternal)
		switch x := g.r.Float64(); {
		case x < 0.3:
			// stateIn of a state the transition leaves.
			s.Always[0].Guard = &Guard{Op: "in", In: s, InStyle: g.r.IntN(3)}
			if s == g.m.Root {
				s.Always[0].Guard.InStyle = 0
			}
		case x < 0.6:
			// stateIn of a state near s: inside a parallel state, mostly
			// one of another region, which the same selection may move.
			s.Always[len(s.Always)-1].Guard = g.configGuard(s, g.chance(0.3))
		}
	}
	if s.Kind == Final {
		return // no onDone
	}
	// onDone
	if (s.Kind == Compound || s.Kind == Parallel) && g.chance(0.4) {
		s.OnDone = g.candidates(s, fromInternal)
		if g.chance(0.5) {
			s.OnDone[len(s.OnDone)-1].Actions = append(s.OnDone[len(s.OnDone)-1].Actions, &Action{Name: "log_out"})
		}
	}
}

// steps adds the event and advance steps.
func (g *gen) steps() {
	n := g.cfg.MinSteps + g.r.IntN(g.cfg.MaxSteps-g.cfg.MinSteps+1)
	for i := 0; i < n; i++ {
		if g.chance(0.28) {
			g.m.Steps = append(g.m.Steps, Step{Advance: pick(g, advances)})
			continue
		}
		var typ string
		switch x := g.r.Float64(); {
		case x < 0.8:
			typ = pick(g, externalEvents)
		case x < 0.9:
			typ = pick(g, internalEvents)
		case x < 0.97 || !g.on("fake-done-events"):
			typ = pick(g, unknownEvents)
		default:
			// An external event named like the done event of a state.
			var cs []*State
			for _, s := range g.all {
				if s.Kind == Compound || s.Kind == Parallel {
					cs = append(cs, s)
				}
			}
			typ = "xstate.done.state." + g.m.nodeID(pick(g, cs))
		}
		ev := obj{{"type", typ}}
		if g.chance(0.5) {
			if g.chance(0.7) {
				ev = append(ev, kv{"v", g.r.IntN(4)})
			} else {
				ev = append(ev, kv{"v", cloneJSON(pick(g, payloads))})
			}
		}
		g.m.Steps = append(g.m.Steps, Step{Event: ev})
	}
}
