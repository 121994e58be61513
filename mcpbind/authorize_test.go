package mcpbind_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// nested returns arguments nested depth levels deep.
func nested(depth int) map[string]any {
	v := any("x")
	for range depth - 1 {
		v = map[string]any{"a": v}
	}
	return map[string]any{"a": v}
}

// TestDeepArgumentsRefusedBeforeRun: arguments nested deeper than the gate
// can record are refused before the tool runs; before, the tool ran and
// its event was never applied, so a once-only tool could be called again
// and again.
func TestDeepArgumentsRefusedBeforeRun(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{})
	close(s.release)
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	for range 3 {
		res := c.call("claim_bonus", nested(100))
		if ref := refusal(t, res); ref.Code != mcpbind.CodeTooLarge || !strings.Contains(resultText(res), "nested more than 64 levels") {
			t.Fatalf("refusal %+v: %s", ref, resultText(res))
		}
	}
	if n := s.claimed.Load(); n != 0 {
		t.Fatalf("the handler ran %d times", n)
	}
	if res := c.call("claim_bonus", nested(60)); res.IsError {
		t.Fatalf("60 levels: %s", resultText(res))
	}
	if st := stateOf(t, &fixture{gate: s.gate}, c); st != "b" || s.claimed.Load() != 1 {
		t.Fatalf("state %v, runs %d", st, s.claimed.Load())
	}
	if res := c.call("claim_bonus", nil); refusal(t, res).Code != mcpbind.CodeForbidden {
		t.Fatalf("second claim: %s", resultText(res))
	}
}

// TestLargeArgumentsRefused: arguments over Options.MaxArgumentBytes are
// refused with CodeTooLarge, without running; tools that are not gated
// are not limited.
func TestLargeArgumentsRefused(t *testing.T) {
	s := newGatedServer(t, &mcpbind.Options{MaxArgumentBytes: 1000})
	close(s.release)
	s.server.AddTool(&mcp.Tool{Name: "free", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	big := map[string]any{"data": strings.Repeat("x", 2000)}
	res := c.call("claim_bonus", big)
	if ref := refusal(t, res); ref.Code != mcpbind.CodeTooLarge || !strings.Contains(resultText(res), "more than the 1000 this server accepts") {
		t.Fatalf("refusal %+v: %s", ref, resultText(res))
	}
	if res := c.call("free", big); res.IsError {
		t.Fatalf("ungated tool: %s", resultText(res))
	}
	if s.claimed.Load() != 0 {
		t.Fatal("the handler ran")
	}
}

// TestEventErrorRefusedBeforeRun: a call whose event the machine would fail
// on (here a Go action that rejects the input) is refused with
// CodeWorkflowError before the tool runs, instead of running a tool whose
// effect could not be recorded.
func TestEventErrorRefusedBeforeRun(t *testing.T) {
	engine := compile(t, "full", `{"id": "w", "initial": "a", "states": {
		"a": {"on": {"GO": {"target": "b", "actions": "check"}}, "meta": {"mcp": {"tools": ["go"], "events": {"go": "GO"}}}},
		"b": {}}}`, &statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
		"check": func(_ context.Context, a *statechart.ActionArgs) error {
			if in, _ := a.Event.Data["input"].(map[string]any); in["bad"] == true {
				return errors.New("bad input")
			}
			return nil
		},
	}}})
	f := newFixture(t, engine, nil, "go")
	c := f.connect(t, "2025-11-25")
	res := c.call("go", map[string]any{"bad": true})
	if ref := refusal(t, res); ref.Code != mcpbind.CodeWorkflowError || ref.State != "a" || !strings.Contains(resultText(res), "bad input") {
		t.Fatalf("refusal %+v: %s", ref, resultText(res))
	}
	if f.ran("go") != 0 {
		t.Fatal("the tool ran")
	}
	if res := c.call("go", nil); res.IsError || f.ran("go") != 1 || stateOf(t, f, c) != "b" {
		t.Fatalf("good call: %s, runs %d, state %v", resultText(res), f.ran("go"), stateOf(t, f, c))
	}
}

// recordSize returns the size of the record the store holds for a
// session's workflow.
func recordSize(t *testing.T, store *mcpbind.MemoryStore, f *fixture, c *client) int {
	t.Helper()
	w, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := store.Load(context.Background(), w.Key)
	if err != nil {
		t.Fatal(err)
	}
	return len(data)
}

// TestRecordBoundedWithLargeArguments: twenty calls with 500 KB arguments
// leave a small record (the history keeps digests of large values); before,
// they made a 10 MB record that every later call decoded.
func TestRecordBoundedWithLargeArguments(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	f := newFixture(t, counterEngine(t), &mcpbind.Options{Store: store}, "inc")
	if err := f.gate.Bind("inc", mcpbind.Binding{States: []string{"open"}, Event: "INC"}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	big := map[string]any{"data": strings.Repeat("x", 500_000)}
	for range 20 {
		if res := c.call("inc", big); res.IsError {
			t.Fatal(resultText(res))
		}
	}
	if n := recordSize(t, store, f, c); n > 64<<10 {
		t.Fatalf("the record takes %d bytes after 20 calls with 500 KB arguments", n)
	}
	w, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil || len(w.History) != 20 {
		t.Fatalf("history: %v %v", w, err)
	}
	in, _ := w.History[0].Event.Data["input"].(map[string]any)
	if d, ok := in["$digest"].(map[string]any); !ok || d["bytes"].(float64) < 500_000 {
		t.Fatalf("the history keeps %v of the input", w.History[0].Event.Data["input"])
	}
}

// TestRecordBoundRefusesBeforeRun: a machine that copies each call's
// arguments into its context grows its record; the call that would take
// it past MaxRecordBytes is refused with CodeTooLarge before running, and
// the workflow stays as it was.
func TestRecordBoundRefusesBeforeRun(t *testing.T) {
	store := mcpbind.NewMemoryStore(nil)
	engine := compile(t, "full", `{"id": "keep", "initial": "open", "context": {"items": []}, "states": {
		"open": {"on": {"ADD": {"actions": {"type": "xstate.assign", "params": {"items": {"$push": {"$ref": "event.input.data"}}}}}},
		         "meta": {"mcp": {"tools": ["add"], "events": {"add": "ADD"}}}}}}`, nil)
	f := newFixture(t, engine, &mcpbind.Options{Store: store, MaxRecordBytes: 1 << 20}, "add")
	c := f.connect(t, "2025-11-25")
	item := map[string]any{"data": strings.Repeat("x", 300_000)}
	for range 3 {
		if res := c.call("add", item); res.IsError {
			t.Fatal(resultText(res))
		}
	}
	before := recordSize(t, store, f, c)
	res := c.call("add", item)
	if ref := refusal(t, res); ref.Code != mcpbind.CodeTooLarge || !strings.Contains(resultText(res), "workflow's record would take about") {
		t.Fatalf("fourth add: %+v %s", ref, resultText(res))
	}
	if f.ran("add") != 3 || recordSize(t, store, f, c) != before {
		t.Fatalf("runs %d; record %d bytes, was %d", f.ran("add"), recordSize(t, store, f, c), before)
	}
}

// guardedEngine is a machine whose PAY leaves "payment" only if the Go
// guard "funded" (reading the call's arguments, or with output, its
// result) allows it.
func guardedEngine(t *testing.T, meta string) statechart.Engine {
	return compile(t, "full", `{"id": "w", "initial": "payment", "states": {
		"payment": {"on": {"PAY": {"target": "paid", "guard": "funded"}},
		            "meta": {"mcp": {"tools": ["pay", "view"], "events": {"pay": "PAY"}`+meta+`}}},
		"paid": {}}}`, &statechart.Options{Implementations: statechart.Implementations{Guards: map[string]statechart.GuardFunc{
		"funded": func(_ context.Context, a statechart.GuardArgs) (bool, error) {
			in, _ := a.Event.Data["input"].(map[string]any)
			out, _ := a.Event.Data["output"].(map[string]any)
			args, _ := out["args"].(map[string]any)
			return in["amount"] == 10.0 || args["amount"] == 10.0, nil
		},
	}}})
}

// TestGuardRefusedBeforeRun: a call of an available tool whose event a Go
// guard refuses with the call's arguments is refused with
// CodeEventRefused, naming the event and the guard, before the tool
// runs; the same tool with arguments the guard accepts runs and moves the
// workflow. Before, the tool ran and the workflow silently stayed.
func TestGuardRefusedBeforeRun(t *testing.T) {
	f := newFixture(t, guardedEngine(t, ""), nil, "pay", "view")
	c := f.connect(t, "2025-11-25")
	res := c.call("pay", map[string]any{"amount": 5})
	ref := refusal(t, res)
	if ref.Code != mcpbind.CodeEventRefused || ref.Event != "PAY" || !slices.Equal(ref.Guards, []string{"funded"}) ||
		ref.State != "payment" || !slices.Equal(ref.Available, []string{"pay", "view"}) {
		t.Fatalf("refusal %+v: %s", ref, resultText(res))
	}
	want := `Tool "pay" was not run: the workflow does not accept its event "PAY" with these arguments now: guard "funded" refuses it.`
	if !strings.HasPrefix(resultText(res), want) {
		t.Fatalf("text %q, want it to start with %q", resultText(res), want)
	}
	if f.ran("pay") != 0 {
		t.Fatal("the tool ran")
	}
	if res := c.call("view", nil); res.IsError {
		t.Fatalf("a tool that sends no event: %s", resultText(res))
	}
	if res := c.call("pay", map[string]any{"amount": 10}); res.IsError || f.ran("pay") != 1 || stateOf(t, f, c) != "paid" {
		t.Fatalf("accepted call: %s, runs %d, state %v", resultText(res), f.ran("pay"), stateOf(t, f, c))
	}
}

// TestOutputGuardsRunFirst: a tool listed in meta.mcp.outputGuards (or
// bound with Binding.OutputGuards) runs although its guard refuses the
// event without the result, and its result decides: the guard reads
// event.output.
func TestOutputGuardsRunFirst(t *testing.T) {
	for _, tc := range []struct {
		name, meta string
		bind       bool
	}{
		{"meta", `, "outputGuards": ["pay"]`, false},
		{"Bind", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, guardedEngine(t, tc.meta), nil, "pay", "view")
			if tc.bind {
				if err := f.gate.Bind("pay", mcpbind.Binding{States: []string{"payment"}, Event: "PAY", OutputGuards: true}); err != nil {
					t.Fatal(err)
				}
			}
			c := f.connect(t, "2025-11-25")
			// The handler returns its arguments as output: amount 5 runs
			// and stays, amount 10 runs and moves.
			if res := c.call("pay", map[string]any{"amount": 5}); res.IsError || f.ran("pay") != 1 || stateOf(t, f, c) != "payment" {
				t.Fatalf("refused output: %s, runs %d, state %v", resultText(res), f.ran("pay"), stateOf(t, f, c))
			}
			if res := c.call("pay", map[string]any{"amount": 10}); res.IsError || f.ran("pay") != 2 || stateOf(t, f, c) != "paid" {
				t.Fatalf("accepted output: %s, runs %d, state %v", resultText(res), f.ran("pay"), stateOf(t, f, c))
			}
		})
	}
}

// TestGuardRefusedThroughDecide: the hooks' path (Gate.Decide, no MCP
// request) refuses the same call with the same refusal.
func TestGuardRefusedThroughDecide(t *testing.T) {
	g, err := mcpbind.New(guardedEngine(t, ""), &mcpbind.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	d, err := g.Decide(context.Background(), gate.Request{Ref: mcpbind.Ref{Name: "s"}, Tool: "pay", Args: json.RawMessage(`{"amount": 5}`), Tools: []string{"pay", "view"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Refusal == nil || d.Refusal.Code != mcpbind.CodeEventRefused || !slices.Equal(d.Refusal.Guards, []string{"funded"}) ||
		!strings.Contains(d.Text, `guard "funded" refuses it`) {
		t.Fatalf("decision %+v", d)
	}
	d, err = g.Decide(context.Background(), gate.Request{Ref: mcpbind.Ref{Name: "s"}, Tool: "pay", Args: json.RawMessage(`{"amount": 10}`)})
	if err != nil || !d.Allowed {
		t.Fatalf("decision %+v, %v", d, err)
	}
}

// TestEventRunsOnce: a successful call of an event-bound tool runs its
// event through the engine once (the action of its transition runs once):
// the commit saves the state the authorization computed. A tool that
// returns a structured result, which guards and actions may read as
// event.output, has its event processed again with the result.
func TestEventRunsOnce(t *testing.T) {
	var runs atomic.Int32
	engine := compile(t, "full", `{"id": "w", "initial": "a", "states": {
		"a": {"on": {"GO": {"target": "b", "actions": "count"}}, "meta": {"mcp": {"tools": ["plain", "structured"], "events": {"plain": "GO", "structured": "GO"}}}},
		"b": {"on": {"BACK": "a"}, "meta": {"mcp": {"tools": ["back"], "events": {"back": "BACK"}}}}}}`,
		&statechart.Options{Implementations: statechart.Implementations{Actions: map[string]statechart.ActionFunc{
			"count": func(context.Context, *statechart.ActionArgs) error { runs.Add(1); return nil },
		}}})
	f := newFixture(t, engine, nil, "structured", "back")
	f.server.AddTool(&mcp.Tool{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	c := f.connect(t, "2025-11-25")
	if res := c.call("plain", nil); res.IsError || stateOf(t, f, c) != "b" {
		t.Fatalf("plain: %s, state %v", resultText(res), stateOf(t, f, c))
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("a call without a structured result ran its transition's action %d times, want 1", n)
	}
	c.call("back", nil)
	runs.Store(0)
	if res := c.call("structured", nil); res.IsError || stateOf(t, f, c) != "b" {
		t.Fatalf("structured: %s, state %v", resultText(res), stateOf(t, f, c))
	}
	if n := runs.Load(); n != 2 {
		t.Fatalf("a call with a structured result ran its transition's action %d times, want 2 (decided, then with the result)", n)
	}
}
