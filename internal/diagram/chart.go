package diagram

// This file defines the chart: the tree of a machine's state nodes, its
// transitions as labelled edges, and what the config adds (history depth,
// built-in guards written out).

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/statechart"
)

// Chart is a machine's structure, ready to draw. It is immutable and safe
// for concurrent use.
type Chart struct {
	id       string
	nodes    []statechart.Node
	parent   []int
	children [][]int
	initial  []int  // the initial child of a compound node, or -1
	deep     []bool // history nodes: deep
	edges    []edge
	byID     map[string]int
	// wrapRoot: Mermaid and Graphviz draw the root as a state of its own,
	// around everything: needed when it is parallel or atomic, has
	// transitions, or is a target. Otherwise their top level shows the
	// root's children. The SVG always draws the root.
	wrapRoot bool
	mid      []string // mermaid identifiers
	// anyNode and enterNode: container i needs its "any state of" node
	// (edges leave i itself) and its "enter" node (edges enter i from
	// within), in Mermaid and Graphviz.
	anyNode, enterNode []bool
}

// edge is one arrow: a transition to one of its targets (a targetless
// transition is drawn as a loop on its source), or, with initial set, the
// arrow from a compound state's start to its initial child.
type edge struct {
	src, tgt   int
	label      string
	targetless bool
	initial    bool
	// fromAny: src is a compound or parallel state and tgt is src or
	// inside it: the edge leaves src itself, not its border (see the
	// package documentation).
	fromAny bool
	// intoSelf: tgt is a compound or parallel state and src is inside it,
	// or is it (a targeted transition to itself): the edge enters tgt
	// from within.
	intoSelf bool
}

// New returns the chart of m. config is the machine config m was compiled
// from (XState JSON), read for what [statechart.Node] does not say: the
// depth of history states and the built-in guards' parameters. It may be
// nil; a config that does not read is ignored likewise, and history states
// are then drawn shallow and built-in guards by their type.
func New(m *statechart.Machine, config []byte) *Chart {
	nodes := m.Nodes()
	c := &Chart{
		id:       m.ID(),
		nodes:    nodes,
		parent:   make([]int, len(nodes)),
		children: make([][]int, len(nodes)),
		initial:  make([]int, len(nodes)),
		deep:     make([]bool, len(nodes)),
		byID:     make(map[string]int, len(nodes)),
	}
	for i, n := range nodes {
		c.byID[n.ID] = i
	}
	for i, n := range nodes {
		c.parent[i], c.initial[i] = -1, -1
		if i > 0 {
			p := c.byID[n.Parent]
			c.parent[i] = p
			c.children[p] = append(c.children[p], i)
		}
		if n.Initial != "" {
			c.initial[i] = c.byID[n.Initial]
		}
	}
	cfg := c.readConfig(config)
	c.wrapRoot = nodes[0].Type != "compound" || len(c.children[0]) == 0 || len(nodes[0].Transitions) > 0
	for i, n := range nodes {
		if init := c.initial[i]; init >= 0 {
			c.edges = append(c.edges, edge{src: i, tgt: init, initial: true})
		}
		seen := map[string]int{}
		for _, t := range n.Transitions {
			label := eventLabel(n, t.Event)
			k := seen[t.Event]
			seen[t.Event]++
			if g := cfg.guard(i, n, t.Event, k); g != "" {
				label += " [" + g + "]"
			} else if t.Guard != "" {
				label += " [" + t.Guard + "]"
			}
			if len(t.Targets) == 0 {
				c.edges = append(c.edges, edge{src: i, tgt: i, label: label, targetless: true, fromAny: c.container(i)})
				continue
			}
			for _, id := range t.Targets {
				tgt := c.byID[id]
				c.wrapRoot = c.wrapRoot || tgt == 0
				e := edge{src: i, tgt: tgt, label: label}
				e.fromAny = c.container(i) && c.within(tgt, i)
				e.intoSelf = c.container(tgt) && c.within(i, tgt)
				c.edges = append(c.edges, e)
			}
		}
	}
	c.mid = mermaidIDs(nodes)
	c.anyNode, c.enterNode = make([]bool, len(nodes)), make([]bool, len(nodes))
	for _, e := range c.edges {
		c.anyNode[e.src] = c.anyNode[e.src] || e.fromAny
		c.enterNode[e.tgt] = c.enterNode[e.tgt] || e.intoSelf
	}
	return c
}

// defaultInvokeID is the id XState gives an invoke without one:
// "<index>.<state id>".
var defaultInvokeID = regexp.MustCompile(`^[0-9]+\.`)

// eventLabel names a transition's event in the terms of the config.
func eventLabel(n statechart.Node, event string) string {
	for _, inv := range n.Invokes {
		name := inv.ID
		if defaultInvokeID.MatchString(inv.ID) && strings.TrimPrefix(inv.ID, defaultInvokeID.FindString(inv.ID)) == n.ID && inv.Src != "" {
			name = inv.Src
		}
		for _, h := range []struct{ prefix, name string }{
			{"xstate.done.actor.", "done: "}, {"xstate.error.actor.", "error: "}, {"xstate.snapshot.", "snapshot: "},
		} {
			if event == h.prefix+inv.ID {
				return h.name + name
			}
		}
	}
	switch {
	case event == "":
		return "always"
	case strings.HasPrefix(event, "xstate.after.") && strings.HasSuffix(event, "."+n.ID):
		delay := strings.TrimSuffix(strings.TrimPrefix(event, "xstate.after."), "."+n.ID)
		if _, err := strconv.ParseFloat(delay, 64); err == nil {
			return "after " + delay + "ms"
		}
		return "after " + delay
	case event == "xstate.done.state."+n.ID:
		return "done"
	}
	return event
}

// within reports whether x is anc or one of its descendants.
func (c *Chart) within(x, anc int) bool {
	for ; x >= 0; x = c.parent[x] {
		if x == anc {
			return true
		}
	}
	return false
}

// container reports whether node i is drawn as a box holding its children.
func (c *Chart) container(i int) bool {
	t := c.nodes[i].Type
	return (t == "compound" || t == "parallel") && len(c.children[i]) > 0
}

// regions splits the children of a parallel node into its regions and the
// history states beside them.
func (c *Chart) regions(i int) (regions, history []int) {
	for _, ch := range c.children[i] {
		if c.nodes[ch].Type == "history" {
			history = append(history, ch)
		} else {
			regions = append(regions, ch)
		}
	}
	return regions, history
}

// name is a state's key, or the machine's id for the root.
func (c *Chart) name(i int) string {
	if i == 0 {
		return c.id
	}
	return c.nodes[i].Key
}

// historyMark is H or H*.
func (c *Chart) historyMark(i int) string {
	if c.deep[i] {
		return "H*"
	}
	return "H"
}

// label is what a state's box says in Mermaid and Graphviz.
func (c *Chart) label(i int) string {
	key := c.name(i)
	n := c.nodes[i]
	if n.Type == "history" {
		return key + " (" + c.historyMark(i) + ")"
	}
	if inv := c.invokeText(i); inv != "" {
		key += " / " + inv
	}
	return key
}

// invokeText lists what a state invokes: "invoke a, b", or "".
func (c *Chart) invokeText(i int) string {
	n := c.nodes[i]
	if len(n.Invokes) == 0 {
		return ""
	}
	srcs := make([]string, len(n.Invokes))
	for k, inv := range n.Invokes {
		srcs[k] = inv.Src
	}
	return "invoke " + strings.Join(srcs, ", ")
}

// ---- the config

// nodeConfig is the part of the config one node is written with.
type nodeConfig map[string]json.RawMessage

// configs holds the config object of each node (nil where not found).
type configs []nodeConfig

// readConfig finds each node's object in the config by the keys from the
// root, and reads the depth of the history states.
func (c *Chart) readConfig(config []byte) configs {
	cfg := make(configs, len(c.nodes))
	if len(config) == 0 || json.Unmarshal(config, &cfg[0]) != nil {
		return cfg
	}
	// Each node's "states" is read once, when its first child needs it.
	states := make(map[int]map[string]json.RawMessage)
	for i := 1; i < len(c.nodes); i++ {
		p := c.parent[i]
		if cfg[p] == nil {
			continue
		}
		if _, ok := states[p]; !ok {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(cfg[p]["states"], &m)
			states[p] = m
		}
		var n nodeConfig
		if json.Unmarshal(states[p][c.nodes[i].Key], &n) == nil {
			cfg[i] = n
		}
	}
	for i, n := range cfg {
		var h string
		if n != nil && json.Unmarshal(n["history"], &h) == nil {
			c.deep[i] = h == "deep"
		}
	}
	return cfg
}

// guard returns the guard of the k-th transition of node i on event, from
// the config, written out; "" if the config does not say.
func (cfg configs) guard(i int, n statechart.Node, event string, k int) string {
	nc := cfg[i]
	if nc == nil {
		return ""
	}
	var list json.RawMessage
	pick := func(key, sub string) {
		var m map[string]json.RawMessage
		if json.Unmarshal(nc[key], &m) == nil {
			list = m[sub]
		}
	}
	switch {
	case event == "":
		list = nc["always"]
	case strings.HasPrefix(event, "xstate.after.") && strings.HasSuffix(event, "."+n.ID):
		pick("after", strings.TrimSuffix(strings.TrimPrefix(event, "xstate.after."), "."+n.ID))
	case event == "xstate.done.state."+n.ID:
		list = nc["onDone"]
	default:
		list = invokeHandler(nc, n, event)
		if list == nil {
			pick("on", event)
		}
	}
	var ts []json.RawMessage
	if len(list) > 0 && list[0] == '[' {
		if json.Unmarshal(list, &ts) != nil {
			return ""
		}
	} else if list != nil {
		ts = []json.RawMessage{list}
	}
	if k >= len(ts) {
		return ""
	}
	var t struct {
		Guard json.RawMessage `json:"guard"`
	}
	if json.Unmarshal(ts[k], &t) != nil || t.Guard == nil {
		return ""
	}
	return guardText(t.Guard, 0)
}

// invokeHandler returns the onDone, onError or onSnapshot of the invoke
// whose event this is, or nil.
func invokeHandler(nc nodeConfig, n statechart.Node, event string) json.RawMessage {
	var invs []nodeConfig
	if raw := nc["invoke"]; len(raw) > 0 && raw[0] == '[' {
		_ = json.Unmarshal(raw, &invs)
	} else if raw != nil {
		var one nodeConfig
		if json.Unmarshal(raw, &one) == nil {
			invs = []nodeConfig{one}
		}
	}
	for k, inv := range n.Invokes {
		if k >= len(invs) {
			break
		}
		for _, h := range []struct{ prefix, key string }{
			{"xstate.done.actor.", "onDone"}, {"xstate.error.actor.", "onError"}, {"xstate.snapshot.", "onSnapshot"},
		} {
			if event == h.prefix+inv.ID {
				return invs[k][h.key]
			}
		}
	}
	return nil
}

// guardText writes a guard of the config: its name, or XState's built-ins
// as expressions. Nesting deeper than 8 is written "...".
func guardText(raw json.RawMessage, depth int) string {
	if depth > 8 {
		return "..."
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return name
	}
	var g struct {
		Type   string `json:"type"`
		Params struct {
			Guard      json.RawMessage   `json:"guard"`
			Guards     []json.RawMessage `json:"guards"`
			StateValue json.RawMessage   `json:"stateValue"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &g) != nil {
		return ""
	}
	join := func(op string) string {
		parts := make([]string, len(g.Params.Guards))
		for k, s := range g.Params.Guards {
			parts[k] = guardText(s, depth+1)
			if strings.Contains(parts[k], " ") && !strings.HasPrefix(parts[k], "in ") {
				parts[k] = "(" + parts[k] + ")"
			}
		}
		return strings.Join(parts, " "+op+" ")
	}
	switch g.Type {
	case "xstate.stateIn":
		var s string
		if json.Unmarshal(g.Params.StateValue, &s) == nil {
			return "in " + s
		}
		return "in " + string(g.Params.StateValue)
	case "xstate.not":
		inner := guardText(g.Params.Guard, depth+1)
		if strings.Contains(inner, " ") && !strings.HasPrefix(inner, "in ") {
			return "!(" + inner + ")"
		}
		return "!" + inner
	case "xstate.and":
		return join("&&")
	case "xstate.or":
		return join("||")
	}
	return g.Type
}
