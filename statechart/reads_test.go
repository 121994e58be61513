package statechart_test

import (
	"context"
	"testing"

	"github.com/chartgate/chartgate/statechart"
)

func TestReadsEventData(t *testing.T) {
	impl, err := statechart.ParseImplementations([]byte(`{"actions": {
		"count": {"assign": {"n": {"$inc": 1}}},
		"keep": {"assign": {"last": {"$ref": "event.x"}}},
		"keepAll": {"assign": {"all": {"$push": {"$ref": "event"}}}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	impl.Guards["big"] = func(_ context.Context, a statechart.GuardArgs) (bool, error) { return a.Event.Data["x"] != nil, nil }
	impl.Actions["note"] = func(context.Context, *statechart.ActionArgs) error { return nil }
	cases := []struct {
		name, on string
		reads    bool
	}{
		{"plain", `"GO": "b"`, false},
		{"raise and cancel", `"GO": {"target": "b", "actions": [{"type": "xstate.raise", "params": {"event": {"type": "X"}}}, {"type": "xstate.cancel", "params": {"sendId": "t"}}]}`, false},
		{"stateIn", `"GO": {"target": "b", "guard": {"type": "xstate.not", "params": {"guard": {"type": "xstate.stateIn", "params": {"stateValue": "#b"}}}}}`, false},
		{"assign without the event", `"GO": {"target": "b", "actions": [{"type": "xstate.assign", "params": {"n": {"$inc": 1}}}, "count"]}`, false},
		{"unimplemented action", `"GO": {"target": "b", "actions": "nowhere"}`, false},
		{"assign of the event", `"GO": {"target": "b", "actions": {"type": "xstate.assign", "params": {"x": {"$ref": "event.x"}}}}`, true},
		{"declared assign of the event", `"GO": {"target": "b", "actions": "keep"}`, true},
		{"push of the event", `"GO": {"target": "b", "actions": "keepAll"}`, true},
		{"Go guard", `"GO": {"target": "b", "guard": "big"}`, true},
		{"Go guard under and", `"GO": {"target": "b", "guard": {"type": "xstate.and", "params": {"guards": [{"type": "xstate.stateIn", "params": {"stateValue": "#a"}}, "big"]}}}`, true},
		{"Go action", `"GO": {"target": "b", "actions": "note"}`, true},
		{"log", `"GO": {"target": "b", "actions": {"type": "xstate.log"}}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := `{"id": "m", "initial": "a", "states": {"a": {"id": "a", "on": {` + c.on + `}}, "b": {"id": "b"}}}`
			m, err := statechart.Compile([]byte(src), &statechart.Options{Implementations: impl})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.ReadsEventData(); got != c.reads {
				t.Errorf("ReadsEventData() = %v, want %v", got, c.reads)
			}
			r, ok := m.Engine().(interface{ ReadsEventData() bool })
			if !ok || r.ReadsEventData() != c.reads {
				t.Errorf("the engine does not report ReadsEventData() = %v", c.reads)
			}
		})
	}
}

func TestReadsEventDataBeyondTransitions(t *testing.T) {
	// Entry actions, invokes and outputs count as much as transitions.
	for _, src := range []string{
		`{"id": "m", "initial": "a", "states": {"a": {"entry": {"type": "xstate.assign", "params": {"e": {"$ref": "event"}}}}}}`,
		`{"id": "m", "initial": "a", "states": {"a": {"type": "final", "output": {"x": {"$ref": "event.x"}}}}}`,
		`{"id": "m", "initial": "a", "states": {"a": {"always": {"target": "b", "guard": "big"}}, "b": {}}}`,
	} {
		m, err := statechart.Compile([]byte(src), &statechart.Options{AllowMissingGuards: true})
		if err != nil {
			t.Fatal(err)
		}
		if !m.ReadsEventData() {
			t.Errorf("%s: ReadsEventData() = false", src)
		}
	}
}
