// This file checks the drawings of `chartgate diagram` against golden
// files, and where each state lands in the drawings of machines with
// parallel states, history states and transitions across regions and
// levels: in Mermaid's composite states and regions, in Graphviz's clusters.

package main

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
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
// (testdata/diagram/regions.json)
const regionsMachine = "diagram/regions.json"

// rootParallelMachine is drawn with its root wrapped: the root is parallel,
// has a history state and transitions of its own, one of them to its
// history state, which leaves the root itself ("any state of p").
// (testdata/diagram/root-parallel.json)
const rootParallelMachine = "diagram/root-parallel.json"

var update = flag.Bool("update", false, "rewrite the golden files of testdata/diagram")

// TestDiagramGolden draws every machine of examples/machines and
// testdata/diagram in the three formats and compares the drawings with
// testdata/diagram/<name>.{mmd,dot,svg}; -update rewrites them. Each SVG
// must be well-formed XML with one group per state.
func TestDiagramGolden(t *testing.T) {
	files, err := filepath.Glob("../../examples/machines/*.json")
	require.NoError(t, err)
	ours, err := filepath.Glob("testdata/diagram/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range append(files, ours...) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		for _, f := range []struct{ format, ext string }{{"mermaid", "mmd"}, {"dot", "dot"}, {"svg", "svg"}} {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				code, out, errOut := chartgate("diagram", file, "--format", f.format)
				require.Equal(t, exitOK, code, errOut)
				assert.NotContains(t, out, "xstate.", "a label uses an internal event type")
				golden := filepath.Join("testdata", "diagram", name+"."+f.ext)
				if *update {
					require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "run with -update to write it")
				if out != string(want) {
					t.Errorf("the drawing differs from %s (run with -update to rewrite it, then review the diff)\n%s", golden, out)
				}
				if f.format == "svg" {
					checkSVG(t, out)
				}
			})
		}
	}
}

// checkSVG checks that an image is well-formed XML, and returns the
// data-id of each state group, which must be unique.
func checkSVG(t *testing.T, svg string) []string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var ids []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if el, ok := tok.(xml.StartElement); ok {
			for _, a := range el.Attr {
				if a.Name.Local == "data-id" {
					assert.NotContains(t, ids, a.Value, "two groups for one state")
					ids = append(ids, a.Value)
				}
				assert.NotContains(t, []string{"href", "src"}, a.Name.Local, "an external reference")
			}
			assert.NotEqual(t, "script", el.Name.Local)
		}
	}
	return ids
}

func TestDiagramPlacesStatesInTheirRegions(t *testing.T) {
	for _, c := range []struct {
		name, machine string // machine: a file under testdata
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
				"p_left": "p#0", "p_right": "p#1", "p_h": "p#2", "p_any": "p#2",
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
			file := filepath.Join("testdata", c.machine)

			code, out, errOut := chartgate("diagram", file)
			require.Equal(t, exitOK, code, errOut)
			got, sections := mermaidPlaces(t, out)
			assert.Equal(t, c.mermaid, got, "Mermaid blocks:\n%s", out)
			// Each history section holds history states only: it is
			// not one of the regions.
			for id, place := range c.mermaid {
				if strings.HasSuffix(id, "_h") || strings.HasSuffix(id, "_hist") {
					for other, p := range c.mermaid {
						if p == place && other != id && !strings.HasSuffix(other, "_any") && !strings.HasSuffix(other, "_enter") {
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
	dotEdgeLine    = regexp.MustCompile(`^"[sian]:([^"]+)" -> "[sian]:([^"]+)"`)
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

const doorMachine = `{
  "id": "door",
  "initial": "closed",
  "states": {
    "closed": {"on": {"OPEN": {"target": "opened", "guard": "unlocked"}, "LOCK": "locked"}},
    "locked": {"on": {"UNLOCK": "closed", "KICK": "broken"}},
    "opened": {
      "type": "parallel",
      "on": {"CLOSE": "closed"},
      "states": {
        "light": {"initial": "on", "states": {"on": {"after": {"500": "off"}}, "off": {}}},
        "alarm": {"initial": "quiet", "states": {
          "quiet": {"always": {"target": "ringing", "guard": "tooLong"}},
          "ringing": {"on": {"ACK": {}}}
        }}
      }
    },
    "broken": {"type": "final"}
  }
}`

func TestDiagramMermaid(t *testing.T) {
	file := writeFile(t, "door.json", doorMachine)
	code, out, errOut := chartgate("diagram", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `stateDiagram-v2
    [*] --> door_closed
    state "closed" as door_closed
    state "locked" as door_locked
    state "opened" as door_opened {
        state "light" as door_opened_light {
            [*] --> door_opened_light_on
            state "on" as door_opened_light_on
            state "off" as door_opened_light_off
            door_opened_light_on --> door_opened_light_off : after 500ms
        }
        --
        state "alarm" as door_opened_alarm {
            [*] --> door_opened_alarm_quiet
            state "quiet" as door_opened_alarm_quiet
            state "ringing" as door_opened_alarm_ringing
            door_opened_alarm_quiet --> door_opened_alarm_ringing : always [tooLong]
            door_opened_alarm_ringing --> door_opened_alarm_ringing : ACK
        }
    }
    state "broken" as door_broken
    door_broken --> [*]
    door_closed --> door_opened : OPEN [unlocked]
    door_closed --> door_locked : LOCK
    door_locked --> door_closed : UNLOCK
    door_locked --> door_broken : KICK
    door_opened --> door_closed : CLOSE
`, out)

	_, again, _ := chartgate("diagram", "--format", "mermaid", file)
	assert.Equal(t, out, again, "deterministic")
}

func TestDiagramDot(t *testing.T) {
	file := writeFile(t, "door.json", doorMachine)
	code, out, errOut := chartgate("diagram", file, "--format", "dot")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `digraph "door" {
    compound=true;
    node [shape=box, style=rounded];
    "i:door" [shape=point, width=0.15];
    "s:door.closed" [label="closed"];
    "s:door.locked" [label="locked"];
    subgraph "cluster_door.opened" {
        label="opened";
        style=rounded;
        "i:door.opened" [shape=point, style=invis];
        subgraph "cluster_door.opened.light" {
            label="light";
            style="rounded,dashed";
            "i:door.opened.light" [shape=point, width=0.15];
            "s:door.opened.light.on" [label="on"];
            "s:door.opened.light.off" [label="off"];
        }
        subgraph "cluster_door.opened.alarm" {
            label="alarm";
            style="rounded,dashed";
            "i:door.opened.alarm" [shape=point, width=0.15];
            "s:door.opened.alarm.quiet" [label="quiet"];
            "s:door.opened.alarm.ringing" [label="ringing"];
        }
    }
    "s:door.broken" [label="broken", peripheries=2];
    "i:door" -> "s:door.closed";
    "s:door.closed" -> "i:door.opened" [label="OPEN [unlocked]", lhead="cluster_door.opened"];
    "s:door.closed" -> "s:door.locked" [label="LOCK"];
    "s:door.locked" -> "s:door.closed" [label="UNLOCK"];
    "s:door.locked" -> "s:door.broken" [label="KICK"];
    "i:door.opened" -> "s:door.closed" [label="CLOSE", ltail="cluster_door.opened"];
    "i:door.opened.light" -> "s:door.opened.light.on";
    "s:door.opened.light.on" -> "s:door.opened.light.off" [label="after 500ms"];
    "i:door.opened.alarm" -> "s:door.opened.alarm.quiet";
    "s:door.opened.alarm.quiet" -> "s:door.opened.alarm.ringing" [label="always [tooLong]"];
    "s:door.opened.alarm.ringing" -> "s:door.opened.alarm.ringing" [label="ACK", style=dashed];
}
`, out)
}

func TestDiagramWrapsRootAndSanitizesIDs(t *testing.T) {
	file := writeFile(t, "weird.json", `{"id": "my-machine", "type": "parallel", "on": {"RESET": ".left"}, "states": {
  "left": {"initial": "default state", "states": {
    "default state": {"on": {"go: now; #1 %%": "end-1"}},
    "end-1": {"type": "final"}}, "onDone": "#my-machine.right.x_start"},
  "right": {"initial": "x", "states": {"x": {"on": {"T": "x_start"}}, "x_start": {}}}}}`)
	code, out, errOut := chartgate("diagram", file)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `stateDiagram-v2
    [*] --> my_machine
    state "my-machine" as my_machine {
        state "left" as my_machine_left {
            [*] --> my_machine_left_default_state
            state "default state" as my_machine_left_default_state
            state "end-1" as my_machine_left_end_1
            my_machine_left_end_1 --> [*]
            my_machine_left_default_state --> my_machine_left_end_1 : go#58; now#59; #35;1 #37;#37;
        }
        --
        state "right" as my_machine_right {
            [*] --> my_machine_right_x
            state "x" as my_machine_right_x
            state "x_start" as my_machine_right_x_start_2
            my_machine_right_x --> my_machine_right_x_start_2 : T
        }
        --
        state "any state of my-machine" as my_machine_any
    }
    my_machine_any --> my_machine_left : RESET
    my_machine_left --> my_machine_right_x_start_2 : done
`, out)
}
