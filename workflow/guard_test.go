// This file mirrors the guard tests of Statewright's guard.rs: each guard
// is evaluated by the compiled machine, on the context before the
// transition, and by Guard.Eval.

package workflow_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chartgate/chartgate/workflow"
)

func TestGuards(t *testing.T) {
	for _, tc := range []struct {
		name    string
		guard   string // {field, op, value}
		context string
		want    bool
		differs string // why we differ from Statewright on purpose, if we do
	}{
		// guard.rs
		{"eq_operator_matches", `{"field": "status", "op": "eq", "value": "draft"}`, `{"status": "draft"}`, true, ""},
		{"eq_operator_rejects_mismatch", `{"field": "status", "op": "eq", "value": "draft"}`, `{"status": "confirmed"}`, false, ""},
		{"gt_operator_passes", `{"field": "item_count", "op": "gt", "value": 0}`, `{"item_count": 3}`, true, ""},
		{"gt_operator_fails_on_equal", `{"field": "item_count", "op": "gt", "value": 0}`, `{"item_count": 0}`, false, ""},
		{"exists_operator_passes_when_present", `{"field": "payment_method", "op": "exists", "value": null}`, `{"payment_method": "card_4242"}`, true, ""},
		{"exists_operator_fails_when_null", `{"field": "payment_method", "op": "exists", "value": null}`, `{"payment_method": null}`, false, ""},
		{"exists_operator_fails_when_missing", `{"field": "payment_method", "op": "exists"}`, `{"other_field": "value"}`, false, ""},
		{"in_operator_matches_value_in_array", `{"field": "region", "op": "in", "value": ["east", "west", "central"]}`, `{"region": "east"}`, true, ""},
		{"in_operator_rejects_value_not_in_array", `{"field": "region", "op": "in", "value": ["east", "west"]}`, `{"region": "north"}`, false, ""},
		{"neq_operator_passes_on_different", `{"field": "status", "op": "neq", "value": "cancelled"}`, `{"status": "active"}`, true, ""},
		{"lt_operator_passes", `{"field": "retry_count", "op": "lt", "value": 3}`, `{"retry_count": 1}`, true, ""},
		{"contains_operator_matches_substring", `{"field": "error", "op": "contains", "value": "timeout"}`, `{"error": "connection timeout occurred"}`, true, ""},
		{"missing_field_returns_false_for_comparison", `{"field": "nonexistent", "op": "gt", "value": 0}`, `{"other": 5}`, false, ""},

		// The rest of guard.rs's semantics (§ evaluate_guard).
		{"neq on a missing field is false", `{"field": "status", "op": "neq", "value": "x"}`, `{}`, false, ""},
		{"not_exists on a missing field", `{"field": "x", "op": "not_exists"}`, `{}`, true, ""},
		{"not_exists on null", `{"field": "x", "op": "not_exists"}`, `{"x": null}`, true, ""},
		{"not_exists on a value", `{"field": "x", "op": "not_exists"}`, `{"x": 0}`, false, ""},
		{"eq null on a null field", `{"field": "x", "op": "eq", "value": null}`, `{"x": null}`, true, ""},
		{"eq compares objects deeply", `{"field": "x", "op": "eq", "value": {"a": [1, 2]}}`, `{"x": {"a": [1, 2]}}`, true, ""},
		{"eq is strict about types", `{"field": "x", "op": "eq", "value": "1"}`, `{"x": 1}`, false, ""},
		{"gte on equal", `{"field": "n", "op": "gte", "value": 5}`, `{"n": 5}`, true, ""},
		{"lte on greater", `{"field": "n", "op": "lte", "value": 5}`, `{"n": 6}`, false, ""},
		{"gt on a string is false", `{"field": "n", "op": "gt", "value": 0}`, `{"n": "9"}`, false, ""},
		{"in with a value that is not an array", `{"field": "r", "op": "in", "value": "east"}`, `{"r": "east"}`, false, ""},
		{"contains on an array is false", `{"field": "tags", "op": "contains", "value": "a"}`, `{"tags": ["a"]}`, false, ""},
		{"a dotted field is one key", `{"field": "a.b", "op": "eq", "value": 1}`, `{"a.b": 1, "a": {"b": 2}}`, true, ""},
		{"eq of 1 and 1.0", `{"field": "n", "op": "eq", "value": 1}`, `{"n": 1.0}`, true,
			"serde_json tells the integer 1 from the float 1.0, so Statewright's eq is false; JSON has one number type, and so do we"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g workflow.Guard
			var raw map[string]any
			if err := json.Unmarshal([]byte(tc.guard), &raw); err != nil {
				t.Fatal(err)
			}
			g.Field, _ = raw["field"].(string)
			g.Op, _ = raw["op"].(string)
			g.Value = raw["value"]
			var ctx map[string]any
			if err := json.Unmarshal([]byte(tc.context), &ctx); err != nil {
				t.Fatal(err)
			}
			if got := g.Eval(ctx); got != tc.want {
				t.Errorf("Eval = %v, want %v", got, tc.want)
			}

			// The compiled machine: GO moves to "passed" when the guard
			// passes, and is not handled otherwise.
			w := mustLoad(t, fmt.Sprintf(`{
				"id": "g", "initial": "start", "context": %s,
				"states": {
					"start": {"on": {"GO": {"target": "passed", "guard": "g"}}},
					"passed": {"type": "final"}
				},
				"guards": {"g": %s}
			}`, tc.context, tc.guard), nil)
			r := start(t, w)
			handled := r.send("GO", nil)
			want := "start"
			if tc.want {
				want = "passed"
			}
			r.want(want)
			if handled != tc.want {
				t.Errorf("Can(GO) = %v, want %v", handled, tc.want)
			}
		})
	}
}

// Guards see the context before the transition's data is merged
// (Statewright's rule), and the data is merged after.
func TestGuardsSeeContextBeforeData(t *testing.T) {
	w := mustLoad(t, `{
		"id": "deploy", "initial": "testing",
		"states": {
			"testing": {"on": {
				"RESULT": "reviewing",
				"DEPLOY": {"target": "deploying", "guard": "tests_passed"}
			}},
			"reviewing": {"on": {"DEPLOY": {"target": "deploying", "guard": "tests_passed"}}},
			"deploying": {"type": "final"}
		},
		"guards": {"tests_passed": {"field": "test_result", "op": "eq", "value": "pass"}}
	}`, nil)
	r := start(t, w)
	if r.send("DEPLOY", map[string]any{"test_result": "pass"}) {
		t.Fatal("DEPLOY passed its guard with the data of the same transition")
	}
	r.want("testing")
	if _, ok := r.ctx()["test_result"]; ok {
		t.Fatal("the data of a refused transition was merged")
	}
	r.send("RESULT", map[string]any{"test_result": "pass"})
	r.want("reviewing")
	if r.ctx()["test_result"] != "pass" {
		t.Fatalf("context %v: the data of RESULT was not merged", r.ctx())
	}
	if !r.send("DEPLOY", nil) {
		t.Fatal("DEPLOY refused although the context has test_result pass")
	}
	r.want("deploying")
}
