// This file defines the compilation of a checked Statewright workflow into
// an XState machine config: meta.mcp bindings for package mcpbind, the
// context merge, guards, safe_next fallbacks, approval states, interrupts
// with $return through history states, forks as parallel states and
// invoked subflows as compound states.

package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// The events of interrupts are InterruptEventPrefix + the interrupt's name.
// Events starting with "chartgate." are reserved: the agent cannot send
// them (mcpbind's workflow_transition refuses them); the gateway does.
const InterruptEventPrefix = "chartgate.interrupt."

// The events that leave a state waiting for approval (mcpbind's
// EventApprove and EventReject).
const (
	eventApprove = "chartgate.approve"
	eventReject  = "chartgate.reject"
)

// unsetRef is a $ref that never resolves (an event's type is a string, so
// it has no field "none"): assigning it removes a context key, as
// assigning undefined does in XState.
const unsetRef = "event.type.none"

// maxSubflowDepth bounds the nesting of invoked subflows.
const maxSubflowDepth = 32

// xsState is a state node of the compiled machine.
type xsState struct {
	key       string
	typ       string // "", "final", "parallel" or "history"
	history   string // "deep" for history states
	initial   string
	entry     []any
	exit      []any
	children  []*xsState
	on        []*xsEvent
	always    []*xsTrans
	onDone    []*xsTrans
	mcp       *obj
	chartgate *obj

	origin    string // the state of the file it was compiled from
	resumable bool   // a top-level state an interrupt may leave and $return resume
	hist      string // the key of its deep history child, for $return
	subflow   string // the id of a subflow with its own context
}

type xsEvent struct {
	name string
	ts   []*xsTrans
}

// xsTrans is a transition; a $return transition (ret) is expanded when
// the machine is written, once every resumable state is known.
type xsTrans struct {
	target  string
	ret     bool
	guards  []any
	actions []any
}

func (x *xsState) handles(ev string) bool {
	return slices.ContainsFunc(x.on, func(e *xsEvent) bool { return e.name == ev })
}

func (x *xsState) addOn(ev string, ts ...*xsTrans) {
	for _, e := range x.on {
		if e.name == ev {
			e.ts = append(e.ts, ts...)
			return
		}
	}
	x.on = append(x.on, &xsEvent{name: ev, ts: ts})
}

// compiler turns a checked Statewright document into the machine JSON.
type compiler struct {
	opts      Options
	e         *errs
	mid       string
	guards    *obj             // meta.chartgate.guards of the machine
	guardDefs map[string]Guard // the same, to detect clashes
	states    int              // state nodes written so far
	maxStates int
	forks     []string // the forks being expanded, to detect cycles
	subflows  []string // the subflows being inlined, to detect cycles
	tooMany   bool
}

// container is a set of sibling states compiled from one document: the
// top level, a fork's branch (a region of its parallel state), or an
// inlined subflow.
type container struct {
	doc     *swDoc
	path    []string // keys from the root to the node holding these states
	prefix  string   // prepended to event names (a branch's "<name>.")
	guardNS string   // prepended to guard names (a subflow's "<name>/")
	names   map[string]bool
	keys    map[string]bool
	events  []string // the events these states handle: safe_next's fallbacks
	role    func(s *swState) stateRole
	// Where the states whose role leaves the container go (absolute).
	exitTo func(s *swState) string
	// The actions of the transitions to exitTo.
	leave []any
	// Whether a final copy of a state ends its region (join "any" waits
	// for a failed branch in a final state).
	join string
	// Whether the states run in a fork's region, where a subflow shares
	// the context: branches run at once, with one context.
	inFork bool
}

type stateRole uint8

const (
	roleNormal   stateRole = iota
	roleFinal              // a final state of the workflow (top level)
	roleDone               // a branch's terminal state
	roleFailed             // a final state a branch reaches that is not its terminal
	roleSubFinal           // a final state of an inlined subflow
)

func newCompiler(opts Options, e *errs, mid string) *compiler {
	max := opts.Statechart.MaxStates
	if max <= 0 {
		max = 100_000
	}
	return &compiler{opts: opts, e: e, mid: mid, guards: newObj(), guardDefs: map[string]Guard{}, maxStates: max}
}

// compile returns the machine JSON of a document checked without errors.
func compile(d *swDoc, opts Options, e *errs) []byte {
	c := newCompiler(opts, e, d.id)
	top := &container{doc: d, names: map[string]bool{}, keys: map[string]bool{}}
	for _, s := range d.states {
		top.names[s.name] = true
		top.keys[s.name] = true
	}
	top.role = func(s *swState) stateRole {
		if s.final {
			return roleFinal
		}
		return roleNormal
	}
	states := c.compileContainer(top, d.states)
	if len(e.list) > 0 {
		return nil
	}

	// Interrupts: every top-level state that is not final and not the
	// target of an interrupt detours to the interrupt's target, unless an
	// interrupt is being handled, and remembers where it was.
	targets := map[string]bool{}
	for _, in := range d.interrupts {
		targets[in.target] = true
	}
	// States only fork branches go through are compiled at the top level
	// too, but never entered there: they get no interrupt transitions.
	entered := topLevelStates(d)
	var resumable []*xsState
	if len(d.interrupts) > 0 {
		for _, x := range states {
			if x.typ == "final" || targets[x.key] || !entered[x.origin] {
				continue
			}
			x.resumable = true
			resumable = append(resumable, x)
			for _, in := range d.interrupts {
				x.addOn(InterruptEventPrefix+in.name, &xsTrans{
					target:  escapeKey(in.target),
					guards:  []any{GuardNotInterrupted},
					actions: []any{assignAction(map[string]any{KeyInterruptReturn: x.key})},
				})
			}
		}
	}

	if c.opts.Compat == CompatStatewright || c.opts.Pausable {
		states = append(states, c.pausedState(top, states, entered))
	}

	m := newObj()
	m.set("id", d.id)
	m.set("initial", d.initial)
	m.set("context", d.context)
	st := newObj()
	for _, x := range states {
		st.set(x.key, c.stateJSON(x, resumable))
	}
	m.set("states", st)
	cg := newObj()
	if d.metaJSON.len() > 0 {
		cg.set("workflow", d.metaJSON)
	}
	if c.guards.len() > 0 {
		cg.set("guards", c.guards)
	}
	if len(d.interrupts) > 0 {
		ins := newObj()
		for _, in := range d.interrupts {
			ins.set(in.name, newObj().set("file_pattern", in.pattern).set("event", InterruptEventPrefix+in.name))
		}
		cg.set("interrupts", ins)
	}
	if cg.len() > 0 {
		m.set("meta", newObj().set("chartgate", cg))
	}
	out, err := encode(m)
	if err != nil {
		e.add("", "cannot write the compiled machine: %v", err)
		return nil
	}
	return out
}

// compileContainer compiles the states of a container, in document order,
// each followed by the states it generates (approval, fork, subflow).
func (c *compiler) compileContainer(ct *container, states []*swState) []*xsState {
	// The events of the container, for safe_next.
	for _, s := range states {
		if ct.role(s) != roleNormal {
			continue
		}
		for _, ev := range s.on {
			if name := ct.prefix + ev.name; !slices.Contains(ct.events, name) {
				ct.events = append(ct.events, name)
			}
		}
	}
	var out []*xsState
	for _, s := range states {
		xs := c.compileState(ct, s)
		for _, x := range xs {
			x.origin = s.name
		}
		out = append(out, xs...)
	}
	return out
}

// topLevelStates returns the states the top level of the machine may
// enter: those reachable from the initial state and the interrupts'
// targets, not through fork branches.
func topLevelStates(d *swDoc) map[string]bool {
	return d.reachable((*swState).copyEdges)
}

// count counts a state node against the limit; it reports false once the
// limit is passed.
func (c *compiler) count(p jsonx.Path) bool {
	c.states++
	if c.states > c.maxStates {
		if !c.tooMany {
			c.tooMany = true
			c.e.add(p, "the compiled machine would have more than %d states (forks and subflows copy states); simplify the workflow or raise the limit", c.maxStates)
		}
		return false
	}
	return true
}

// compileState compiles one state of a container, and the states its
// transitions generate.
func (c *compiler) compileState(ct *container, s *swState) []*xsState {
	if !c.count(s.path) {
		return nil
	}
	x := &xsState{key: s.name, chartgate: s.policy.json()}
	role := ct.role(s)
	switch role {
	case roleFinal:
		x.typ = "final"
		x.mcp = newObj().set("tools", []string{"*"})
		if c.opts.Compat == CompatStatewright {
			// Statewright's gateway blocks every tool in a final state.
			// "tools" still names every tool, so that a tool no other
			// state allows stays gated (hidden) everywhere; "deny" wins
			// over it here.
			x.mcp = newObj().set("tools", []string{"*"}).set("deny", []string{"*"})
		}
		if s.instructions != "" {
			x.mcp.set("instructions", s.instructions)
		}
		return []*xsState{x}
	case roleDone, roleFailed, roleSubFinal:
		// A state the container ends in: no tools of its own.
		x.mcp = newObj().set("tools", []string{})
		if s.instructions != "" {
			x.mcp.set("instructions", s.instructions)
		}
		if (role == roleDone && ct.join == "all") || (role == roleFailed && ct.join == "any") {
			x.typ = "final"
		} else {
			x.always = []*xsTrans{{target: ct.exitTo(s), actions: ct.leave}}
		}
		return []*xsState{x}
	}
	x.mcp = c.visibility(s)
	out := []*xsState{x}
	for _, ev := range s.on {
		name := ct.prefix + ev.name
		t := ev.tr
		switch t.kind {
		case kindSimple, kindFull, kindGuarded:
			for _, b := range t.branches {
				tr := &xsTrans{guards: c.guardRefs(ct, b.guards), actions: []any{ActionMerge}}
				c.setTarget(ct, tr, b.target)
				if c.opts.Compat == CompatStatewright && b.target == s.name && !t.approval {
					// Statewright counts a transition to the same state.
					tr.actions = append(tr.actions, ActionReenter)
				}
				if t.approval {
					p := c.approvalState(ct, s, ev, name, t, b)
					out = append(out, p)
					tr = &xsTrans{target: escapeKey(p.key), guards: tr.guards, actions: tr.actions}
				}
				x.addOn(name, tr)
			}
		case kindFork:
			if t.fork == nil {
				continue
			}
			f := c.forkState(ct, s, ev, t.fork)
			if f == nil {
				continue
			}
			out = append(out, f)
			x.addOn(name, &xsTrans{target: escapeKey(f.key), actions: []any{ActionMerge}})
		case kindInvoke:
			sub := c.subflowState(ct, s, ev, t.invoke)
			if sub == nil {
				continue
			}
			out = append(out, sub)
			tr := &xsTrans{target: escapeKey(sub.key), actions: []any{ActionMerge}}
			if sub.subflow != "" {
				tr.actions = append(tr.actions, subflowActionRef(ActionSubflowStart, sub.subflow, nil))
			}
			x.addOn(name, tr)
		}
	}
	if s.safeNext != "" {
		for _, ev := range ct.events {
			if !x.handles(ev) {
				tr := &xsTrans{actions: []any{ActionMerge}}
				c.setTarget(ct, tr, s.safeNext)
				x.addOn(ev, tr)
			}
		}
		if c.opts.Compat == CompatStatewright {
			// Statewright takes safe_next for any event the state does
			// not handle, also one the workflow never names.
			handled := []string{}
			for _, e := range x.on {
				handled = append(handled, e.name)
			}
			tr := &xsTrans{actions: []any{ActionMerge}, guards: []any{
				newObj().set("type", GuardUnhandled).set("params", newObj().set("handled", handled).set("prefix", ct.prefix)),
			}}
			c.setTarget(ct, tr, s.safeNext)
			x.addOn("*", tr)
		}
	}
	return out
}

// visibility is the meta.mcp of a working state.
func (c *compiler) visibility(s *swState) *obj {
	m := newObj()
	if s.tools != nil {
		m.set("tools", s.tools)
	} else {
		m.set("tools", []string{"*"})
	}
	if len(s.deny) > 0 {
		m.set("deny", s.deny)
	}
	if s.instructions != "" {
		m.set("instructions", s.instructions)
	}
	if s.maxIter > 0 {
		m.set("maxCalls", s.maxIter)
		if c.opts.Checkpoint == CheckpointHard {
			m.set("onMaxCalls", "refuse")
		} else {
			m.set("onMaxCalls", "warn")
		}
	}
	return m
}

// setTarget points a transition at a state of the container, or at the
// state an interrupt left ($return).
func (c *compiler) setTarget(ct *container, tr *xsTrans, name string) {
	if name == returnTarget {
		tr.ret = true
		return
	}
	tr.target = escapeKey(name)
}

// guardRefs registers the guards a branch names and returns their names in
// the machine.
func (c *compiler) guardRefs(ct *container, names []string) []any {
	var out []any
	for _, n := range names {
		g := ct.doc.guardByName[n]
		name := ct.guardNS + n
		if prev, ok := c.guardDefs[name]; ok {
			if !jsonEqual(prev.Value, g.def.Value) || prev.Field != g.def.Field || prev.Op != g.def.Op {
				c.e.add(g.path, "guard %q of a subflow clashes with another guard named %q", n, name)
			}
		} else {
			c.guardDefs[name] = g.def
			def := newObj().set("field", g.def.Field).set("op", g.def.Op)
			if g.def.Op != "exists" && g.def.Op != "not_exists" || g.def.Value != nil {
				def.set("value", g.def.Value)
			}
			c.guards.set(name, def)
		}
		out = append(out, name)
	}
	return out
}

// approvalState compiles requires_approval: the event leads to a state
// that waits for chartgate.approve (on to the target) or chartgate.reject
// (back), showing the tools of the state it left.
func (c *compiler) approvalState(ct *container, s *swState, ev *swEvent, event string, t *swTransition, b *swBranch) *xsState {
	c.count(ev.path)
	msg := t.approvalMsg
	if msg == "" {
		msg = fmt.Sprintf("%s moves the workflow from %q to %q", event, s.name, b.target)
	}
	p := &xsState{key: ct.unique(s.name + ":" + ev.name + ":approval")}
	p.mcp = c.visibility(s)
	if v, _ := p.mcp.Get("maxCalls"); v != nil {
		// The budget is the working state's, not the wait's.
		p.mcp.Delete("maxCalls")
		p.mcp.Delete("onMaxCalls")
	}
	p.mcp.set("instructions", "Waiting for approval: "+msg)
	p.mcp.set("approval", newObj().set("event", event).set("from", s.name).set("to", b.target).set("message", msg))
	if pol := s.policy.json(); pol != nil {
		pol.Delete("max_iterations")
		if pol.len() > 0 {
			p.chartgate = pol
		}
	}
	approve := &xsTrans{}
	c.setTarget(ct, approve, b.target)
	p.addOn(eventApprove, approve)
	p.addOn(eventReject, &xsTrans{target: escapeKey(s.name)})
	return p
}

// unique returns base, or base~2, base~3 …, whichever no state of the
// container has, and reserves it.
func (ct *container) unique(base string) string {
	k := base
	for i := 2; ct.keys[k]; i++ {
		k = fmt.Sprintf("%s~%d", base, i)
	}
	ct.keys[k] = true
	return k
}

// absolute returns the "#id.path" target of the state key in the node at
// path.
func (c *compiler) absolute(path []string, key string) string {
	var b strings.Builder
	b.WriteString("#")
	b.WriteString(escapeKey(c.mid))
	for _, k := range append(slices.Clone(path), key) {
		b.WriteString(".")
		b.WriteString(escapeKey(k))
	}
	return b.String()
}

// BranchDone is the prefix of the event that ends a fork's branch with
// --compat statewright ("BRANCH_DONE:lint"), as a Statewright sub-agent
// sends it.
const BranchDone = "BRANCH_DONE:"

// forkState compiles a fork: a parallel state with one region per branch,
// each holding copies of the states the branch goes through. Join "all":
// the parallel state is done (onDone, to on_complete) when every branch is
// in its terminal state, and a branch that ends in another final state
// sends it to on_fail at once. Join "any": the first branch to reach its
// terminal moves on to on_complete, and when every branch failed, onDone
// goes to on_fail.
func (c *compiler) forkState(ct *container, s *swState, ev *swEvent, f *swFork) *xsState {
	d := ct.doc
	id := fmt.Sprintf("%p/%s/%s", d, s.name, ev.name)
	if slices.Contains(c.forks, id) {
		c.e.add(f.path, "a branch of this fork leads back to %q, which forks again: forks cannot contain themselves", s.name)
		return nil
	}
	c.forks = append(c.forks, id)
	defer func() { c.forks = c.forks[:len(c.forks)-1] }()
	if !c.count(f.path) {
		return nil
	}
	fx := &xsState{key: ct.unique(s.name + ":" + ev.name + ":fork"), typ: "parallel"}
	path := append(slices.Clone(ct.path), fx.key)
	failTo := f.failTarget(d)
	regionKeys := map[string]bool{}
	var examples []string
	for _, b := range f.branches {
		regionKeys[b.name] = true
	}
	for _, b := range f.branches {
		set, order := branchStates(d, b)
		if set[s.name] {
			c.e.add(b.path, "the branch leads back to %q, which forks again: a fork cannot contain itself", s.name)
			continue
		}
		if !set[b.terminal] {
			c.e.add(b.termPath, "the branch never reaches its terminal state %q from %q", b.terminal, b.initial)
			continue
		}
		var failures []string
		for _, n := range order {
			if st := d.byName[n]; st.final && n != b.terminal {
				failures = append(failures, n)
			}
		}
		if len(failures) > 0 && failTo == "" {
			c.e.add(b.path, "the branch can end in %q, which fails the fork, but the fork has no on_fail and the workflow has no state \"failed\"", failures[0])
			continue
		}
		rc := &container{
			doc:     d,
			path:    append(slices.Clone(path), b.name),
			prefix:  ct.prefix + b.name + ".",
			guardNS: ct.guardNS,
			names:   set,
			keys:    map[string]bool{},
			join:    f.join,
			inFork:  true,
		}
		for n := range set {
			rc.keys[n] = true
		}
		rc.role = func(st *swState) stateRole {
			switch {
			case st.name == b.terminal:
				return roleDone
			case st.final:
				return roleFailed
			}
			return roleNormal
		}
		rc.exitTo = func(st *swState) string {
			if st.name == b.terminal {
				return c.absolute(ct.path, f.onComplete)
			}
			return c.absolute(ct.path, failTo)
		}
		var states []*swState
		for _, n := range order {
			states = append(states, d.byName[n])
		}
		if !c.count(b.path) {
			return nil
		}
		region := &xsState{key: b.name, initial: b.initial, children: c.compileContainer(rc, states)}
		if c.opts.Compat == CompatStatewright {
			// Statewright's sub-agent ends its branch with
			// BRANCH_DONE:<branch>: the region goes to its terminal
			// state, and the join runs as when it gets there itself.
			region.addOn(BranchDone+b.name, &xsTrans{target: c.absolute(rc.path, b.terminal)})
		}
		fx.children = append(fx.children, region)
		if len(rc.events) > 0 {
			examples = append(examples, fmt.Sprintf("%q", rc.events[0]))
		}
	}
	fx.hist = uniqueIn(regionKeys, "history")
	fx.children = append(fx.children, &xsState{key: fx.hist, typ: "history", history: "deep"})
	switch {
	case f.join == "all":
		fx.onDone = []*xsTrans{{target: escapeKey(f.onComplete)}}
	case failTo != "":
		fx.onDone = []*xsTrans{{target: escapeKey(failTo)}}
	}
	names := make([]string, len(f.branches))
	for i, b := range f.branches {
		names[i] = b.name
	}
	how := "every branch reaches its terminal state"
	if f.join == "any" {
		how = "one branch reaches its terminal state"
	}
	instr := fmt.Sprintf("Parallel branches %s: the workflow goes on to %q once %s.", strings.Join(names, ", "), f.onComplete, how)
	if len(examples) > 0 {
		instr += fmt.Sprintf(" Move a branch with workflow_transition events prefixed by its name and a dot (e.g. %s).", strings.Join(examples, ", "))
	}
	fx.mcp = newObj().set("instructions", instr)
	return fx
}

// branchStates returns the states a fork branch goes through: those
// reachable from its initial state, not past its terminal state or a final
// state, in document order.
func branchStates(d *swDoc, b *swForkBranch) (map[string]bool, []string) {
	set := map[string]bool{}
	queue := []string{b.initial}
	set[b.initial] = true
	for len(queue) > 0 {
		s := d.byName[queue[0]]
		queue = queue[1:]
		if s == nil || s.final || s.name == b.terminal {
			continue
		}
		for _, n := range s.copyEdges(d) {
			if _, ok := d.byName[n]; ok && !set[n] {
				set[n] = true
				queue = append(queue, n)
			}
		}
	}
	var order []string
	for _, s := range d.states {
		if set[s.name] {
			order = append(order, s.name)
		}
	}
	return set, order
}

// copyEdges are the states a copy of s in a region or subflow refers to:
// its targets, safe_next, and where its forks and subflows continue (a
// nested fork's branch states live in the fork's own regions).
func (s *swState) copyEdges(d *swDoc) []string {
	var out []string
	if s.safeNext != "" {
		out = append(out, s.safeNext)
	}
	for _, ev := range s.on {
		t := ev.tr
		for _, b := range t.branches {
			if b.target != returnTarget {
				out = append(out, b.target)
			}
		}
		if f := t.fork; f != nil {
			out = append(out, f.onComplete, f.failTarget(d))
		}
		if in := t.invoke; in != nil {
			out = append(out, in.onComplete, in.failTarget(d))
		}
	}
	return out
}

// uniqueIn returns base, or base~2 …, whichever keys does not hold.
func uniqueIn(keys map[string]bool, base string) string {
	k := base
	for i := 2; keys[k]; i++ {
		k = fmt.Sprintf("%s~%d", base, i)
	}
	return k
}

// subflowState inlines an invoked workflow as a compound state: its states
// nested, its final states moving on to on_complete (or, for a final state
// named "failed", to on_fail). It runs in its own context (its context and
// the invoke's input; the subflow actions of guards.go), or, in a fork's
// region, with its context and input merged into the shared one on entry.
func (c *compiler) subflowState(ct *container, s *swState, ev *swEvent, in *swInvoke) *xsState {
	if in == nil || in.name == "" {
		return nil
	}
	p := in.path.Key("invoke")
	d := ct.doc
	if c.opts.Resolve == nil {
		c.e.add(p, "subflow %q: no resolver (Options.Resolve) to load it", in.name)
		return nil
	}
	if i := slices.Index(c.subflows, in.name); i >= 0 {
		chain := append(slices.Clone(c.subflows[i:]), in.name)
		c.e.add(p, "subflow %q invokes itself: %s", in.name, strings.Join(chain, " → "))
		return nil
	}
	if len(c.subflows) >= maxSubflowDepth {
		c.e.add(p, "subflow %q: subflows nest more than %d deep", in.name, maxSubflowDepth)
		return nil
	}
	data, err := c.opts.Resolve(in.name)
	if err != nil {
		c.e.add(p, "subflow %q: %v", in.name, err)
		return nil
	}
	var se errs
	sub := parseStatewright(data, c.opts.Statechart, &se)
	if sub != nil {
		sub.validate(&se)
		if len(sub.interrupts) > 0 {
			se.add("interrupts", "a subflow cannot have interrupts (not supported yet): give them to the workflow that invokes it")
		}
	}
	for _, e := range se.list {
		c.e.add(p, "subflow %q: %s", in.name, e.Error())
	}
	if len(se.list) > 0 || sub == nil {
		return nil
	}
	failTo := in.failTarget(d)
	if sf := sub.byName["failed"]; sf != nil && sf.final && failTo == "" {
		c.e.add(in.path, "subflow %q can end in \"failed\", but the invoke has no on_fail and the workflow has no state \"failed\"", in.name)
		return nil
	}
	if !c.count(in.path) {
		return nil
	}
	c.subflows = append(c.subflows, in.name)
	defer func() { c.subflows = c.subflows[:len(c.subflows)-1] }()

	x := &xsState{key: ct.unique(s.name + ":" + ev.name + ":invoke")}
	sc := &container{
		doc:     sub,
		path:    append(slices.Clone(ct.path), x.key),
		prefix:  ct.prefix,
		guardNS: ct.guardNS + in.name + "/",
		names:   map[string]bool{},
		keys:    map[string]bool{},
		inFork:  ct.inFork,
	}
	if !ct.inFork {
		x.subflow = stateID(sc.path)
		sc.leave = []any{subflowActionRef(ActionSubflowEnd, x.subflow, nil)}
	}
	for _, st := range sub.states {
		sc.names[st.name] = true
		sc.keys[st.name] = true
	}
	sc.role = func(st *swState) stateRole {
		if st.final {
			return roleSubFinal
		}
		return roleNormal
	}
	sc.exitTo = func(st *swState) string {
		if st.name == "failed" {
			return c.absolute(ct.path, failTo)
		}
		return c.absolute(ct.path, in.onComplete)
	}
	x.initial = sub.initial
	// Errors inside the subflow are reported at the invoke, with their
	// paths in the subflow.
	outer := c.e
	var inner errs
	c.e = &inner
	x.children = c.compileContainer(sc, sub.states)
	c.e = outer
	for _, e := range inner.list {
		c.e.add(p, "subflow %q: %s", in.name, e.Error())
	}
	if len(inner.list) > 0 {
		return nil
	}
	x.hist = uniqueIn(sc.keys, "history")
	x.children = append(x.children, &xsState{key: x.hist, typ: "history", history: "deep"})
	values := map[string]any{}
	for _, k := range sub.context.Keys() {
		values[k], _ = sub.context.Get(k)
	}
	if in.input != nil {
		for _, k := range in.input.Keys() {
			values[k], _ = in.input.Get(k)
		}
	}
	switch {
	case x.subflow != "":
		// Its own context: see ActionSubflowEnter.
		x.entry = []any{subflowActionRef(ActionSubflowEnter, x.subflow, sortedObj(values))}
		x.exit = []any{subflowActionRef(ActionSubflowExit, x.subflow, nil)}
	case len(values) > 0:
		// In a fork's region, the context of the workflow.
		x.entry = []any{assignAction(values)}
	}
	x.mcp = newObj().set("instructions", fmt.Sprintf("Subflow %q: the workflow goes on to %q when it completes.", in.name, in.onComplete))
	return x
}

// assignAction is statewright.assign with the given values.
func assignAction(values map[string]any) *obj {
	return newObj().set("type", ActionAssign).set("params", newObj().set("values", sortedObj(values)))
}

// sortedObj is an object of the values, its keys sorted.
func sortedObj(values map[string]any) *obj {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	v := newObj()
	for _, k := range keys {
		v.set(k, values[k])
	}
	return v
}

// subflowActionRef is a subflow action of the subflow id, with its
// initial context for statewright.subflowEnter.
func subflowActionRef(name, id string, context *obj) *obj {
	params := newObj().set("id", id)
	if context != nil {
		params.set("context", context)
	}
	return newObj().set("type", name).set("params", params)
}

// stateID is the path of a state node from the root, its keys escaped and
// joined by dots: "testing:TESTS_FAIL:invoke", or for a subflow in a
// subflow "testing:TESTS_FAIL:invoke.fix:GO:invoke".
func stateID(path []string) string {
	keys := make([]string, len(path))
	for i, k := range path {
		keys[i] = escapeKey(k)
	}
	return strings.Join(keys, ".")
}

// stateJSON writes a state node; $return transitions become one guarded
// transition per resumable state.
func (c *compiler) stateJSON(x *xsState, resumable []*xsState) *obj {
	o := newObj()
	if x.typ != "" {
		o.set("type", x.typ)
	}
	if x.history != "" {
		o.set("history", x.history)
	}
	if x.initial != "" {
		o.set("initial", x.initial)
	}
	if len(x.entry) > 0 {
		o.set("entry", oneOrMany(x.entry))
	}
	if len(x.exit) > 0 {
		o.set("exit", oneOrMany(x.exit))
	}
	if len(x.children) > 0 {
		st := newObj()
		for _, ch := range x.children {
			st.set(ch.key, c.stateJSON(ch, resumable))
		}
		o.set("states", st)
	}
	if len(x.on) > 0 {
		on := newObj()
		for _, ev := range x.on {
			on.set(ev.name, c.transitionsJSON(ev.ts, resumable))
		}
		o.set("on", on)
	}
	if len(x.always) > 0 {
		o.set("always", c.transitionsJSON(x.always, resumable))
	}
	if len(x.onDone) > 0 {
		o.set("onDone", c.transitionsJSON(x.onDone, resumable))
	}
	meta := newObj()
	if x.mcp != nil && x.mcp.len() > 0 {
		meta.set("mcp", x.mcp)
	}
	if x.chartgate != nil && x.chartgate.len() > 0 {
		meta.set("chartgate", x.chartgate)
	}
	if meta.len() > 0 {
		o.set("meta", meta)
	}
	return o
}

func (c *compiler) transitionsJSON(ts []*xsTrans, resumable []*xsState) any {
	var out []any
	for _, t := range ts {
		if !t.ret {
			out = append(out, transitionJSON(t.target, t.guards, t.actions))
			continue
		}
		for _, k := range resumable {
			target := c.absolute(nil, k.key)
			if k.hist != "" {
				target = c.absolute([]string{k.key}, k.hist)
			}
			guards := append(slices.Clone(t.guards), newObj().set("type", GuardReturnTo).set("params", newObj().set("state", k.key)))
			actions := append(slices.Clone(t.actions), newObj().set("type", "xstate.assign").set("params", newObj().set(KeyInterruptReturn, newObj().set("$ref", unsetRef))))
			out = append(out, transitionJSON(target, guards, actions))
		}
	}
	return oneOrMany(out)
}

func transitionJSON(target string, guards, actions []any) *obj {
	t := newObj()
	if target != "" {
		t.set("target", target)
	}
	switch len(guards) {
	case 0:
	case 1:
		t.set("guard", guards[0])
	default:
		t.set("guard", newObj().set("type", "xstate.and").set("params", newObj().set("guards", guards)))
	}
	if len(actions) > 0 {
		t.set("actions", oneOrMany(actions))
	}
	return t
}

func oneOrMany(vs []any) any {
	if len(vs) == 1 {
		return vs[0]
	}
	if vs == nil {
		return []any{}
	}
	return vs
}

// escapeKey writes a state key as one segment of an XState target: dots
// and backslashes escaped.
func escapeKey(k string) string {
	if !strings.ContainsAny(k, `.\`) {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if k[i] == '.' || k[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(k[i])
	}
	return b.String()
}

// The events of a pause, with [CompatStatewright]: statewright_pause and
// statewright_deactivate send EventPause; a person's chartgate resume
// sends EventResume. Both are reserved (chartgate.*): no tool of the
// agent sends them.
const (
	EventPause  = "chartgate.pause"
	EventResume = "chartgate.resume"
)

// PausedState is the key of the top-level state a paused workflow waits
// in (made unique if the file has a state of that name).
const PausedState = "statewright:paused"

// pausedInstructions are the paused state's instructions.
const pausedInstructions = "The workflow is paused: no tool runs until a person resumes it (chartgate resume)."

// pausedState compiles the state a paused workflow waits in: every
// top-level state the workflow may be in that is not final leaves for it
// on EventPause, keeping its key under _paused_return ([KeyPausedReturn]),
// and EventResume goes back there (through the state's deep history, for
// a fork or a subflow). No tool runs while paused.
func (c *compiler) pausedState(top *container, states []*xsState, entered map[string]bool) *xsState {
	p := &xsState{key: top.unique(PausedState)}
	top.keys[p.key] = true
	p.mcp = newObj().set("tools", []string{"*"}).set("deny", []string{"*"}).set("instructions", pausedInstructions)
	unset := newObj().set("type", "xstate.assign").set("params", newObj().set(KeyPausedReturn, newObj().set("$ref", unsetRef)))
	for _, x := range states {
		if x.typ == "final" || !entered[x.origin] {
			continue
		}
		x.addOn(EventPause, &xsTrans{target: escapeKey(p.key), actions: []any{assignAction(map[string]any{KeyPausedReturn: x.key})}})
		target := c.absolute(nil, x.key)
		if x.hist != "" {
			target = c.absolute([]string{x.key}, x.hist)
		}
		p.addOn(EventResume, &xsTrans{
			target:  target,
			guards:  []any{newObj().set("type", GuardReturnTo).set("params", newObj().set("state", x.key).set("key", KeyPausedReturn))},
			actions: []any{unset},
		})
	}
	return p
}
