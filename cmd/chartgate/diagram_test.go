// This file checks where each state lands in the drawings of machines with
// parallel states, history states and transitions across regions and
// levels: in Mermaid's composite states and regions, in Graphviz's clusters.

package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// regionsMachine has a parallel state work with three regions (a, b, c)
// and a history state between two of them; transitions go from region to
// region in both directions, into a region as a whole, up and down levels,
// to the parallel state's history and to a region's history, and out.
const regionsMachine = `{"id": "m", "initial": "work", "states": {
  "work": {"type": "parallel", "on": {"PAUSE": "paused"}, "states": {
    "a": {"initial": "a1", "states": {
      "a1": {"on": {"GO": "#m.work.b.b2", "DEEP": "a2"}},
      "a2": {"initial": "x", "states": {
        "x": {"on": {"UP": "#m.work.a.a1", "OVER": "#m.work.b", "FAR": "#m.work.c.c1"}}}}}},
    "b": {"initial": "b1", "states": {
      "b1": {},
      "b2": {"on": {"BACK": "#m.work.a.a2.x", "AGAIN": "bh"}},
      "bh": {"type": "history", "history": "deep"}}},
    "hist": {"type": "history"},
    "c": {"initial": "c1", "states": {
      "c1": {"on": {"LEAVE": "#m.done", "HIST": "#m.work.hist", "SIDE": "#m.work.a"}}}}}},
  "paused": {"on": {"RESUME": "work.hist", "INTO_B": "#m.work.b.bh", "INTO_X": "#m.work.a.a2.x"}},
  "done": {"type": "final"}}}`

// rootParallelMachine is drawn with its root wrapped: the root is parallel,
// has a history state and transitions of its own.
const rootParallelMachine = `{"id": "p", "type": "parallel", "on": {"RESTORE": ".h"}, "states": {
  "h": {"type": "history", "history": "deep"},
  "left": {"initial": "l1", "states": {"l1": {"on": {"X": "#p.right.r2"}}, "l2": {}}},
  "right": {"initial": "r1", "states": {"r1": {"on": {"Y": "#p.left.l2", "Z": "#p.h"}}, "r2": {}}}}}`

func TestDiagramPlacesStatesInTheirRegions(t *testing.T) {
	for _, c := range []struct {
		name, machine string
		// mermaid: Mermaid id -> the block it belongs to: "" for the top
		// level, a composite state's id, or id#k for section k of a
		// composite state with regions.
		mermaid map[string]string
		// dot: state id -> the id of the cluster it is drawn in ("" for
		// none).
		dot map[string]string
	}{
		{
			name:    "regions",
			machine: regionsMachine,
			mermaid: map[string]string{
				"m_work": "", "m_paused": "", "m_done": "",
				"m_work_a": "m_work#0", "m_work_b": "m_work#1", "m_work_c": "m_work#2", "m_work_hist": "m_work#3",
				"m_work_a_a1": "m_work_a", "m_work_a_a2": "m_work_a", "m_work_a_a2_x": "m_work_a_a2",
				"m_work_b_b1": "m_work_b", "m_work_b_b2": "m_work_b", "m_work_b_bh": "m_work_b",
				"m_work_c_c1": "m_work_c",
			},
			dot: map[string]string{
				"m.work": "", "m.paused": "", "m.done": "",
				"m.work.a": "m.work", "m.work.b": "m.work", "m.work.c": "m.work", "m.work.hist": "m.work",
				"m.work.a.a1": "m.work.a", "m.work.a.a2": "m.work.a", "m.work.a.a2.x": "m.work.a.a2",
				"m.work.b.b1": "m.work.b", "m.work.b.b2": "m.work.b", "m.work.b.bh": "m.work.b",
				"m.work.c.c1": "m.work.c",
			},
		},
		{
			name:    "root parallel",
			machine: rootParallelMachine,
			mermaid: map[string]string{
				"p":      "",
				"p_left": "p#0", "p_right": "p#1", "p_h": "p#2",
				"p_left_l1": "p_left", "p_left_l2": "p_left",
				"p_right_r1": "p_right", "p_right_r2": "p_right",
			},
			dot: map[string]string{
				"p":      "",
				"p.left": "p", "p.right": "p", "p.h": "p",
				"p.left.l1": "p.left", "p.left.l2": "p.left",
				"p.right.r1": "p.right", "p.right.r2": "p.right",
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeFile(t, "machine.json", c.machine)

			code, out, errOut := chartgate("diagram", file)
			require.Equal(t, exitOK, code, errOut)
			got, sections := mermaidPlaces(t, out)
			assert.Equal(t, c.mermaid, got, "Mermaid blocks:\n%s", out)
			// Each history section holds history states only: it is
			// not one of the regions.
			for id, place := range c.mermaid {
				if strings.HasSuffix(id, "_h") || strings.HasSuffix(id, "_hist") {
					for other, p := range c.mermaid {
						if p == place && other != id {
							t.Errorf("%s shares its section %s with %s", id, place, other)
						}
					}
					assert.Contains(t, sections, place)
				}
			}

			code, out, errOut = chartgate("diagram", file, "--format", "dot")
			require.Equal(t, exitOK, code, errOut)
			assert.Equal(t, c.dot, dotPlaces(t, out), "Graphviz clusters:\n%s", out)
		})
	}
}

var (
	mermaidStateLine = regexp.MustCompile(`^state "[^"]*" as (\w+)( \{)?$`)
	mermaidEdgeLine  = regexp.MustCompile(`^(\[\*\]|\w+) --> (\[\*\]|\w+)( : .*)?$`)
)

// mermaidPlaces reads a stateDiagram-v2 the way Mermaid assigns states to
// composite states, and returns the block each state belongs to, as in the
// test table, and the sections found. Mermaid gives a state the parent of
// the first block (11.x) or the last nested block (earlier versions) that
// mentions it, where mentions at the top level do not count; so every
// state must be mentioned in one block only, apart from the top level, for
// both to draw it in the same place. It fails the test otherwise.
func mermaidPlaces(t *testing.T, diagram string) (map[string]string, []string) {
	t.Helper()
	type block struct {
		id      string
		section int
	}
	var stack []*block
	mentions := map[string][]*block{} // per state, the blocks it is mentioned in (nil: the top level)
	divided := map[string]bool{}      // composite states with "--"
	mention := func(id string) {
		if id == "[*]" {
			return
		}
		var b *block
		if len(stack) > 0 {
			top := *stack[len(stack)-1]
			b = &top
		}
		mentions[id] = append(mentions[id], b)
	}
	for i, line := range strings.Split(strings.TrimSpace(diagram), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 {
			require.Equal(t, "stateDiagram-v2", line)
			continue
		}
		if m := mermaidStateLine.FindStringSubmatch(line); m != nil {
			mention(m[1])
			if m[2] != "" {
				stack = append(stack, &block{id: m[1]})
			}
			continue
		}
		if m := mermaidEdgeLine.FindStringSubmatch(line); m != nil {
			mention(m[1])
			mention(m[2])
			continue
		}
		switch line {
		case "}":
			require.NotEmpty(t, stack, "unbalanced }")
			stack = stack[:len(stack)-1]
		case "--":
			require.NotEmpty(t, stack, "-- at the top level")
			b := stack[len(stack)-1]
			b.section++
			divided[b.id] = true
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	require.Empty(t, stack, "unclosed {")
	name := func(b *block) string {
		if divided[b.id] {
			return b.id + "#" + strconv.Itoa(b.section)
		}
		return b.id
	}
	places := map[string]string{}
	var sections []string
	for id, bs := range mentions {
		var nested []string
		for _, b := range bs {
			if b != nil && !slices.Contains(nested, name(b)) {
				nested = append(nested, name(b))
			}
		}
		if len(nested) > 1 {
			t.Errorf("%s is mentioned in %d blocks, %v: Mermaid versions disagree on where it goes", id, len(nested), nested)
		}
		if len(nested) > 0 {
			places[id] = nested[0]
			if strings.Contains(nested[0], "#") {
				sections = append(sections, nested[0])
			}
		} else {
			places[id] = ""
		}
	}
	return places, sections
}

var (
	dotClusterLine = regexp.MustCompile(`^subgraph "cluster_([^"]+)" \{$`)
	dotNodeLine    = regexp.MustCompile(`^"s:([^"]+)" \[`)
	dotEdgeLine    = regexp.MustCompile(`^"[si]:([^"]+)" -> "[si]:([^"]+)"`)
)

// dotPlaces returns the cluster each state is drawn in: a state node
// declared there, or a composite state's own cluster drawn there. Edges
// must be at the top level, where mentioning a node does not move it.
func dotPlaces(t *testing.T, diagram string) map[string]string {
	t.Helper()
	var stack []string
	places := map[string]string{}
	declare := func(id string) {
		_, seen := places[id]
		require.False(t, seen, "%s declared twice", id)
		places[id] = ""
		if len(stack) > 0 {
			places[id] = stack[len(stack)-1]
		}
	}
	for _, line := range strings.Split(diagram, "\n") {
		line = strings.TrimSpace(line)
		switch m := dotClusterLine.FindStringSubmatch(line); {
		case m != nil:
			declare(m[1])
			stack = append(stack, m[1])
		case line == "}":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case dotNodeLine.MatchString(line):
			declare(dotNodeLine.FindStringSubmatch(line)[1])
		case dotEdgeLine.MatchString(line):
			require.Empty(t, stack, "edge inside a cluster: %s", line)
		}
	}
	return places
}
