// This file defines the guards {field, op, value} of Statewright workflows
// (evaluated exactly as Statewright's engine does) and the Go guards and
// actions every workflow is compiled with: the context merge of a
// transition's data, interrupt bookkeeping and subflow input.

package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/chartgate/chartgate/statechart"
)

// guardOps are the operators of a Statewright guard.
var guardOps = []string{"eq", "neq", "gt", "gte", "lt", "lte", "exists", "not_exists", "in", "contains"}

// Guard is a Statewright guard: a test of one top-level context key.
//
//	"guards": {"tests_passed": {"field": "test_result", "op": "eq", "value": "pass"}}
type Guard struct {
	Field string // a top-level context key (dots are part of the key)
	Op    string // eq, neq, gt, gte, lt, lte, exists, not_exists, in or contains
	Value any    // a JSON value (null when absent)
}

// Eval evaluates the guard on a context, as Statewright's evaluate_guard
// does: exists is true when the field is present and not null, not_exists
// when it is missing or null; every other op is false on a missing field
// (neq included); eq and neq compare JSON values (numbers by value, so 1
// equals 1.0); gt, gte, lt and lte are false unless both sides are
// numbers; in is true when value is an array holding the field; contains
// is a substring test, false unless both are strings.
func (g Guard) Eval(ctx map[string]any) bool {
	field, present := ctx[g.Field]
	switch g.Op {
	case "exists":
		return present && field != nil
	case "not_exists":
		return !present || field == nil
	}
	if !present {
		return false
	}
	switch g.Op {
	case "eq":
		return jsonEqual(field, g.Value)
	case "neq":
		return !jsonEqual(field, g.Value)
	case "gt", "gte", "lt", "lte":
		a, ok1 := number(field)
		b, ok2 := number(g.Value)
		if !ok1 || !ok2 {
			return false
		}
		switch g.Op {
		case "gt":
			return a > b
		case "gte":
			return a >= b
		case "lt":
			return a < b
		}
		return a <= b
	case "in":
		arr, ok := g.Value.([]any)
		if !ok {
			return false
		}
		for _, e := range arr {
			if jsonEqual(field, e) {
				return true
			}
		}
		return false
	case "contains":
		hay, ok1 := field.(string)
		needle, ok2 := g.Value.(string)
		return ok1 && ok2 && strings.Contains(hay, needle)
	}
	return false
}

// jsonEqual compares two JSON values: maps and slices deeply, numbers by
// value whatever their Go type (a context may hold values set from Go).
func jsonEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, has := y[k]
			if !has || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if _, ok := number(b); ok {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// number returns a JSON number as a float64, whatever Go type holds it.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// The names of the Go guards and actions every workflow is compiled with.
// They may be used in XState workflows too (see the package documentation,
// "XState workflows"); names starting with "statewright." are reserved.
const (
	// ActionMerge merges the event's input (workflow_transition's data)
	// into the context, shallowly, without the reserved keys
	// _interrupt_return and _fork. An input that is not an object merges
	// nothing.
	ActionMerge = "statewright.merge"
	// ActionAssign sets the context keys of params.values (an object).
	ActionAssign = "statewright.assign"
	// GuardReturnTo passes when context._interrupt_return equals
	// params.state.
	GuardReturnTo = "statewright.returnTo"
	// GuardNotInterrupted passes when context._interrupt_return is missing
	// or null: no interrupt handler is running.
	GuardNotInterrupted = "statewright.notInterrupted"
)

// Context keys the workflow keeps for itself: the data of a transition
// cannot set them.
const (
	KeyInterruptReturn = "_interrupt_return"
	KeyFork            = "_fork"
)

const reservedPrefix = "statewright."

// builtins returns the Go guards and actions of every workflow.
func builtins() statechart.Implementations {
	return statechart.Implementations{
		Guards: map[string]statechart.GuardFunc{
			GuardReturnTo: func(_ context.Context, a statechart.GuardArgs) (bool, error) {
				want, ok := a.Params["state"].(string)
				if !ok {
					return false, fmt.Errorf(`%s needs params {"state": "<state>"}`, GuardReturnTo)
				}
				got, ok := a.Context[KeyInterruptReturn].(string)
				return ok && got == want, nil
			},
			GuardNotInterrupted: func(_ context.Context, a statechart.GuardArgs) (bool, error) {
				return a.Context[KeyInterruptReturn] == nil, nil
			},
		},
		Actions: map[string]statechart.ActionFunc{
			ActionMerge: func(_ context.Context, a *statechart.ActionArgs) error {
				in, ok := a.Event.Data["input"].(map[string]any)
				if !ok || len(in) == 0 {
					return nil
				}
				patch := make(map[string]any, len(in))
				for k, v := range in {
					if k != KeyInterruptReturn && k != KeyFork {
						patch[k] = cloneJSON(v)
					}
				}
				a.Assign(patch)
				return nil
			},
			ActionAssign: func(_ context.Context, a *statechart.ActionArgs) error {
				values, ok := a.Params["values"].(map[string]any)
				if !ok {
					return fmt.Errorf(`%s needs params {"values": {...}}`, ActionAssign)
				}
				patch := make(map[string]any, len(values))
				for k, v := range values {
					patch[k] = cloneJSON(v)
				}
				a.Assign(patch)
				return nil
			},
		},
	}
}

// guardFunc turns a Statewright guard into a statechart guard on the
// context before the transition.
func guardFunc(g Guard) statechart.GuardFunc {
	return func(_ context.Context, a statechart.GuardArgs) (bool, error) {
		return g.Eval(a.Context), nil
	}
}

// cloneJSON deep-copies a JSON-shaped value, so that a context never shares
// maps or slices with an event or a compiled machine.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneJSON(e)
		}
		return out
	}
	return v
}
