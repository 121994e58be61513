package diagram

import (
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

func TestSanitizeID(t *testing.T) {
	for in, want := range map[string]string{
		"a.b-c d":   "a_b_c_d",
		"état":      "_tat",
		"1st":       "s_1st",
		"":          "s_",
		"state":     "s_state",
		"defaultOn": "s_defaultOn",
		"ok_ID_9":   "ok_ID_9",
	} {
		assert.Equal(t, want, sanitizeID(in), in)
	}
}

func compile(t testing.TB, config string) *statechart.Machine {
	t.Helper()
	m, err := statechart.Compile([]byte(config), &statechart.Options{AllowMissingGuards: true})
	require.NoError(t, err)
	return m
}

// pokemon invokes with XState's made-up id and with an id of its own, has
// delays by number and by name, built-in guards, and transitions of the
// root to its own inside and to nowhere.
const pokemon = `{"id": "PokemonViewer", "initial": "getPokemonList",
  "on": {"RESET": ".getPokemonList", "PING": {"actions": "log"}},
  "states": {
    "getPokemonList": {"invoke": {"src": "fetchList",
      "onDone": {"target": "list", "guard": {"type": "xstate.and", "params": {"guards": ["hasItems", {"type": "xstate.not", "params": {"guard": "isStale"}}]}}},
      "onError": "failed"}},
    "list": {"on": {"SELECT": "detail"}, "always": {"target": "failed", "guard": {"type": "xstate.stateIn", "params": {"stateValue": "#PokemonViewer.failed"}}}},
    "detail": {"invoke": {"id": "details", "src": "fetchDetail", "onDone": "shown"},
      "after": {"5000": "failed", "slow": {"target": "failed", "guard": "isStale"}}},
    "shown": {"type": "compound", "initial": "s1", "onDone": "list", "states": {"s1": {"on": {"END": "s2"}}, "s2": {"type": "final"}}},
    "failed": {"type": "final"}}}`

func TestLabelsInTheConfigsTerms(t *testing.T) {
	c := New(compile(t, pokemon), []byte(pokemon))
	var labels []string
	for _, e := range c.edges {
		if !e.initial {
			labels = append(labels, c.nodes[e.src].Key+" "+e.label)
		}
	}
	assert.ElementsMatch(t, []string{
		" RESET", " PING",
		"getPokemonList done: fetchList [hasItems && !isStale]",
		"getPokemonList error: fetchList",
		"list SELECT", "list always [in #PokemonViewer.failed]",
		"detail done: details", "detail after 5000ms", "detail after slow [isStale]",
		"shown done", "s1 END",
	}, labels)

	// Without the config, built-in guards are named by their type.
	c = New(compile(t, pokemon), nil)
	assert.Contains(t, c.Mermaid(), "done#58; fetchList [xstate.and]")
}

// TestRootTransitionsLeaveTheRoot: a transition of the root to its own
// inside, and a targetless one, start at the root's own node, not at its
// initial pseudo-state (Graphviz) nor at the composite state (Mermaid).
func TestRootTransitionsLeaveTheRoot(t *testing.T) {
	c := New(compile(t, pokemon), []byte(pokemon))
	dot := c.DOT()
	assert.Contains(t, dot, `"a:PokemonViewer" [label="any state of PokemonViewer", shape=plaintext];`)
	assert.Contains(t, dot, `"a:PokemonViewer" -> "s:PokemonViewer.getPokemonList" [label="RESET"];`)
	assert.Contains(t, dot, `"a:PokemonViewer" -> "a:PokemonViewer" [label="PING", style=dashed];`)
	assert.NotContains(t, dot, `"i:PokemonViewer" -> "s:PokemonViewer.getPokemonList" [label`)
	mmd := c.Mermaid()
	assert.Contains(t, mmd, "PokemonViewer_any --> PokemonViewer_getPokemonList : RESET")
	assert.Contains(t, mmd, "PokemonViewer_any --> PokemonViewer_any : PING")
}

func TestSVGLightsTheActiveStates(t *testing.T) {
	m := compile(t, pokemon)
	c := New(m, []byte(pokemon))
	svg := c.SVG(&SVGOptions{Active: []string{"PokemonViewer", "PokemonViewer.shown", "PokemonViewer.shown.s1", "nope"}})
	lit := regexp.MustCompile(`<g class="state [^"]*\bactive" data-id="([^"]+)"`).FindAllStringSubmatch(svg, -1)
	var ids []string
	for _, l := range lit {
		ids = append(ids, l[1])
	}
	assert.Equal(t, []string{"PokemonViewer", "PokemonViewer.shown", "PokemonViewer.shown.s1"}, ids)
	assert.Equal(t, len(m.Nodes()), strings.Count(svg, `<g class="state `))
	assert.NotContains(t, c.SVG(nil), " active\"")
}

func TestSVGHistoryMarks(t *testing.T) {
	config := `{"id": "h", "initial": "a", "states": {"a": {"initial": "x", "states": {"x": {}, "sh": {"type": "history"}, "dh": {"type": "history", "history": "deep"}}}}}`
	svg := New(compile(t, config), []byte(config)).SVG(nil)
	assert.Regexp(t, `data-id="h.a.sh">.*>H</text>`, svg)
	assert.Regexp(t, `data-id="h.a.dh">.*>H\*</text>`, svg)
}

func TestSVGEscapes(t *testing.T) {
	config := `{"id": "a<b>&\"c'", "initial": "x", "states": {"x": {"on": {"<E&>": "y"}}, "y": {}}}`
	svg := New(compile(t, config), []byte(config)).SVG(nil)
	assert.Contains(t, svg, `data-id="a&lt;b&gt;&amp;&quot;c&#39;.x"`)
	assert.Contains(t, svg, `>&lt;E&amp;&gt;</text>`)
	assert.NotContains(t, svg, "<E&>")
}

// FuzzDiagram draws every machine that compiles, in the three formats,
// and checks the SVG is well-formed XML with a group per state.
func FuzzDiagram(f *testing.F) {
	f.Add(pokemon)
	f.Add(`{"id": "p", "type": "parallel", "on": {"R": ".h"}, "states": {"h": {"type": "history", "history": "deep"}, "l": {"initial": "a", "states": {"a": {"on": {"X": "#p.r.b"}}}}, "r": {"initial": "b", "states": {"b": {"on": {"Y": "#p"}}}}}}`)
	f.Add(`{"id": "x"}`)
	f.Fuzz(func(t *testing.T, config string) {
		m, err := statechart.Compile([]byte(config), &statechart.Options{AllowMissingGuards: true})
		if err != nil {
			return
		}
		c := New(m, []byte(config))
		_, _ = c.Mermaid(), c.DOT()
		svg := c.SVG(nil)
		dec := xml.NewDecoder(strings.NewReader(svg))
		groups := 0
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("the SVG is not well-formed: %v\n%s", err, svg)
			}
			if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "g" && strings.HasPrefix(attr(el, "class"), "state ") {
				groups++
			}
		}
		if groups != len(m.Nodes()) {
			t.Fatalf("%d state groups for %d states", groups, len(m.Nodes()))
		}
	})
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
