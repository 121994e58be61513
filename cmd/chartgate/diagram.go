package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/statechart"
)

// cmdDiagram draws the machine's structure. Missing guard implementations
// do not matter for a drawing, so they are allowed (and, like every
// warning, reported on stderr).
func cmdDiagram(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("diagram")
	format := fs.String("format", "mermaid", "mermaid or dot")
	file, code, ok := oneFile(fs, "diagram", args, stdout, stderr)
	if !ok {
		return code
	}
	var render func(*chart) string
	switch *format {
	case "mermaid":
		render = (*chart).mermaid
	case "dot":
		render = (*chart).dot
	default:
		return usageError(stderr, "diagram", fmt.Errorf("unknown format %q (mermaid or dot)", *format))
	}
	m, code := load("diagram", file, statechart.Options{AllowMissingGuards: true}, stdin, stderr)
	if code != exitOK {
		return code
	}
	if _, err := io.WriteString(stdout, render(newChart(m))); err != nil {
		fmt.Fprintf(stderr, "chartgate diagram: %v\n", err)
		return exitFail
	}
	return exitOK
}

// chart is the tree of a machine's state nodes with its transitions as
// edges, ready to draw. Nodes are indexes into Machine.Nodes(); index 0 is
// the root, and -1 stands for the top level of the drawing, above it.
type chart struct {
	id       string
	nodes    []statechart.Node
	parent   []int
	children [][]int
	initial  []int // the initial child of a compound node, or -1
	edges    []edge
	// wrapRoot draws the root as a state of its own, around everything:
	// needed when it is parallel or atomic, has transitions, or is a target.
	// Otherwise the top level of the drawing shows the root's children.
	wrapRoot bool
	mid      []string // mermaid identifiers
}

// edge is one arrow: a transition to one of its targets (a targetless
// transition is drawn as a loop on its source), or, with initial set, the
// arrow from a compound state's start to its initial child.
type edge struct {
	src, tgt   int
	label      string
	targetless bool
	initial    bool
	// home is the compound state in whose Mermaid block the edge is
	// written: the parent of both ends when they are children of one
	// compound state (a loop included), else -1, the top level of the
	// diagram. See mermaid.
	home int
}

func newChart(m *statechart.Machine) *chart {
	nodes := m.Nodes()
	c := &chart{
		id:       m.ID(),
		nodes:    nodes,
		parent:   make([]int, len(nodes)),
		children: make([][]int, len(nodes)),
		initial:  make([]int, len(nodes)),
	}
	byID := make(map[string]int, len(nodes))
	for i, n := range nodes {
		byID[n.ID] = i
	}
	for i, n := range nodes {
		c.parent[i], c.initial[i] = -1, -1
		if i > 0 {
			p := byID[n.Parent]
			c.parent[i] = p
			c.children[p] = append(c.children[p], i)
		}
		if n.Initial != "" {
			c.initial[i] = byID[n.Initial]
		}
	}
	c.wrapRoot = nodes[0].Type != "compound" || len(c.children[0]) == 0 || len(nodes[0].Transitions) > 0
	for i, n := range nodes {
		if init := c.initial[i]; init >= 0 {
			c.edges = append(c.edges, edge{src: i, tgt: init, initial: true})
		}
		for _, t := range n.Transitions {
			label := eventLabel(n, t.Event)
			if t.Guard != "" {
				label += " [" + t.Guard + "]"
			}
			if len(t.Targets) == 0 {
				c.edges = append(c.edges, edge{src: i, tgt: i, label: label, targetless: true})
				continue
			}
			for _, id := range t.Targets {
				tgt := byID[id]
				c.wrapRoot = c.wrapRoot || tgt == 0
				c.edges = append(c.edges, edge{src: i, tgt: tgt, label: label})
			}
		}
	}
	for i := range c.edges {
		e := &c.edges[i]
		e.home = -1
		if p := c.parent[e.src]; e.initial {
			e.home = e.src
		} else if p >= 0 && p == c.parent[e.tgt] && nodes[p].Type == "compound" {
			e.home = p
		}
	}
	c.mid = mermaidIDs(nodes)
	return c
}

// eventLabel names a transition's event the way it is written in the
// config: "always", "after 1000ms", "onDone", "onDone(id)" (and onError,
// onSnapshot) for the children the state invokes, or the descriptor.
func eventLabel(n statechart.Node, event string) string {
	source := n.ID
	for _, inv := range n.Invokes {
		for _, h := range []struct{ prefix, name string }{
			{"xstate.done.actor.", "onDone"}, {"xstate.error.actor.", "onError"}, {"xstate.snapshot.", "onSnapshot"},
		} {
			if event == h.prefix+inv.ID {
				return h.name + "(" + inv.ID + ")"
			}
		}
	}
	switch {
	case event == "":
		return "always"
	case strings.HasPrefix(event, "xstate.after.") && strings.HasSuffix(event, "."+source):
		delay := strings.TrimSuffix(strings.TrimPrefix(event, "xstate.after."), "."+source)
		if _, err := strconv.ParseFloat(delay, 64); err == nil {
			return "after " + delay + "ms"
		}
		return "after " + delay
	case event == "xstate.done.state."+source:
		return "onDone"
	}
	return event
}

// within reports whether x is anc or one of its descendants.
func (c *chart) within(x, anc int) bool {
	for ; x >= 0; x = c.parent[x] {
		if x == anc {
			return true
		}
	}
	return false
}

// container reports whether node i is drawn as a box holding its children.
func (c *chart) container(i int) bool {
	t := c.nodes[i].Type
	return (t == "compound" || t == "parallel") && len(c.children[i]) > 0
}

// regions splits the children of a parallel node into its regions and the
// history states beside them.
func (c *chart) regions(i int) (regions, history []int) {
	for _, ch := range c.children[i] {
		if c.nodes[ch].Type == "history" {
			history = append(history, ch)
		} else {
			regions = append(regions, ch)
		}
	}
	return regions, history
}

// label is what a state's box says.
func (c *chart) label(i int) string {
	n := c.nodes[i]
	key := n.Key
	if i == 0 {
		key = c.id
	}
	if n.Type == "history" {
		return key + " (H)"
	}
	if len(n.Invokes) > 0 {
		srcs := make([]string, len(n.Invokes))
		for k, inv := range n.Invokes {
			srcs[k] = inv.Src
		}
		key += " / invoke " + strings.Join(srcs, ", ")
	}
	return key
}

// ---- Mermaid

// mermaidIDs gives every node an identifier made of letters, digits and
// underscores, from its id, unique even against the "<id>_start" and
// "<id>_end" identifiers Mermaid makes for the [*] of each composite state.
func mermaidIDs(nodes []statechart.Node) []string {
	used := map[string]bool{"root": true, "root_start": true, "root_end": true}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		base := sanitizeID(n.ID)
		id := base
		for k := 2; used[id] || used[id+"_start"] || used[id+"_end"]; k++ {
			id = base + "_" + strconv.Itoa(k)
		}
		used[id], used[id+"_start"], used[id+"_end"] = true, true, true
		ids[i] = id
	}
	return ids
}

// mermaidKeywords are words Mermaid's state diagram lexer would read as
// something other than a state identifier.
var mermaidKeywords = map[string]bool{
	"state": true, "note": true, "class": true, "classdef": true, "style": true,
	"scale": true, "direction": true, "click": true, "end": true, "as": true,
}

func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	id := b.String()
	lower := strings.ToLower(id)
	if id == "" || id[0] >= '0' && id[0] <= '9' || mermaidKeywords[lower] || strings.HasPrefix(lower, "default") {
		id = "s_" + id
	}
	return id
}

// mermaidText escapes what would end or break a label: Mermaid reads
// #code; as a character.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '#', ':', ';', '"', '%':
			fmt.Fprintf(&b, "#%d;", r)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

type lineWriter struct{ b strings.Builder }

func (w *lineWriter) line(depth int, format string, args ...any) {
	w.b.WriteString(strings.Repeat("    ", depth))
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

// mermaid renders a stateDiagram-v2: compound states as composite states,
// parallel regions separated by "--", [*] for initial and final states.
//
// Mermaid has no way to say which composite state a state belongs to other
// than where its id is written: depending on the version, the block that
// first mentions it (mermaid 11.x since #6337) or the last nested block
// that does (earlier versions) becomes its parent, while a mention at the
// top level never changes a parent. So every state is declared in its own
// parent's block before any edge mentions it, and the only ids written in
// another block are those of edges at the top level: an edge goes into
// the block of a compound state when both its ends are children of it, and
// to the top level otherwise (between regions, into or out of a composite
// state, across levels). The history states of a parallel state belong to
// none of its regions; they get a section of their own after the regions.
func (c *chart) mermaid() string {
	w := &lineWriter{}
	w.line(0, "stateDiagram-v2")
	if c.wrapRoot {
		w.line(1, "[*] --> %s", c.mid[0])
		c.mermaidState(w, 0, 1)
	} else {
		c.mermaidContents(w, 0, 1)
	}
	c.mermaidEdges(w, -1, 1)
	return w.b.String()
}

func (c *chart) mermaidState(w *lineWriter, i, depth int) {
	if !c.container(i) {
		w.line(depth, "state \"%s\" as %s", mermaidText(c.label(i)), c.mid[i])
		return
	}
	w.line(depth, "state \"%s\" as %s {", mermaidText(c.label(i)), c.mid[i])
	c.mermaidContents(w, i, depth+1)
	w.line(depth, "}")
}

// mermaidContents draws the inside of container i.
func (c *chart) mermaidContents(w *lineWriter, i, depth int) {
	if c.nodes[i].Type == "parallel" {
		regions, history := c.regions(i)
		for k, r := range regions {
			if k > 0 {
				w.line(depth, "--")
			}
			c.mermaidState(w, r, depth)
		}
		if len(history) > 0 && len(regions) > 0 {
			w.line(depth, "--")
		}
		for _, h := range history {
			c.mermaidState(w, h, depth)
		}
		return
	}
	if init := c.initial[i]; init >= 0 {
		w.line(depth, "[*] --> %s", c.mid[init])
	}
	for _, ch := range c.children[i] {
		c.mermaidState(w, ch, depth)
	}
	for _, ch := range c.children[i] {
		if c.nodes[ch].Type == "final" {
			w.line(depth, "%s --> [*]", c.mid[ch])
		}
	}
	c.mermaidEdges(w, i, depth)
}

// mermaidEdges draws the transition edges whose home is the given one.
func (c *chart) mermaidEdges(w *lineWriter, home, depth int) {
	for _, e := range c.edges {
		if e.initial || e.home != home {
			continue
		}
		w.line(depth, "%s --> %s : %s", c.mid[e.src], c.mid[e.tgt], mermaidText(e.label))
	}
}

// ---- Graphviz

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "").Replace(s) + `"`
}

func dotState(i int, c *chart) string   { return dotQuote("s:" + c.nodes[i].ID) }
func dotAnchor(i int, c *chart) string  { return dotQuote("i:" + c.nodes[i].ID) }
func dotCluster(i int, c *chart) string { return dotQuote("cluster_" + c.nodes[i].ID) }

// dot renders a Graphviz digraph: compound and parallel states as clusters
// (the regions of a parallel state dashed), each with a point node inside
// that is its initial pseudo-state (invisible for parallel states) and
// that edges to or from the whole state attach to.
func (c *chart) dot() string {
	w := &lineWriter{}
	w.line(0, "digraph %s {", dotQuote(c.id))
	w.line(1, "compound=true;")
	w.line(1, "node [shape=box, style=rounded];")
	if c.wrapRoot {
		c.dotNode(w, 0, 1)
	} else {
		c.dotContents(w, 0, 1)
	}
	for _, e := range c.edges {
		c.dotEdge(w, e)
	}
	w.line(0, "}")
	return w.b.String()
}

func (c *chart) dotNode(w *lineWriter, i, depth int) {
	n := c.nodes[i]
	if !c.container(i) {
		attrs := "label=" + dotQuote(c.label(i))
		switch n.Type {
		case "final":
			attrs += ", peripheries=2"
		case "history":
			attrs += ", shape=ellipse"
		}
		w.line(depth, "%s [%s];", dotState(i, c), attrs)
		return
	}
	w.line(depth, "subgraph %s {", dotCluster(i, c))
	w.line(depth+1, "label=%s;", dotQuote(c.label(i)))
	if p := c.parent[i]; p >= 0 && c.nodes[p].Type == "parallel" {
		w.line(depth+1, "style=\"rounded,dashed\";")
	} else {
		w.line(depth+1, "style=rounded;")
	}
	c.dotContents(w, i, depth+1)
	w.line(depth, "}")
}

func (c *chart) dotContents(w *lineWriter, i, depth int) {
	if c.nodes[i].Type == "parallel" {
		w.line(depth, "%s [shape=point, style=invis];", dotAnchor(i, c))
	} else {
		w.line(depth, "%s [shape=point, width=0.15];", dotAnchor(i, c))
	}
	for _, ch := range c.children[i] {
		c.dotNode(w, ch, depth)
	}
}

// dotEnd returns the node an edge attaches to for state i, and the cluster
// to clip it at when i is drawn as a cluster that the other end is outside of.
func (c *chart) dotEnd(i, other int) (node, cluster string) {
	if !c.container(i) {
		return dotState(i, c), ""
	}
	if (i > 0 || c.wrapRoot) && !c.within(other, i) {
		cluster = dotCluster(i, c)
	}
	return dotAnchor(i, c), cluster
}

func (c *chart) dotEdge(w *lineWriter, e edge) {
	if e.initial {
		head, lhead := c.dotEnd(e.tgt, e.src)
		attrs := ""
		if lhead != "" {
			attrs = " [lhead=" + lhead + "]"
		}
		w.line(1, "%s -> %s%s;", dotAnchor(e.src, c), head, attrs)
		return
	}
	tail, ltail := c.dotEnd(e.src, e.tgt)
	head, lhead := c.dotEnd(e.tgt, e.src)
	attrs := []string{"label=" + dotQuote(e.label)}
	if ltail != "" {
		attrs = append(attrs, "ltail="+ltail)
	}
	if lhead != "" {
		attrs = append(attrs, "lhead="+lhead)
	}
	if e.targetless {
		attrs = append(attrs, "style=dashed")
	}
	w.line(1, "%s -> %s [%s];", tail, head, strings.Join(attrs, ", "))
}
