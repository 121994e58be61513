package mcpbind_test

// A property test of the gate over random machines and random call
// sequences. Each machine is generated from (seed, index) alone, so a
// failure names what reproduces it:
//
//	go test ./mcpbind -run 'TestPropertyExecutedIffVisible/^17$' -prop.seed=N

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
)

var (
	propSeed     = flag.Uint64("prop.seed", 1, "seed of the random machines of TestPropertyExecutedIffVisible")
	propMachines = flag.Int("prop.machines", 0, "machines TestPropertyExecutedIffVisible runs (default 200, 40 with -short)")
	propSteps    = flag.Int("prop.steps", 0, "calls per machine in TestPropertyExecutedIffVisible (default 30, 16 with -short)")
)

// TestPropertyExecutedIffVisible runs random machines (hierarchy, parallel
// regions, final states and done events, guards that the call's arguments
// decide) with random tools (bound in meta.mcp.tools by name or glob, by
// meta.mcp.events alone, in Go by states or by event, or unbound) and two
// sessions making interleaved random calls, also of hidden tools and of
// names the server does not have. After every call it checks:
//
//   - the handler ran, once and for the calling session, iff the tool was
//     in the session's last tools/list and guards accept its event with the
//     call's arguments (or no active state handles it);
//   - the core's Decide (package gate's Request, the hooks' path, no MCP)
//     gives every call of a tool of the server the verdict the MCP call
//     gets, and the same refusal (code, state, tools, path, guards);
//   - each session's twin workflow, on a second gate sharing the store
//     and given the same calls through the core alone (Decide, the tool,
//     Commit: the hooks' path), gets the same verdicts and refusals and
//     is in the same state with the same call budgets after each call;
//   - a call of a hidden tool of the server is refused: IsError, code
//     FORBIDDEN, the current state, tools and instructions; a name the
//     server does not have gets the server's own error;
//   - a successful call sends the tool's event, a failed one sends none
//     (the workflow equals a shadow instance driven by the test);
//   - the listed tools are those the documented rules give for the state;
//   - a list_changed reaches the caller whenever its list changed, only
//     when its workflow moved and the documented signature (active
//     patterns, visibility of Go-bound and event-bound tools) changed, and
//     never the other session, whose list does not change;
//   - the transition note is on exactly the calls that moved the workflow;
//   - following a refusal's path makes the tool visible (the guards of the
//     machines are decided by the arguments, so each step can be made to
//     take the transitions the path relies on), and a tool the refusal
//     calls unreachable never becomes visible in that session;
//   - meta.mcp.maxCalls budgets: the calls of bound tools that ran are
//     counted per active limited state; once a budget is used up, only
//     tools whose event (with the call's arguments) leaves the state run,
//     the others are hidden and refused with CALL_LIMIT, and the session
//     is notified when its list changes because of it.
//
// Flat machines run on both engines, which must then behave identically.
func TestPropertyExecutedIffVisible(t *testing.T) {
	seed, machines, steps, stats := propRun(t, 200, 30, 40, 16)
	for i := range machines {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			m := generateMachine(seed, i)
			isFlat := flat.IsFlat(m.json) // also some machines not generated flat
			if m.flat && !isFlat {
				t.Fatalf("generator: not a flat machine:\n%s", indentJSON(m.json))
			}
			kinds := []string{"full"}
			if isFlat {
				kinds = []string{"flat", "full"}
			}
			var traces []string
			for _, kind := range kinds {
				traces = append(traces, runProperty(t, m, kind, steps, stats))
			}
			if len(traces) == 2 && traces[0] != traces[1] {
				t.Fatalf("the engines disagree on machine %d of seed %d:\n%s\nflat:\n%s\nfull:\n%s", i, seed, indentJSON(m.json), traces[0], traces[1])
			}
		})
	}
}

// propRun returns the seed, the number of machines and of calls per
// machine (the given defaults, those for -short, or the flags'), and the
// stats, logged when the test ends.
func propRun(t *testing.T, machines, steps, shortMachines, shortSteps int) (uint64, int, int, *propStats) {
	if testing.Short() {
		machines, steps = shortMachines, shortSteps
	}
	if *propMachines > 0 {
		machines = *propMachines
	}
	if *propSteps > 0 {
		steps = *propSteps
	}
	seed, stats := *propSeed, &propStats{}
	t.Cleanup(func() { t.Logf("seed %d, %d machines: %s", seed, machines, stats) })
	return seed, machines, steps, stats
}

// propStats counts what the runs exercised, for -v.
type propStats struct {
	mu     sync.Mutex
	counts map[string]int
}

func (s *propStats) add(what string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[string]int{}
	}
	s.counts[what] += n
}

func (s *propStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.counts[k]))
	}
	return strings.Join(parts, ", ")
}

// ---- the generator ----

type pNode struct {
	key, id, path string // path: keys from the root, "" for the root
	kind          string // atomic, compound, parallel or final
	parent        *pNode
	children      []*pNode
	on            []pOn
	onDone        *pNode

	tools        []string    // meta.mcp.tools
	events       [][2]string // meta.mcp.events: tool, event
	instructions string
	maxCalls     int
}

type pOn struct {
	event string
	cands []pTrans
}

type pTrans struct {
	target  *pNode // nil: targetless, with the action "inc"
	guard   string
	reenter bool
	form    int // how the target is written
}

type pBinding struct {
	tool   string
	states []string // as passed to Bind
	nodes  []*pNode // the nodes they name
	event  string
}

type pMachine struct {
	seed      uint64
	index     int
	flat      bool
	customIDs bool
	nodes     []*pNode // document order; nodes[0] is the root
	events    []string // the events some transition handles
	guards    []string
	counts    bool       // some transition runs the action "inc" (context.n++)
	tools     []string   // the server's tools
	bindings  []pBinding // Go bindings, at most one per tool
	json      []byte
	impl      []byte // declarative guards and actions, nil if none
}

const (
	pMaxDepth = 3
	pBudget   = 16 // soft limit on state nodes
)

func generateMachine(seed uint64, index int) *pMachine {
	r := rand.New(rand.NewPCG(seed, uint64(index)))
	m := &pMachine{seed: seed, index: index, flat: r.IntN(4) == 0}
	m.customIDs = !m.flat && r.IntN(2) == 0
	root := m.addNode("compound", nil)
	if !m.flat && r.IntN(6) == 0 {
		root.kind = "parallel"
	}
	if m.flat {
		for i := range 2 + r.IntN(5) {
			kind := "atomic"
			if i > 0 && r.IntN(5) == 0 {
				kind = "final"
			}
			m.addNode(kind, root)
		}
	} else {
		m.grow(r, root, 1)
	}

	alphabet := []string{"E0", "E1", "E2", "E3", "E4"}[:2+r.IntN(4)]
	guarded := !m.flat && r.IntN(5) < 3
	used := map[string]bool{}
	for _, n := range m.nodes {
		p := 80
		switch {
		case n.kind == "final":
			continue
		case n == root && m.flat:
			continue
		case n == root:
			p = 15
		case n.kind != "atomic":
			p = 35
		}
		if r.IntN(100) >= p {
			continue
		}
		for range 1 + r.IntN(3) {
			ev := alphabet[r.IntN(len(alphabet))]
			if slices.ContainsFunc(n.on, func(o pOn) bool { return o.event == ev }) {
				continue
			}
			o := pOn{event: ev}
			ncands := 1
			if !m.flat && r.IntN(4) == 0 {
				ncands = 2
			}
			for range ncands {
				tr := pTrans{target: m.nodes[1+r.IntN(len(m.nodes)-1)], form: r.IntN(3)}
				if guarded && r.IntN(100) < 35 {
					tr.guard = fmt.Sprintf("g%d", len(m.guards))
					m.guards = append(m.guards, tr.guard)
				}
				switch x := r.IntN(100); {
				case m.flat:
				case x < 10:
					tr.reenter = true
				case x < 20:
					// Targetless, with an action that changes the context:
					// the workflow is saved, its state value stays.
					tr.target = nil
					m.counts = true
				}
				o.cands = append(o.cands, tr)
			}
			n.on = append(n.on, o)
			used[ev] = true
		}
	}
	for _, ev := range alphabet {
		if used[ev] {
			m.events = append(m.events, ev)
		}
	}
	if !m.flat {
		// Done events. An onDone target is never final, and no initial
		// state is final, so done events cannot chain forever.
		var nonFinal []*pNode
		for _, n := range m.nodes[1:] {
			if n.kind != "final" {
				nonFinal = append(nonFinal, n)
			}
		}
		for _, n := range m.nodes[1:] {
			if canBeDone(n) && r.IntN(2) == 0 {
				n.onDone = nonFinal[r.IntN(len(nonFinal))]
			}
		}
	}
	m.generateTools(r)
	m.marshal()
	return m
}

// canBeDone reports whether a state can raise its done event.
func canBeDone(n *pNode) bool {
	switch n.kind {
	case "compound":
		return slices.ContainsFunc(n.children, func(c *pNode) bool { return c.kind == "final" })
	case "parallel":
		for _, c := range n.children {
			if c.kind != "compound" || !canBeDone(c) {
				return false
			}
		}
		return true
	}
	return false
}

func (m *pMachine) addNode(kind string, parent *pNode) *pNode {
	n := &pNode{kind: kind, parent: parent, id: "m"}
	if parent != nil {
		// Zero-padded, so that encoding/json, which sorts keys, writes
		// the states in the order they were made: document order.
		n.key = fmt.Sprintf("s%02d", len(m.nodes))
		n.path = strings.TrimPrefix(parent.path+"."+n.key, ".")
		n.id = parent.id + "." + n.key
		if m.customIDs {
			n.id = fmt.Sprintf("S%02d", len(m.nodes))
		}
		parent.children = append(parent.children, n)
	}
	m.nodes = append(m.nodes, n)
	return n
}

// grow adds the children of a compound or parallel node, depth first, so
// that m.nodes is in document order.
func (m *pMachine) grow(r *rand.Rand, n *pNode, depth int) {
	switch n.kind {
	case "compound":
		for i := range 2 + r.IntN(3) {
			deep := depth < pMaxDepth && len(m.nodes) < pBudget
			kind := "atomic"
			final := 18
			if depth == 1 {
				final = 10 // a top-level final state ends the workflow
			}
			switch x := r.IntN(100); {
			case i > 0 && x < final:
				kind = "final" // never the initial state
			case deep && x < 38:
				kind = "compound"
			case deep && x < 50:
				kind = "parallel"
			}
			m.grow(r, m.addNode(kind, n), depth+1)
		}
	case "parallel":
		for range 2 + r.IntN(2) {
			kind := "compound"
			if r.IntN(7) == 0 || depth >= pMaxDepth+1 {
				kind = "atomic"
			}
			m.grow(r, m.addNode(kind, n), depth+1)
		}
	}
}

func (m *pMachine) generateTools(r *rand.Rand) {
	for i := range 4 + r.IntN(4) {
		m.tools = append(m.tools, fmt.Sprintf("t%d", i))
	}
	group := r.IntN(2) == 0
	if group {
		m.tools = append(m.tools, "g_a0", "g_a1")
	}
	randNode := func() *pNode { return m.nodes[r.IntN(len(m.nodes))] }
	randEvent := func() string { return m.events[r.IntN(len(m.events))] }
	jsonEvent := func(tool string) {
		ev := randEvent()
		for range 1 + r.IntN(2) { // machine-wide: any state may say it, several may
			n := randNode()
			if !slices.Contains(n.events, [2]string{tool, ev}) {
				n.events = append(n.events, [2]string{tool, ev})
			}
		}
	}
	addPattern := func(n *pNode, p string) {
		if !slices.Contains(n.tools, p) {
			n.tools = append(n.tools, p)
		}
	}
	for _, tool := range m.tools {
		inJSON := false
		switch x := r.IntN(100); {
		case x < 30: // visible in some states
			for range 1 + r.IntN(2) {
				addPattern(randNode(), tool)
			}
			if len(m.events) > 0 && r.IntN(10) < 7 {
				jsonEvent(tool)
			}
			inJSON = true
		case x < 45 && len(m.events) > 0: // visible when the machine can take its event
			jsonEvent(tool)
			inJSON = true
		case x < 75:
			m.goBind(r, tool)
		}
		if inJSON && r.IntN(7) == 0 {
			m.goBind(r, tool) // replaces what the JSON says
		}
	}
	if group && r.IntN(10) < 6 {
		for range 1 + r.IntN(2) {
			addPattern(randNode(), "g_a*")
		}
	}
	if r.IntN(12) == 0 {
		addPattern(randNode(), "t*")
	}
	if r.IntN(20) == 0 {
		addPattern(randNode(), "*")
	}
	if r.IntN(3) == 0 {
		m.goBind(r, "ghost") // bound, but not a tool of the server
	}
	for _, n := range m.nodes {
		if r.IntN(4) == 0 {
			n.instructions = "Work on " + n.id + "."
		}
		if r.IntN(10) == 0 {
			n.maxCalls = 1 + r.IntN(5)
		}
	}
}

func (m *pMachine) goBind(r *rand.Rand, tool string) {
	b := pBinding{tool: tool}
	if len(m.events) > 0 && r.IntN(10) < 7 {
		b.event = m.events[r.IntN(len(m.events))]
	}
	if b.event == "" || r.IntN(10) < 6 {
		for range 1 + r.IntN(2) {
			n := m.nodes[r.IntN(len(m.nodes))]
			ref := "#" + n.id
			switch r.IntN(3) {
			case 1:
				if n.path != "" {
					ref = n.path
				}
			case 2:
				ref = n.id
			}
			b.nodes = append(b.nodes, n)
			b.states = append(b.states, ref)
		}
	}
	m.bindings = append(m.bindings, b)
}

// obj is a JSON object; encoding/json writes its keys sorted, which for
// states is the order they were made in (see addNode).
type obj = map[string]any

func (m *pMachine) marshal() {
	var err error
	if m.json, err = json.Marshal(m.nodeJSON(m.nodes[0])); err != nil {
		panic(err)
	}
	impl := obj{}
	if len(m.guards) > 0 {
		guards := obj{}
		for _, g := range m.guards {
			// Passes unless the call's arguments say {"<guard>": false};
			// so with no input (visibility of event-bound tools) it passes.
			guards[g] = obj{"field": "event.input." + g, "op": "neq", "value": false}
		}
		impl["guards"] = guards
	}
	if m.counts {
		impl["actions"] = obj{"inc": obj{"assign": obj{"n": obj{"$inc": 1}}}}
	}
	if len(impl) > 0 {
		if m.impl, err = json.Marshal(impl); err != nil {
			panic(err)
		}
	}
}

func (m *pMachine) nodeJSON(n *pNode) obj {
	o := obj{}
	if n.parent == nil || m.customIDs {
		o["id"] = n.id
	}
	if n.parent == nil && m.counts {
		o["context"] = obj{"n": 0}
	}
	switch n.kind {
	case "parallel", "final":
		o["type"] = n.kind
	case "compound":
		o["initial"] = n.children[0].key
	}
	if len(n.children) > 0 {
		states := obj{}
		for _, c := range n.children {
			states[c.key] = m.nodeJSON(c)
		}
		o["states"] = states
	}
	if len(n.on) > 0 {
		on := obj{}
		for _, e := range n.on {
			on[e.event] = m.transJSON(e.cands)
		}
		o["on"] = on
	}
	if n.onDone != nil {
		o["onDone"] = "#" + n.onDone.id
	}
	mcpObj := obj{}
	if len(n.tools) > 0 {
		mcpObj["tools"] = n.tools
	}
	if len(n.events) > 0 {
		evs := obj{}
		for _, e := range n.events {
			evs[e[0]] = e[1]
		}
		mcpObj["events"] = evs
	}
	if n.instructions != "" {
		mcpObj["instructions"] = n.instructions
	}
	if n.maxCalls > 0 {
		mcpObj["maxCalls"] = n.maxCalls
	}
	if len(mcpObj) > 0 {
		o["meta"] = obj{"mcp": mcpObj}
	}
	return o
}

func (m *pMachine) transJSON(cands []pTrans) any {
	if m.flat {
		tr := cands[0]
		switch tr.form {
		case 0:
			return tr.target.key
		case 1:
			return "#" + tr.target.id
		}
		return obj{"target": tr.target.key}
	}
	var list []any
	for _, tr := range cands {
		o := obj{}
		switch {
		case tr.target == nil:
			o["actions"] = "inc"
		case tr.guard == "" && !tr.reenter && tr.form == 0:
			list = append(list, "#"+tr.target.id)
			continue
		default:
			o["target"] = "#" + tr.target.id
		}
		if tr.guard != "" {
			o["guard"] = tr.guard
		}
		if tr.reenter {
			o["reenter"] = true
		}
		list = append(list, o)
	}
	if len(list) == 1 {
		return list[0]
	}
	return list
}

// ---- the documented rules, as the test's oracle ----

const (
	pUnbound = iota
	pStates
	pCan
)

type pInfo struct {
	mode  int
	nodes map[string]bool // ids, for pStates
	event string
}

// info applies the package's rules for a tool: a Go binding decides alone;
// else meta.mcp.tools patterns; else meta.mcp.events alone ("can"); else
// unbound.
func (m *pMachine) info(tool string) pInfo {
	for _, b := range m.bindings {
		if b.tool != tool {
			continue
		}
		if len(b.nodes) == 0 {
			return pInfo{mode: pCan, event: b.event}
		}
		in := pInfo{mode: pStates, nodes: map[string]bool{}, event: b.event}
		for _, n := range b.nodes {
			in.nodes[n.id] = true
		}
		return in
	}
	in := pInfo{nodes: map[string]bool{}, event: m.jsonEvent(tool)}
	for _, n := range m.nodes {
		for _, p := range n.tools {
			if globMatch(p, tool) {
				in.nodes[n.id] = true
			}
		}
	}
	switch {
	case len(in.nodes) > 0:
		in.mode = pStates
	case in.event != "":
		in.mode = pCan
	}
	return in
}

func (m *pMachine) jsonEvent(tool string) string {
	for _, n := range m.nodes {
		for _, e := range n.events {
			if e[0] == tool {
				return e[1]
			}
		}
	}
	return ""
}

func (m *pMachine) goBound(tool string) bool {
	return slices.ContainsFunc(m.bindings, func(b pBinding) bool { return b.tool == tool })
}

func (m *pMachine) registered(tool string) bool { return slices.Contains(m.tools, tool) }

// patterns returns the distinct meta.mcp.tools entries, in document order.
func (m *pMachine) patterns() []string {
	var out []string
	for _, n := range m.nodes {
		for _, p := range n.tools {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// sigTools are the tools whose visibility the documented change detection
// follows besides the patterns: the Go-bound ones and those bound by
// meta.mcp.events alone.
func (m *pMachine) sigTools() []string {
	var out []string
	for _, b := range m.bindings {
		out = append(out, b.tool)
	}
	for _, n := range m.nodes {
		for _, e := range n.events {
			t := e[0]
			if slices.Contains(out, t) || m.goBound(t) {
				continue
			}
			if !slices.ContainsFunc(m.patterns(), func(p string) bool { return globMatch(p, t) }) {
				out = append(out, t)
			}
		}
	}
	return out
}

// eventTools are the tools (of the server or bound in Go) that send an
// event.
func (m *pMachine) eventTools() []string {
	var out []string
	add := func(t string) {
		if !slices.Contains(out, t) && m.info(t).event != "" {
			out = append(out, t)
		}
	}
	for _, t := range m.tools {
		add(t)
	}
	for _, b := range m.bindings {
		add(b.tool)
	}
	for _, n := range m.nodes {
		for _, e := range n.events {
			add(e[0])
		}
	}
	return out
}

// globMatch matches a whole name; "*" matches any run of characters.
func globMatch(pattern, name string) bool {
	for pattern != "" {
		if pattern[0] == '*' {
			for i := 0; i <= len(name); i++ {
				if globMatch(pattern[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if name == "" || name[0] != pattern[0] {
			return false
		}
		pattern, name = pattern[1:], name[1:]
	}
	return name == ""
}

// ---- the harness ----

type propSession struct {
	name string
	cs   *mcp.ClientSession
	ss   *mcp.ServerSession
	// changed receives the client's list_changed notifications; sent
	// counts those the server sent to this session (recorded below the
	// gate, before the call's result).
	changed chan struct{}
	sent    atomic.Int32
	list    []string // the last tools/list, sorted
	shadow  statechart.State
	plan    *propPlan
	// never holds the tools a refusal called unreachable.
	never map[string]bool
	// calls counts, per state id with maxCalls, the calls of bound tools
	// that ran since the state became active (the gate's call budgets).
	calls map[string]int
}

// propPlan is a refusal's path that the session follows.
type propPlan struct {
	target string
	steps  []mcpbind.Step
	next   int
}

type propHarness struct {
	t      *testing.T
	m      *pMachine
	kind   string
	engine statechart.Engine
	gate   *mcpbind.Gate
	// core is a second gate on the same engine and store, with no MCP
	// server: the twin workflow of each session ("core-a", "core-b")
	// takes the same calls through Decide and Commit (the hooks' path).
	core  *mcpbind.Gate
	rng   *rand.Rand
	ses   [2]*propSession
	stats *propStats

	mu   sync.Mutex
	runs map[*mcp.ServerSession]map[string]int // handler executions
	sent map[*mcp.ServerSession]*atomic.Int32  // list_changed notifications sent
	// wfRuns counts handler executions per workflow id (handle mode).
	wfRuns map[string]map[string]int
	// names names the sessions' workflows (Options.SessionKey), so that
	// the core's Decide reaches them by a Ref.
	names map[*mcp.ServerSession]string

	log   strings.Builder // the calls so far, for the failure report
	trace strings.Builder // what the test observed, to compare engines
}

var propUnknownNames = []string{"nope", "g_a_zz", "ghost", "t99"}

func runProperty(t *testing.T, m *pMachine, kind string, steps int, stats *propStats) string {
	h := &propHarness{t: t, m: m, kind: kind, stats: stats, runs: map[*mcp.ServerSession]map[string]int{}, sent: map[*mcp.ServerSession]*atomic.Int32{},
		rng: rand.New(rand.NewPCG(m.seed, uint64(m.index)<<32|1))}
	h.setUp()
	stats.add("runs "+kind, 1)
	if len(m.guards) > 0 {
		stats.add("runs with guards", 1)
	}
	if m.counts {
		stats.add("runs with targetless transitions", 1)
	}
	if m.nodes[0].kind == "parallel" || slices.ContainsFunc(m.nodes, func(n *pNode) bool { return n.kind == "parallel" }) {
		stats.add("runs with parallel states", 1)
	}
	defer func() {
		for _, s := range h.ses {
			_ = s.cs.Close()
		}
	}()
	for i := range steps {
		h.step(i)
	}
	h.flush()
	for _, s := range h.ses {
		if n := len(s.changed); n > 0 {
			h.fatalf("session %s received %d list_changed more than the server sent it", s.name, n)
		}
	}
	return h.trace.String()
}

func (h *propHarness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("%s\n\n%s", fmt.Sprintf(format, args...), h.report())
}

// report is what reproduces a failure.
func (h *propHarness) report() string {
	m := h.m
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, machine %d, engine %s (go test ./mcpbind -run 'TestPropertyExecutedIffVisible/^%d$' -prop.seed=%d)\n",
		m.seed, m.index, h.kind, m.index, m.seed)
	fmt.Fprintf(&b, "machine:\n%s\n", indentJSON(m.json))
	if m.impl != nil {
		fmt.Fprintf(&b, "implementations: %s\n", m.impl)
	}
	b.WriteString("Go bindings:\n")
	for _, bd := range m.bindings {
		fmt.Fprintf(&b, "\tgate.Bind(%q, mcpbind.Binding{States: %#v, Event: %q})\n", bd.tool, bd.states, bd.event)
	}
	fmt.Fprintf(&b, "server tools: %v (a handler fails on {\"fail\": true}, errors on {\"fail\": \"error\"})\n", m.tools)
	b.WriteString("calls:\n")
	b.WriteString(h.log.String())
	return b.String()
}

func indentJSON(data []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		return string(data)
	}
	return b.String()
}

func (h *propHarness) setUp() {
	ctx := context.Background()
	h.names = map[*mcp.ServerSession]string{}
	store := mcpbind.NewMemoryStore(nil)
	server := h.newServer(&mcpbind.Options{Store: store, SessionKey: func(ss *mcp.ServerSession) string {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.names[ss]
	}})
	var err error
	if h.core, err = mcpbind.New(h.engine, &mcpbind.Options{Store: store, Logger: quietLogger()}); err != nil {
		h.fatalf("mcpbind.New (core): %v", err)
	}
	for _, b := range h.m.bindings {
		if err := h.core.Bind(b.tool, mcpbind.Binding{States: b.states, Event: b.event}); err != nil {
			h.fatalf("core: Bind(%q): %v", b.tool, err)
		}
	}
	for i, name := range []string{"a", "b"} {
		s := &propSession{name: name, never: map[string]bool{}, calls: map[string]int{}, changed: make(chan struct{}, 1000)}
		ct, st := mcp.NewInMemoryTransports()
		if s.ss, err = server.Connect(ctx, st, nil); err != nil {
			h.fatalf("server.Connect: %v", err)
		}
		h.mu.Lock()
		h.sent[s.ss] = &s.sent
		h.names[s.ss] = "workflow-" + name
		h.mu.Unlock()
		client := mcp.NewClient(&mcp.Implementation{Name: "client-" + name, Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.changed <- struct{}{} },
		})
		if s.cs, err = client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err != nil {
			h.fatalf("client.Connect: %v", err)
		}
		if s.shadow, err = h.engine.Start(ctx, time.Now()); err != nil {
			h.fatalf("Start: %v", err)
		}
		h.ses[i] = s
	}
	for _, s := range h.ses {
		s.list = h.listTools(s)
		if want := h.oracleList(s.shadow, s.calls); !slices.Equal(s.list, want) {
			h.fatalf("session %s, initial tools %v, want %v", s.name, s.list, want)
		}
	}
	fmt.Fprintf(&h.log, "\tinitially: state %s, tools %v\n", valueJSON(h.ses[0].shadow.Value()), h.ses[0].list)
}

// newServer compiles the machine for h.kind and builds the gated server.
func (h *propHarness) newServer(opts *mcpbind.Options) *mcp.Server {
	switch h.kind {
	case "flat":
		fm, err := flat.Compile(h.m.json)
		if err != nil {
			h.fatalf("flat.Compile: %v", err)
		}
		h.engine = fm
	default:
		var opts statechart.Options
		if h.m.impl != nil {
			impl, err := statechart.ParseImplementations(h.m.impl)
			if err != nil {
				h.fatalf("ParseImplementations: %v", err)
			}
			opts.Implementations = impl
		}
		sm, err := statechart.Compile(h.m.json, &opts)
		if err != nil {
			h.fatalf("statechart.Compile: %v", err)
		}
		h.engine = sm.Engine()
	}
	if opts == nil {
		opts = &mcpbind.Options{}
	}
	opts.Logger = quietLogger()
	gate, err := mcpbind.New(h.engine, opts)
	if err != nil {
		h.fatalf("mcpbind.New: %v", err)
	}
	h.gate = gate
	for _, b := range h.m.bindings {
		if err := gate.Bind(b.tool, mcpbind.Binding{States: b.states, Event: b.event}); err != nil {
			h.fatalf("Bind(%q): %v", b.tool, err)
		}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "prop", Version: "1"}, nil)
	for _, name := range h.m.tools {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h.handler(name))
	}
	// Added before Attach, this middleware sees the gate's notifications.
	server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/tools/list_changed" {
				ss, _ := req.GetSession().(*mcp.ServerSession)
				h.mu.Lock()
				n := h.sent[ss]
				h.mu.Unlock()
				if n == nil {
					h.t.Errorf("list_changed sent to an unknown session %p", ss)
				} else {
					n.Add(1)
				}
			}
			return next(ctx, method, req)
		}
	})
	gate.Attach(server)
	return server
}

// handler records its executions per session; it fails (IsError) when the
// arguments say {"fail": true} and returns a Go error (a protocol error)
// on {"fail": "error"}.
func (h *propHarness) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h.mu.Lock()
		if h.runs[req.Session] == nil {
			h.runs[req.Session] = map[string]int{}
		}
		h.runs[req.Session][name]++
		if id := mcpbind.WorkflowID(ctx); id != "" {
			if h.wfRuns == nil {
				h.wfRuns = map[string]map[string]int{}
			}
			if h.wfRuns[id] == nil {
				h.wfRuns[id] = map[string]int{}
			}
			h.wfRuns[id][name]++
		}
		h.mu.Unlock()
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		switch args["fail"] {
		case true:
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: name + " failed"}}}, nil
		case "error":
			return nil, errors.New(name + " broke")
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "ok " + name}},
			StructuredContent: map[string]any{"tool": name},
		}, nil
	}
}

func (h *propHarness) ran(s *propSession, tool string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[s.ss][tool]
}

func (h *propHarness) ranAll(s *propSession) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.runs[s.ss] {
		n += c
	}
	return n
}

func (h *propHarness) listTools(s *propSession) []string {
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		h.fatalf("session %s: tools/list: %v", s.name, err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// visible is the documented visibility of a tool in a state.
func (h *propHarness) visible(s statechart.State, tool string) bool {
	in := h.m.info(tool)
	switch in.mode {
	case pStates:
		return slices.ContainsFunc(s.StateIDs(), func(id string) bool { return in.nodes[id] })
	case pCan:
		return s.Status() == statechart.StatusActive && h.can(s, tool, in.event)
	}
	return true
}

// sameRefusal reports whether two refusals of one call agree: code, tool,
// state, the tools available (in any order), path, reachability, guards,
// limits and instructions.
func sameRefusal(a, b *mcpbind.Refusal) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Available, y.Available = slices.Sorted(slices.Values(x.Available)), slices.Sorted(slices.Values(y.Available))
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// guardRefused reports whether a call of a bound tool with input is
// refused before it runs because guards refuse its event: the active
// states handle the event, every transition for it is guarded, and none
// is enabled with the call's arguments (the documented rule).
func (h *propHarness) guardRefused(s statechart.State, tool string, input map[string]any) bool {
	in := h.m.info(tool)
	if in.event == "" || s.Status() != statechart.StatusActive {
		return false
	}
	ids := s.StateIDs()
	guarded := false
	for _, n := range h.engine.Nodes() {
		if !slices.Contains(ids, n.ID) {
			continue
		}
		for _, tr := range n.Transitions {
			if tr.Event != in.event {
				continue
			}
			if tr.Guard == "" {
				return false
			}
			guarded = true
		}
	}
	if !guarded {
		return false
	}
	ev := statechart.Event{Type: in.event, Data: map[string]any{"tool": tool, "input": input}}
	ok, err := h.engine.Can(context.Background(), s, ev)
	if err != nil {
		h.fatalf("Can(%s): %v", in.event, err)
	}
	return !ok
}

// can reports whether the machine handles a tool's event in a state (the
// event without input, as the gate sends it to decide).
func (h *propHarness) can(s statechart.State, tool, event string) bool {
	ev := statechart.Event{Type: event, Data: map[string]any{"tool": tool, "input": map[string]any{}}}
	ok, err := h.engine.Can(context.Background(), s, ev)
	if err != nil {
		h.fatalf("Can(%s): %v", event, err)
	}
	return ok
}

func (h *propHarness) oracleList(s statechart.State, calls map[string]int) []string {
	ex := h.exhausted(s, calls)
	var out []string
	for _, tool := range h.m.tools {
		if h.allowed(s, tool, ex) {
			out = append(out, tool)
		}
	}
	slices.Sort(out)
	return out
}

// allowed is the documented rule with call budgets: visible, and with a
// budget used up (ex), unbound or leaving the states concerned (the event
// without input, as the gate decides for lists).
func (h *propHarness) allowed(s statechart.State, tool string, ex []string) bool {
	return h.visible(s, tool) && (len(ex) == 0 || h.m.info(tool).mode == pUnbound || h.leaves(s, tool, map[string]any{}, ex))
}

// count counts a call against the budgets of the active limited states of
// s.
func (h *propHarness) count(s statechart.State, calls map[string]int) {
	for _, n := range h.m.nodes {
		if n.maxCalls > 0 && slices.Contains(s.StateIDs(), n.id) {
			calls[n.id]++
		}
	}
}

// send sends a successful call's event to a shadow state, as the gate
// does, and drops the counts of the states it left (a count lives while
// its state stays active).
func (h *propHarness) send(s statechart.State, calls map[string]int, tool string, input map[string]any) statechart.State {
	event := h.m.info(tool).event
	ev := statechart.Event{Type: event, Data: map[string]any{"tool": tool, "input": input, "output": map[string]any{"tool": tool}}}
	ns, err := h.engine.Send(context.Background(), s, ev, time.Now())
	if err != nil {
		h.fatalf("shadow Send(%s): %v", event, err)
	}
	if stateJSON(ns) != stateJSON(s) {
		ids := ns.StateIDs()
		maps.DeleteFunc(calls, func(id string, _ int) bool { return !slices.Contains(ids, id) })
	}
	return ns
}

// limited reports whether an active state has maxCalls.
func (h *propHarness) limited(s statechart.State) bool {
	ids := s.StateIDs()
	return slices.ContainsFunc(h.m.nodes, func(n *pNode) bool { return n.maxCalls > 0 && slices.Contains(ids, n.id) })
}

// exhausted returns the ids of the active states whose budget is used up.
func (h *propHarness) exhausted(s statechart.State, calls map[string]int) []string {
	ids := s.StateIDs()
	var out []string
	for _, n := range h.m.nodes {
		if n.maxCalls > 0 && slices.Contains(ids, n.id) && calls[n.id] >= n.maxCalls {
			out = append(out, n.id)
		}
	}
	return out
}

// leaves reports whether a tool's event, sent with input, takes the
// workflow out of every state of ex.
func (h *propHarness) leaves(s statechart.State, tool string, input map[string]any, ex []string) bool {
	in := h.m.info(tool)
	if in.event == "" || s.Status() != statechart.StatusActive {
		return false
	}
	ns, err := h.engine.Send(context.Background(), s, statechart.Event{Type: in.event, Data: map[string]any{"tool": tool, "input": input}}, time.Now())
	if err != nil {
		h.fatalf("Send(%s): %v", in.event, err)
	}
	ids := ns.StateIDs()
	return !slices.ContainsFunc(ex, func(id string) bool { return slices.Contains(ids, id) })
}

// signature is what the package documents its change detection on: the
// active meta.mcp.tools patterns and the visibility of the Go-bound and
// event-bound tools.
func (h *propHarness) signature(s statechart.State, calls map[string]int) string {
	var b strings.Builder
	if ex := h.exhausted(s, calls); len(ex) > 0 {
		// With a budget used up, the tools that send an event and may
		// still run.
		b.WriteString("budget used up; ")
		for _, t := range h.m.eventTools() {
			if h.allowed(s, t, ex) {
				b.WriteString("tool " + t + "; ")
			}
		}
		return b.String()
	}
	ids := s.StateIDs()
	for _, p := range h.m.patterns() {
		for _, n := range h.m.nodes {
			if slices.Contains(n.tools, p) && slices.Contains(ids, n.id) {
				b.WriteString("pattern " + p + "; ")
				break
			}
		}
	}
	for _, t := range h.m.sigTools() {
		if h.visible(s, t) {
			b.WriteString("tool " + t + "; ")
		}
	}
	return b.String()
}

func (h *propHarness) instructions(s statechart.State) []string {
	ids := s.StateIDs()
	var out []string
	for _, n := range h.m.nodes {
		if n.instructions != "" && slices.Contains(ids, n.id) {
			out = append(out, n.instructions)
		}
	}
	return out
}

func valueJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func stateJSON(s statechart.State) string {
	b, err := s.MarshalJSON()
	if err != nil {
		panic(err)
	}
	return string(b)
}

// flush returns once both clients have handled every notification sent
// before now: a client handles a server's notifications and requests in
// order, so a ping from the server comes back only after them. (After each
// call the test checks what the server sent to whom, and waits for the
// notifications it sent; flush at the end makes sure no other arrived.)
func (h *propHarness) flush() {
	for _, s := range h.ses {
		if err := s.ss.Ping(context.Background(), nil); err != nil {
			h.fatalf("ping %s: %v", s.name, err)
		}
	}
}

// choose picks the session's next call: the next step of the path it
// follows, or a random name with random arguments.
func (h *propHarness) choose(x *propSession) (string, map[string]any, bool) {
	args := map[string]any{}
	if p := x.plan; p != nil {
		st := p.steps[p.next]
		for _, g := range h.m.guards {
			if !slices.Contains(st.Guards, g) {
				args[g] = false // take exactly the transitions the path relies on
			}
		}
		return st.Tool, args, true
	}
	var name string
	switch p := h.rng.IntN(100); {
	case p < 8:
		name = propUnknownNames[h.rng.IntN(len(propUnknownNames))]
	case p < 30 && len(x.list) > 0:
		name = x.list[h.rng.IntN(len(x.list))]
	case p < 60 && len(x.list) > 0:
		// A visible tool whose event the workflow handles now, if any:
		// calls that move the workflow.
		var moving []string
		for _, t := range x.list {
			if in := h.m.info(t); in.event != "" && h.can(x.shadow, t, in.event) {
				moving = append(moving, t)
			}
		}
		name = x.list[h.rng.IntN(len(x.list))]
		if len(moving) > 0 {
			name = moving[h.rng.IntN(len(moving))]
		}
	default:
		name = h.m.tools[h.rng.IntN(len(h.m.tools))]
		if _, ok := x.never[name]; ok && h.rng.IntN(4) > 0 {
			name = h.m.tools[h.rng.IntN(len(h.m.tools))] // try another
		}
	}
	for _, g := range h.m.guards {
		if h.rng.IntN(4) == 0 {
			args[g] = false
		}
	}
	switch p := h.rng.IntN(100); {
	case p < 10:
		args["fail"] = true
	case p < 14:
		args["fail"] = "error"
	}
	return name, args, false
}

func (h *propHarness) step(i int) {
	ctx := context.Background()
	xi := h.rng.IntN(2)
	if h.ses[1-xi].plan != nil && h.ses[xi].plan == nil && h.rng.IntN(2) == 0 {
		xi = 1 - xi // let plans progress
	}
	x, y := h.ses[xi], h.ses[1-xi]
	name, args, planned := h.choose(x)
	in := h.m.info(name)
	wasVisible := slices.Contains(x.list, name)
	argJSON, _ := json.Marshal(args)
	fmt.Fprintf(&h.log, "\t%d. session %s calls %s %s", i+1, x.name, name, argJSON)
	if planned {
		fmt.Fprintf(&h.log, " (step %d of the path to %s)", x.plan.next+1, x.plan.target)
	}
	h.log.WriteString("\n")
	if planned && !wasVisible {
		if !h.visible(x.shadow, name) {
			h.fatalf("session %s: step %d of the path to %s, %s, is not visible (tools %v)", x.name, x.plan.next+1, x.plan.target, name, x.list)
		}
		// The path search does not model call budgets.
		h.stats.add("paths cut short by a call budget", 1)
		x.plan, planned = nil, false
	}
	// The call budgets: with one used up, a bound tool runs only if its
	// event, sent with the call's arguments, leaves the states concerned.
	input := map[string]any{}
	_ = json.Unmarshal(argJSON, &input)
	exhausted := h.exhausted(x.shadow, x.calls)
	bound := in.mode != pUnbound
	// The list decides by the event without input, the call with its
	// arguments, which guards may read.
	expectRun := wasVisible
	if len(exhausted) > 0 && bound && h.m.registered(name) {
		expectRun = h.visible(x.shadow, name) && h.leaves(x.shadow, name, input, exhausted)
	}
	// A call whose event guards refuse with its arguments does not run.
	if expectRun && bound && h.m.registered(name) && h.guardRefused(x.shadow, name, input) {
		expectRun = false
		h.stats.add("calls whose arguments a guard refused", 1)
	}
	counted := expectRun && bound && len(exhausted) == 0 && h.limited(x.shadow)
	oldCalls := maps.Clone(x.calls)

	// The core decides the same call without MCP (the hooks' path): the
	// same verdict, and below, the same refusal.
	var decided gate.Decision
	if h.m.registered(name) {
		var err error
		decided, err = h.gate.Decide(ctx, gate.Request{Ref: mcpbind.Ref{Name: "workflow-" + x.name}, Tool: name, Args: argJSON, Tools: slices.Sorted(slices.Values(h.m.tools))}) // the server lists its tools by name
		if err != nil {
			h.fatalf("session %s: Decide(%s): %v", x.name, name, err)
		}
		if decided.Allowed != expectRun {
			h.fatalf("session %s: Decide(%s) allowed: %v, want %v (%s)", x.name, name, decided.Allowed, expectRun, decided.Text)
		}
	}

	before, otherBefore := h.ran(x, name), h.ranAll(y)
	res, callErr := x.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	nx, ny := int(x.sent.Swap(0)), int(y.sent.Swap(0))
	for range nx { // each must reach the client
		select {
		case <-x.changed:
		case <-time.After(5 * time.Second):
			h.fatalf("session %s called %s: the server sent list_changed, the client did not receive it", x.name, name)
		}
	}
	if len(y.changed) > 0 {
		h.fatalf("session %s called %s: session %s received list_changed", x.name, name, y.name)
	}

	// The handler ran iff the tool was visible, and only for the caller.
	ran := h.ran(x, name) - before
	if expectRun != wasVisible {
		h.stats.add("calls whose arguments decided against the list under a used-up budget", 1)
	}
	if ran != 0 && ran != 1 || (ran == 1) != expectRun {
		h.fatalf("session %s called %s: handler ran %d times; the tool was visible: %v, allowed by the call budgets: %v (tools %v)", x.name, name, ran, wasVisible, expectRun, x.list)
	}
	if counted {
		h.count(x.shadow, x.calls)
	}
	if h.ranAll(y) != otherBefore {
		h.fatalf("session %s called %s: a handler ran for session %s", x.name, name, y.name)
	}

	// The result.
	outcome := ""
	succeeded := false
	switch {
	case !h.m.registered(name):
		if callErr == nil || !strings.Contains(callErr.Error(), "unknown tool") {
			h.fatalf("session %s called %s, which the server does not have: %v, %+v", x.name, name, callErr, res)
		}
		outcome = "unknown tool"
	case !expectRun:
		if callErr != nil {
			h.fatalf("session %s called hidden %s: %v", x.name, name, callErr)
		}
		outcome = h.checkRefusal(x, name, input, res, oldCalls)
		if ref, _ := mcpbind.RefusalOf(res); ref != nil && !sameRefusal(ref, decided.Refusal) {
			rb, _ := json.Marshal(ref)
			db, _ := json.Marshal(decided.Refusal)
			h.fatalf("session %s called %s: through MCP refused with %s, Decide refused with %s", x.name, name, rb, db)
		}
	case args["fail"] == "error":
		if callErr == nil {
			h.fatalf("session %s called %s, whose handler errs: no error", x.name, name)
		}
		outcome = "protocol error"
	case callErr != nil:
		h.fatalf("session %s called %s: %v", x.name, name, callErr)
	case args["fail"] == true:
		if !res.IsError {
			h.fatalf("session %s called %s, which fails: IsError false", x.name, name)
		}
		outcome = "failed"
	default:
		if res.IsError {
			h.fatalf("session %s called visible %s: IsError: %s", x.name, name, resultText(res))
		}
		outcome = "ok"
		succeeded = true
	}

	if h.m.registered(name) {
		h.throughCore(x, name, argJSON, args, expectRun, decided.Refusal)
	}

	// The event: sent after a success only.
	old := x.shadow
	if succeeded && in.event != "" {
		x.shadow = h.send(x.shadow, x.calls, name, input)
	}
	moved := stateJSON(old) != stateJSON(x.shadow)
	gs, err := h.gate.State(ctx, x.ss)
	if err != nil {
		h.fatalf("gate.State: %v", err)
	}
	if valueJSON(gs.Value()) != valueJSON(x.shadow.Value()) || gs.Status() != x.shadow.Status() {
		h.fatalf("session %s after %s (%s): the gate's state is %s (%v), want %s (%v)", x.name, name, outcome,
			valueJSON(gs.Value()), gs.Status(), valueJSON(x.shadow.Value()), x.shadow.Status())
	}
	if _, isRefusal := mcpbind.RefusalOf(res); res != nil && !isRefusal {
		raw, hasNote := res.Meta[mcpbind.MetaKey]
		if hasNote != moved {
			h.fatalf("session %s after %s (%s): transition note %v, but the workflow moved: %v", x.name, name, outcome, raw, moved)
		}
		if moved {
			var note mcpbind.TransitionNote
			b, _ := json.Marshal(raw)
			if err := json.Unmarshal(b, &note); err != nil || note.Event != in.event || note.ToolsChanged != (nx == 1) ||
				valueJSON(note.From) != valueJSON(old.Value()) || valueJSON(note.To) != valueJSON(x.shadow.Value()) {
				h.fatalf("session %s after %s: transition note %s; event %s, from %s to %s, list_changed %d", x.name, name, b,
					in.event, valueJSON(old.Value()), valueJSON(x.shadow.Value()), nx)
			}
		}
	}

	// The lists and list_changed. The other session's list is checked
	// whenever this call moved the workflow or notified anyone, and now
	// and then otherwise (each round trip costs).
	newX := h.listTools(x)
	fmt.Fprintf(&h.log, "\t   -> %s; state %s; list_changed %d; tools %v\n", outcome, valueJSON(x.shadow.Value()), nx, newX)
	if moved || nx+ny > 0 || h.rng.IntN(4) == 0 {
		if newY := h.listTools(y); !slices.Equal(newY, y.list) {
			h.fatalf("session %s called %s: the tools of session %s changed from %v to %v", x.name, name, y.name, y.list, newY)
		}
	}
	if want := h.oracleList(x.shadow, x.calls); !slices.Equal(newX, want) {
		h.fatalf("session %s in state %s lists %v, want %v", x.name, valueJSON(x.shadow.Value()), newX, want)
	}
	if ny != 0 {
		h.fatalf("session %s called %s: session %s received %d list_changed", x.name, name, y.name, ny)
	}
	if nx > 1 {
		h.fatalf("session %s called %s: %d list_changed", x.name, name, nx)
	}
	if !slices.Equal(newX, x.list) && nx == 0 {
		h.fatalf("session %s called %s: its tools changed from %v to %v without list_changed", x.name, name, x.list, newX)
	}
	if slices.Equal(newX, x.list) && nx == 1 {
		h.stats.add("list_changed with the same list (documented)", 1)
	}
	sigOld, sigNew := h.signature(old, oldCalls), h.signature(x.shadow, x.calls)
	if want := (moved || counted) && sigOld != sigNew; (nx == 1) != want {
		h.fatalf("session %s called %s: list_changed %d, want %v (moved %v, counted %v; signature %q -> %q)", x.name, name, nx, want, moved, counted, sigOld, sigNew)
	}
	x.list = newX
	for tool := range x.never {
		if slices.Contains(newX, tool) {
			h.fatalf("session %s: %s is visible, but an earlier refusal said no sequence of calls makes it available", x.name, tool)
		}
	}
	if planned {
		if x.plan.next++; x.plan.next == len(x.plan.steps) {
			if !h.visible(x.shadow, x.plan.target) {
				h.fatalf("session %s followed the refusal's path %+v, but %s is not visible (tools %v)", x.name, x.plan.steps, x.plan.target, newX)
			}
			h.stats.add("paths followed", 1)
			if slices.ContainsFunc(x.plan.steps, func(st mcpbind.Step) bool { return len(st.Guards) > 0 }) {
				h.stats.add("paths followed relying on guards", 1)
			}
			x.plan = nil
		}
	}
	fmt.Fprintf(&h.trace, "%s %s %s: %s %s %d %v\n", x.name, name, argJSON, outcome, valueJSON(x.shadow.Value()), nx, newX)
	kind, _, _ := strings.Cut(outcome, " [")
	h.stats.add("calls "+kind, 1)
	if x.shadow.Status() != statechart.StatusActive {
		h.stats.add("calls in a done workflow", 1)
	}
	if moved {
		h.stats.add("transitions", 1)
	}
	h.stats.add("list_changed", nx)
}

// throughCore makes the call session x just made through MCP again, on
// its twin workflow, through the core with no MCP (Decide, then the tool
// "runs" here, then Commit: the hooks' path) and on a second gate instance
// sharing the store: the same verdict, the same refusal as the MCP call's
// (refusal), and afterwards the same state and call budgets as x's
// workflow.
func (h *propHarness) throughCore(x *propSession, name string, argJSON []byte, args map[string]any, expectRun bool, refusal *mcpbind.Refusal) {
	ctx := context.Background()
	r := gate.Request{Ref: mcpbind.Ref{Name: "core-" + x.name}, Tool: name, Args: argJSON, Tools: slices.Sorted(slices.Values(h.m.tools))}
	d, err := h.core.Decide(ctx, r)
	if err != nil {
		h.fatalf("session %s: core: Decide(%s): %v", x.name, name, err)
	}
	if d.Allowed != expectRun || !d.Allowed && !sameRefusal(d.Refusal, refusal) {
		rb, _ := json.Marshal(refusal)
		db, _ := json.Marshal(d.Refusal)
		h.fatalf("session %s: core: Decide(%s) allowed %v, refusal %s; through MCP: allowed %v, refusal %s", x.name, name, d.Allowed, db, expectRun, rb)
	}
	if d.Allowed {
		o := gate.Outcome{Failed: args["fail"] != nil}
		if !o.Failed {
			o.Output = json.RawMessage(fmt.Sprintf(`{"tool":%q}`, name))
		}
		if _, err := h.core.Commit(ctx, r, o); err != nil {
			h.fatalf("session %s: core: Commit(%s): %v", x.name, name, err)
		}
	}
	twin, err := h.core.WorkflowOf(ctx, r.Ref)
	if err != nil {
		h.fatalf("session %s: core: WorkflowOf: %v", x.name, err)
	}
	wf, err := h.gate.SessionWorkflow(ctx, x.ss)
	if err != nil {
		h.fatalf("session %s: SessionWorkflow: %v", x.name, err)
	}
	tb, _ := json.Marshal(twin.Limits)
	wb, _ := json.Marshal(wf.Limits)
	if valueJSON(twin.State.Value()) != valueJSON(wf.State.Value()) || twin.State.Status() != wf.State.Status() || string(tb) != string(wb) {
		h.fatalf("session %s after %s: through the core the workflow is in %s (%v), budgets %s; through MCP in %s (%v), budgets %s", x.name, name,
			valueJSON(twin.State.Value()), twin.State.Status(), tb, valueJSON(wf.State.Value()), wf.State.Status(), wb)
	}
}

// checkRefusal checks a refused call's result and may start following its
// path.
func (h *propHarness) checkRefusal(x *propSession, name string, input map[string]any, res *mcp.CallToolResult, calls map[string]int) string {
	if !res.IsError {
		h.fatalf("session %s called hidden %s: not refused: %s", x.name, name, resultText(res))
	}
	pref, ok := mcpbind.RefusalOf(res)
	if !ok || res.StructuredContent != nil {
		h.fatalf("session %s called hidden %s: no refusal in _meta (%v), or structured content %v", x.name, name, res.Meta, res.StructuredContent)
	}
	ref := *pref
	b, _ := json.Marshal(ref)
	code := mcpbind.CodeForbidden
	if h.visible(x.shadow, name) {
		code = mcpbind.CodeEventRefused // visible, but guards refuse its event
		if ex := h.exhausted(x.shadow, calls); len(ex) > 0 && !h.leaves(x.shadow, name, input, ex) {
			code = mcpbind.CodeCallLimit // stopped by a used-up budget first
		}
	}
	avail := slices.Sorted(slices.Values(ref.Available))
	if ref.Code != code || ref.Tool != name || !slices.Equal(avail, x.list) ||
		valueJSON(ref.State) != valueJSON(x.shadow.Value()) || !slices.Equal(ref.Instructions, h.instructions(x.shadow)) {
		h.fatalf("session %s called hidden %s: refusal %s; want code %s, tools %v, state %s, instructions %q", x.name, name, b,
			code, x.list, valueJSON(x.shadow.Value()), h.instructions(x.shadow))
	}
	if code == mcpbind.CodeCallLimit {
		if len(ref.Limits) != len(h.exhausted(x.shadow, calls)) || len(ref.Path) != 0 || ref.Reachable {
			h.fatalf("session %s called %s: call-limit refusal %s; want the %d used-up budgets, no path", x.name, name, b, len(h.exhausted(x.shadow, calls)))
		}
		return "refused, call limit"
	}
	if code == mcpbind.CodeEventRefused {
		if len(ref.Guards) == 0 || ref.Event != h.m.info(name).event || len(ref.Path) != 0 || !ref.Reachable {
			h.fatalf("session %s called %s: guard refusal %s; want the event, its guards, no path", x.name, name, b)
		}
		return "refused, guard"
	}
	if !ref.Reachable {
		if len(ref.Path) != 0 {
			h.fatalf("refusal %s: a path although unreachable", b)
		}
		x.never[name] = true
		return "refused, unreachable"
	}
	// The guards pass on an event without input, so a tool bound to an
	// event that the state handles is visible: a hidden tool needs calls.
	if len(ref.Path) == 0 {
		h.fatalf("session %s called hidden %s: refusal %s: reachable with no path", x.name, name, b)
	}
	if x.plan == nil && h.rng.IntN(10) < 7 {
		x.plan = &propPlan{target: name, steps: ref.Path}
	}
	pb, _ := json.Marshal(ref.Path)
	return "refused, path [" + string(pb)[1:]
}
