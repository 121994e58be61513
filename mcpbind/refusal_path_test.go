package mcpbind_test

// Regression tests of the refusal's path search (path.go): bugs that
// TestPropertyExecutedIffVisible found over random machines, reduced by
// hand. Each test follows a refusal as the package documents it.

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// bugImpl returns declarative implementations: the actions given as JSON
// (if any), and each named guard as "passes unless the call's arguments
// set it to false".
func bugImpl(t *testing.T, actions string, guards ...string) statechart.Implementations {
	t.Helper()
	js := `{"guards": {`
	for i, g := range guards {
		if i > 0 {
			js += ","
		}
		js += fmt.Sprintf(`%q: {"field": "event.input.%s", "op": "neq", "value": false}`, g, g)
	}
	js += `}`
	if actions != "" {
		js += `, "actions": ` + actions
	}
	impl, err := statechart.ParseImplementations([]byte(js + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return impl
}

// bugFixture serves the bound tools with the machine (full interpreter)
// and connects a session.
func bugFixture(t *testing.T, machine string, impl statechart.Implementations, bindings map[string]mcpbind.Binding) (*fixture, *client) {
	t.Helper()
	tools := slices.Sorted(maps.Keys(bindings))
	f := newFixture(t, compile(t, "full", machine, &statechart.Options{Implementations: impl}), nil, tools...)
	for _, tool := range tools {
		if err := f.gate.Bind(tool, bindings[tool]); err != nil {
			t.Fatal(err)
		}
	}
	return f, f.connect(t, "2025-11-25")
}

// followRefusal calls a hidden tool, then the steps of its refusal's path,
// each with the arguments args gives it (none if args is nil).
func followRefusal(t *testing.T, c *client, tool string, args func(mcpbind.Step) map[string]any) mcpbind.Refusal {
	t.Helper()
	ref := refusal(t, c.call(tool, nil))
	for _, st := range ref.Path {
		var a map[string]any
		if args != nil {
			a = args(st)
		}
		c.call(st.Tool, a)
	}
	return ref
}

// wantUnreachable calls a hidden tool that no sequence of calls makes
// visible, follows the path its refusal gives, if any, and fails if the
// refusal said reachable.
func wantUnreachable(t *testing.T, f *fixture, c *client, tool, why string) {
	t.Helper()
	ref := followRefusal(t, c, tool, nil)
	if ref.Reachable {
		t.Errorf("the refusal of %s says reachable by the path %+v; following it leaves the workflow in %v with tools %v (want reachable false: %s)",
			tool, ref.Path, stateOf(t, f, c), c.tools(), why)
	}
}

// TestRefusalPathRegionHandlesEvent: XState takes a transition of a
// parallel state (or of an ancestor) only when no region handles the event
// (conformance case parallel/own-transition-only-if-unhandled). Here region
// r2 handles LEAVE with a targetless transition, so p's LEAVE -> out is never
// taken and "next" can never become visible; the search takes both and
// says: call leave.
func TestRefusalPathRegionHandlesEvent(t *testing.T) {
	const machine = `{
	  "id": "m", "initial": "p", "context": {"n": 0},
	  "states": {
	    "p": {
	      "type": "parallel",
	      "on": {"LEAVE": "out"},
	      "states": {
	        "r1": {"initial": "a", "states": {"a": {}}},
	        "r2": {"initial": "x", "states": {"x": {"on": {"LEAVE": {"actions": "count"}}}}}
	      }
	    },
	    "out": {}
	  }
	}`
	f, c := bugFixture(t, machine, bugImpl(t, `{"count": {"assign": {"n": {"$inc": 1}}}}`), map[string]mcpbind.Binding{
		"leave": {States: []string{"p"}, Event: "LEAVE"},
		"next":  {States: []string{"out"}},
	})
	wantUnreachable(t, f, c, "next", "r2 handles LEAVE, so p's LEAVE is never taken")
}

// TestRefusalPathSelfLoopInExitedRegion: GO selects a -> out and x -> x
// (no reenter: exits and enters nothing). The search enters x again after
// a -> out has exited p, reaching the impossible configuration {out, x},
// where NEXT takes x -> y: it says call go, then next. In fact the workflow
// is in "out", where NEXT does nothing, and y is unreachable.
func TestRefusalPathSelfLoopInExitedRegion(t *testing.T) {
	const machine = `{
	  "id": "m", "initial": "p",
	  "states": {
	    "p": {
	      "type": "parallel",
	      "states": {
	        "r1": {"initial": "a", "states": {"a": {"on": {"GO": "#m.out"}}}},
	        "r2": {"initial": "x", "states": {"x": {"on": {"GO": "x", "NEXT": "y"}}, "y": {}}}
	      }
	    },
	    "out": {}
	  }
	}`
	f, c := bugFixture(t, machine, statechart.Implementations{}, map[string]mcpbind.Binding{
		"go":   {States: []string{"p"}, Event: "GO"},
		"next": {States: []string{"out"}, Event: "NEXT"},
		"fin":  {States: []string{"p.r2.y"}},
	})
	wantUnreachable(t, f, c, "fin", "GO leaves p, and NEXT is only visible outside it")
}

// TestRefusalPathGuardsOfSharedCandidates: p's E candidates are checked
// once, in order: "b" needs ga to refuse and gb to allow. The search picks
// a candidate per active atomic state (x and y), so one of its outcomes
// takes E -> b for x and E -> a for y, keeps E -> b, and lists both guards
// as relied on: "call e (if guards gb and ga allow)". With both allowing,
// E goes to a.
func TestRefusalPathGuardsOfSharedCandidates(t *testing.T) {
	const machine = `{
	  "id": "m", "initial": "p",
	  "states": {
	    "p": {
	      "type": "parallel",
	      "on": {"E": [{"target": "a", "guard": "ga"}, {"target": "b", "guard": "gb"}]},
	      "states": {
	        "r1": {"initial": "x", "states": {"x": {}}},
	        "r2": {"initial": "y", "states": {"y": {}}}
	      }
	    },
	    "a": {},
	    "b": {}
	  }
	}`
	f, c := bugFixture(t, machine, bugImpl(t, "", "ga", "gb"), map[string]mcpbind.Binding{
		"e":    {States: []string{"p"}, Event: "E"},
		"in_b": {States: []string{"b"}},
	})
	ref := followRefusal(t, c, "in_b", func(st mcpbind.Step) map[string]any {
		args := map[string]any{"ga": false, "gb": false}
		for _, g := range st.Guards {
			delete(args, g) // the guards the step relies on allow; the others refuse
		}
		return args
	})
	if s := stateOf(t, f, c); s != "b" {
		t.Errorf("followed the refusal's path %+v (the listed guards allowing, the others refusing): the workflow is in %v, want b "+
			"(want the path [e (if guard gb allows)], with ga refusing)", ref.Path, s)
	}
}

// TestRefusalPathManyGuardCombinations: with three regions whose atomic
// states each have two guarded candidates for E, the guard outcomes make
// 27 combinations; past 16 the search assumes the first candidate of each
// is taken, so it never sees a1 -> a3 and says that no sequence of calls
// makes "fin" available. One call does: e with g1 refusing.
func TestRefusalPathManyGuardCombinations(t *testing.T) {
	const machine = `{
	  "id": "m", "initial": "p",
	  "states": {
	    "p": {
	      "type": "parallel",
	      "states": {
	        "r1": {"initial": "a1", "states": {"a1": {"on": {"E": [{"target": "a2", "guard": "g1"}, {"target": "a3", "guard": "h1"}]}}, "a2": {}, "a3": {}}},
	        "r2": {"initial": "b1", "states": {"b1": {"on": {"E": [{"target": "b2", "guard": "g2"}, {"target": "b3", "guard": "h2"}]}}, "b2": {}, "b3": {}}},
	        "r3": {"initial": "c1", "states": {"c1": {"on": {"E": [{"target": "c2", "guard": "g3"}, {"target": "c3", "guard": "h3"}]}}, "c2": {}, "c3": {}}}
	      }
	    }
	  }
	}`
	_, c := bugFixture(t, machine, bugImpl(t, "", "g1", "h1", "g2", "h2", "g3", "h3"), map[string]mcpbind.Binding{
		"e":   {States: []string{"p"}, Event: "E"},
		"fin": {States: []string{"p.r1.a3"}},
	})
	ref := refusal(t, c.call("fin", nil))
	c.call("e", map[string]any{"g1": false})
	c.expectTools("after e with g1 refusing", "e", "fin")
	if !ref.Reachable {
		t.Errorf("the refusal of fin said reachable false (path %+v), but calling e with g1 refusing makes it visible "+
			"(want reachable true, path [e (if guard h1 allows)])", ref.Path)
	}
}
