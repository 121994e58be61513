// This file mirrors the tests of Statewright's transition.rs on the
// compiled machine: plain and guarded transitions, safe_next, approvals,
// invoked subflows, the context merge, $return and forks. Where we differ
// on purpose, the test says so.

package workflow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/workflow"
)

const orderMachine = `{
	"id": "order",
	"initial": "draft",
	"context": {"item_count": 0, "items": []},
	"states": {
		"draft": {"on": {
			"ADD_ITEM": "draft",
			"SUBMIT": {"target": "pending_payment", "guards": ["has_items", "has_payment"]},
			"CANCEL": "cancelled"
		}},
		"pending_payment": {"on": {"CONFIRM_PAYMENT": "confirmed", "CANCEL": "cancelled"}},
		"confirmed": {"on": {"SHIP": "shipped"}},
		"shipped": {"on": {"DELIVER": "delivered"}},
		"delivered": {"type": "final"},
		"cancelled": {"type": "final"}
	},
	"guards": {
		"has_items": {"field": "item_count", "op": "gt", "value": 0},
		"has_payment": {"field": "payment_method", "op": "exists"}
	}
}`

func TestTransitions(t *testing.T) {
	w := mustLoad(t, orderMachine, nil)
	ready := map[string]any{"item_count": 2.0, "payment_method": "card_4242"}

	t.Run("simple_transition_changes_state", func(t *testing.T) {
		r := at(t, w, "draft", map[string]any{"item_count": 0.0})
		r.send("CANCEL", nil)
		r.want("cancelled")
	})
	t.Run("guarded_transition_passes_when_guards_satisfied", func(t *testing.T) {
		r := at(t, w, "draft", ready)
		r.send("SUBMIT", nil)
		r.want("pending_payment")
	})
	t.Run("guarded_transition_fails_when_guard_not_met", func(t *testing.T) {
		// Statewright names the failed guard (GuardFailed has_items); the
		// machine does not handle the event, and mcpbind's
		// workflow_transition answers that a guard refused it.
		r := at(t, w, "draft", map[string]any{"item_count": 0.0})
		if r.send("SUBMIT", nil) {
			t.Fatal("SUBMIT handled with item_count 0")
		}
		r.want("draft")
		info := transitionInfo(t, w, "order.draft", "SUBMIT")
		if info != "xstate.and" {
			t.Fatalf("SUBMIT's guard is %q, want xstate.and of has_items and has_payment", info)
		}
	})
	t.Run("unhandled_event_returns_error", func(t *testing.T) {
		r := at(t, w, "draft", nil)
		if r.send("SHIP", nil) {
			t.Fatal("SHIP handled in draft")
		}
		r.want("draft")
	})
	t.Run("self_transition_stays_in_same_state", func(t *testing.T) {
		r := at(t, w, "draft", map[string]any{"item_count": 0.0})
		if !r.send("ADD_ITEM", map[string]any{"item_count": 1.0}) {
			t.Fatal("ADD_ITEM not handled")
		}
		r.want("draft")
		if r.ctx()["item_count"] != 1.0 {
			t.Fatalf("context %v", r.ctx())
		}
	})
	t.Run("unknown_state_returns_error", func(t *testing.T) {
		// Not applicable as such: a snapshot is always in states of the
		// machine; one that names another state does not load.
		if _, err := w.Machine.ResolveState("nonexistent", nil); err == nil {
			t.Fatal("ResolveState of an unknown state succeeded")
		}
	})
	t.Run("full_lifecycle_draft_to_delivered", func(t *testing.T) {
		r := start(t, w)
		r.send("ADD_ITEM", map[string]any{"item_count": 2, "payment_method": "card_4242"})
		for _, step := range []struct{ event, state string }{
			{"SUBMIT", "pending_payment"}, {"CONFIRM_PAYMENT", "confirmed"}, {"SHIP", "shipped"}, {"DELIVER", "delivered"},
		} {
			if !r.send(step.event, nil) {
				t.Fatalf("%s not handled in %s", step.event, r.value())
			}
			r.want(step.state)
		}
		if st := r.s.Status(); st != "done" {
			t.Fatalf("status %s after the final state, want done", st)
		}
	})
}

// transitionInfo returns the guard of a node's transition on an event.
func transitionInfo(t *testing.T, w *workflow.Workflow, id, event string) string {
	t.Helper()
	for _, n := range w.Machine.Nodes() {
		if n.ID != id {
			continue
		}
		for _, tr := range n.Transitions {
			if tr.Event == event {
				return tr.Guard
			}
		}
	}
	t.Fatalf("no transition on %s in %s", event, id)
	return ""
}

func TestApproval(t *testing.T) {
	// approval_flag_propagated: Statewright returns requires_approval and
	// the message; the compiled machine parks the transition in a state
	// that mcpbind shows as pending (meta.mcp.approval).
	w := mustLoad(t, `{
		"id": "agent", "initial": "planning",
		"states": {
			"planning": {
				"allowed_tools": ["Read"], "disallowed_tools": ["Write"], "max_iterations": 4,
				"on": {"READY": {"target": "executing", "requires_approval": true, "approval_message": "Agent wants to start executing"}}
			},
			"executing": {"type": "final"}
		},
		"guards": {}
	}`, nil)
	const pending = "planning:READY:approval"
	mcp := gjson.GetBytes(w.JSON, "states."+gjsonKey(pending)+".meta.mcp")
	if got, want := mcp.Raw, `{"tools":["Read"],"deny":["Write"],"instructions":"Waiting for approval: Agent wants to start executing","approval":{"event":"READY","from":"planning","to":"executing","message":"Agent wants to start executing"}}`; got != want {
		t.Fatalf("meta.mcp of the pending state:\n got %s\nwant %s", got, want)
	}
	r := start(t, w)
	r.send("READY", map[string]any{"rationale": "plan done"})
	r.want(pending)
	if r.ctx()["rationale"] != "plan done" {
		t.Fatalf("the data of READY was not merged when it parked: %v", r.ctx())
	}
	if r.send("READY", nil) {
		t.Fatal("READY handled again while waiting")
	}
	r.gate("chartgate.reject")
	r.want("planning")
	r.send("READY", nil)
	r.gate("chartgate.approve")
	r.want("executing")
}

func TestSafeNext(t *testing.T) {
	// Statewright's tests send COMPLETE, an event its workflow never
	// uses; ours come from a state "other", so that COMPLETE is an event of
	// the workflow (see the "differs" test).
	const src = `{
		"id": "test", "initial": "working",
		"states": {
			"working": {"safe_next": "%s", "on": {%s, "GO_OTHER": "other"}},
			"other": {"on": {"COMPLETE": "done", "NEXT": "done"}},
			"done": {"type": "final"},
			"failed": {"type": "final"}%s
		},
		"guards": {}
	}`
	load := func(t *testing.T, safe, on string) *workflow.Workflow {
		extra := ""
		if safe == "fallback" {
			extra = `, "fallback": {"type": "final"}`
		}
		return mustLoad(t, fmt.Sprintf(src, safe, on, extra), nil)
	}
	t.Run("safe_next_fires_on_unrecognized_event", func(t *testing.T) {
		w := load(t, "done", `"FINISH": "done", "FAIL": "failed"`)
		r := start(t, w)
		// The model says COMPLETE but the event is FINISH.
		if !r.send("COMPLETE", map[string]any{"note": "x"}) {
			t.Fatal("COMPLETE not handled")
		}
		r.want("done")
		if r.ctx()["note"] != "x" {
			t.Fatal("the data of a safe_next transition was not merged (Statewright merges it)")
		}
	})
	t.Run("safe_next_does_not_override_valid_transitions", func(t *testing.T) {
		w := load(t, "fallback", `"FINISH": "done", "FAIL": "failed"`)
		r := start(t, w)
		r.send("FINISH", nil)
		r.want("done")
	})
	t.Run("safe_next_does_not_override_fail", func(t *testing.T) {
		w := load(t, "done", `"FAIL": "failed"`)
		r := start(t, w)
		r.send("FAIL", nil)
		r.want("failed")
	})
	t.Run("no_safe_next_still_errors_on_unrecognized", func(t *testing.T) {
		w := mustLoad(t, orderMachine, nil)
		r := start(t, w)
		if r.send("GIBBERISH", nil) {
			t.Fatal("GIBBERISH handled")
		}
		r.want("draft")
	})
	t.Run("differs: an event the workflow never uses takes no fallback", func(t *testing.T) {
		// Statewright sends any unknown event (a misspelt one included) to
		// safe_next. We compile safe_next to the workflow's own events, so
		// a misspelt event does not silently take the fallback: mcpbind's
		// workflow_transition refuses it, listing the events it accepts.
		w := load(t, "done", `"FINISH": "done", "FAIL": "failed"`)
		r := start(t, w)
		if r.send("FINSIH", nil) {
			t.Fatal("a misspelt event took safe_next")
		}
		r.want("working")
	})
	t.Run("safe_next does not catch interrupts or approvals", func(t *testing.T) {
		w := mustLoad(t, `{
			"id": "t", "initial": "working",
			"states": {
				"working": {"safe_next": "done", "on": {"ASK": {"target": "done", "requires_approval": true}}},
				"check": {"on": {"OK": "$return"}},
				"done": {"type": "final"}
			},
			"interrupts": {"env": {"trigger": {"file_pattern": "*.env"}, "target": "check"}}
		}`, nil)
		r := start(t, w)
		r.gate(workflow.InterruptEventPrefix + "env")
		r.want("check")
		r.send("OK", nil)
		r.want("working")
		r.send("ASK", nil)
		r.want("working:ASK:approval")
	})
}

const ciMachine = `{
	"id": "tdd", "initial": "implementing",
	"states": {
		"implementing": {"on": {"DONE": "testing", "FAIL": "failed"}},
		"testing": {"on": {
			"TESTS_PASS": "completed",
			"TESTS_FAIL": {"invoke": "debug_machine", "on_complete": "testing", "on_fail": "failed", "input": {"scope": "last_change"}}
		}},
		"completed": {"type": "final"},
		"failed": {"type": "final"}
	},
	"guards": {}
}`

const debugMachine = `{
	"id": "debug", "initial": "reproduce", "context": {"attempt": 1},
	"states": {
		"reproduce": {"allowed_tools": ["Bash"], "on": {"REPRODUCED": {"target": "fix", "guard": "scoped"}, "GIVE_UP": "failed"}},
		"fix": {"allowed_tools": ["Edit"], "on": {"FIXED": "fixed"}},
		"fixed": {"type": "final"},
		"failed": {"type": "final"}
	},
	"guards": {"scoped": {"field": "scope", "op": "eq", "value": "last_change"}}
}`

func resolver(flows map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		src, ok := flows[name]
		if !ok {
			return nil, fmt.Errorf("no workflow named %q", name)
		}
		return []byte(src), nil
	}
}

func TestInvoke(t *testing.T) {
	opts := &workflow.Options{Resolve: resolver(map[string]string{"debug_machine": debugMachine})}
	t.Run("invoke_transition_returns_invoke_result", func(t *testing.T) {
		// Statewright returns the invoke to its gateway, which runs the
		// subflow as a child session; we inline it as a compound state.
		w := mustLoad(t, ciMachine, opts)
		r := at(t, w, "testing", nil)
		r.send("TESTS_FAIL", nil)
		r.want(`{"testing:TESTS_FAIL:invoke":"reproduce"}`)
		if got := r.ctx(); got["scope"] != "last_change" || got["attempt"] != 1.0 {
			t.Fatalf("context on entering the subflow: %v, want its context and the input merged", got)
		}
		// The subflow's guard is its own, registered under its name.
		if !r.send("REPRODUCED", nil) {
			t.Fatal("REPRODUCED refused")
		}
		r.send("FIXED", nil)
		r.want("testing") // on_complete
		r.send("TESTS_FAIL", nil)
		r.send("GIVE_UP", nil)
		r.want("failed") // a subflow ending in "failed" goes to on_fail
	})
	t.Run("an interrupt inside a subflow returns into it", func(t *testing.T) {
		src := strings.Replace(ciMachine, `"guards": {}`, `"guards": {},
			"interrupts": {"env": {"trigger": {"file_pattern": "*.env"}, "target": "env_check"}}`, 1)
		src = strings.Replace(src, `"completed": {"type": "final"},`, `"completed": {"type": "final"},
			"env_check": {"on": {"OK": "$return"}},`, 1)
		w := mustLoad(t, src, opts)
		r := at(t, w, "testing", nil)
		r.send("TESTS_FAIL", nil)
		r.send("REPRODUCED", nil)
		r.want(`{"testing:TESTS_FAIL:invoke":"fix"}`)
		r.gate("chartgate.interrupt.env")
		r.want("env_check")
		r.send("OK", nil)
		r.want(`{"testing:TESTS_FAIL:invoke":"fix"}`)
	})
	t.Run("non_invoke_transition_has_no_invoke", func(t *testing.T) {
		w := mustLoad(t, `{"id": "test", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}, "guards": {}}`, &workflow.Options{Format: workflow.FormatStatewright})
		r := start(t, w)
		r.send("GO", nil)
		r.want("b")
	})
	t.Run("invoke_with_no_on_fail_defaults_to_none", func(t *testing.T) {
		const src = `{
			"id": "test", "initial": "working",
			"states": {
				"working": {"on": {"DEBUG": {"invoke": "fixer", "on_complete": "working"}, "DONE": "completed"}},
				"completed": {"type": "final"}
			},
			"guards": {}
		}`
		w := mustLoad(t, src, &workflow.Options{Resolve: resolver(map[string]string{
			"fixer": `{"id": "fixer", "initial": "fixing", "states": {"fixing": {"on": {"OK": "ok"}}, "ok": {"type": "final"}}}`,
		})})
		r := start(t, w)
		r.send("DEBUG", nil)
		r.send("OK", nil)
		r.want("working")
		// Without a resolver, the invoke cannot load.
		errs := loadErrors(t, src, nil)
		if !hasError(errs, `states.working.on.DEBUG.invoke: subflow "fixer": no resolver`) {
			t.Fatalf("errors %q", errs)
		}
		// A subflow that can fail needs somewhere to go.
		errs = loadErrors(t, src, &workflow.Options{Resolve: resolver(map[string]string{
			"fixer": `{"id": "fixer", "initial": "fixing", "states": {"fixing": {"on": {"OK": "ok", "NO": "failed"}}, "ok": {"type": "final"}, "failed": {"type": "final"}}}`,
		})})
		if !hasError(errs, "states.working.on.DEBUG", `can end in "failed"`) {
			t.Fatalf("errors %q", errs)
		}
	})
	t.Run("subflow errors and cycles are load errors", func(t *testing.T) {
		errs := loadErrors(t, ciMachine, &workflow.Options{Resolve: resolver(map[string]string{
			"debug_machine": `{"id": "d", "initial": "a", "states": {"a": {"on": {"GO": {"invoke": "debug_machine", "on_complete": "b"}}}, "b": {"type": "final"}}}`,
		})})
		if !hasError(errs, "states.testing.on.TESTS_FAIL.invoke", "debug_machine → debug_machine") {
			t.Fatalf("errors %q", errs)
		}
		errs = loadErrors(t, ciMachine, &workflow.Options{Resolve: resolver(map[string]string{
			"debug_machine": `{"id": "d", "initial": "a", "states": {"a": {"on": {"GO": "nope"}}, "b": {"type": "final"}}}`,
		})})
		if !hasError(errs, `states.testing.on.TESTS_FAIL.invoke: subflow "debug_machine": states.a.on.GO: "nope" is not a state`) {
			t.Fatalf("errors %q", errs)
		}
		errs = loadErrors(t, ciMachine, &workflow.Options{Resolve: resolver(nil)})
		if !hasError(errs, `subflow "debug_machine": no workflow named "debug_machine"`) {
			t.Fatalf("errors %q", errs)
		}
	})
}

func TestGuardedBranches(t *testing.T) {
	w := mustLoad(t, `{
		"id": "scout", "initial": "posting",
		"states": {
			"posting": {"on": {"POSTED": [
				{"guard": "under_limit", "target": "evaluating"},
				{"guard": "at_limit", "target": "reporting"}
			]}},
			"evaluating": {"type": "final"},
			"reporting": {"type": "final"}
		},
		"guards": {
			"under_limit": {"field": "post_count", "op": "lt", "value": 5},
			"at_limit": {"field": "post_count", "op": "gte", "value": 5}
		}
	}`, nil)
	t.Run("guarded_transition_takes_first_matching_branch", func(t *testing.T) {
		r := at(t, w, "posting", map[string]any{"post_count": 2.0})
		r.send("POSTED", nil)
		r.want("evaluating")
		r = at(t, w, "posting", map[string]any{"post_count": 5.0})
		r.send("POSTED", nil)
		r.want("reporting")
	})
	t.Run("guarded_transition_no_match_returns_error", func(t *testing.T) {
		r := at(t, w, "posting", map[string]any{})
		if r.send("POSTED", nil) {
			t.Fatal("POSTED handled with no post_count")
		}
		r.want("posting")
	})
	t.Run("first passing branch wins over later ones", func(t *testing.T) {
		w := mustLoad(t, `{
			"id": "x", "initial": "a",
			"states": {"a": {"on": {"GO": [{"target": "b", "guards": ["yes", "yes"]}, {"target": "c"}]}}, "b": {"type": "final"}, "c": {"type": "final"}},
			"guards": {"yes": {"field": "k", "op": "not_exists"}}
		}`, nil)
		r := start(t, w)
		r.send("GO", nil)
		r.want("b")
	})
}

func TestContextMerge(t *testing.T) {
	w := mustLoad(t, `{
		"id": "m", "initial": "a", "context": {"a": 1, "b": 2},
		"states": {"a": {"on": {"GO": "a", "END": "z"}}, "z": {"type": "final"}}
	}`, &workflow.Options{Format: workflow.FormatStatewright})
	for _, tc := range []struct {
		name string
		data any
		want map[string]any
	}{
		{"context_patch_merges_fields", map[string]any{"b": 99.0, "c": 3.0}, map[string]any{"a": 1.0, "b": 99.0, "c": 3.0}},
		{"context_patch_with_empty_patch_returns_clone", map[string]any{}, map[string]any{"a": 1.0, "b": 2.0}},
		{"context_patch_with_null_patch_returns_clone", "not an object", map[string]any{"a": 1.0, "b": 2.0}},
		{"the merge is shallow", map[string]any{"a": map[string]any{"x": 1.0}}, map[string]any{"a": map[string]any{"x": 1.0}, "b": 2.0}},
		{"reserved keys are not merged", map[string]any{"_interrupt_return": "a", "_fork": 1.0, "c": true}, map[string]any{"a": 1.0, "b": 2.0, "c": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, w)
			r.send("GO", tc.data)
			if !reflect.DeepEqual(r.ctx(), tc.want) {
				t.Fatalf("context %v, want %v", r.ctx(), tc.want)
			}
		})
	}
	t.Run("differs: no context merges like an empty one", func(t *testing.T) {
		// Statewright's context defaults to null, which drops every merge;
		// ours defaults to {} (and null means {}).
		for _, ctx := range []string{``, `"context": null,`} {
			w := mustLoad(t, `{"id": "m", "initial": "a", `+ctx+` "states": {"a": {"on": {"GO": "a"}}, "z": {"type": "final"}}, "interrupts": {"i": {"trigger": {"file_pattern": "x"}, "target": "z"}}}`, nil)
			r := start(t, w)
			r.send("GO", map[string]any{"k": "v"})
			if r.ctx()["k"] != "v" {
				t.Fatalf("context %s: the data was dropped: %v", ctx, r.ctx())
			}
		}
	})
}

// interruptMachine is transition.rs's interrupt_machine.
var interruptMachine = testdataFile("statewright-interrupt.json")

// testdataFile returns the text of a file of testdata.
func testdataFile(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestReturn(t *testing.T) {
	w := mustLoad(t, interruptMachine, nil)
	t.Run("return_target_resolves_from_context", func(t *testing.T) {
		r := at(t, w, "pb_validating", map[string]any{"_interrupt_return": "implementing"})
		r.send("VALIDATED", nil)
		r.want("implementing")
	})
	t.Run("return_target_errors_when_not_in_context", func(t *testing.T) {
		// Statewright answers InvalidDefinition; the machine does not
		// handle the event (no branch of $return matches).
		r := at(t, w, "pb_validating", map[string]any{})
		if r.send("VALIDATED", nil) {
			t.Fatal("VALIDATED handled without _interrupt_return")
		}
		r.want("pb_validating")
	})
	t.Run("return_target_cleans_up_context", func(t *testing.T) {
		r := at(t, w, "pb_validating", map[string]any{"_interrupt_return": "implementing", "some_data": "kept"})
		r.send("VALIDATED", nil)
		r.want("implementing")
		if _, ok := r.ctx()["_interrupt_return"]; ok {
			t.Fatalf("context %v still has _interrupt_return", r.ctx())
		}
		if r.ctx()["some_data"] != "kept" {
			t.Fatalf("context %v lost some_data", r.ctx())
		}
	})
	t.Run("normal_target_ignores_interrupt_return_in_context", func(t *testing.T) {
		r := at(t, w, "implementing", map[string]any{"_interrupt_return": "implementing"})
		r.send("DONE", nil)
		r.want("testing")
	})
	t.Run("the interrupt detours and $return comes back", func(t *testing.T) {
		r := start(t, w)
		r.send("DONE", nil)
		r.gate("chartgate.interrupt.pb_check")
		r.want("pb_validating")
		if r.ctx()["_interrupt_return"] != "testing" {
			t.Fatalf("context %v", r.ctx())
		}
		r.send("VALIDATED", nil)
		r.want("testing")
	})
}

const forkMachine = `{
	"id": "ci-pipeline", "initial": "building", "context": {},
	"states": {
		"building": {"on": {"BUILD_DONE": {"fork": {
			"branches": {
				"lint": {"initial": "lint_run", "terminal": "lint_done"},
				"types": {"initial": "types_run", "terminal": "types_done"}
			},
			"join": "%s", "on_complete": "deploying", "on_fail": "failed"
		}}}},
		"lint_run": {"allowed_tools": ["Bash"], "on": {"PASS": "lint_done", "FAIL": "lint_failed"}},
		"lint_done": {"type": "final"},
		"lint_failed": {"type": "final"},
		"types_run": {"allowed_tools": ["Read"], "on": {"PASS": "types_done", "FAIL": "types_failed"}},
		"types_done": {"type": "final"},
		"types_failed": {"type": "final"},
		"deploying": {"on": {"DEPLOYED": "completed"}},
		"completed": {"type": "final"},
		"failed": {"type": "final"}
	},
	"guards": {}
}`

func TestFork(t *testing.T) {
	const fork = `building:BUILD_DONE:fork`
	all := mustLoad(t, fmt.Sprintf(forkMachine, "all"), nil)
	t.Run("fork_def_deserializes", func(t *testing.T) {
		f := gjson.GetBytes(all.JSON, "states."+gjsonKey(fork))
		if f.Get("type").String() != "parallel" {
			t.Fatalf("fork state %s", f.Raw)
		}
		var regions []string
		f.Get("states").ForEach(func(k, v gjson.Result) bool {
			regions = append(regions, k.String()+"="+v.Get("type").String())
			return true
		})
		if got := fmt.Sprint(regions); got != "[lint= types= history=history]" {
			t.Fatalf("regions %s", got)
		}
		if got := f.Get("states.lint.states.lint_run.on").Raw; got != `{"lint.PASS":{"target":"lint_done","actions":"statewright.merge"},"lint.FAIL":{"target":"lint_failed","actions":"statewright.merge"}}` {
			t.Fatalf("lint_run's transitions %s", got)
		}
		if got := f.Get("states.lint.states.lint_run.meta.mcp.tools").Raw; got != `["Bash"]` {
			t.Fatalf("lint_run's tools %s: a copied state keeps its meta.mcp", got)
		}
	})
	t.Run("fork_target_returns_on_complete", func(t *testing.T) {
		f := gjson.GetBytes(all.JSON, "states."+gjsonKey(fork)+".onDone")
		if f.Get("target").String() != "deploying" {
			t.Fatalf("onDone %s", f.Raw)
		}
	})
	t.Run("fork_transition_returns_fork_result", func(t *testing.T) {
		r := start(t, all)
		r.send("BUILD_DONE", nil)
		r.want(`{"building:BUILD_DONE:fork":{"lint":"lint_run","types":"types_run"}}`)
		if r.send("PASS", nil) {
			t.Fatal("an unprefixed PASS was handled inside the fork")
		}
		r.send("lint.PASS", nil)
		r.want(`{"building:BUILD_DONE:fork":{"lint":"lint_done","types":"types_run"}}`)
		r.send("types.PASS", nil)
		r.want("deploying")
	})
	t.Run("fork_join_defaults_to_all", func(t *testing.T) {
		w := mustLoad(t, `{
			"id": "test", "initial": "start",
			"states": {
				"start": {"on": {"GO": {"fork": {"branches": {"a": {"initial": "a_run", "terminal": "a_done"}}, "on_complete": "end"}}}},
				"a_run": {"on": {"DONE": "a_done"}},
				"a_done": {"type": "final"},
				"end": {"type": "final"}
			},
			"guards": {}
		}`, nil)
		if got := gjson.GetBytes(w.JSON, "states.start:GO:fork.onDone.target").String(); got != "end" {
			t.Fatalf("onDone target %q: join all joins by onDone", got)
		}
	})
	t.Run("non_fork_transition_has_no_fork", func(t *testing.T) {
		r := at(t, all, "lint_run", nil)
		r.send("PASS", nil)
		r.want("lint_done")
	})
	t.Run("join all: a failed branch goes to on_fail", func(t *testing.T) {
		r := start(t, all)
		r.send("BUILD_DONE", nil)
		r.send("types.PASS", nil)
		r.send("lint.FAIL", nil)
		r.want("failed")
	})
	anyJoin := mustLoad(t, fmt.Sprintf(forkMachine, "any"), nil)
	t.Run("join any: the first branch done completes the fork", func(t *testing.T) {
		r := start(t, anyJoin)
		r.send("BUILD_DONE", nil)
		r.send("lint.FAIL", nil)
		r.want(`{"building:BUILD_DONE:fork":{"lint":"lint_failed","types":"types_run"}}`)
		r.send("types.PASS", nil)
		r.want("deploying")
	})
	t.Run("join any: every branch failed goes to on_fail", func(t *testing.T) {
		r := start(t, anyJoin)
		r.send("BUILD_DONE", nil)
		r.send("lint.FAIL", nil)
		r.send("types.FAIL", nil)
		r.want("failed")
	})
	t.Run("a fork without on_fail fails to the state named failed", func(t *testing.T) {
		src := fmt.Sprintf(forkMachine, "all")
		w := mustLoad(t, strings.Replace(src, `, "on_fail": "failed"`, "", 1), nil)
		r := start(t, w)
		r.send("BUILD_DONE", nil)
		r.send("lint.FAIL", nil)
		r.want("failed")
	})
}

// gjsonKey escapes a key for a gjson path.
func gjsonKey(k string) string {
	return strings.NewReplacer(".", `\.`, "*", `\*`, "?", `\?`).Replace(k)
}

var _ = context.Background

// Names with dots, backslashes, spaces and colons survive the compilation:
// targets escape them, and absolute targets name the machine's id.
func TestOddNames(t *testing.T) {
	w := mustLoad(t, `{
		"id": "my.flow\\v1",
		"initial": "step.1",
		"states": {
			"step.1": {"on": {"GO": {"fork": {
				"branches": {"b.x": {"initial": "a\\b", "terminal": "ok: yes"}},
				"on_complete": "step 2", "on_fail": "step.1"
			}}, "ASK": {"target": "step 2", "requires_approval": true}}},
			"a\\b": {"on": {"OK": "ok: yes", "NO": "bad.end"}},
			"ok: yes": {"type": "final"},
			"bad.end": {"type": "final"},
			"step 2": {"on": {"BACK": "$return", "END": "ok: yes"}}
		},
		"interrupts": {"i.j": {"trigger": {"file_pattern": "*"}, "target": "step 2"}}
	}`, nil)
	r := start(t, w)
	r.send("GO", nil)
	r.want(`{"step.1:GO:fork":{"b.x":"a\\b"}}`)
	r.send("b.x.NO", nil)
	r.want("step.1") // on_fail, through an absolute target
	r.send("GO", nil)
	r.send("b.x.OK", nil)
	r.want("step 2")
	r = start(t, w)
	r.send("GO", nil)
	r.gate("chartgate.interrupt.i.j")
	r.want("step 2")
	r.send("BACK", nil)
	r.want(`{"step.1:GO:fork":{"b.x":"a\\b"}}`) // through the fork's history
	r = start(t, w)
	r.send("ASK", nil)
	r.want("step.1:ASK:approval")
	r.gate("chartgate.approve")
	r.want("step 2")
}
