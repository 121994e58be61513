// This file defines the helpers of the tests: loading a workflow that must
// load, and running its machine with events shaped like the ones mcpbind's
// workflow_transition sends.

package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// mustLoad loads a workflow or fails the test.
func mustLoad(t testing.TB, src string, opts *workflow.Options) *workflow.Workflow {
	t.Helper()
	w, err := workflow.Load([]byte(src), opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return w
}

// loadErrors loads a workflow that must not load and returns its errors,
// one "path: message" string each.
func loadErrors(t testing.TB, src string, opts *workflow.Options) []string {
	t.Helper()
	_, err := workflow.Load([]byte(src), opts)
	if err == nil {
		t.Fatalf("Load succeeded; want errors")
	}
	var list statechart.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Load error is %T, not an ErrorList: %v", err, err)
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Error()
	}
	return out
}

// hasError reports whether some error contains every part.
func hasError(errs []string, parts ...string) bool {
	for _, e := range errs {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(e, p)
		}
		if all {
			return true
		}
	}
	return false
}

// run is a running instance of a workflow's machine, driven through the
// pure API.
type run struct {
	t *testing.T
	w *workflow.Workflow
	s *statechart.Snapshot
}

func start(t *testing.T, w *workflow.Workflow) *run {
	t.Helper()
	s, err := w.Machine.Start(context.Background(), time.Time{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return &run{t: t, w: w, s: s}
}

// at starts the machine in a given state value with a given context.
func at(t *testing.T, w *workflow.Workflow, value any, ctx map[string]any) *run {
	t.Helper()
	s, err := w.Machine.ResolveState(value, ctx)
	if err != nil {
		t.Fatalf("ResolveState(%v): %v", value, err)
	}
	return &run{t: t, w: w, s: s}
}

// transitionEvent is the event workflow_transition sends for {event, data}.
func transitionEvent(typ string, data any) statechart.Event {
	if data == nil {
		data = map[string]any{}
	}
	return statechart.Event{Type: typ, Data: map[string]any{"tool": "workflow_transition", "input": data}}
}

// send sends {event, data} as workflow_transition does, and reports
// whether the machine handled it (mcpbind sends only events it can).
func (r *run) send(typ string, data any) bool {
	r.t.Helper()
	ev := transitionEvent(typ, data)
	ok, err := r.w.Machine.Can(context.Background(), r.s, ev)
	if err != nil {
		r.t.Fatalf("Can(%s): %v", typ, err)
	}
	next, err := r.w.Machine.Transition(context.Background(), r.s, ev, time.Time{})
	if err != nil {
		r.t.Fatalf("Transition(%s): %v", typ, err)
	}
	if !ok && !sameValue(next.Value(), r.s.Value()) {
		r.t.Fatalf("Can(%s) was false but the event moved the machine from %v to %v", typ, r.s.Value(), next.Value())
	}
	r.s = next
	return ok
}

// gate sends an event only the gateway sends (interrupts, approvals).
func (r *run) gate(typ string) bool {
	r.t.Helper()
	return r.send(typ, nil)
}

// value is the state value, as a compact string: "plan", or
// {"fork":{"lint":"lint_run"}} as JSON.
func (r *run) value() string { return valueString(r.s.Value()) }

func (r *run) want(value string) {
	r.t.Helper()
	if got := r.value(); got != value {
		r.t.Fatalf("state %s, want %s", got, value)
	}
}

func (r *run) ctx() map[string]any { return r.s.Context() }

func valueString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sameValue(a, b any) bool { return valueString(a) == valueString(b) }
