package mcpbind_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
)

// researchJSON limits the research state to two tool calls; note's event
// is handled there but keeps the workflow in it.
const researchJSON = `{
  "id": "research",
  "initial": "research",
  "states": {
    "research": {
      "on": {"SUBMIT": "writing", "NOTE": "research"},
      "meta": {"mcp": {"tools": ["search", "note", "submit"], "maxCalls": 2,
                       "events": {"submit": "SUBMIT", "note": "NOTE"}}}
    },
    "writing": {
      "on": {"BACK": "research"},
      "meta": {"mcp": {"tools": ["back"], "events": {"back": "BACK"}}}
    }
  }
}`

func workflowStatus(t *testing.T, c *client) mcpbind.WorkflowStatus {
	t.Helper()
	return decode[mcpbind.WorkflowStatus](t, c.call("workflow_status", nil))
}

// TestMaxCalls: once a state's maxCalls calls have run, only tools that
// take the workflow out of the state may run; the budget starts again when
// the state is entered again.
func TestMaxCalls(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			f := newFixture(t, compile(t, engine, researchJSON, nil), nil, "search", "note", "submit", "back", "help")
			if err := f.gate.AddWorkflowTools(f.server, &mcpbind.WorkflowToolsOptions{NoTransition: true}); err != nil {
				t.Fatal(err)
			}
			c := f.connect(t, "2025-11-25")
			c.expectTools("start", "help", "note", "search", "submit", "workflow_status")
			if st := workflowStatus(t, c); len(st.Limits) != 1 || st.Limits[0] != (mcpbind.CallLimit{State: "research", Calls: 0, Max: 2}) {
				t.Fatalf("limits %+v", st.Limits)
			}
			c.call("search", nil)
			c.expectQuiet("one call of two")
			c.call("help", nil) // unbound tools do not count
			c.call("search", nil)
			c.expectChanged("budget used up")
			c.expectTools("used up", "help", "submit", "workflow_status")
			if st := workflowStatus(t, c); st.Limits[0].Calls != 2 || !strings.Contains(resultText(c.call("workflow_status", nil)), `State "research": 2 of 2 tool calls used.`) {
				t.Fatalf("status %+v", st)
			}
			for _, tool := range []string{"search", "note"} {
				res := c.call(tool, nil)
				ref := refusal(t, res)
				if ref.Code != mcpbind.CodeCallLimit || len(ref.Limits) != 1 || ref.Limits[0].Calls != 2 ||
					!strings.Contains(resultText(res), `state "research" allows 2 tool calls and all of them are used`) ||
					!strings.Contains(resultText(res), "Tools available now: help, submit, workflow_status.") {
					t.Fatalf("%s: %+v\n%s", tool, ref, resultText(res))
				}
			}
			if f.ran("search") != 2 || f.ran("note") != 0 {
				t.Fatalf("runs: search %d, note %d", f.ran("search"), f.ran("note"))
			}
			c.call("help", nil)
			if res := c.call("submit", nil); res.IsError {
				t.Fatalf("submit: %s", resultText(res))
			}
			c.expectChanged("submitted")
			c.call("back", nil)
			c.expectChanged("back")
			c.expectTools("back in research", "help", "note", "search", "submit", "workflow_status")
			c.call("search", nil)
			if st := workflowStatus(t, c); st.Limits[0].Calls != 1 {
				t.Fatalf("budget after re-entry: %+v", st.Limits)
			}
		})
	}
}

// TestMaxCallsConcurrent: concurrent calls never exceed a budget.
func TestMaxCallsConcurrent(t *testing.T) {
	f := newFixture(t, compile(t, "full", strings.Replace(researchJSON, `"maxCalls": 2`, `"maxCalls": 5`, 1), nil), nil, "search", "submit")
	c := f.connect(t, "2025-11-25")
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search"})
		}()
	}
	wg.Wait()
	if n := f.ran("search"); n != 5 {
		t.Fatalf("search ran %d times with maxCalls 5", n)
	}
}

// TestHistory: every saved transition is kept in the workflow's bounded
// run history, passed to OnTransition and logged.
func TestHistory(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	var seen []mcpbind.Transition
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), &mcpbind.Options{
		HistoryLimit: 2,
		Logger:       slog.New(slog.NewJSONHandler(&logs, nil)),
		OnTransition: func(_ context.Context, tr mcpbind.Transition) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, tr)
		},
	})
	c := f.connect(t, "2025-11-25")
	c.call("cart_add_item", map[string]any{"product_id": "p1"})
	c.call("cart_checkout", nil)
	c.call("cart_pay", map[string]any{"payment_method": "card"})
	w, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || len(w.History) != 2 {
		t.Fatalf("OnTransition saw %d, history has %d", len(seen), len(w.History))
	}
	for i, h := range w.History {
		want := seen[i+1]
		if h.Tool != want.Tool || h.Event.Type != want.Event.Type || h.From != want.From || h.To != want.To || !h.Time.Equal(want.Time) || h.Key != want.Key {
			t.Errorf("history[%d] = %+v, want %+v", i, h, want)
		}
	}
	last := w.History[1]
	if last.Tool != "cart_pay" || last.From != "payment" || last.To != "confirmed" || last.Event.Data["input"].(map[string]any)["payment_method"] != "card" {
		t.Fatalf("last transition %+v", last)
	}
	var records int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["msg"] == "mcpbind: transition" && rec["level"] == "INFO" && rec["tool"] != nil && rec["from"] != nil && rec["to"] != nil {
			records++
		}
	}
	if records != 3 {
		t.Fatalf("%d transition log records:\n%s", records, logs.String())
	}
}

// TestMaxCallsWarn: with onMaxCalls "warn" (Statewright's soft
// max_iterations) every call runs; those past the budget end with a
// checkpoint notice.
func TestMaxCallsWarn(t *testing.T) {
	engine := compile(t, "full", `{"id": "w", "initial": "work", "states": {
		"work": {"on": {"DONE": "done"}, "meta": {"mcp": {"tools": ["edit", "finish"], "events": {"finish": "DONE"}, "maxCalls": 2, "onMaxCalls": "warn"}}},
		"done": {"type": "final"}}}`, nil)
	f := newFixture(t, engine, nil, "edit", "finish")
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	for i := 1; i <= 4; i++ {
		res := c.call("edit", nil)
		notice := strings.Contains(resultText(res), "[CHECKPOINT:")
		if res.IsError || notice != (i > 2) {
			t.Fatalf("call %d: %s", i, resultText(res))
		}
		if i == 4 && !strings.Contains(resultText(res), `[CHECKPOINT: 4 tool calls in state "work", which allows 2. Finish this state's work and move the workflow on: call workflow_transition with the next event.]`) {
			t.Fatalf("notice: %s", resultText(res))
		}
	}
	c.expectTools("the budget only warns", "edit", "finish", "workflow_status", "workflow_transition")
	if f.ran("edit") != 4 {
		t.Fatalf("runs %d", f.ran("edit"))
	}
}

// TestDenyHides: meta.mcp.deny hides tools while its state is active,
// whatever tools says (Statewright's disallowed_tools).
func TestDenyHides(t *testing.T) {
	engine := compile(t, "full", `{"id": "d", "initial": "plan", "states": {
		"plan": {"on": {"GO": "build"}, "meta": {"mcp": {"tools": ["*"], "deny": ["write_*"]}}},
		"build": {"meta": {"mcp": {"tools": ["*"]}}}}}`, nil)
	f := newFixture(t, engine, nil, "read_file", "write_file", "go")
	if err := f.gate.Bind("go", mcpbind.Binding{States: []string{"plan"}, Event: "GO"}); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.expectTools("plan", "go", "read_file")
	if ref := refusal(t, c.call("write_file", nil)); ref.Code != mcpbind.CodeForbidden || len(ref.Path) != 1 || ref.Path[0].Tool != "go" {
		t.Fatalf("write_file in plan: %+v", ref)
	}
	c.call("go", nil)
	c.expectChanged("plan → build")
	c.expectTools("build", "read_file", "write_file")
}

// TestAuditCalls: with AuditCalls the run history records every gated
// call: the ones that ran, failed or were refused, and the transitions;
// HistoryBytes bounds it.
func TestAuditCalls(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{AuditCalls: true, HistoryLimit: 100})
	c := f.connect(t, "2025-11-25")
	c.call("cart_pay", nil)                                    // refused
	c.call("cart_add_item", map[string]any{"product_id": "p"}) // transition
	c.call("cart_add_item", map[string]any{"product_id": "q"}) // ran, no transition
	c.call("cart_view", nil)                                   // not gated: not recorded
	w, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range w.History {
		got = append(got, fmt.Sprintf("%s %s %s", e.Tool, e.Outcome, e.Event.Type))
	}
	want := []string{"cart_pay FORBIDDEN ", "cart_add_item  ADD_ITEM", "cart_add_item ran "}
	if !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}

	small := newFixture(t, compile(t, "flat", checkoutJSON, nil), &mcpbind.Options{AuditCalls: true, HistoryLimit: 1000, HistoryBytes: 1000})
	sc := small.connect(t, "2025-11-25")
	for range 30 {
		sc.call("cart_pay", nil)
	}
	w, err = small.gate.SessionWorkflow(context.Background(), sc.ss)
	if err != nil || len(w.History) >= 30 || len(w.History) < 5 {
		t.Fatalf("%d entries kept in 1000 bytes: %v", len(w.History), err)
	}
}

// recordingHandler keeps the records logged through it.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// TestTransitionLogRecord: the log record of a saved transition names the
// workflow by its key's fingerprint, the tool, the event and both states,
// at the transition's time (OnTransition's), from the core's Transitioned.
func TestTransitionLogRecord(t *testing.T) {
	h := &recordingHandler{}
	var seen []mcpbind.Transition
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), &mcpbind.Options{
		Logger:       slog.New(h),
		OnTransition: func(_ context.Context, tr mcpbind.Transition) { seen = append(seen, tr) },
	})
	c := f.connect(t, "2025-11-25")
	c.call("cart_add_item", map[string]any{"product_id": "p1"})
	if len(seen) != 1 {
		t.Fatalf("OnTransition saw %d transitions", len(seen))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var got []slog.Record
	for _, r := range h.records {
		if r.Message == "mcpbind: transition" {
			got = append(got, r)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d transition records", len(got))
	}
	r := got[0]
	attrs := map[string]string{}
	r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
	want := map[string]string{"tool": "cart_add_item", "event": "ADD_ITEM", "from": "empty", "to": "has_items"}
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("%s = %q, want %q", k, attrs[k], v)
		}
	}
	if len(attrs) != 5 || len(attrs["key"]) != 12 {
		t.Errorf("attributes %v", attrs)
	}
	if r.Level != slog.LevelInfo || !r.Time.Equal(seen[0].Time) {
		t.Errorf("level %v, time %v; want INFO at the transition's time %v", r.Level, r.Time, seen[0].Time)
	}
	fr, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
	if !strings.HasSuffix(fr.Function, "internal/core.(*Core).Transitioned") {
		t.Errorf("source %s (%s:%d)", fr.Function, fr.File, fr.Line)
	}
}
