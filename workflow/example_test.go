// This file holds the runnable examples of the package: a Statewright
// workflow loaded and run, its errors, and the interrupt glob.

package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// A Statewright workflow, loaded as it is and run with the events mcpbind's
// workflow_transition sends.
func Example() {
	w, err := workflow.Load([]byte(`{
		"id": "deploy",
		"initial": "testing",
		"states": {
			"testing": {
				"allowed_tools": ["Read", "Bash"],
				"instructions": "Run the tests, then send RESULT with test_result.",
				"on": {"RESULT": "deciding"}
			},
			"deciding": {"on": {"DEPLOY": {"target": "deployed", "guard": "tests_passed"}}},
			"deployed": {"type": "final"}
		},
		"guards": {"tests_passed": {"field": "test_result", "op": "eq", "value": "pass"}}
	}`), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.Format)

	ctx, now := context.Background(), time.Time{}
	s, _ := w.Machine.Start(ctx, now)
	send := func(event string, data map[string]any) {
		ev := statechart.Event{Type: event, Data: map[string]any{"tool": "workflow_transition", "input": data}}
		s, _ = w.Machine.Transition(ctx, s, ev, now)
		fmt.Println(event, "->", s.Value(), s.Context())
	}
	send("RESULT", map[string]any{"test_result": "pass"})
	send("DEPLOY", nil)
	// Output:
	// statewright
	// RESULT -> deciding map[test_result:pass]
	// DEPLOY -> deployed map[test_result:pass]
}

// Every problem of a workflow, with its JSON path.
func ExampleLoad_errors() {
	_, err := workflow.Load([]byte(`{
		"id": "bad",
		"initial": "plan",
		"states": {
			"plan": {"allowed_tool": ["Read"], "on": {"GO": {"target": "dnoe", "guard": "ready"}}},
			"done": {"type": "final"}
		},
		"guards": {}
	}`), nil)
	fmt.Println(err)
	// Output:
	// 3 errors:
	// 	states.plan.allowed_tool: unknown key "allowed_tool" (did you mean "allowed_tools"?)
	// 	states.plan.on.GO.target: "dnoe" is not a state (did you mean "done"?)
	// 	states.plan.on.GO.guard: guard "ready" is not defined in "guards"
}

func ExampleMatchFile() {
	for _, path := range []string{".env", "config/.env.local", "src/main.go"} {
		fmt.Println(path, workflow.MatchFile("**/*.env*", path))
	}
	// Output:
	// .env true
	// config/.env.local true
	// src/main.go false
}

// FormatOf tells the format Load reads a file in, and refuses a file
// both formats read differently.
func ExampleFormatOf() {
	for _, file := range []string{
		`{"initial": "a", "states": {"a": {"allowed_tools": ["Read"], "on": {"GO": "b"}}, "b": {"type": "final"}}}`,
		`{"initial": "a", "states": {"a": {"on": {"GO": "b"}}, "b": {"type": "final"}}}`,
	} {
		f, err := workflow.FormatOf([]byte(file))
		fmt.Printf("%q ambiguous=%v\n", f, errors.Is(err, workflow.ErrAmbiguousFormat))
	}
	// Output:
	// "statewright" ambiguous=false
	// "" ambiguous=true
}
