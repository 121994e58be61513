package workflow_test

import (
	"strings"
	"testing"

	"github.com/chartgate/chartgate/workflow"
)

// TestNoStatesRefused: a workflow that defines no state would gate
// nothing (its machine is the root alone): it does not load, in either
// format, whatever else it holds.
func TestNoStatesRefused(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"empty object", `{}`, "the workflow defines no state"},
		{"no states key", `{"id": "w", "meta": {"chartgate": {"workflow": {"task_type": "x"}}}}`, "the workflow defines no state"},
		{"empty states", `{"id": "w", "states": {}}`, "states: the workflow defines no state"},
	}
	for _, c := range cases {
		for _, f := range []workflow.Format{workflow.FormatAuto, workflow.FormatXState} {
			_, err := workflow.Load([]byte(c.file), &workflow.Options{Format: f})
			if err == nil {
				t.Fatalf("%s (%s): loaded", c.name, f)
			}
			if got := err.Error(); !strings.Contains(got, c.want) {
				t.Errorf("%s (%s): %s", c.name, f, got)
			}
		}
	}
	// A Statewright file without states does not load either.
	if _, err := workflow.Load([]byte(`{"id": "w", "initial": "a", "states": {}}`), &workflow.Options{Format: workflow.FormatStatewright}); err == nil {
		t.Fatal("a Statewright workflow without states loaded")
	}
	// One state is enough.
	if _, err := workflow.Load([]byte(`{"id": "w", "initial": "a", "states": {"a": {}}}`), nil); err != nil {
		t.Fatal(err)
	}
}
