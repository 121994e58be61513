package diagram

// This file draws the chart as a Mermaid stateDiagram-v2.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/statechart"
)

// mermaidIDs gives every node an identifier made of letters, digits and
// underscores, from its id, unique even against the "<id>_start" and
// "<id>_end" identifiers Mermaid makes for the [*] of each composite
// state, and the "<id>_any" and "<id>_enter" of the chart's own nodes.
func mermaidIDs(nodes []statechart.Node) []string {
	suffixes := []string{"", "_start", "_end", "_any", "_enter"}
	used := map[string]bool{}
	for _, s := range suffixes {
		used["root"+s] = true
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		base := sanitizeID(n.ID)
		id := base
		for k := 2; ; k++ {
			free := true
			for _, s := range suffixes {
				free = free && !used[id+s]
			}
			if free {
				break
			}
			id = base + "_" + strconv.Itoa(k)
		}
		for _, s := range suffixes {
			used[id+s] = true
		}
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

// Mermaid renders a stateDiagram-v2: compound states as composite states,
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
// none of its regions; they get a section of their own after the regions,
// with its "any state of" and "enter" nodes.
func (c *Chart) Mermaid() string {
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

func (c *Chart) mermaidState(w *lineWriter, i, depth int) {
	if !c.container(i) {
		w.line(depth, "state \"%s\" as %s", mermaidText(c.label(i)), c.mid[i])
		return
	}
	w.line(depth, "state \"%s\" as %s {", mermaidText(c.label(i)), c.mid[i])
	c.mermaidContents(w, i, depth+1)
	w.line(depth, "}")
}

// ownNodes reports whether container i needs its "any state of" node
// (edges leave i itself) and its "enter" node (edges enter i from within).
func (c *Chart) ownNodes(i int) (anyNode, enterNode bool) {
	return c.anyNode[i], c.enterNode[i]
}

func (c *Chart) mermaidOwnNodes(w *lineWriter, i, depth int) {
	anyNode, enterNode := c.ownNodes(i)
	if anyNode {
		w.line(depth, "state \"%s\" as %s_any", mermaidText("any state of "+c.name(i)), c.mid[i])
	}
	if enterNode {
		w.line(depth, "state \"%s\" as %s_enter", mermaidText("enter "+c.name(i)), c.mid[i])
	}
}

// mermaidContents draws the inside of container i.
func (c *Chart) mermaidContents(w *lineWriter, i, depth int) {
	if c.nodes[i].Type == "parallel" {
		regions, history := c.regions(i)
		for k, r := range regions {
			if k > 0 {
				w.line(depth, "--")
			}
			c.mermaidState(w, r, depth)
		}
		anyNode, enterNode := c.ownNodes(i)
		if (len(history) > 0 || anyNode || enterNode) && len(regions) > 0 {
			w.line(depth, "--")
		}
		for _, h := range history {
			c.mermaidState(w, h, depth)
		}
		c.mermaidOwnNodes(w, i, depth)
		return
	}
	if init := c.initial[i]; init >= 0 {
		w.line(depth, "[*] --> %s", c.mid[init])
	}
	for _, ch := range c.children[i] {
		c.mermaidState(w, ch, depth)
	}
	c.mermaidOwnNodes(w, i, depth)
	for _, ch := range c.children[i] {
		if c.nodes[ch].Type == "final" {
			w.line(depth, "%s --> [*]", c.mid[ch])
		}
	}
	c.mermaidEdges(w, i, depth)
}

// mermaidEnds returns the identifiers an edge goes between, and the
// composite state whose block both are declared in (-1: none).
func (c *Chart) mermaidEnds(e edge) (src, tgt string, home int) {
	src, sp := c.mid[e.src], c.parent[e.src]
	if e.fromAny {
		src, sp = c.mid[e.src]+"_any", e.src
	}
	tgt, tp := c.mid[e.tgt], c.parent[e.tgt]
	switch {
	case e.intoSelf:
		tgt, tp = c.mid[e.tgt]+"_enter", e.tgt
	case e.targetless:
		tgt, tp = src, sp
	}
	home = -1
	if sp >= 0 && sp == tp && c.nodes[sp].Type == "compound" {
		home = sp
	}
	return src, tgt, home
}

// mermaidEdges draws the transition edges whose home is the given one.
func (c *Chart) mermaidEdges(w *lineWriter, home, depth int) {
	for _, e := range c.edges {
		if e.initial {
			continue
		}
		if src, tgt, h := c.mermaidEnds(e); h == home {
			w.line(depth, "%s --> %s : %s", src, tgt, mermaidText(e.label))
		}
	}
}
