// This file enforces meta.mcp.maxCalls: how many tool calls may run while a
// state is active before the workflow must move on.

package mcpbind

import (
	"fmt"
)

// checkpoints returns the budgets that only warn and that a call counted
// in v went past.
func checkpoints(lims []CallLimit) []CallLimit {
	var out []CallLimit
	for _, l := range lims {
		if l.Warn && l.Calls > l.Max {
			out = append(out, l)
		}
	}
	return out
}

// checkpointNotice is the default notice of a call past a budget that
// warns.
func checkpointNotice(l CallLimit, transitionTool string) string {
	next := "call the tool that moves the workflow on"
	if transitionTool != "" {
		next = "call " + transitionTool + " with the next event"
	}
	return fmt.Sprintf("[CHECKPOINT: %d tool calls in state %q, which allows %d. Finish this state's work and move the workflow on: %s.]", l.Calls, l.State, l.Max, next)
}
