package mcpbind

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"cart_pay", "cart_pay", true},
		{"cart_pay", "cart_pay2", false},
		{"cart_*", "cart_pay", true},
		{"cart_*", "cart_", true},
		{"cart_*", "cart", false},
		{"*", "", true},
		{"*", "anything.at-all", true},
		{"*_view", "cart_view", true},
		{"*_view", "cart_views", false},
		{"c*t_*y", "cart_pay", true},
		{"c*t_*y", "cart_pays", false},
		{"a*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"**", "x", true},
		{"", "", true},
		{"", "x", false},
	} {
		if got := core.MatchGlob(c.pattern, c.name); got != c.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func compileGate(t testing.TB, config string, opts *Options) *Gate {
	t.Helper()
	m, err := statechart.Compile([]byte(config), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Engine(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestMetaErrors(t *testing.T) {
	config := `{
		"id": "m",
		"initial": "a",
		"meta": {"mcp": "tools"},
		"states": {
			"a": {"on": {"GO": "b"}, "meta": {"mcp": {
				"tools": ["ok_*", "bad name", 3],
				"events": {"ok_go": "GOO", "x y": "GO", "ok_z": ""},
				"instructions": 1,
				"maxCalls": 1.5,
				"tool": []
			}}},
			"b": {"on": {"BACK": "a"}, "meta": {"mcp": {"tools": "x", "events": {"ok_go": "BACK"}, "maxCalls": 0}}},
			"c": {"meta": {"mcp": {"events": {"ok_b": "GO"}}}},
			"d": {"meta": {"mcp": {"events": {"ok_b": "BACK"}, "instructions": 2000000}, "other": 1}},
			"e": {"meta": ["not ours"]}
		}
	}`
	m, err := statechart.Compile([]byte(config), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(m.Engine(), nil)
	var list statechart.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("err = %v, want a statechart.ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		`meta.mcp: must be an object with the keys "tools", "deny", "events", "invalidates", "outputGuards", "instructions", "maxCalls", "onMaxCalls", "approval", "ungated", not "tools"`,
		`states.a.meta.mcp.events.ok_go: no state handles event "GOO" (did you mean "GO"?)`,
		`states.a.meta.mcp.events.ok_z: must be a non-empty event type, not ""`,
		`states.a.meta.mcp.events["x y"]: "x y" is not a tool name: use letters, digits, "_", "-" and "."`,
		`states.a.meta.mcp.instructions: must be a string, not 1`,
		`states.a.meta.mcp.maxCalls: must be a positive integer, not 1.5`,
		`states.a.meta.mcp.tool: unknown key "tool" (did you mean "tools"?)`,
		`states.a.meta.mcp.tools[1]: "bad name" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`,
		`states.a.meta.mcp.tools[2]: must be a tool name or pattern, not 3`,
		`states.b.meta.mcp.maxCalls: must be a positive integer, not 0`,
		`states.b.meta.mcp.tools: must be an array of tool names or patterns, not "x"`,
		`states.d.meta.mcp.instructions: must be a string, not 2000000`,
		`states.d.meta.mcp.events.ok_b: tool "ok_b" already sends event "GO" (in state "m.c")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestInvalidatesMetaErrors(t *testing.T) {
	config := `{
		"id": "m",
		"initial": "a",
		"states": {
			"a": {"on": {"GO": "b"}, "meta": {"mcp": {
				"events": {"ok_go": "GO"},
				"invalidates": {"ok_go": ["cart.*", "a b", 3, "cart.*"], "x y": ["c"], "ok_list": "cart.*", "ok_none": ["c.*"]}
			}}},
			"b": {"on": {"BACK": "a"}, "meta": {"mcp": {"events": {"ok_back": "BACK"}, "invalidates": ["x"]}}},
			"c": {"meta": {"mcp": {"invalidates": {"ok_back": ["orders.**"], "ok_go": ["c.**"]}}}}
		}
	}`
	m, err := statechart.Compile([]byte(config), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(m.Engine(), nil)
	var list statechart.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("err = %v, want a statechart.ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		`states.a.meta.mcp.invalidates.ok_go[1]: "a b" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`,
		`states.a.meta.mcp.invalidates.ok_go[2]: must be a pattern such as "cart.*", not 3`,
		`states.a.meta.mcp.invalidates.ok_list: must be an array of patterns such as "cart.*", not "cart.*"`,
		`states.a.meta.mcp.invalidates["x y"]: "x y" is not a tool name: use letters, digits, "_", "-" and "."`,
		`states.b.meta.mcp.invalidates: must be an object mapping tool names to arrays of invalidated patterns, not an array`,
		`states.a.meta.mcp.invalidates.ok_none: tool "ok_none" sends no event (meta.mcp.events), so its calls cause no transition to invalidate anything: declare what every call of it invalidates with a statesync policy instead`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Valid lists of several states add up, in document order, without
	// duplicates.
	m, err = statechart.Compile([]byte(`{
		"id": "m", "initial": "a",
		"states": {
			"a": {"on": {"GO": "b"}, "meta": {"mcp": {"events": {"ok_go": "GO"}, "invalidates": {"ok_go": ["cart.*", "cart.*"]}}}},
			"b": {"meta": {"mcp": {"invalidates": {"ok_go": ["orders.**", "cart.*"]}}}}
		}
	}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Engine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.core.Info(g.core.Rules.Load(), "ok_go", false).Invalidates; !slices.Equal(got, []string{"cart.*", "orders.**"}) {
		t.Fatalf("invalidates %v", got)
	}
	if sm := g.core.States(); len(sm) != 2 || !slices.Equal(sm[0].Invalidates["ok_go"], []string{"cart.*"}) {
		t.Fatalf("States() = %+v", sm)
	}
}

const nestedMachine = `{
	"id": "job",
	"initial": "draft",
	"states": {
		"draft": {"on": {"SUBMIT": "review"}},
		"review": {
			"initial": "legal",
			"on": {"REJECT": "draft"},
			"states": {
				"legal": {"on": {"LEGAL_OK": "finance"}},
				"finance": {"on": {"FINANCE_OK": {"target": "#job.approved", "guard": "budgetLeft"}}}
			}
		},
		"approved": {
			"type": "parallel",
			"states": {
				"shipping": {"initial": "packing", "states": {"packing": {"on": {"PACKED": "sent"}}, "sent": {"type": "final"}}},
				"billing": {"initial": "invoicing", "states": {"invoicing": {"on": {"INVOICED": "paid"}}, "paid": {"type": "final"}}}
			},
			"onDone": "archived"
		},
		"archived": {"type": "final"}
	}
}`

func nestedGate(t testing.TB) *Gate {
	t.Helper()
	m, err := statechart.Compile([]byte(nestedMachine), &statechart.Options{Implementations: statechart.Implementations{
		Guards: map[string]statechart.GuardFunc{"budgetLeft": func(context.Context, statechart.GuardArgs) (bool, error) { return true, nil }},
	}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Engine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for tool, b := range map[string]Binding{
		"submit":         {States: []string{"draft"}, Event: "SUBMIT"},
		"legal_ok":       {States: []string{"review.legal"}, Event: "LEGAL_OK"},
		"finance_ok":     {States: []string{"#job.review.finance"}, Event: "FINANCE_OK"},
		"reject":         {States: []string{"review"}, Event: "REJECT"},
		"pack":           {Event: "PACKED"},
		"invoice":        {Event: "INVOICED"},
		"archive_report": {States: []string{"archived"}},
		"status":         {States: []string{"approved"}},
	} {
		if err := g.Bind(tool, b); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func pathString(p []Step) string {
	var parts []string
	for _, s := range p {
		part := s.Tool
		if len(s.Guards) > 0 {
			part += "[" + strings.Join(s.Guards, ",") + "]"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}

func TestShortestPath(t *testing.T) {
	g := nestedGate(t)
	r := g.core.Rules.Load()
	var moves []core.Move
	for _, tool := range r.EventTools {
		moves = append(moves, core.Move{Tool: tool, Info: g.core.Info(r, tool, false)})
	}
	ctx := context.Background()
	at := func(events ...string) *core.View {
		s, err := g.core.Engine().Start(ctx, g.core.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if s, err = g.core.Engine().Send(ctx, s, statechart.NewEvent(e), g.core.Now()); err != nil {
				t.Fatal(err)
			}
		}
		v, err := g.core.NewView("", s, core.Record{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		from   []string
		target string
		want   string // "" with found: visible already; "-" : not found
	}{
		{nil, "finance_ok", "submit legal_ok"},
		{nil, "reject", "submit"}, // a compound state is active with any descendant
		{nil, "status", "submit legal_ok finance_ok[budgetLeft]"},
		{nil, "pack", "submit legal_ok finance_ok[budgetLeft]"},
		{nil, "archive_report", "submit legal_ok finance_ok[budgetLeft] invoice pack"}, // through the parallel state's done event
		{[]string{"SUBMIT", "LEGAL_OK"}, "submit", "reject"},
		{[]string{"SUBMIT", "LEGAL_OK", "FINANCE_OK", "PACKED"}, "archive_report", "invoice"},
		{[]string{"SUBMIT", "LEGAL_OK", "FINANCE_OK", "PACKED"}, "pack", "-"}, // shipping is final: no way back
		{[]string{"SUBMIT", "LEGAL_OK", "FINANCE_OK", "PACKED", "INVOICED"}, "submit", "-"},
	} {
		name := fmt.Sprintf("%v/%s", c.from, c.target)
		v := at(c.from...)
		path, found := g.core.Model.ShortestPath(v.Active, g.core.Info(r, c.target, false), moves)
		got := pathString(path)
		if !found {
			got = "-"
		}
		if got != c.want {
			t.Errorf("%s: path %q, want %q", name, got, c.want)
		}
	}
}

func TestGuardedAlternatives(t *testing.T) {
	// The guards have no implementation: only the structure is searched.
	m, err := statechart.Compile([]byte(`{
		"id": "pay",
		"initial": "payment",
		"states": {
			"payment": {"on": {"PAY": [{"target": "confirmed", "guard": "approved"}, {"target": "declined"}]}},
			"confirmed": {"type": "final"},
			"declined": {"on": {"RETRY": "payment"}, "always": {"target": "review", "guard": "suspicious"}},
			"review": {}
		}
	}`), &statechart.Options{AllowMissingGuards: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(m.Engine(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for tool, b := range map[string]Binding{
		"pay":     {States: []string{"payment"}, Event: "PAY"},
		"retry":   {States: []string{"declined"}, Event: "RETRY"},
		"receipt": {States: []string{"confirmed"}},
		"appeal":  {States: []string{"review"}},
		"explain": {States: []string{"declined"}},
	} {
		if err := g.Bind(tool, b); err != nil {
			t.Fatal(err)
		}
	}
	r := g.core.Rules.Load()
	var moves []core.Move
	for _, tool := range r.EventTools {
		moves = append(moves, core.Move{Tool: tool, Info: g.core.Info(r, tool, false)})
	}
	for target, want := range map[string]string{
		"receipt": "pay[approved]",
		"explain": "pay",
		"appeal":  "pay[suspicious]",
		"pay":     "",
	} {
		path, found := g.core.Model.ShortestPath(g.core.Initial.Active, g.core.Info(r, target, false), moves)
		if got := pathString(path); !found || got != want {
			t.Errorf("%s: path %q (found %v), want %q", target, got, found, want)
		}
	}
}

func TestBindErrors(t *testing.T) {
	g := compileGate(t, `{"id": "c", "initial": "empty", "states": {"empty": {"on": {"ADD_ITEM": "has_items"}}, "has_items": {"states": {"x": {}}, "initial": "x"}}}`, nil)
	for _, c := range []struct {
		tool string
		b    Binding
		want string
	}{
		{"t", Binding{States: []string{"emtpy"}}, `mcpbind: Bind("t"): machine "c" has no state "emtpy" (did you mean "empty"?)`},
		{"t", Binding{States: []string{"#c.has_item"}}, `mcpbind: Bind("t"): machine "c" has no state "#c.has_item" (did you mean "#c.has_items"?)`},
		{"t", Binding{States: []string{"empty"}, Event: "ADD_ITEMS"}, `mcpbind: Bind("t"): machine "c": no state handles event "ADD_ITEMS" (did you mean "ADD_ITEM"?)`},
		{"t", Binding{}, `mcpbind: Bind("t"): a binding needs States, an Event, or both`},
		{"t*", Binding{States: []string{"empty"}}, `mcpbind: Bind: "t*" is not a tool name: use letters, digits, "_", "-" and "."`},
		{"t", Binding{States: []string{"empty"}, Event: "ADD_ITEM", Invalidates: []string{"cart.*", "sp ace"}}, `mcpbind: Bind("t"): Invalidates[1]: "sp ace" is not a tool name or pattern: use letters, digits, "_", "-", "." and "*"`},
		{"t", Binding{States: []string{"empty"}, Invalidates: []string{"cart.*"}}, `mcpbind: Bind("t"): Invalidates needs an Event: without one the call causes no transition`},
		{"t", Binding{Event: "ADD_ITEM", Invalidates: []string{""}}, `mcpbind: Bind("t"): Invalidates[0]: a tool name must not be empty`},
	} {
		err := g.Bind(c.tool, c.b)
		if err == nil || err.Error() != c.want {
			t.Errorf("Bind(%q, %+v) = %v, want %s", c.tool, c.b, err, c.want)
		}
	}
	for _, st := range []string{"empty", "has_items.x", "#c.has_items.x", "c.empty"} {
		if err := g.Bind("t", Binding{States: []string{st}}); err != nil {
			t.Errorf("Bind with state %q: %v", st, err)
		}
	}
}

// connectSession returns a real server session of a server the gate is
// attached to.
func connectSession(t testing.TB, g *Gate) *mcp.ServerSession {
	t.Helper()
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	g.Attach(server)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return ss
}

// send sends an event to a target's workflow as workflow_transition does:
// reserve (the lease), then commit.
func send(t testing.TB, g *Gate, tgt core.Target, ev statechart.Event) core.Committed {
	t.Helper()
	ctx := context.Background()
	c := &core.Call{Kind: core.CallTransition, Name: "test", Rules: g.core.Rules.Load(), Info: core.UnboundInfo, Target: tgt, Event: ev}
	v, err := g.core.Load(ctx, tgt)
	if err != nil {
		t.Fatal(err)
	}
	v, h, vd, err := g.core.ReserveCall(ctx, c, v)
	if err != nil || vd != nil {
		t.Fatalf("reserve: %v %v", vd, err)
	}
	return g.core.CommitCall(ctx, c, h, v, core.ToolOutcome{})
}

// TestSignatureByActiveStates: views of the same active states, on a
// machine without budgets whose tools are all listed by patterns, share
// one signature, worked out once; a machine with a budget works out each
// view's.
func TestSignatureByActiveStates(t *testing.T) {
	const plain = `{"id": "m", "initial": "a", "states": {
	  "a": {"on": {"GO": "b"}, "meta": {"mcp": {"tools": ["go", "look"], "events": {"go": "GO"}}}},
	  "b": {"meta": {"mcp": {"tools": ["look"]}}}}}`
	limited := strings.Replace(plain, `"events"`, `"maxCalls": 3, "events"`, 1)
	for _, c := range []struct {
		machine string
		shared  bool
	}{{plain, true}, {limited, false}} {
		g := compileGate(t, c.machine, nil)
		ctx, r := context.Background(), g.core.Rules.Load()
		view := func() *core.View {
			v, err := g.core.NewView("k", g.core.Initial.State, core.Record{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		a, b := g.signature(ctx, r, view()), g.signature(ctx, r, view())
		if !a.Equal(b) || (&a[0] == &b[0]) != c.shared {
			t.Fatalf("signatures %v and %v; shared %v, want %v", a, b, &a[0] == &b[0], c.shared)
		}
	}
}
