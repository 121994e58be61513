// Package diagram draws the structure of a compiled statechart: as a
// Mermaid state diagram ([Chart.Mermaid]), a Graphviz digraph
// ([Chart.DOT]) or a self-contained SVG image ([Chart.SVG]) laid out by the
// package itself, with no layout engine and no script.
//
// `chartgate diagram` prints the three; `chartgate ui` shows the SVG with
// the active states of a workflow lit.
//
// # What is drawn
//
// Compound and parallel states are boxes around their children; the
// regions of a parallel state are dashed, as in XState's visualiser.
// Final states have a double border. History states are circles marked H
// (shallow) or H* (deep); the depth is read from the machine's config,
// since [statechart.Node] does not carry it.
//
// Edges are labelled in the terms of the config, not with the internal
// event types: the event's name; "always" for an eventless transition;
// "after 500ms" (or "after <delay name>"); "done" for a state's own onDone;
// "done: <child>", "error: <child>" and "snapshot: <child>" for the
// onDone, onError and onSnapshot of an invoked child, named by its id, or
// by its src when the id is the one XState makes up ("<index>.<state id>").
// A guard follows in brackets by name; XState's built-in guards are written
// out from the config: [in #m.a], [!in #m.a], [a && b], [a || b].
//
// A transition of a compound or parallel state to one of its own
// descendants (or a targetless one) leaves the state itself: in the SVG
// from its title, in Mermaid and Graphviz from a node "any state of S"
// inside it, since neither draws an edge from a cluster to its own inside.
// A transition from inside a state to the state itself goes, in Graphviz
// and the SVG, to the state's initial pseudo-state (entering the state is
// entering it), and in Mermaid to a node "enter S" inside it.
//
// # SVG layout
//
// The layout is deterministic; it takes time proportional to the states
// plus the transitions times the machine's depth: the children of a compound state are placed in columns, by their distance
// from its initial state along the transitions between them (a
// breadth-first search, in document order); the regions of a parallel
// state side by side. Edges are quadratic curves between the borders of
// their ends, bent to the left of their direction, more when they skip
// columns, so that a transition and its way back do not overlap; a label
// that would cover a state or a label written before it moves a line away,
// up to 8 times. Labels are in a monospace font, so their width is known without
// a browser.
//
// Every state is a group <g class="state ..." data-id="ID"> (the root's
// also has the class "root"); the states of [SVGOptions.Active] have the
// class "active" as well, which the image's own style sheet lights (all
// but the root, which is always active). A page can light other states by
// setting that class.
package diagram
