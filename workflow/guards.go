// This file defines the guards {field, op, value} of Statewright workflows
// (evaluated exactly as Statewright's engine does) and the Go guards and
// actions every workflow is compiled with: the context merge of a
// transition's data, interrupt bookkeeping and the own context of
// subflows.

package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/internal/jsonx"
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
	// (_interrupt_return, _fork, _parent, _subflows). An input that is not
	// an object merges nothing.
	ActionMerge = "statewright.merge"
	// ActionAssign sets the context keys of params.values (an object).
	ActionAssign = "statewright.assign"
	// ActionReenter counts, in the context's _reentries ([KeyReentries]),
	// the transitions from a state to itself, so that each is a change
	// of the workflow, recorded and counted as Statewright counts it
	// (with [CompatStatewright]).
	ActionReenter = "statewright.reenter"
	// GuardReturnTo passes when _interrupt_return (or the key
	// params.key names) equals params.state, in the context of the
	// top-level workflow (see [KeyParent]).
	GuardReturnTo = "statewright.returnTo"
	// GuardNotInterrupted passes when _interrupt_return is missing or null
	// in the context of the top-level workflow: no interrupt handler is
	// running.
	GuardNotInterrupted = "statewright.notInterrupted"
	// GuardUnhandled, with params {"handled": [events], "prefix": p},
	// passes for an event the agent sent that the state does not handle:
	// its type starts with p, is not in handled, and is not reserved
	// ("chartgate.", "xstate.", or BRANCH_DONE: for a branch no fork
	// here has). It guards the wildcard transition of
	// safe_next with [CompatStatewright].
	GuardUnhandled = "statewright.unhandled"

	// The actions of a subflow with its own context, params {"id": the
	// subflow's id}; see the package documentation, "Subflows".

	// ActionSubflowStart, an action of the transition that invokes the
	// subflow, drops what an interrupt kept of an earlier run of it (in
	// _subflows), so that the subflow starts afresh.
	ActionSubflowStart = "statewright.subflowStart"
	// ActionSubflowEnter, the subflow state's entry action, with params
	// {"id", "context": its initial context}, makes the subflow's context
	// the context: the one an interrupt kept in _subflows if there is one
	// (a "$return" into the subflow), else params.context; the context it
	// replaces is kept under _parent.
	ActionSubflowEnter = "statewright.subflowEnter"
	// ActionSubflowExit, the subflow state's exit action, gives the
	// context under _parent back, with the subflow's context kept in its
	// _subflows under the subflow's id.
	ActionSubflowExit = "statewright.subflowExit"
	// ActionSubflowEnd, an action of the transitions that leave a finished
	// subflow for on_complete or on_fail, drops the subflow's context from
	// _subflows after merging it, shallowly and without the reserved keys,
	// into the context (as Statewright's gateway does when a child
	// workflow ends).
	ActionSubflowEnd = "statewright.subflowEnd"
)

// Context keys the workflow keeps for itself: the data of a transition
// cannot set them.
const (
	KeyInterruptReturn = "_interrupt_return"
	KeyFork            = "_fork"
	// KeyParent holds, in the context of a running subflow, the context of
	// the workflow that invoked it (which may be a subflow too).
	KeyParent = "_parent"
	// KeySubflows holds, in a workflow's context, the contexts of its
	// subflows an interrupt left (by subflow id), until "$return" resumes
	// them.
	KeySubflows = "_subflows"
	// KeyReentries counts the transitions of a state to itself, with
	// [CompatStatewright] ([ActionReenter]).
	KeyReentries = "_reentries"
	// KeyPausedReturn holds, while the workflow is paused
	// ([CompatStatewright]), the top-level state it resumes.
	KeyPausedReturn = "_paused_return"
)

// ReservedKey reports whether a context key is one the workflow keeps for
// itself ([KeyInterruptReturn], [KeyFork], [KeyParent], [KeySubflows],
// [KeyReentries], [KeyPausedReturn]).
func ReservedKey(k string) bool {
	switch k {
	case KeyInterruptReturn, KeyFork, KeyParent, KeySubflows, KeyReentries, KeyPausedReturn:
		return true
	}
	return false
}

// rootContext is the context of the top-level workflow: ctx, or, in a
// subflow, the context under _parent, recursively.
func rootContext(ctx map[string]any) map[string]any {
	for {
		p, ok := ctx[KeyParent].(map[string]any)
		if !ok {
			return ctx
		}
		ctx = p
	}
}

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
				key, _ := a.Params["key"].(string)
				if key == "" {
					key = KeyInterruptReturn
				}
				got, ok := rootContext(a.Context)[key].(string)
				return ok && got == want, nil
			},
			GuardNotInterrupted: func(_ context.Context, a statechart.GuardArgs) (bool, error) {
				return rootContext(a.Context)[KeyInterruptReturn] == nil, nil
			},
			GuardUnhandled: func(_ context.Context, a statechart.GuardArgs) (bool, error) {
				typ := a.Event.Type
				prefix, _ := a.Params["prefix"].(string)
				if !strings.HasPrefix(typ, prefix) || strings.HasPrefix(typ, "chartgate.") || strings.HasPrefix(typ, "xstate.") || strings.HasPrefix(typ, BranchDone) {
					return false, nil
				}
				handled, _ := a.Params["handled"].([]any)
				return !slices.Contains(handled, any(typ)), nil
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
					if !ReservedKey(k) {
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
			ActionReenter: func(_ context.Context, a *statechart.ActionArgs) error {
				n, _ := a.Context[KeyReentries].(float64)
				a.Assign(map[string]any{KeyReentries: n + 1})
				return nil
			},
			ActionSubflowStart: subflowAction(ActionSubflowStart, subflowStart),
			ActionSubflowEnter: subflowAction(ActionSubflowEnter, subflowEnter),
			ActionSubflowExit:  subflowAction(ActionSubflowExit, subflowExit),
			ActionSubflowEnd:   subflowAction(ActionSubflowEnd, subflowEnd),
		},
	}
}

// subflowAction is a subflow action, which needs params.id.
func subflowAction(name string, f func(a *statechart.ActionArgs, id string) error) statechart.ActionFunc {
	return func(_ context.Context, a *statechart.ActionArgs) error {
		id, ok := a.Params["id"].(string)
		if !ok || id == "" {
			return fmt.Errorf(`%s needs params {"id": "<subflow>"}`, name)
		}
		return f(a, id)
	}
}

// subflowStart drops a suspended context of the subflow.
func subflowStart(a *statechart.ActionArgs, id string) error {
	if next, saved := takeSuspended(a.Context, id); saved != nil {
		replaceContext(a, next)
	}
	return nil
}

// subflowEnter makes the subflow's context (suspended, or initial) the
// context, with the current one under _parent.
func subflowEnter(a *statechart.ActionArgs, id string) error {
	parent, saved := takeSuspended(a.Context, id)
	var child map[string]any
	if saved != nil {
		child = maps.Clone(saved)
	} else {
		init, ok := a.Params["context"].(map[string]any)
		if !ok && a.Params["context"] != nil {
			return fmt.Errorf(`%s: params.context is not an object`, ActionSubflowEnter)
		}
		child, _ = cloneJSON(init).(map[string]any)
		if child == nil {
			child = map[string]any{}
		}
	}
	child[KeyParent] = parent
	replaceContext(a, child)
	return nil
}

// subflowExit gives the parent's context back, with the subflow's kept in
// its _subflows. A context without _parent (a snapshot resolved inside the
// subflow, which never entered it) is left as it is.
func subflowExit(a *statechart.ActionArgs, id string) error {
	parent, ok := a.Context[KeyParent].(map[string]any)
	if !ok {
		return nil
	}
	child := maps.Clone(a.Context)
	delete(child, KeyParent)
	slots := map[string]any{}
	if old, ok := parent[KeySubflows].(map[string]any); ok {
		slots = maps.Clone(old)
	}
	slots[id] = child
	next := maps.Clone(parent)
	next[KeySubflows] = slots
	replaceContext(a, next)
	return nil
}

// subflowEnd merges the context of the finished subflow into the context,
// and drops it.
func subflowEnd(a *statechart.ActionArgs, id string) error {
	next, saved := takeSuspended(a.Context, id)
	if saved == nil {
		return nil
	}
	next = maps.Clone(next)
	for k, v := range saved {
		if !ReservedKey(k) {
			next[k] = v
		}
	}
	replaceContext(a, next)
	return nil
}

// takeSuspended returns ctx without the subflow's suspended context (a
// new map if it had one), and that context.
func takeSuspended(ctx map[string]any, id string) (map[string]any, map[string]any) {
	slots, _ := ctx[KeySubflows].(map[string]any)
	saved, ok := slots[id].(map[string]any)
	if !ok {
		return ctx, nil
	}
	rest := maps.Clone(slots)
	delete(rest, id)
	next := maps.Clone(ctx)
	if len(rest) == 0 {
		delete(next, KeySubflows)
	} else {
		next[KeySubflows] = rest
	}
	return next, saved
}

// replaceContext makes next the context: the keys it lacks are removed.
func replaceContext(a *statechart.ActionArgs, next map[string]any) {
	var gone []string
	for k := range a.Context {
		if _, ok := next[k]; !ok {
			gone = append(gone, k)
		}
	}
	a.Unset(gone...)
	a.Assign(next)
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
func cloneJSON(v any) any { return jsonx.Clone(v, nil) }
