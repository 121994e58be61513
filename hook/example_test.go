package hook_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/chartgate/chartgate/hook"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/workflow"
)

// A Statewright workflow: plan with Read only, then implement with edits
// and `go test`.
const planThenCode = `{
  "id": "coding", "initial": "plan",
  "states": {
    "plan": {"allowed_tools": ["Read"], "instructions": "Read the code, then send PLANNED.", "on": {"PLANNED": "implement"}},
    "implement": {"allowed_tools": ["Read", "Edit", "Bash"], "allowed_commands": ["go test *"], "on": {"DONE": "done"}},
    "done": {"type": "final"}
  }
}`

// Example decides a Claude Code PreToolUse event: Edit is refused while
// the workflow plans, with the gateway's guidance, in Claude Code's
// format.
func Example() {
	w, err := workflow.Load([]byte(planThenCode), nil)
	if err != nil {
		panic(err)
	}
	store := mcpbind.NewMemoryStore(nil) // `chartgate hook` uses .chartgate/state.db
	gate, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Store: store, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	h, err := hook.NewHandler(w, gate, store, "/work/app", nil)
	if err != nil {
		panic(err)
	}
	ev, err := hook.Parse(hook.ClaudeCode, []byte(`{"session_id": "abc123", "cwd": "/work/app", "hook_event_name": "PreToolUse",
		"tool_name": "Edit", "tool_input": {"file_path": "/work/app/main.go", "old_string": "a", "new_string": "b"}}`), "")
	if err != nil {
		panic(err)
	}
	res, err := h.Handle(context.Background(), ev)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(hook.Encode(ev, res)))
	// Output:
	// {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Tool \"Edit\" is not available in the current workflow state (\"plan\"). To make it available, call workflow_transition with event \"PLANNED\".\nTools available now: Read.\nInstructions: Read the code, then send PLANNED."}}
}

// ExampleResolveSession finds the agent session a gateway serves: the one
// whose hook shares the gateway's nearest ancestor, the agent host.
func ExampleResolveSession() {
	ctx := context.Background()
	store := mcpbind.NewMemoryStore(nil)
	claudeA := hook.Proc{PID: 100, Start: 11, Name: "claude"}
	claudeB := hook.Proc{PID: 200, Start: 22, Name: "claude"}
	shell := hook.Proc{PID: 50, Start: 5, Name: "bash"}
	for id, host := range map[string]hook.Proc{"session-A": claudeA, "session-B": claudeB} {
		_, _ = hook.UpdateSession(ctx, store, id, func(s *hook.AgentSession) bool {
			s.Project, s.Seen = "/work/app", time.Now()
			s.Ancestry = []hook.Proc{{PID: host.PID + 1, Name: "sh"}, host, shell} // the hook's shell, its host, the terminal
			return true
		})
	}
	gateway := []hook.Proc{claudeB, shell} // the gateway's parent is Claude Code B
	m, _ := hook.ResolveSession(ctx, store, "/work/app", gateway, nil)
	fmt.Println(m.ID, m.Exact)
	// Output: session-B true
}
