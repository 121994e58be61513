package scxml

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// runDoc compiles doc with the data model, starts it on a simulated
// clock, sends the events (running zero-delay sends after each) and
// returns the actor and the clock.
func runDoc(t *testing.T, doc string, events ...string) (*statechart.Actor, *statechart.SimulatedClock) {
	t.Helper()
	return runDocWith(t, doc, nil, events...)
}

func runDocWith(t *testing.T, doc string, opts *Options, events ...string) (*statechart.Actor, *statechart.SimulatedClock) {
	t.Helper()
	m, err := Compile([]byte(doc), opts)
	if err != nil {
		t.Fatal(err)
	}
	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	t.Cleanup(a.Stop)
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(0)
	for _, ev := range events {
		if err := a.Send(ctx, statechart.NewEvent(ev)); err != nil {
			t.Fatal(err)
		}
		clock.Advance(0)
	}
	return a, clock
}

func wantIn(t *testing.T, a *statechart.Actor, id string) {
	t.Helper()
	if ids := a.Snapshot().StateIDs(); !slices.Contains(ids, id) {
		t.Fatalf("active states %v, want %s among them", ids, id)
	}
}

// TestReachesPass runs documents that reach their state pass when the
// data model behaves as SCXML says.
func TestReachesPass(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		events    []string
	}{
		// <data> is initialized before the first state is
		// entered, <assign> changes it at once, and conds read it.
		{"data, assign, cond", header + ` datamodel="ecmascript"><datamodel><data id="n" expr="1"/><data id="o">{"a": [1, 2]}</data></datamodel>
	<state id="s"><onentry><assign location="n" expr="n + o.a[1]"/></onentry>
		<transition event="go" cond="n === 3 &amp;&amp; o.a.length === 2" target="pass"/>
		<transition event="go" target="fail"/></state>
	<final id="pass"/><final id="fail"/></scxml>`, []string{"go"}},
		// an expression that fails ends its block and
		// places error.execution, with where it happened, on the internal queue;
		// a cond that fails is false; assigning a system variable is an error.
		{"execution errors", header + ` datamodel="ecmascript"><datamodel><data id="n" expr="0"/></datamodel>
	<state id="s"><onentry><assign location="n" expr="1"/><log expr="nope.x"/><assign location="n" expr="2"/></onentry>
		<transition event="error.execution" cond="n === 1 &amp;&amp; _event.type === 'platform' &amp;&amp; _event.data.tagname === 'log'" target="t"/>
		<transition event="*" target="fail"/></state>
	<state id="t"><onentry><assign location="_sessionid" expr="'x'"/></onentry>
		<transition event="error.execution" cond="nope()" target="fail"/>
		<transition event="error.execution" target="pass"/></state>
	<final id="pass"/><final id="fail"/></scxml>`, nil},
		// In() sees the configuration as SCXML has it while
		// entry actions run; <if>/<elseif>/<else> and <foreach> run their
		// content.
		{"In, if, foreach", header + ` datamodel="ecmascript"><datamodel><data id="sum" expr="0"/><data id="path" expr="''"/></datamodel>
	<state id="s" initial="s1"><state id="s1"><onentry>
		<if cond="In('s2')"><assign location="path" expr="'wrong'"/>
		<elseif cond="In('s1') &amp;&amp; In('s')"/><assign location="path" expr="'elseif'"/>
		<else/><assign location="path" expr="'else'"/></if>
		<foreach array="[1, 2, 3]" item="v" index="i"><assign location="sum" expr="sum + v * (i + 1)"/></foreach>
		</onentry>
		<transition cond="path === 'elseif' &amp;&amp; sum === 14" target="pass"/>
		<transition target="fail"/></state><state id="s2"/></state>
	<final id="pass"/><final id="fail"/></scxml>`, nil},
		// <donedata> becomes the done event's data;
		// with binding="late" a state's data is assigned when it is first
		// entered.
		{"donedata, late binding", header + ` datamodel="ecmascript" binding="late">
	<state id="s" initial="s1"><datamodel><data id="late" expr="5"/></datamodel>
		<state id="s1"><transition target="f"/></state>
		<final id="f"><donedata><param name="v" expr="late + 1"/></donedata></final>
		<transition event="done.state.s" cond="_event.data.v === 6" target="pass"/>
		<transition event="done.state.s" target="fail"/></state>
	<final id="pass"/><final id="fail"/></scxml>`, nil},
		// an invoked SCXML session talks to its parent (#_parent) and the
		// parent to it (#_<invokeid>); its end is done.invoke.<id>.
		{"invoke with param and idlocation", header + ` datamodel="ecmascript"><datamodel><data id="where"/></datamodel>
	<state id="s"><invoke type="scxml" idlocation="where"><param name="v" expr="40 + 2"/><content><scxml version="1.0" datamodel="ecmascript">
		<datamodel><data id="v" expr="0"/></datamodel>
		<state id="k"><transition cond="v === 42" target="end"><send event="got42" target="#_parent"/></transition></state>
		<final id="end"/></scxml></content></invoke>
		<transition event="got42" cond="_event.invokeid === where &amp;&amp; where !== undefined" target="pass"/>
		<transition event="*" target="fail"/></state>
	<final id="pass"/><final id="fail"/></scxml>`, nil},
		{"invoke", header + ` datamodel="ecmascript"><datamodel><data id="got" expr="''"/></datamodel>
	<state id="s"><invoke type="scxml" id="kid"><content><scxml version="1.0" datamodel="ecmascript">
		<state id="k"><onentry><send event="hello" target="#_parent"><param name="n" expr="1"/></send></onentry>
			<transition event="ping" target="end"><send event="pong" target="#_parent"/></transition></state>
		<final id="end"/></scxml></content></invoke>
		<transition event="hello" cond="_event.data.n === 1 &amp;&amp; _event.invokeid === 'kid'"><send event="ping" target="#_kid"/></transition>
		<transition event="pong"><assign location="got" expr="'pong'"/></transition>
		<transition event="done.invoke.kid" cond="got === 'pong' &amp;&amp; _event.invokeid === 'kid'" target="pass"/>
		<transition event="*" target="fail"/></state>
	<final id="pass"/><final id="fail"/></scxml>`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := runDoc(t, tc.doc, tc.events...)
			wantIn(t, a, "pass")
		})
	}
}

// TestSendWithData: a delayed <send> with namelist, <param> and
// eventexpr arrives after its delay with _event.data, _event.type and
// _event.origin set; <cancel sendidexpr> stops another one.
func TestSendWithData(t *testing.T) {
	doc := header + ` datamodel="ecmascript"><datamodel><data id="x" expr="7"/><data id="id"/></datamodel>
	<state id="s"><onentry>
		<send eventexpr="'e' + x" delayexpr="'20ms'" namelist="x"><param name="p" expr="x * 2"/></send>
		<send event="never" delay="10ms" idlocation="id"/>
		<cancel sendidexpr="id"/></onentry>
		<transition event="never" target="fail"/>
		<transition event="e7" cond="_event.data.x === 7 &amp;&amp; _event.data.p === 14 &amp;&amp; _event.type === 'external' &amp;&amp; _event.origin === '#_scxml_' + _sessionid" target="pass"/>
		<transition event="*" target="fail"/></state>
	<final id="pass"/><final id="fail"/></scxml>`
	a, clock := runDoc(t, doc)
	wantIn(t, a, "s")
	clock.Advance(19 * time.Millisecond)
	wantIn(t, a, "s")
	clock.Advance(time.Millisecond)
	wantIn(t, a, "pass")
}

// TestSessionsAreSeparate: two actors of one machine keep their own data.
func TestSessionsAreSeparate(t *testing.T) {
	doc := header + ` datamodel="ecmascript"><datamodel><data id="n" expr="0"/></datamodel>
	<state id="s"><transition event="inc" cond="n &lt; 2"><assign location="n" expr="n + 1"/></transition>
		<transition event="inc" target="two"/></state><state id="two"/></scxml>`
	m, err := Compile([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, b := statechart.NewActor(m, nil), statechart.NewActor(m, nil)
	for _, x := range []*statechart.Actor{a, b} {
		if err := x.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer x.Stop()
	}
	for range 3 {
		if err := a.Send(ctx, statechart.NewEvent("inc")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(ctx, statechart.NewEvent("inc")); err != nil {
		t.Fatal(err)
	}
	wantIn(t, a, "two")
	wantIn(t, b, "s")
}

// TestEvalTimeout: a script that never ends is interrupted and counts as
// an error.
func TestEvalTimeout(t *testing.T) {
	doc := header + ` datamodel="ecmascript"><state id="s"><onentry><script>while (true) {}</script></onentry>
		<transition event="error.execution" target="pass"/></state><final id="pass"/></scxml>`
	a, _ := runDocWith(t, doc, &Options{EvalTimeout: 50 * time.Millisecond})
	wantIn(t, a, "pass")
}

// TestCompileStillRefuses: what XState cannot express stays an
// *UnsupportedError, and Convert keeps refusing the data model.
func TestCompileStillRefuses(t *testing.T) {
	for _, doc := range []string{
		header + ` datamodel="ecmascript"><state id="s"><invoke type="scxml" src="x.scxml"/></state></scxml>`,
		header + ` datamodel="xpath"><state id="s"/></scxml>`,
		header + ` datamodel="ecmascript"><datamodel><data id="a b" expr="1"/></datamodel><state id="s"/></scxml>`,
		header + ` datamodel="ecmascript"><datamodel><data id="d" src="d.json"/></datamodel><state id="s"/></scxml>`,
	} {
		var ue *UnsupportedError
		if _, err := Compile([]byte(doc), nil); !errors.As(err, &ue) {
			t.Errorf("Compile(%s): %v, want an *UnsupportedError", doc, err)
		}
	}
	doc := header + ` datamodel="ecmascript"><datamodel><data id="n" expr="1"/></datamodel><state id="s"/></scxml>`
	var ue *UnsupportedError
	if _, err := Convert([]byte(doc)); !errors.As(err, &ue) {
		t.Errorf("Convert with <data>: %v, want an *UnsupportedError", err)
	}
}

// TestRestoredSnapshotFails: a snapshot does not carry the data model, so
// an actor restored from one fails at its first cond instead of running
// without its data.
func TestRestoredSnapshotFails(t *testing.T) {
	doc := header + ` datamodel="ecmascript"><datamodel><data id="n" expr="1"/></datamodel>
	<state id="s"><transition event="go" cond="n === 1" target="t"/></state><state id="t"/></scxml>`
	a, _ := runDoc(t, doc)
	data, err := a.Snapshot().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile([]byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := m.Restore(data)
	if err != nil {
		t.Fatal(err)
	}
	b := statechart.NewActor(m, &statechart.ActorOptions{Snapshot: snap})
	defer b.Stop()
	ctx := context.Background()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	_ = b.Send(ctx, statechart.NewEvent("go"))
	if s := b.Snapshot(); s.Status() != statechart.StatusError || !errors.Is(s.Err(), errNoSession) {
		t.Fatalf("status %v, error %v; want error %v", s.Status(), s.Err(), errNoSession)
	}
}

// TestSource: <script src>, <data src> and <invoke src> are read through
// Options.Source while Compile converts; without it they are refused.
func TestSource(t *testing.T) {
	files := map[string]string{
		"lib.js":    "function twice(x) { return 2 * x; }",
		"data.json": `{"n": 21}`,
		"kid.scxml": header + ` datamodel="ecmascript"><final id="k"><onentry><send event="hi" target="#_parent"/></onentry></final></scxml>`,
	}
	var read []string
	source := func(name string) ([]byte, error) {
		read = append(read, name)
		f, ok := files[name]
		if !ok {
			return nil, errors.New("no such file")
		}
		return []byte(f), nil
	}
	doc := header + ` datamodel="ecmascript"><datamodel><data id="d" src="file:data.json"/></datamodel><script src="lib.js"/>
	<state id="s"><invoke src="kid.scxml"/>
		<transition event="hi" cond="twice(d.n) === 42" target="pass"/>
		<transition event="*" target="fail"/></state>
	<final id="pass"/><final id="fail"/></scxml>`
	a, _ := runDocWith(t, doc, &Options{Source: source})
	wantIn(t, a, "pass")
	if want := []string{"data.json", "lib.js", "kid.scxml"}; !slices.Equal(read, want) {
		t.Errorf("read %v, want %v", read, want)
	}
	var ue *UnsupportedError
	if _, err := Compile([]byte(doc), nil); !errors.As(err, &ue) {
		t.Errorf("Compile without Source: %v, want an *UnsupportedError", err)
	}
	missing := header + ` datamodel="ecmascript"><datamodel><data id="d" src="nope.json"/></datamodel><state id="s"/></scxml>`
	if _, err := Compile([]byte(missing), &Options{Source: source}); err == nil || !strings.Contains(err.Error(), `line 2: <data src="nope.json">: no such file`) {
		t.Errorf("Compile with a missing file: %v", err)
	}
}
