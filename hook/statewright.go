package hook

import (
	"fmt"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/shellpolicy"
	"github.com/chartgate/chartgate/workflow"
)

// With workflow.CompatStatewright the hook's refusals and warnings of the
// per-state limits start with the sentence Statewright's gateway gives for
// them (its interceptors), so that what reads Statewright's messages
// finds its phrases; chartgate's own guidance follows.

// statewright reports whether the workflow was loaded with
// workflow.CompatStatewright.
func (h *Handler) statewright() bool {
	return h.wf.Compat == workflow.CompatStatewright
}

// swShellRefusal returns Statewright's sentence for the refusal d of a
// shell line in state: a command no allowed command matches, or an entry
// of a class the state's allowed tools do not permit; "" for a refusal
// Statewright has no sentence for.
func swShellRefusal(d shellpolicy.Decision, sp *shellpolicy.Policy, line, state string) string {
	line = strings.TrimSpace(line)
	for _, v := range d.Commands {
		if v.Allowed {
			continue
		}
		if v.Unlisted {
			return fmt.Sprintf("Command rejected: '%s' is not in the allowed commands for state '%s'. Allowed: %s",
				line, state, strings.Join(sp.AllowedCommands, ", "))
		}
		if v.Class == 0 {
			continue
		}
		shown := line
		if r := []rune(shown); len(r) > 60 {
			shown = string(r[:57]) + "..."
		}
		tools := shellpolicy.DefaultRequirements()[v.Class]
		if sp.Requires != nil {
			tools = sp.Requires[v.Class]
		}
		if len(tools) == 0 {
			return fmt.Sprintf("Bash command blocked in state '%s': Command '%s' performs a %s operation which is not permitted in this state.", state, shown, v.Class)
		}
		return fmt.Sprintf("Bash command blocked in state '%s': Command '%s' performs a %s operation which requires %s in allowed_tools.",
			state, shown, v.Class, strings.Join(tools, " or "))
	}
	return ""
}

// swBudgetNote is budgetNote's notice in Statewright's words: the share
// of the budget used, the bytes, the state, then how to move on.
func (h *Handler) swBudgetNote(wf *gate.Workflow, state string, budget, used int64) string {
	share := "exceeded"
	if budget > 0 {
		share = fmt.Sprintf("%d%% used", used*100/budget)
	}
	next := "Read only what you still need"
	if used > budget {
		next = "Read nothing more here: finish with what you have"
	}
	return fmt.Sprintf("chartgate: Context budget: %s (%d/%d bytes) in state '%s'. %s, then move the workflow on with %s.\n%s",
		share, used, budget, state, next, h.o.TransitionTool, h.moveOn(wf))
}
