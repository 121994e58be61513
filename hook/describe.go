// This file writes the phase of a workflow for the agent: the state, its
// instructions, the tools allowed now, the shell commands allowed, the
// budgets, and the events that move it on with their targets.

package hook

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/jsonx"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// describe writes the phase of the workflow wf (named by ref) for the
// agent, as injected at session start and with every prompt:
//
//	chartgate: this session follows the workflow "coding". Phase: plan.
//	Instructions: Read the code and write a plan. Do not edit.
//	Tools allowed now: Read, Grep, Glob.
//	Calls: 3 of 10 made in plan.
//	Context budget: 12000 of 50000 bytes of tool output read in plan.
//	To move on, call workflow_transition with {"event": EVENT, "data": {"rationale": "why"}}:
//	PLAN_READY → implement; FAIL → failed.
//
// Errors reading the tools allowed now leave that line out: the text is
// guidance, and the gate decides every call anyway.
func (h *Handler) describe(ctx context.Context, host Host, ref gate.Ref, wf *gate.Workflow) string {
	id := h.wf.Machine.ID()
	st := wf.State
	if st.Status() == statechart.StatusDone {
		return fmt.Sprintf("chartgate: the workflow %q of this session is finished (state %s): its rules no longer apply.", id, jsonx.Text(st.Value()))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "chartgate: this session follows the workflow %q. Phase: %s.", id, jsonx.Text(st.Value()))
	for _, sid := range st.StateIDs() {
		if in := h.mcp[sid].Instructions; in != "" {
			b.WriteString("\nInstructions: " + in)
		}
	}
	if tools, err := h.allowedNow(ctx, host, ref, wf, h.vocab); err == nil {
		switch {
		case len(tools) == len(h.vocab):
			b.WriteString("\nTools allowed now: all.")
		case len(tools) == 0:
			b.WriteString("\nTools allowed now: none of the agent's own tools.")
		default:
			b.WriteString("\nTools allowed now: " + strings.Join(tools, ", ") + ".")
		}
	}
	var cmds, env []string
	policies := h.activePolicies(st)
	for _, p := range policies {
		cmds = appendNew(cmds, p.AllowedCommands...)
		env = appendNew(env, p.BlockedEnv...)
	}
	if len(cmds) > 0 {
		b.WriteString("\nShell commands allowed: " + strings.Join(cmds, ", ") + " (every command of a line must be one of them).")
	}
	if len(env) > 0 {
		b.WriteString("\nEnvironment variables that commands must not use: " + strings.Join(env, ", ") + ".")
	}
	if set := envOverrides(policies); len(set) > 0 && rewritesInput(host, runtime.GOOS) {
		b.WriteString("\nShell commands run with these environment variables set by the workflow: " + strings.Join(envNames(set), ", ") + ".")
	}
	for _, l := range wf.Limits {
		fmt.Fprintf(&b, "\nCalls: %d of %d made in %s.", l.Calls, l.Max, l.State)
	}
	if budget := contextBudget(policies); budget >= 0 {
		if s, _, err := LoadSession(ctx, h.store, ref.Name); err == nil {
			fmt.Fprintf(&b, "\nContext budget: %d of %d bytes of tool output read in %s.", readsSince(s, entered(wf)).Bytes, budget, jsonx.Text(st.Value()))
		}
	}
	if a, err := h.gate.Pending(ctx, ref); err == nil && a != nil {
		fmt.Fprintf(&b, "\nA transition waits for a person's %s: no transition can be made until a person approves or rejects it (in the host, or with chartgate approve %s); the agent cannot.",
			a.Text(), a.ID)
		return b.String()
	}
	b.WriteString("\n" + h.moveOn(wf))
	return b.String()
}

// moveOn writes the events that move the workflow on from its active
// states, grouped by target, with the guards they need.
func (h *Handler) moveOn(wf *gate.Workflow) string {
	st := wf.State
	type group struct {
		target string
		events []string
	}
	var groups []group
	add := func(ev, target string) {
		for i := range groups {
			if groups[i].target == target {
				if !slices.Contains(groups[i].events, ev) {
					groups[i].events = append(groups[i].events, ev)
				}
				return
			}
		}
		groups = append(groups, group{target, []string{ev}})
	}
	ctx := st.Context()
	for _, sid := range st.StateIDs() {
		for _, t := range h.nodes[sid].Transitions {
			if !agentEvent(t.Event) || len(t.Targets) == 0 {
				continue
			}
			ev := t.Event
			if tool := h.events[ev]; tool != "" {
				ev += " (sent by calling " + tool + ")"
			}
			target := h.display(t.Targets[0])
			switch {
			case t.Guard == workflow.GuardReturnTo:
				back, _ := ctx[workflow.KeyInterruptReturn].(string)
				if back == "" {
					continue // "$return" with no interrupt to return from
				}
				target = back + " (back where the interrupt came from)"
			case t.Guard != "":
				target += " (if " + t.Guard + ")"
			}
			add(ev, target)
		}
	}
	if len(groups) == 0 {
		return "No event moves the workflow on from here."
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = strings.Join(g.events, ", ") + " → " + g.target
	}
	return fmt.Sprintf("To move on, call %s with {\"event\": EVENT, \"data\": {\"rationale\": \"why\"}}: %s.", h.o.TransitionTool, strings.Join(parts, "; "))
}

// agentEvent reports whether the agent sends an event: not an eventless
// transition, a wildcard, nor one of the events only chartgate or the
// interpreter send.
func agentEvent(ev string) bool {
	return ev != "" && !strings.Contains(ev, "*") && !strings.HasPrefix(ev, "chartgate.") &&
		!strings.HasPrefix(ev, "xstate.") && !strings.HasPrefix(ev, "done.") && !strings.HasPrefix(ev, "error.")
}

// display writes a state id for people: its path from the root, without
// the machine's id.
func (h *Handler) display(id string) string {
	if rest, ok := strings.CutPrefix(id, h.wf.Machine.ID()+"."); ok {
		return rest
	}
	if n, ok := h.nodes[id]; ok && n.Key != "" {
		return n.Key
	}
	return id
}

// appendNew appends the strings of src that dst lacks.
func appendNew(dst []string, src ...string) []string {
	for _, s := range src {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}
