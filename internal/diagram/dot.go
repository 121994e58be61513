package diagram

// This file draws the chart as a Graphviz digraph.

import "strings"

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "").Replace(s) + `"`
}

func (c *Chart) dotState(i int) string   { return dotQuote("s:" + c.nodes[i].ID) }
func (c *Chart) dotAnchor(i int) string  { return dotQuote("i:" + c.nodes[i].ID) }
func (c *Chart) dotAny(i int) string     { return dotQuote("a:" + c.nodes[i].ID) }
func (c *Chart) dotEnter(i int) string   { return dotQuote("n:" + c.nodes[i].ID) }
func (c *Chart) dotCluster(i int) string { return dotQuote("cluster_" + c.nodes[i].ID) }

// DOT renders a Graphviz digraph: compound and parallel states as clusters
// (the regions of a parallel state dashed), each with a point node inside
// that is its initial pseudo-state (invisible for parallel states) and
// that edges to or from the whole state attach to. Edges that leave a
// cluster's state itself for its inside start at a node "any state of S"
// in it; edges into a parallel state from its inside end at a node
// "enter S" in it.
func (c *Chart) DOT() string {
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

func (c *Chart) dotNode(w *lineWriter, i, depth int) {
	n := c.nodes[i]
	if !c.container(i) {
		attrs := "label=" + dotQuote(c.label(i))
		switch n.Type {
		case "final":
			attrs += ", peripheries=2"
		case "history":
			attrs += ", shape=ellipse"
		}
		w.line(depth, "%s [%s];", c.dotState(i), attrs)
		return
	}
	w.line(depth, "subgraph %s {", c.dotCluster(i))
	w.line(depth+1, "label=%s;", dotQuote(c.label(i)))
	if p := c.parent[i]; p >= 0 && c.nodes[p].Type == "parallel" {
		w.line(depth+1, "style=\"rounded,dashed\";")
	} else {
		w.line(depth+1, "style=rounded;")
	}
	c.dotContents(w, i, depth+1)
	w.line(depth, "}")
}

func (c *Chart) dotContents(w *lineWriter, i, depth int) {
	parallel := c.nodes[i].Type == "parallel"
	if parallel {
		w.line(depth, "%s [shape=point, style=invis];", c.dotAnchor(i))
	} else {
		w.line(depth, "%s [shape=point, width=0.15];", c.dotAnchor(i))
	}
	anyNode, enterNode := c.ownNodes(i)
	if anyNode {
		w.line(depth, "%s [label=%s, shape=plaintext];", c.dotAny(i), dotQuote("any state of "+c.name(i)))
	}
	if enterNode && parallel {
		w.line(depth, "%s [label=%s, shape=plaintext];", c.dotEnter(i), dotQuote("enter "+c.name(i)))
	}
	for _, ch := range c.children[i] {
		c.dotNode(w, ch, depth)
	}
}

// dotEnd returns the node an edge attaches to for state i, and the cluster
// to clip it at when i is drawn as a cluster that the other end is outside of.
func (c *Chart) dotEnd(i, other int) (node, cluster string) {
	if !c.container(i) {
		return c.dotState(i), ""
	}
	if (i > 0 || c.wrapRoot) && !c.within(other, i) {
		cluster = c.dotCluster(i)
	}
	return c.dotAnchor(i), cluster
}

func (c *Chart) dotEdge(w *lineWriter, e edge) {
	if e.initial {
		head, lhead := c.dotEnd(e.tgt, e.src)
		attrs := ""
		if lhead != "" {
			attrs = " [lhead=" + lhead + "]"
		}
		w.line(1, "%s -> %s%s;", c.dotAnchor(e.src), head, attrs)
		return
	}
	tail, ltail := c.dotEnd(e.src, e.tgt)
	if e.fromAny {
		tail, ltail = c.dotAny(e.src), ""
	}
	head, lhead := c.dotEnd(e.tgt, e.src)
	switch {
	case e.targetless:
		head, lhead = tail, ""
	case e.intoSelf && c.nodes[e.tgt].Type == "parallel":
		head, lhead = c.dotEnter(e.tgt), ""
	case e.intoSelf:
		head, lhead = c.dotAnchor(e.tgt), ""
	}
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
