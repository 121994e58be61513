// This file tests XState workflows: meta.chartgate (policies, interrupts,
// guards, the workflow meta) read with their paths, the built-ins usable
// from XState, and the detection of the format.

package workflow_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

const xstateWorkflow = `{
	"id": "shop",
	"initial": "browsing",
	"context": {},
	"states": {
		"browsing": {
			"on": {
				"CHECKOUT": {"target": "paying", "guard": "has_items", "actions": "statewright.merge"},
				"ADD": {"actions": "statewright.merge"},
				"chartgate.interrupt.prices": {"target": "reviewing", "guard": "statewright.notInterrupted",
					"actions": {"type": "statewright.assign", "params": {"values": {"_interrupt_return": "browsing"}}}}
			},
			"meta": {
				"mcp": {"tools": ["cart_*"]},
				"chartgate": {"allowed_commands": ["ls"], "deny_env": ["TOKEN"], "max_files_per_state": 3}
			}
		},
		"reviewing": {"on": {"OK": {"target": "browsing", "guard": {"type": "statewright.returnTo", "params": {"state": "browsing"}}}}},
		"paying": {
			"initial": "card",
			"states": {"card": {"meta": {"chartgate": {"context_budget_bytes": 1000}}}},
			"on": {"PAID": "done"}
		},
		"done": {"type": "final"}
	},
	"meta": {"chartgate": {
		"guards": {"has_items": {"field": "items", "op": "gt", "value": 0}},
		"interrupts": {"prices": {"file_pattern": "prices/*.csv"}},
		"workflow": {"task_type": "shopping", "requires_human_approval": true}
	}}
}`

func TestXStateWorkflow(t *testing.T) {
	w := mustLoad(t, xstateWorkflow, nil)
	if w.Format != workflow.FormatXState {
		t.Fatalf("format %q", w.Format)
	}
	if string(w.JSON) != xstateWorkflow {
		t.Fatal("JSON is not the file")
	}
	if len(w.Interrupts) != 1 || w.Interrupts[0] != (workflow.Interrupt{Name: "prices", FilePattern: "prices/*.csv", Event: "chartgate.interrupt.prices"}) {
		t.Fatalf("Interrupts %+v", w.Interrupts)
	}
	if !w.Meta.RequiresHumanApproval || w.Meta.TaskType != "shopping" {
		t.Fatalf("Meta %+v", w.Meta)
	}
	b := w.Policies["shop.browsing"]
	if b.AllowedCommands[0] != "ls" || b.BlockedEnv[0] != "TOKEN" || *b.MaxFilesPerState != 3 || b.AllowedCommandsTool != "Bash" {
		t.Fatalf("Policies[shop.browsing] %+v", b)
	}
	if c := w.Policies["shop.paying.card"]; c.ContextBudgetBytes == nil || *c.ContextBudgetBytes != 1000 {
		t.Fatalf("Policies[shop.paying.card] %+v", c)
	}
	if len(w.Policies) != 2 {
		t.Fatalf("Policies %v: only states that set a policy", w.Policies)
	}

	r := start(t, w)
	r.send("ADD", map[string]any{"items": 2})
	r.gate("chartgate.interrupt.prices")
	r.want("reviewing")
	r.send("OK", nil)
	r.want("browsing")
	r.send("CHECKOUT", nil)
	r.want(`{"paying":"card"}`)
}

func TestXStateErrors(t *testing.T) {
	src := strings.NewReplacer(
		`"max_files_per_state": 3`, `"max_files_per_state": "3", "allowed_comands": [], "env_overrides": {"GO-FLAGS": "x"}`,
		`"file_pattern": "prices/*.csv"`, `"file_pattern": "prices/*.csv", "event": "chartgate.interrupt.price"`,
		`"op": "gt"`, `"op": "greater"`,
		`"context_budget_bytes": 1000`, `"interrupts": {}`,
	).Replace(xstateWorkflow)
	errs := loadErrors(t, src, nil)
	for _, want := range []string{
		`meta.chartgate.guards.has_items.op: unknown op "greater"`,
		`states.browsing.meta.chartgate.max_files_per_state: must be an integer`,
		`states.browsing.meta.chartgate.allowed_comands: unknown key "allowed_comands" (did you mean "allowed_commands"?)`,
		`states.browsing.meta.chartgate.env_overrides.GO-FLAGS: not a shell variable name`,
		`states.paying.states.card.meta.chartgate.interrupts: "interrupts" belongs in the root state's meta.chartgate`,
		`meta.chartgate.interrupts.prices: no state handles the interrupt's event "chartgate.interrupt.price" (did you mean "chartgate.interrupt.prices"?)`,
	} {
		if !hasError(errs, want) {
			t.Errorf("no error %q in\n%s", want, strings.Join(errs, "\n"))
		}
	}
	// A guard the machine names but nobody implements is statechart's error.
	errs = loadErrors(t, strings.Replace(xstateWorkflow, `"has_items": {`, `"has_itemz": {`, 1), nil)
	if !hasError(errs, `states.browsing.on.CHECKOUT.guard: guard "has_items" is not implemented (did you mean "has_itemz"?)`) {
		t.Errorf("errors:\n%s", strings.Join(errs, "\n"))
	}
}

func TestXStateGoImplementations(t *testing.T) {
	src := strings.Replace(xstateWorkflow, `"guard": "has_items"`, `"guard": "inStock"`, 1)
	opts := &workflow.Options{Statechart: statechart.Options{Implementations: statechart.Implementations{
		Guards: map[string]statechart.GuardFunc{
			"inStock": func(context.Context, statechart.GuardArgs) (bool, error) { return true, nil },
		},
	}}}
	w := mustLoad(t, src, opts)
	r := start(t, w)
	r.send("CHECKOUT", nil)
	r.want(`{"paying":"card"}`)

	// A Go guard named like a workflow guard is ambiguous.
	opts.Statechart.Implementations.Guards["has_items"] = opts.Statechart.Implementations.Guards["inStock"]
	errs := loadErrors(t, src, opts)
	if !hasError(errs, `guard "has_items" is given both`) {
		t.Fatalf("errors %q", errs)
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      workflow.Format
	}{
		{"top-level guards", `{"initial": "a", "states": {"a": {}}, "guards": {}}`, workflow.FormatStatewright},
		{"top-level interrupts", `{"initial": "a", "states": {"a": {}}, "interrupts": {}}`, workflow.FormatStatewright},
		{"allowed_tools", `{"initial": "a", "states": {"a": {"allowed_tools": []}}}`, workflow.FormatStatewright},
		{"instructions", `{"initial": "a", "states": {"a": {"instructions": "x"}}}`, workflow.FormatStatewright},
		{"deny_env", `{"initial": "a", "states": {"a": {"deny_env": []}}}`, workflow.FormatStatewright},
		{"$return", `{"initial": "a", "states": {"a": {"on": {"X": "$return"}}}}`, workflow.FormatStatewright},
		{"fork", `{"initial": "a", "states": {"a": {"on": {"X": {"fork": {}}}}}}`, workflow.FormatStatewright},
		{"invoke", `{"initial": "a", "states": {"a": {"on": {"X": {"invoke": "f", "on_complete": "a"}}}}}`, workflow.FormatStatewright},
		{"guard list", `{"initial": "a", "states": {"a": {"on": {"X": {"target": "a", "guards": []}}}}}`, workflow.FormatStatewright},
		{"approval", `{"initial": "a", "states": {"a": {"on": {"X": {"target": "a", "requires_approval": true}}}}}`, workflow.FormatStatewright},
		{"guarded array", `{"initial": "a", "states": {"a": {"on": {"X": [{"target": "a", "guards": ["g"]}]}}}}`, workflow.FormatStatewright},
		{"ambiguous", `{"id": "x", "initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}`, workflow.FormatXState},
		{"XState with meta.mcp", `{"initial": "a", "states": {"a": {"meta": {"mcp": {"tools": []}}, "on": {"X": {"target": "a", "guard": "g", "actions": "f"}}}}}`, workflow.FormatXState},
		{"not JSON", `{`, workflow.FormatXState},
		{"not an object", `[]`, workflow.FormatXState},
		{"nested states are not looked at", `{"initial": "a", "states": {"a": {"initial": "b", "states": {"b": {"instructions": "x"}}}}}`, workflow.FormatXState},
	} {
		if got := workflow.DetectFormat([]byte(tc.src)); got != tc.want {
			t.Errorf("%s: DetectFormat = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []*workflow.Options{{Format: "yaml"}, {Checkpoint: "soft-ish"}} {
		if _, err := workflow.Load([]byte(orderMachine), o); err == nil {
			t.Errorf("Load with %+v succeeded", o)
		}
	}
	// A Statewright file read as XState: statechart's errors.
	errs := loadErrors(t, orderMachine, &workflow.Options{Format: workflow.FormatXState})
	if !hasError(errs, `guards: unknown key "guards"`) {
		t.Fatalf("errors %q", errs)
	}
	// An XState file read as Statewright.
	errs = loadErrors(t, xstateWorkflow, &workflow.Options{Format: workflow.FormatStatewright})
	if !hasError(errs, `states.browsing.meta: unknown key "meta"`) {
		t.Fatalf("errors %q", errs)
	}
}
