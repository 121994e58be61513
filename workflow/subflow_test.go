// This file tests the context of inlined subflows: a subflow runs in its
// own context (its context and the invoke's input), the parent's kept
// under _parent; the parent's comes back, with the subflow's merged in,
// when it completes or fails; an interrupt suspends it and "$return"
// resumes it as it was; nested subflows stack; in a fork's branch a
// subflow shares the context.

package workflow_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/workflow"
)

// subflowParent invokes debug_machine from testing, with an interrupt.
const subflowParent = `{
	"id": "tdd", "initial": "implementing", "context": {"owner": "parent", "scope": "everything"},
	"states": {
		"implementing": {"on": {"DONE": "testing"}},
		"testing": {"on": {
			"TESTS_PASS": "completed",
			"TESTS_FAIL": {"invoke": "debug_machine", "on_complete": "testing", "on_fail": "failed", "input": {"scope": "last_change"}}
		}},
		"env_check": {"on": {"OK": "$return", "SKIP": "testing"}},
		"completed": {"type": "final"},
		"failed": {"type": "final"}
	},
	"interrupts": {"env": {"trigger": {"file_pattern": "*.env"}, "target": "env_check"}}
}`

// subflowChild is debug_machine: its guard tests a key the parent has
// and it does not (ticket), and one its input sets (scope).
const subflowChild = `{
	"id": "debug", "initial": "reproduce", "context": {"attempt": 1},
	"states": {
		"reproduce": {"on": {
			"REPRODUCED": {"target": "fix", "guard": "scoped"},
			"TICKETED": {"target": "fix", "guard": "has_ticket"},
			"GIVE_UP": "failed"
		}},
		"fix": {"on": {"FIXED": "fixed", "NOTE": "fix"}},
		"fixed": {"type": "final"},
		"failed": {"type": "final"}
	},
	"guards": {
		"scoped": {"field": "scope", "op": "eq", "value": "last_change"},
		"has_ticket": {"field": "ticket", "op": "exists"}
	}
}`

func subflowOpts(extra map[string]string) *workflow.Options {
	flows := map[string]string{"debug_machine": subflowChild}
	for k, v := range extra {
		flows[k] = v
	}
	return &workflow.Options{Resolve: resolver(flows)}
}

const invokeState = "testing:TESTS_FAIL:invoke"

// public is a context without the workflow's reserved keys.
func public(ctx map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range ctx {
		if !workflow.ReservedKey(k) {
			out[k] = v
		}
	}
	return out
}

func wantCtx(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s: %s, want %s", what, g, w)
	}
}

func TestSubflowOwnContext(t *testing.T) {
	w := mustLoad(t, subflowParent, subflowOpts(nil))
	enter := func(t *testing.T) *run {
		r := start(t, w)
		r.send("DONE", map[string]any{"ticket": "T-1"})
		r.send("TESTS_FAIL", map[string]any{"why": "red"})
		r.want(`{"testing:TESTS_FAIL:invoke":"reproduce"}`)
		return r
	}
	parent := map[string]any{"owner": "parent", "scope": "everything", "ticket": "T-1", "why": "red"}

	t.Run("on entry the context is the subflow's context and the input", func(t *testing.T) {
		r := enter(t)
		wantCtx(t, "subflow context", public(r.ctx()), map[string]any{"attempt": 1.0, "scope": "last_change"})
		// The invoke's data went to the parent, which is kept aside whole.
		wantCtx(t, "_parent", r.ctx()[workflow.KeyParent].(map[string]any), parent)
	})
	t.Run("guards inside see the subflow's context", func(t *testing.T) {
		r := enter(t)
		// The parent has a ticket; the subflow does not.
		if r.send("TICKETED", nil) {
			t.Fatal("a guard inside the subflow saw the parent's context")
		}
		// scope is "last_change" inside (the input), "everything" outside.
		if !r.send("REPRODUCED", nil) {
			t.Fatal("REPRODUCED refused: the guard did not see the input")
		}
	})
	t.Run("data merged inside stays inside", func(t *testing.T) {
		r := enter(t)
		r.send("REPRODUCED", map[string]any{"cause": "off by one", "_parent": "forged", "_subflows": 1})
		r.want(`{"testing:TESTS_FAIL:invoke":"fix"}`)
		wantCtx(t, "subflow context", public(r.ctx()), map[string]any{"attempt": 1.0, "scope": "last_change", "cause": "off by one"})
		wantCtx(t, "_parent", r.ctx()[workflow.KeyParent].(map[string]any), parent)
	})
	t.Run("on complete the parent's context comes back, the subflow's merged in", func(t *testing.T) {
		r := enter(t)
		r.send("REPRODUCED", map[string]any{"cause": "off by one"})
		r.send("FIXED", map[string]any{"patch": "p1"})
		r.want("testing")
		// As Statewright's gateway: the child's context over the parent's.
		wantCtx(t, "context after the subflow", r.ctx(), map[string]any{
			"owner": "parent", "ticket": "T-1", "why": "red",
			"scope": "last_change", "attempt": 1.0, "cause": "off by one", "patch": "p1",
		})
	})
	t.Run("on fail the parent's context comes back, the subflow's merged in", func(t *testing.T) {
		r := enter(t)
		r.send("GIVE_UP", map[string]any{"reason": "flaky"})
		r.want("failed")
		wantCtx(t, "context after the subflow", r.ctx(), map[string]any{
			"owner": "parent", "ticket": "T-1", "why": "red",
			"scope": "last_change", "attempt": 1.0, "reason": "flaky",
		})
	})
	t.Run("a second run starts from the subflow's context again", func(t *testing.T) {
		r := enter(t)
		r.send("REPRODUCED", map[string]any{"cause": "c"})
		r.send("FIXED", nil)
		r.send("TESTS_FAIL", nil)
		wantCtx(t, "subflow context", public(r.ctx()), map[string]any{"attempt": 1.0, "scope": "last_change"})
	})
}

func TestSubflowInterrupt(t *testing.T) {
	w := mustLoad(t, subflowParent, subflowOpts(nil))
	inFix := func(t *testing.T) *run {
		r := start(t, w)
		r.send("DONE", nil)
		r.send("TESTS_FAIL", nil)
		r.send("REPRODUCED", map[string]any{"cause": "c"})
		r.want(`{"testing:TESTS_FAIL:invoke":"fix"}`)
		return r
	}
	child := map[string]any{"attempt": 1.0, "scope": "last_change", "cause": "c"}

	t.Run("the handler runs in the parent's context and $return resumes the subflow as it was", func(t *testing.T) {
		r := inFix(t)
		r.gate("chartgate.interrupt.env")
		r.want("env_check")
		// Exit actions run before the transition's: the subflow's context
		// was put aside first, then _interrupt_return set in the parent's.
		wantCtx(t, "handler context", public(r.ctx()), map[string]any{"owner": "parent", "scope": "everything"})
		if r.ctx()[workflow.KeyInterruptReturn] != invokeState {
			t.Fatalf("_interrupt_return = %v", r.ctx()[workflow.KeyInterruptReturn])
		}
		kept := r.ctx()[workflow.KeySubflows].(map[string]any)[invokeState].(map[string]any)
		wantCtx(t, "the subflow's context kept aside", kept, child)

		r.send("OK", map[string]any{"env": "clean"})
		r.want(`{"testing:TESTS_FAIL:invoke":"fix"}`)
		wantCtx(t, "subflow context after $return", public(r.ctx()), child)
		// Transition actions run before entry actions: _interrupt_return
		// was removed from the parent's context before it was put aside.
		wantCtx(t, "_parent after $return", r.ctx()[workflow.KeyParent].(map[string]any),
			map[string]any{"owner": "parent", "scope": "everything", "env": "clean"})
		if _, ok := r.ctx()[workflow.KeySubflows]; ok {
			t.Fatalf("_subflows left in the subflow's context: %v", r.ctx())
		}
		r.send("FIXED", nil)
		r.want("testing")
		if _, ok := r.ctx()[workflow.KeySubflows]; ok {
			t.Fatalf("_subflows left after the subflow completed: %v", r.ctx())
		}
	})
	t.Run("interrupts are skipped in a subflow entered from a handler", func(t *testing.T) {
		r := inFix(t)
		r.gate("chartgate.interrupt.env")
		r.send("SKIP", nil) // leaves the handler without $return
		r.want("testing")
		r.send("TESTS_FAIL", nil)
		r.want(`{"testing:TESTS_FAIL:invoke":"reproduce"}`)
		// _interrupt_return is still set in the parent's context.
		if r.gate("chartgate.interrupt.env") {
			t.Fatal("an interrupt fired in a subflow while _interrupt_return was set")
		}
	})
	t.Run("invoking again after a handler left without $return starts afresh", func(t *testing.T) {
		r := inFix(t)
		r.gate("chartgate.interrupt.env")
		r.send("SKIP", nil)
		r.send("TESTS_FAIL", nil)
		wantCtx(t, "subflow context", public(r.ctx()), map[string]any{"attempt": 1.0, "scope": "last_change"})
		if _, ok := r.ctx()[workflow.KeyParent].(map[string]any)[workflow.KeySubflows]; ok {
			t.Fatalf("the stale subflow context was kept: %v", r.ctx())
		}
	})
}

// outerFlow invokes debug_machine from its own state.
const outerFlow = `{
	"id": "outer", "initial": "triage", "context": {"level": "outer"},
	"states": {
		"triage": {"on": {"DEBUG": {"invoke": "debug_machine", "on_complete": "report", "on_fail": "failed", "input": {"from": "outer", "ticket": "T-9"}}}},
		"report": {"on": {"REPORTED": "done"}},
		"done": {"type": "final"},
		"failed": {"type": "final"}
	}
}`

func TestSubflowNested(t *testing.T) {
	src := strings.Replace(subflowParent, `"invoke": "debug_machine"`, `"invoke": "outer"`, 1)
	w := mustLoad(t, src, subflowOpts(map[string]string{"outer": outerFlow}))
	const outer = `"testing:TESTS_FAIL:invoke"`
	t.Run("contexts stack", func(t *testing.T) {
		r := start(t, w)
		r.send("DONE", nil)
		r.send("TESTS_FAIL", nil)
		r.send("DEBUG", map[string]any{"note": "in outer"})
		wantCtx(t, "inner context", public(r.ctx()), map[string]any{"attempt": 1.0, "from": "outer", "ticket": "T-9"})
		mid := r.ctx()[workflow.KeyParent].(map[string]any)
		wantCtx(t, "outer context", public(mid), map[string]any{"level": "outer", "scope": "last_change", "note": "in outer"})
		wantCtx(t, "workflow context", mid[workflow.KeyParent].(map[string]any), map[string]any{"owner": "parent", "scope": "everything"})

		r.send("GIVE_UP", map[string]any{"reason": "r"})
		// The inner subflow failed: its on_fail is the outer's "failed",
		// which ends the outer subflow, which fails the workflow.
		r.want("failed")
		wantCtx(t, "workflow context at the end", r.ctx(), map[string]any{
			"owner": "parent", "scope": "last_change", "level": "outer", "note": "in outer",
			"attempt": 1.0, "from": "outer", "ticket": "T-9", "reason": "r",
		})
	})
	t.Run("the inner subflow completes into the outer, the outer into the workflow", func(t *testing.T) {
		r := start(t, w)
		r.send("DONE", nil)
		r.send("TESTS_FAIL", nil)
		r.send("DEBUG", nil)
		// The outer subflow's context has scope "last_change"; the inner's
		// has none.
		if r.send("REPRODUCED", nil) {
			t.Fatal("the inner guard saw the outer subflow's context")
		}
		r.send("TICKETED", nil) // the input gave it a ticket
		r.send("FIXED", map[string]any{"patch": "p"})
		r.want(`{` + outer + `:"report"}`)
		wantCtx(t, "outer context", public(r.ctx()), map[string]any{
			"level": "outer", "scope": "last_change",
			"attempt": 1.0, "from": "outer", "ticket": "T-9", "patch": "p",
		})
		r.send("REPORTED", map[string]any{"summary": "s"})
		r.want("testing")
		wantCtx(t, "workflow context", r.ctx(), map[string]any{
			"owner": "parent", "scope": "last_change", "level": "outer",
			"attempt": 1.0, "from": "outer", "ticket": "T-9", "patch": "p", "summary": "s",
		})
	})
	t.Run("interrupt and $return at depth two", func(t *testing.T) {
		r := start(t, w)
		r.send("DONE", nil)
		r.send("TESTS_FAIL", nil)
		r.send("DEBUG", map[string]any{"note": "in outer"})
		r.send("TICKETED", map[string]any{"step": 1})
		r.want(`{` + outer + `:{"triage:DEBUG:invoke":"fix"}}`)
		inner := public(r.ctx())
		outerCtx := public(r.ctx()[workflow.KeyParent].(map[string]any))

		r.gate("chartgate.interrupt.env")
		r.want("env_check")
		wantCtx(t, "handler context", public(r.ctx()), map[string]any{"owner": "parent", "scope": "everything"})
		r.send("OK", nil)
		r.want(`{` + outer + `:{"triage:DEBUG:invoke":"fix"}}`)
		wantCtx(t, "inner context after $return", public(r.ctx()), inner)
		mid := r.ctx()[workflow.KeyParent].(map[string]any)
		wantCtx(t, "outer context after $return", public(mid), outerCtx)
		if _, ok := mid[workflow.KeySubflows]; ok {
			t.Fatalf("the inner subflow's context was left in the outer's: %v", mid)
		}
		wantCtx(t, "workflow context after $return", mid[workflow.KeyParent].(map[string]any), map[string]any{"owner": "parent", "scope": "everything"})
	})
}

func TestSubflowStatewrightState(t *testing.T) {
	// statewright_get_state shows the subflow's own context, as
	// Statewright shows the child workflow's session, without the keys
	// the workflow keeps for itself.
	w := mustLoad(t, subflowParent, subflowOpts(nil))
	r := start(t, w)
	r.send("DONE", map[string]any{"ticket": "T-1"})
	r.send("TESTS_FAIL", nil)
	r.send("REPRODUCED", nil)
	r.gate("chartgate.interrupt.env")
	r.send("OK", nil)
	r.want(`{"testing:TESTS_FAIL:invoke":"fix"}`)
	state := func() map[string]any {
		t.Helper()
		res := w.StatewrightTools().RenderStatus(context.Background(), mcpbind.WorkflowStatus{State: r.s.Value()}, &mcpbind.Workflow{State: r.s})
		var out map[string]any
		if err := json.Unmarshal([]byte(res), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	wantCtx(t, "statewright_get_state context", state()["context"].(map[string]any), map[string]any{"attempt": 1.0, "scope": "last_change"})
	if _, ok := state()["interrupt_handler"]; ok {
		t.Fatal("interrupt_handler shown after $return")
	}
	r.gate("chartgate.interrupt.env")
	st := state()
	wantCtx(t, "statewright_get_state context in the handler", st["context"].(map[string]any), map[string]any{"owner": "parent", "scope": "everything", "ticket": "T-1"})
	if h, _ := st["interrupt_handler"].(map[string]any); h["return_state"] != invokeState {
		t.Fatalf("interrupt_handler %v", st["interrupt_handler"])
	}
}

// forkWithSubflow has a fork whose lint branch invokes debug_machine.
const forkWithSubflow = `{
	"id": "ci", "initial": "building", "context": {"owner": "parent"},
	"states": {
		"building": {"on": {"BUILD_DONE": {"fork": {
			"branches": {
				"lint": {"initial": "lint_run", "terminal": "lint_done"},
				"types": {"initial": "types_run", "terminal": "types_done"}
			},
			"on_complete": "deploying", "on_fail": "failed"
		}}}},
		"lint_run": {"on": {"DEBUG": {"invoke": "debug_machine", "on_complete": "lint_done", "on_fail": "lint_failed", "input": {"scope": "last_change"}}}},
		"lint_done": {"type": "final"},
		"lint_failed": {"type": "final"},
		"types_run": {"on": {"PASS": "types_done"}},
		"types_done": {"type": "final"},
		"deploying": {"on": {"DEPLOYED": "completed"}},
		"completed": {"type": "final"},
		"failed": {"type": "final"}
	}
}`

func TestSubflowInFork(t *testing.T) {
	// Branches run at once with one context: a subflow in a branch shares
	// it, its context and input merged in on entry.
	w := mustLoad(t, forkWithSubflow, subflowOpts(nil))
	r := start(t, w)
	r.send("BUILD_DONE", nil)
	r.send("lint.DEBUG", nil)
	r.want(`{"building:BUILD_DONE:fork":{"lint":{"lint_run:DEBUG:invoke":"reproduce"},"types":"types_run"}}`)
	wantCtx(t, "context", r.ctx(), map[string]any{"owner": "parent", "attempt": 1.0, "scope": "last_change"})
	r.send("types.PASS", map[string]any{"types": "ok"})
	if !r.send("lint.REPRODUCED", nil) {
		t.Fatal("lint.REPRODUCED refused")
	}
	r.send("lint.FIXED", nil)
	r.want("deploying")
	wantCtx(t, "context", r.ctx(), map[string]any{"owner": "parent", "attempt": 1.0, "scope": "last_change", "types": "ok"})
}

func TestSubflowCompiledJSONRunsTheSame(t *testing.T) {
	// The compiled machine, loaded as an XState workflow, names the same
	// built-in subflow actions and runs the same.
	src := strings.Replace(subflowParent, `"invoke": "debug_machine"`, `"invoke": "outer"`, 1)
	w := mustLoad(t, src, subflowOpts(map[string]string{"outer": outerFlow}))
	again := mustLoad(t, string(w.JSON), &workflow.Options{Format: workflow.FormatXState})
	if _, err := mcpbind.New(again.Machine.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatalf("mcpbind.New: %v", err)
	}
	walk := func(w *workflow.Workflow) []string {
		r := start(t, w)
		var seen []string
		look := func() {
			b, _ := json.Marshal(r.ctx())
			seen = append(seen, r.value()+" "+string(b))
		}
		r.send("DONE", map[string]any{"a": 1})
		r.send("TESTS_FAIL", nil)
		look()
		r.send("DEBUG", map[string]any{"b": 2})
		r.send("TICKETED", map[string]any{"c": 3})
		look()
		r.gate("chartgate.interrupt.env")
		look()
		r.send("OK", map[string]any{"d": 4})
		look()
		r.send("FIXED", nil)
		look()
		r.send("REPORTED", nil)
		look()
		return seen
	}
	got, want := walk(again), walk(w)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded as XState:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.HasPrefix(want[len(want)-1], "testing ") {
		t.Fatalf("the walk ended in %s", want[len(want)-1])
	}
}
