// This file defines the compiled Machine, its options and implementations,
// and the internal representation of state nodes, transitions, guards and
// actions that the algorithm works on.

package statechart

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures [Compile]. The zero value (or nil) means the defaults.
type Options struct {
	// Guards, Actions and Delays implement the names the machine refers
	// to, like XState's setup({guards, actions, delays}).
	Implementations Implementations

	// Strict makes every warning an error (see [Error]), except a missing
	// guard that AllowMissingGuards accepts, and also reports as errors
	// the actions and named delays that have no implementation. XState skips
	// such an action and fires such a delay at once, and so does a machine
	// compiled without Strict, silently: their implementations usually
	// live in the program that runs the machine.
	Strict bool

	// AllowMissingGuards accepts a guard that has no implementation, as
	// XState does: Compile reports it as a warning (with Strict too), and
	// evaluating it is a runtime error (errors.Is [ErrGuardNotImplemented])
	// that puts the snapshot in status error, as in XState. By default
	// Compile reports it as an error: a program that compiles a machine
	// has its implementations at hand, so a name without one is a typo
	// that the machine would otherwise only meet at run time.
	AllowMissingGuards bool

	// MaxBytes limits the size of the machine JSON (default 8 MiB).
	MaxBytes int
	// MaxDepth limits the nesting of the JSON document (default 256).
	MaxDepth int
	// MaxStates limits the number of state nodes (default 100,000).
	MaxStates int
	// MaxSteps is the step budget of one call: [Machine.Start],
	// [Machine.Transition], [Machine.Advance], [Actor.Send], or one
	// delayed event an Actor fires. Every microstep counts as a step, and
	// so does every event taken that selects no transition; the work of a
	// step is linear in the active configuration and the transitions it
	// takes. A call that would take more steps stops with a
	// [*StepBudgetError] (errors.Is(err, [ErrStepBudget])) and changes
	// nothing: Transition and Advance return their input snapshot, and an
	// Actor keeps its snapshot. Default 100,000.
	MaxSteps int
	// MaxMicrosteps limits the microsteps of one macrostep, like XState's
	// options.maxIterations: past it the machine is considered to loop,
	// and the snapshot gets status error (ErrInfiniteLoop). The step budget
	// counts every macrostep of the call, so with the defaults it stops a
	// loop first, leaving the state as it was; set MaxMicrosteps below
	// MaxSteps to have a looping macrostep end in status error instead.
	// Default 100,000.
	MaxMicrosteps int
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = 8 << 20
	}
	if r.MaxDepth <= 0 {
		r.MaxDepth = 256
	}
	if r.MaxStates <= 0 {
		r.MaxStates = 100_000
	}
	if r.MaxSteps <= 0 {
		r.MaxSteps = 100_000
	}
	if r.MaxMicrosteps <= 0 {
		r.MaxMicrosteps = 100_000
	}
	return r
}

// Implementations holds the named guards, actions, delays and actor logic
// a machine refers to, like XState's setup({guards, actions, delays,
// actors}). Build them in Go, or from declarative JSON with
// [ParseImplementations], or both (see [Implementations.Merge]).
type Implementations struct {
	Guards  map[string]GuardFunc
	Actions map[string]ActionFunc
	Delays  map[string]time.Duration
	// Actors maps the src names of invoke and xstate.spawnChild to actor
	// logic: a [Promise], a [Callback] or a child [*Machine].
	Actors map[string]ActorLogic

	// declared: the compiled forms of what ParseImplementations made.
	declared *declared
}

// Merge returns the union of impl and other; names in other win.
func (impl Implementations) Merge(other Implementations) Implementations {
	r := Implementations{
		Guards:  map[string]GuardFunc{},
		Actions: map[string]ActionFunc{},
		Delays:  map[string]time.Duration{},
		Actors:  map[string]ActorLogic{},
	}
	r.declared = impl.declared.merge(other.declared)
	for _, src := range []Implementations{impl, other} {
		for k, v := range src.Guards {
			r.Guards[k] = v
		}
		for k, v := range src.Actions {
			r.Actions[k] = v
		}
		for k, v := range src.Delays {
			r.Delays[k] = v
		}
		for k, v := range src.Actors {
			r.Actors[k] = v
		}
	}
	return r
}

// GuardFunc implements a named guard. It must not modify args.Context.
type GuardFunc func(ctx context.Context, args GuardArgs) (bool, error)

// ActionFunc implements a named action. It may update the context with
// args.Assign and queue internal events with args.Raise; both take effect
// immediately, in action order, as XState's assign and raise do.
type ActionFunc func(ctx context.Context, args *ActionArgs) error

// Machine is a compiled statechart. It is immutable and safe for concurrent
// use; every running instance keeps its own state in a [Snapshot] or an
// [Actor].
type Machine struct {
	id        string
	nodes     []*stateNode // in document order; nodes[0] is the root
	byID      map[string]int
	context   map[string]any
	opts      Options
	warnings  ErrorList
	hasTimers bool
	// hasHistory: the machine has history states, so XState's history
	// quirks can leave configurations that are not legal (see Restore).
	hasHistory  bool
	transitions int // number of compiled transitions (see transition.id)
	// The nodes that can take an event: by exact descriptor, with a
	// wildcard descriptor, and with eventless transitions. An event that no
	// active node can take is skipped without walking the configuration.
	handlers map[string][]int
	// eventIDs numbers every descriptor of every node's on; a node's
	// exact lists them with their groups, so finding a node's group for an
	// event is a scan of small integers once the event is numbered.
	eventIDs      map[string]int32
	wildcardNodes []int
	alwaysNodes   []int
	runners       sync.Pool // *runner scratch space for the pure functions
	// plainInitial: the initial snapshot of a child machine started
	// without input or context, once one was computed by declarative
	// steps only (see rememberInitial).
	plainInitial atomic.Pointer[initialTemplate]
	// usesActors: the machine invokes, spawns, stops, sends to other
	// actors or emits, so it runs in an actor system (see system.go); a
	// machine without any of them takes the plain paths.
	usesActors bool
	// slots: the context keys of the declarative guards and assigns, by
	// number (see slots.go); nil when there are none or one reads the
	// context as a whole.
	slots *slotPlan
}

// ID returns the machine's id ("(machine)" when the config has none, as in XState).
func (m *Machine) ID() string { return m.id }

// Warnings returns the warnings Compile found in the machine's config, in
// document order (see [Error]): what XState accepts and ignores, or does
// something a reader would not expect with. With [Options.Strict], which
// makes the others errors, only the missing guards that
// [Options.AllowMissingGuards] accepts are left.
func (m *Machine) Warnings() ErrorList {
	if len(m.warnings) == 0 {
		return nil
	}
	out := make(ErrorList, len(m.warnings))
	for i, w := range m.warnings {
		c := *w
		out[i] = &c
	}
	return out
}

// StateIDs returns the id of every state node, in document order, root first.
func (m *Machine) StateIDs() []string {
	ids := make([]string, len(m.nodes))
	for i, n := range m.nodes {
		ids[i] = n.id
	}
	return ids
}

// Node describes one state node of a machine, for tools that inspect a
// machine: diagrams, MCP bindings, documentation.
type Node struct {
	ID          string
	Key         string // the property name under its parent's "states"; "" for the root
	Parent      string // the parent's id; "" for the root
	Type        string // atomic, compound, parallel, final or history
	Initial     string // id of the initial child of a compound node
	Tags        []string
	Meta        any
	Description string
	Transitions []TransitionInfo
	// Invokes are the actors the state invokes while it is active.
	Invokes []InvokeInfo
}

// InvokeInfo describes one invoke of a [Node].
type InvokeInfo struct {
	ID  string // the child's id (by default "<index>.<state id>")
	Src string // the name of its logic in the implementations
	// Known reports whether the machine's implementations have logic for
	// Src (XState starts nothing for one that has none).
	Known bool
}

// TransitionInfo describes one transition of a [Node].
type TransitionInfo struct {
	Event   string   // event descriptor; "" for eventless (always) transitions
	Targets []string // target ids; empty for a targetless transition
	Guard   string   // name of the guard, "" if none
	Actions []string // names of the actions
	Reenter bool
}

// Nodes returns a description of every state node, in document order.
func (m *Machine) Nodes() []Node {
	// The transitions, targets and action names of every node are slices
	// of three arrays, sized first: a few allocations for the machine,
	// not a few per transition (each slice is capped, so an append by the
	// caller copies it rather than writing into its neighbour).
	var nt, ns int
	for _, n := range m.nodes {
		for _, g := range n.on {
			for _, t := range g.transitions {
				nt, ns = nt+1, ns+len(t.targets)+len(t.actions)
			}
		}
		for _, t := range n.always {
			nt, ns = nt+1, ns+len(t.targets)+len(t.actions)
		}
	}
	ts := make([]TransitionInfo, 0, nt)
	strs := make([]string, 0, ns)
	describe := func(t *transition, event string) {
		ti := TransitionInfo{Event: event, Reenter: t.reenter}
		if len(t.targets) > 0 {
			from := len(strs)
			for _, tg := range t.targets {
				strs = append(strs, m.nodes[tg].id)
			}
			ti.Targets = strs[from:len(strs):len(strs)]
		}
		if t.guard != nil {
			ti.Guard = t.guard.String()
		}
		if len(t.actions) > 0 {
			from := len(strs)
			for _, a := range t.actions {
				strs = append(strs, a.name)
			}
			ti.Actions = strs[from:len(strs):len(strs)]
		}
		ts = append(ts, ti)
	}
	out := make([]Node, len(m.nodes))
	for i, n := range m.nodes {
		info := n.info()
		d := Node{ID: n.id, Key: n.key, Type: n.kind.String(), Tags: info.tags, Meta: info.meta, Description: info.description}
		if n.parent >= 0 {
			d.Parent = m.nodes[n.parent].id
		}
		if n.initial != nil && len(n.initial.targets) > 0 {
			d.Initial = m.nodes[n.initial.targets[0]].id
		}
		from := len(ts)
		for _, g := range n.on {
			for _, t := range g.transitions {
				describe(t, g.descriptor)
			}
		}
		for _, t := range n.always {
			describe(t, "")
		}
		if len(ts) > from {
			d.Transitions = ts[from:len(ts):len(ts)]
		}
		for _, inv := range n.invokes() {
			d.Invokes = append(d.Invokes, InvokeInfo{ID: inv.id, Src: inv.src, Known: inv.logic != nil})
		}
		out[i] = d
	}
	return out
}

type nodeKind uint8

const (
	kindAtomic nodeKind = iota
	kindCompound
	kindParallel
	kindFinal
	kindHistory
)

func (k nodeKind) String() string {
	return [...]string{"atomic", "compound", "parallel", "final", "history"}[k]
}

// stateNode is a compiled state node. Every reference to another node is
// its index in Machine.nodes, which is also its document order.
type stateNode struct {
	key         string
	id          string
	order       int
	parent      int // -1 for the root
	kind        nodeKind
	children    []int // all children in document order, history nodes included
	regions     []int // the children that are not history states
	end         int   // the nodes order+1 .. end-1 are the descendants (pre-order)
	depth       int   // 0 for the root
	initial     *transition
	entry, exit []*action
	on          []*eventGroup          // in the order of XState's transitions map
	byEvent     map[string]*eventGroup // on by descriptor, when it has more than maxExactScan groups (see addGroup)
	exact       []eventSlot            // on by event id (Machine.eventIDs), when it has at most maxExactScan
	wildcards   []*eventGroup          // descriptors ending in "*", longest first
	always      []*transition
	doc         *nodeDoc  // nil when the node has none of it
	rare        *nodeRare // nil when the node has none of it
}

// nodeRare is what few state nodes have: history children, a history
// state's settings, invocations, an output. A node keeps a pointer, nil
// when it has none of it, rather than these 80 bytes: a large machine is
// mostly atomic states without any.
type nodeRare struct {
	histories   []int       // the children that are history states
	deep        bool        // history nodes: deep rather than shallow
	historyDef  *transition // history nodes: the explicit default target, nil if none
	parallelDef *transition // history nodes of a parallel state without historyDef: enter the parent
	invokes     []*spawnDef // in config order
	output      *template   // a final state's or the root's output; nil when it has none
}

// rares returns the node's rare fields for the loader to fill, allocating
// them.
func (n *stateNode) rares() *nodeRare {
	if n.rare == nil {
		n.rare = &nodeRare{}
	}
	return n.rare
}

// histories returns the node's children that are history states.
func (n *stateNode) histories() []int {
	if n.rare == nil {
		return nil
	}
	return n.rare.histories
}

// deep reports whether a history node is deep rather than shallow.
func (n *stateNode) deep() bool { return n.rare != nil && n.rare.deep }

// historyDef returns a history node's explicit default transition, nil if
// none.
func (n *stateNode) historyDef() *transition {
	if n.rare == nil {
		return nil
	}
	return n.rare.historyDef
}

// parallelDef returns the default transition of a history node of a
// parallel state without historyDef (it enters the parent), nil otherwise.
func (n *stateNode) parallelDef() *transition {
	if n.rare == nil {
		return nil
	}
	return n.rare.parallelDef
}

// invokes returns the node's invocations, in config order.
func (n *stateNode) invokes() []*spawnDef {
	if n.rare == nil {
		return nil
	}
	return n.rare.invokes
}

// output returns a final state's or the root's output, nil when it has none.
func (n *stateNode) output() *template {
	if n.rare == nil {
		return nil
	}
	return n.rare.output
}

// nodeDoc is what a state node's config says about the node to its readers
// and tools: tags, meta and description. Few nodes have any, so a node
// keeps a pointer, nil when it has none.
type nodeDoc struct {
	tags        []string
	meta        any
	hasMeta     bool // meta is present, null included
	description string
}

// info returns the node's doc, empty when it has none.
func (n *stateNode) info() nodeDoc {
	if n.doc == nil {
		return nodeDoc{}
	}
	return *n.doc
}

// docs returns the node's doc for the loader to fill, allocating it.
func (n *stateNode) docs() *nodeDoc {
	if n.doc == nil {
		n.doc = &nodeDoc{}
	}
	return n.doc
}

// eventSlot is one of a node's groups (on), by event id.
type eventSlot struct {
	id int32
	g  *eventGroup
}

// maxExactScan is the number of descriptors up to which a node finds an
// event's group by scanning its exact slots; a node with more uses its
// byEvent map.
const maxExactScan = 8

// eventGroup holds the transitions of one event descriptor, in priority order.
type eventGroup struct {
	descriptor  string
	transitions []*transition
}

// transition is a compiled transition. targets == nil means targetless.
//
// Its indices are int32 and its flags packed together (88 bytes rather
// than 112): a large machine has tens of thousands of transitions.
type transition struct {
	id      int32 // index among the machine's transitions; -1 if made at run time
	source  int32
	event   string
	targets []int
	guard   *guard
	actions []*action
	// domain is the transition's domain (getTransitionDomain) when
	// staticDomain: no target is a history state, so it never changes.
	domain       int32
	reenter      bool
	staticDomain bool
}

type guardKind uint8

const (
	guardNamed guardKind = iota
	guardAnd
	guardOr
	guardNot
	guardStateIn
	guardRoute // a route's own guard: the event's "to" is the route's "#id"
)

// guard is a compiled guard reference.
type guard struct {
	kind    guardKind
	name    string
	params  map[string]any
	impl    GuardFunc
	decl    *cond     // impl is a declarative condition: evaluated directly
	slot    *slotCond // decl with the machine's slots (see compileSlots)
	subs    []*guard
	inNode  int    // stateIn("#id"): the node; -1 when inValue is used
	inValue any    // stateIn(stateValue)
	to      string // guardRoute: the "to" of the events it passes
}

func (g *guard) String() string {
	switch g.kind {
	case guardAnd:
		return "xstate.and"
	case guardOr:
		return "xstate.or"
	case guardNot:
		return "xstate.not"
	case guardStateIn:
		return "xstate.stateIn"
	case guardRoute:
		return "xstate.route"
	}
	return g.name
}

type actionKind uint8

const (
	actionCustom actionKind = iota
	actionAssign
	actionRaise
	actionCancel
	actionLog
	actionSpawn     // xstate.spawnChild, and the start of an invoked child
	actionStopChild // xstate.stopChild, and the stop of an invoked child
	actionSendTo    // xstate.sendTo, xstate.sendParent, xstate.forwardTo
	actionEmit      // xstate.emit
	actionEnqueue   // xstate.enqueueActions
)

// action is a compiled action reference.
type action struct {
	kind      actionKind
	name      string
	params    map[string]any
	impl      ActionFunc     // actionCustom; nil when not implemented (a no-op)
	decl      []assignEntry  // actionCustom: impl is a declarative assign, run directly
	slots     []slotEntry    // decl or assign with the machine's slots (see compileSlots)
	slotsSeq  bool           // slots may be set one after the other (see independentSlots)
	assign    []assignEntry  // actionAssign
	event     Event          // actionRaise
	hasDelay  bool           // actionRaise: delayed (scheduled) rather than internal
	delay     time.Duration  // actionRaise with a resolved delay
	delayName string         // actionRaise: a named delay to resolve (unresolved fires at once)
	id        string         // actionRaise, actionSendTo: the send id; actionCancel: the id to cancel; actionStopChild: the child
	spawn     *spawnDef      // actionSpawn
	send      *sendDef       // actionSendTo
	emit      *eventTemplate // actionEmit
	enqueue   []enqueueItem  // actionEnqueue
}

// spawnDef is a child to start: an invoke of a state, or the params of an
// xstate.spawnChild.
type spawnDef struct {
	src      string
	id       string
	systemID string
	input    *template  // nil: no input
	sync     bool       // syncSnapshot (an invoke with onSnapshot)
	logic    ActorLogic // nil: the src names no logic, and XState starts nothing
	invoke   bool
	names    childNames // what the child's events to its parent carry, made once
}

// sendTarget says where an xstate.sendTo sends.
type sendTarget uint8

const (
	sendToChild  sendTarget = iota // a child, by id
	sendToSystem                   // the actor with a system id ("#id"); the sender itself when there is none
	sendToParent                   // xstate.sendParent
)

// sendDef is a compiled xstate.sendTo, xstate.sendParent or
// xstate.forwardTo.
type sendDef struct {
	target    sendTarget
	to        string         // the child id or the system id
	event     *eventTemplate // nil for forwardTo: the event being processed
	hasDelay  bool           // a delay in ms, or a named delay that has an implementation
	delay     time.Duration
	delayName string // a named delay without implementation: the send is not delayed (XState)
}

// enqueueItem is one item of xstate.enqueueActions: an action, or
// {"if": condition, "then": [...], "else": [...]}.
type enqueueItem struct {
	action     *action // an unconditional item
	cond       *cond   // "if": a declarative condition, or
	guard      *guard  // "if": a named guard, checked like XState's check()
	then, elze []*action
}

// layout computes, once the tree of state nodes is read, what the
// interpreter looks up on every event: each node's subtree (nodes are in
// pre-order, so a subtree is a range of indexes), depth, regions and
// history children.
func (m *Machine) layout() {
	for i := len(m.nodes) - 1; i >= 0; i-- {
		n := m.nodes[i]
		n.end = max(n.end, i+1)
		if n.parent >= 0 {
			m.nodes[n.parent].end = max(m.nodes[n.parent].end, n.end)
		}
	}
	for _, n := range m.nodes {
		if n.parent >= 0 {
			n.depth = m.nodes[n.parent].depth + 1
		}
		for _, c := range n.children {
			if m.nodes[c].kind == kindHistory {
				r := n.rares()
				r.histories = append(r.histories, c)
				m.hasHistory = true
			}
		}
		if len(n.histories()) == 0 {
			n.regions = n.children // neither is ever changed
			continue
		}
		n.regions = make([]int, 0, len(n.children)-len(n.histories()))
		for _, c := range n.children {
			if m.nodes[c].kind != kindHistory {
				n.regions = append(n.regions, c)
			}
		}
	}
}

// index gives every compiled transition its id, and lists the nodes that
// handle each event.
func (m *Machine) index() {
	groups := 0
	for _, n := range m.nodes {
		groups += len(n.on)
	}
	m.eventIDs = map[string]int32{}
	var descriptors []string // by event id
	var count []int          // by event id: the number of nodes with a group
	ids := make([]int32, 0, groups)
	var slots []eventSlot // the nodes' exact slots, carved from shared chunks
	for _, n := range m.nodes {
		small := len(n.on) <= maxExactScan
		if small {
			n.exact = carve(&slots, len(n.on), len(ids))[:0]
		}
		for _, g := range n.on {
			id, ok := m.eventIDs[g.descriptor]
			if !ok {
				id = int32(len(descriptors))
				m.eventIDs[g.descriptor] = id
				descriptors = append(descriptors, g.descriptor)
				count = append(count, 0)
			}
			count[id]++
			ids = append(ids, id)
			if small {
				n.exact = append(n.exact, eventSlot{id: id, g: g})
			}
		}
	}
	// The handlers of all the descriptors share one array, each list sized
	// by its count: one descriptor on every state of a large machine would
	// otherwise grow its list again and again.
	lists := make([][]int, len(descriptors))
	all := make([]int, len(ids))
	for id, c := range count {
		lists[id], all = all[:0:c], all[c:]
	}
	k := 0
	for i, n := range m.nodes {
		for range n.on {
			lists[ids[k]] = append(lists[ids[k]], i)
			k++
		}
	}
	m.handlers = make(map[string][]int, len(descriptors))
	for id, d := range descriptors {
		m.handlers[d] = lists[id]
	}
	for i, n := range m.nodes {
		if len(n.wildcards) > 0 {
			m.wildcardNodes = append(m.wildcardNodes, i)
		}
		if len(n.always) > 0 {
			m.alwaysNodes = append(m.alwaysNodes, i)
		}
	}
	number := func(t *transition) {
		if t == nil {
			return
		}
		t.id = int32(m.transitions)
		m.transitions++
		for i, tg := range t.targets {
			if m.nodes[tg].kind == kindHistory || slices.Contains(t.targets[:i], tg) {
				return
			}
		}
		t.domain, t.staticDomain = int32(m.domainOfTargets(t, t.targets)), true
	}
	for _, n := range m.nodes {
		if n.kind == kindHistory && n.historyDef() == nil && m.nodes[n.parent].kind == kindParallel {
			n.rares().parallelDef = &transition{source: int32(n.order), targets: []int{n.parent}}
		}
		number(n.initial)
		number(n.historyDef())
		number(n.parallelDef())
		for _, g := range n.on {
			for _, t := range g.transitions {
				number(t)
			}
		}
		for _, t := range n.always {
			number(t)
		}
	}
}

// isDescendant reports whether a is a proper descendant of b; b == -1
// stands for "above the root", of which every node (root included) is a
// descendant, as in XState.
func (m *Machine) isDescendant(a, b int) bool {
	return b < 0 || (b < a && a < m.nodes[b].end)
}
