package scxml

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

func convert(t *testing.T, doc string) map[string]any {
	t.Helper()
	out, err := Convert([]byte(doc))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return m
}

// run converts doc, starts it on a simulated clock, sends events and
// returns the SCXML ids of the active atomic states after each step
// (the initial one first).
func run(t *testing.T, doc string, events ...string) [][]string {
	t.Helper()
	out, err := Convert([]byte(doc))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	m, err := statechart.Compile(out, nil)
	if err != nil {
		t.Fatalf("Compile: %v\n%s", err, out)
	}
	atomic := map[string]string{}
	for _, n := range m.Nodes() {
		if n.Type == "atomic" || n.Type == "final" {
			atomic[n.ID] = OriginalID(n.ID, n.Meta)
		}
	}
	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	defer a.Stop()
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	config := func() []string {
		var ids []string
		for _, id := range a.Snapshot().StateIDs() {
			if o, ok := atomic[id]; ok {
				ids = append(ids, o)
			}
		}
		sort.Strings(ids)
		return ids
	}
	steps := [][]string{config()}
	for _, ev := range events {
		if d, ok := strings.CutPrefix(ev, "+"); ok {
			ms, err := parseDelay(d)
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Duration(ms) * time.Millisecond)
		} else if err := a.Send(ctx, statechart.NewEvent(ev)); err != nil {
			t.Fatal(err)
		}
		clock.Advance(0) // zero-delay sends: SCXML's external queue
		steps = append(steps, config())
	}
	return steps
}

func wantSteps(t *testing.T, got [][]string, want ...string) {
	t.Helper()
	var g []string
	for _, s := range got {
		g = append(g, strings.Join(s, ","))
	}
	if !slices.Equal(g, want) {
		t.Errorf("configurations %q, want %q", g, want)
	}
}

const header = `<?xml version="1.0"?>
<scxml xmlns="http://www.w3.org/2005/07/scxml" version="1.0"`

func TestStructure(t *testing.T) {
	m := convert(t, header+` initial="b">
  <state id="a"><transition event="go" target="b"/></state>
  <state id="b" initial="b2">
    <onentry><raise event="entered"/><log expr="'x'"/></onentry>
    <onexit><raise event="left"/></onexit>
    <state id="b1"/>
    <state id="b2"><transition target="b1"/></state>
    <transition event="go" target="r1 r2" type="external"/>
  </state>
  <parallel id="p"><state id="r1"/><state id="r2"/></parallel>
  <final id="f"/>
</scxml>`)
	got, _ := json.Marshal(m)
	if _, err := statechart.Compile(got, nil); err != nil {
		t.Fatal(err)
	}
	const want = `{"initial":"b","states":{` +
		`"a":{"id":"a","on":{"go":[{"reenter":true,"target":"#b"}],"go.*":[{"reenter":true,"target":"#b"}]}},` +
		`"b":{"entry":[{"params":{"event":{"type":"entered"}},"type":"xstate.raise"}],` +
		`"exit":[{"params":{"event":{"type":"left"}},"type":"xstate.raise"}],"id":"b","initial":"b2",` +
		`"on":{"go":[{"reenter":true,"target":["#r1","#r2"]}],"go.*":[{"reenter":true,"target":["#r1","#r2"]}]},` +
		`"states":{"b1":{"id":"b1"},"b2":{"always":[{"reenter":true,"target":"#b1"}],"id":"b2"}}},` +
		`"f":{"id":"f","type":"final"},` +
		`"p":{"id":"p","states":{"r1":{"id":"r1"},"r2":{"id":"r2"}},"type":"parallel"}}}`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestKeyOrderFollowsDocument(t *testing.T) {
	out, err := Convert([]byte(header + `><state id="z"/><state id="a"/><state id="m"/></scxml>`))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if !(strings.Index(s, `"z"`) < strings.Index(s, `"a"`) && strings.Index(s, `"a"`) < strings.Index(s, `"m"`)) {
		t.Errorf("states out of document order:\n%s", s)
	}
	if !strings.Contains(s, `"initial": "z"`) {
		t.Errorf("default initial should be the first child:\n%s", s)
	}
}

func TestIDsWithDots(t *testing.T) {
	doc := header + ` initial="a.1">
  <state id="a.1"><transition event="t" target="a$1"/></state>
  <state id="a$1"><transition event="t" target="a.1"/></state>
  <state><transition event="u" target="a.1"/></state>
</scxml>`
	m := convert(t, doc)
	states := m["states"].(map[string]any)
	if _, ok := states["a$1"]; !ok {
		t.Fatalf("a$1 missing: %v", states)
	}
	dotted := states["a$1$2"].(map[string]any)
	if OriginalID(dotted["id"].(string), dotted["meta"]) != "a.1" {
		t.Errorf("dotted state %v does not map back to a.1", dotted)
	}
	if m["initial"] != "a$1$2" {
		t.Errorf("initial = %v", m["initial"])
	}
	if _, ok := states["$state1"]; !ok {
		t.Errorf("anonymous state did not get a generated id: %v", states)
	}
	wantSteps(t, run(t, doc, "t", "t"), "a.1", "a$1", "a.1")
}

func TestEventDescriptors(t *testing.T) {
	m := convert(t, header+`>
  <state id="a">
    <transition event="foo bar.* baz. * done.state.a done.state.nope" target="a"/>
  </state>
</scxml>`)
	on := m["states"].(map[string]any)["a"].(map[string]any)["on"].(map[string]any)
	var keys []string
	for k := range on {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"*", "bar", "bar.*", "baz", "baz.*", "done.state.nope", "done.state.nope.*", "foo", "foo.*", "xstate.done.state.a"}
	if !slices.Equal(keys, want) {
		t.Errorf("on keys %q, want %q", keys, want)
	}
}

func TestPrefixMatching(t *testing.T) {
	doc := header + `>
  <state id="a"><transition event="foo" target="b"/></state>
  <state id="b"><transition event="foo.bar" target="c"/></state>
  <state id="c"><transition event="x.y.*" target="d"/></state>
  <state id="d"><transition event="*" target="e"/></state>
  <state id="e"/>
</scxml>`
	wantSteps(t, run(t, doc, "foobar", "foo.bar", "foo.bar.baz", "x.yz", "x.y", "anything"),
		"a", "a", "b", "c", "c", "d", "e")
}

func TestInternalExternal(t *testing.T) {
	doc := header + `>
  <state id="p" initial="p1">
    <onentry><raise event="entered"/></onentry>
    <state id="p1"/>
    <state id="p2"><transition event="entered" target="boom"/></state>
    <transition event="int" type="internal" target="p2"/>
    <transition event="ext" target="p2"/>
  </state>
  <state id="boom"/>
</scxml>`
	// internal: p is not exited, so no "entered" is raised again.
	wantSteps(t, run(t, doc, "int"), "p1", "p2")
	// external: p is exited and re-entered; its raised "entered" reaches p2.
	wantSteps(t, run(t, doc, "ext"), "p1", "boom")

	m := convert(t, header+`>
  <state id="a"><transition event="t" type="internal" target="a"/></state>
</scxml>`)
	tr := m["states"].(map[string]any)["a"].(map[string]any)["on"].(map[string]any)["t"].([]any)[0].(map[string]any)
	if tr["reenter"] != true {
		t.Errorf("internal transition on an atomic state should stay external (reenter:true): %v", tr)
	}
}

func TestHistoryAndInitialElement(t *testing.T) {
	doc := header + `>
  <state id="s">
    <initial><transition target="h"><raise event="init"/></transition></initial>
    <history id="h" type="deep"><transition target="s2"/></history>
    <state id="s1"><transition event="t" target="s2"/></state>
    <state id="s2" initial="s2a">
      <state id="s2a"><transition event="t" target="s2b"/></state>
      <state id="s2b"/>
    </state>
    <transition event="out" target="o"/>
  </state>
  <state id="o"><transition event="back" target="h"/></state>
</scxml>`
	m := convert(t, doc)
	s := m["states"].(map[string]any)["s"].(map[string]any)
	h := s["states"].(map[string]any)["h"].(map[string]any)
	if h["type"] != "history" || h["history"] != "deep" || h["target"] != "#s2" {
		t.Errorf("history = %v", h)
	}
	if init, ok := s["initial"].(map[string]any); !ok || init["target"] != "h" || len(init["actions"].([]any)) != 1 {
		t.Errorf("initial = %v", s["initial"])
	}
	wantSteps(t, run(t, doc, "t", "out", "back"), "s2a", "s2b", "o", "s2b")
}

func TestSendAndCancel(t *testing.T) {
	doc := header + `>
  <state id="a">
    <onentry>
      <send event="late" delay="1s" id="L"/>
      <send event="soon" delay="100ms"/>
    </onentry>
    <transition event="soon" target="b"/>
  </state>
  <state id="b">
    <onentry><send event="now"/><send target="#_internal" event="first"/></onentry>
    <transition event="first" target="c"/>
  </state>
  <state id="c">
    <transition event="now" target="d"><cancel sendid="L"/></transition>
  </state>
  <state id="d"><transition event="late" target="e"/></state>
  <state id="e"/>
</scxml>`
	// "now" is a zero-delay send: it is handled after "first", once the
	// clock lets zero-delay timers run; cancel stops "late".
	wantSteps(t, run(t, doc, "+99ms", "+1ms", "+2s"), "a", "a", "d", "d")
}

func TestParseDelay(t *testing.T) {
	for in, want := range map[string]float64{"10ms": 10, "1s": 1000, "1.5s": 1500, "250": 250, " 2s ": 2000} {
		got, err := parseDelay(in)
		if err != nil || got != want {
			t.Errorf("parseDelay(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ms", "-1s", "abc", "1h"} {
		if _, err := parseDelay(in); err == nil {
			t.Errorf("parseDelay(%q) should fail", in)
		}
	}
}

func TestUnsupported(t *testing.T) {
	cases := []struct {
		name, body, element string
		line                int
	}{
		{"cond", `<state id="a">
<transition cond="x > 1" target="a"/></state>`, "transition", 4},
		{"assign", `<state id="a"><onentry>
<assign location="x" expr="1"/></onentry></state>`, "assign", 4},
		{"script", `<script>var x</script>`, "script", 3},
		{"data", `<datamodel>
<data id="x"/></datamodel>`, "data", 4},
		{"if", `<state id="a"><onentry><if cond="true"/></onentry></state>`, "if", 3},
		{"deep initial", `<state id="a" initial="a2"><state id="a1"><state id="a2"/></state></state>`, "state", 3},
		{"multiple initial", `<parallel id="p"><state id="p1" initial="x y"><state id="x"/><state id="y"/></state></parallel>`, "state", 3},
		{"send target", `<state id="a"><onentry><send event="e" target="#_parent"/></onentry></state>`, "send", 3},
		{"send expr", `<state id="a"><onentry><send eventexpr="name"/></onentry></state>`, "send", 3},
		{"send content", `<state id="a"><onentry><send event="e">
<content>x</content></send></onentry></state>`, "content", 4},
		{"invoke", `<state id="a"><invoke src="x"/></state>`, "invoke", 3},
		{"donedata", `<final id="f">
<donedata/></final>`, "donedata", 4},
		{"foreign element", `<state id="a"><onentry><x:y xmlns:x="urn:x"/></onentry></state>`, "y", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert([]byte(header + ">\n" + c.body + "\n</scxml>"))
			var ue *UnsupportedError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *UnsupportedError", err)
			}
			if ue.Element != c.element || ue.Line != c.line {
				t.Errorf("error names <%s> line %d, want <%s> line %d (%v)", ue.Element, ue.Line, c.element, c.line, err)
			}
			if !strings.Contains(err.Error(), "<"+c.element+">") {
				t.Errorf("message %q does not name the element", err)
			}
		})
	}
}

func TestMalformed(t *testing.T) {
	for name, doc := range map[string]string{
		"not xml":        "<scxml",
		"empty":          "",
		"wrong root":     `<state id="a"/>`,
		"bad target":     header + `><state id="a"><transition event="e" target="nope"/></state></scxml>`,
		"duplicate id":   header + `><state id="a"/><state id="a"/></scxml>`,
		"bad delay":      header + `><state id="a"><onentry><send event="e" delay="soon"/></onentry></state></scxml>`,
		"bad history":    header + `><state id="a"><history id="h" type="medium"/><state id="b"/></state></scxml>`,
		"unknown target": header + ` initial="zz"><state id="a"/></scxml>`,
	} {
		_, err := Convert([]byte(doc))
		var ue *UnsupportedError
		if err == nil || errors.As(err, &ue) {
			t.Errorf("%s: err = %v, want a plain error", name, err)
		}
	}
}

// TestRejectsWhatWouldNotCompile checks the documents whose conversion
// Compile would reject, found by FuzzConvert: each gets an error with its
// line instead.
func TestRejectsWhatWouldNotCompile(t *testing.T) {
	for doc, want := range map[string]string{
		header + `><state id="s" initial="h">
  <history id="h"/><state id="a"/></state></scxml>`: `scxml: line 3: <history> needs a <transition> to its default states`,
		header + `><parallel id="p">
  <history id="h"><transition target="p"/></history><state id="a"/></parallel></scxml>`: `scxml: line 3: the default target "p" of a <history> must be inside its parent "p"`,
		header + `><state id="s">
  <history id="h"><transition target="h2"/></history><history id="h2"><transition target="a"/></history><state id="a"/></state></scxml>`: `scxml: line 3: the default target "h2" of a <history> is a history state; name the states to restore`,
		header + `><state id="a"/><state id="b">
  <transition event="e" target="a b"/></state></scxml>`: `scxml: line 3: targets "a" and "b" are in different children of "<scxml>", so they cannot both be active`,
	} {
		_, err := Convert([]byte(doc))
		if err == nil || err.Error() != want {
			t.Errorf("Convert(%s)\n = %v\nwant %s", doc, err, want)
		}
	}
}

func TestOriginalID(t *testing.T) {
	if got := OriginalID("a$b", map[string]any{MetaKey: "a.b"}); got != "a.b" {
		t.Errorf("got %q", got)
	}
	if got := OriginalID("x", nil); got != "x" {
		t.Errorf("got %q", got)
	}
	if got := OriginalID("x", map[string]any{"other": 1}); got != "x" {
		t.Errorf("got %q", got)
	}
}

func TestConditions(t *testing.T) {
	doc := header + `>
  <parallel id="p">
    <state id="r1" initial="x1">
      <state id="x1"><transition event="t" target="x2"/></state>
      <state id="x2"/>
    </state>
    <state id="r2" initial="y1">
      <state id="y1">
        <transition event="u" cond="false" target="y4"/>
        <transition event="u" cond="In('x2')" target="y2"/>
        <transition event="u" cond="!In('x2')" target="y3"/>
      </state>
      <state id="y2"><transition event="v" cond=" true " target="y1"/></state>
      <state id="y3"/>
      <state id="y4"/>
    </state>
  </parallel>
</scxml>`
	wantSteps(t, run(t, doc, "t", "u", "v", "u"), "x1,y1", "x2,y1", "x2,y2", "x2,y1", "x2,y2")
	wantSteps(t, run(t, doc, "u"), "x1,y1", "x1,y3")

	for _, cond := range []string{"In(s1)", "x == 1", "In('a') &amp;&amp; In('b')"} {
		_, err := Convert([]byte(header + `><state id="a"><transition event="e" cond="` + cond + `"/></state></scxml>`))
		var ue *UnsupportedError
		if !errors.As(err, &ue) {
			t.Errorf("cond %q: err = %v, want *UnsupportedError", cond, err)
		}
	}
	if _, err := Convert([]byte(header + `><state id="a"><transition event="e" cond="In('zz')"/></state></scxml>`)); err == nil {
		t.Error("In() of an unknown state should fail")
	}
}

func TestLiteralExpressions(t *testing.T) {
	doc := header + `>
  <state id="a">
    <onentry><send eventexpr="'go'" delayexpr="'1.5s'" idexpr="x"/></onentry>
    <transition event="go" target="b"/>
  </state>
  <state id="b"/>
</scxml>`
	if _, err := Convert([]byte(doc)); err != nil {
		t.Fatal(err) // idexpr is not a <send> attribute and is ignored
	}
	wantSteps(t, run(t, doc, "+1499ms", "+1ms"), "a", "a", "b")
	for in, want := range map[string]string{`'a'`: "a", ` "b c" `: "b c", `''`: ""} {
		if got, ok := literal(in); !ok || got != want {
			t.Errorf("literal(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{`'a`, `'a"`, `x`, `'a\'b'`, `'a' + 'b'`} {
		if _, ok := literal(in); ok {
			t.Errorf("literal(%q) should not be a literal", in)
		}
	}
}
