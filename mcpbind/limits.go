// This file enforces meta.mcp.maxCalls: how many tool calls may run while a
// state is active before the workflow must move on.

package mcpbind

import (
	"context"
	"fmt"
	"slices"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// limits returns the call budgets of the active states with maxCalls, in
// document order.
func (g *gateCore) limits(v *view) []CallLimit {
	if !g.limited {
		return nil
	}
	var out []CallLimit
	for i, sm := range g.mcp {
		if sm != nil && sm.MaxCalls > 0 && v.active.Has(i) {
			name := g.paths[i]
			if name == "" {
				name = g.engine.ID()
			}
			out = append(out, CallLimit{State: name, Calls: v.rec.Calls[sm.StateID], Max: sm.MaxCalls, Warn: sm.OnMaxCalls == "warn", StateID: sm.StateID})
		}
	}
	return out
}

// exhausted returns the used-up budgets among limits(v) that stop calls.
func (g *gateCore) exhausted(v *view) []CallLimit { return usedUp(g.limits(v)) }

// usedUp returns the budgets of lims that are used up and stop calls (not
// those that only warn).
func usedUp(lims []CallLimit) []CallLimit {
	var out []CallLimit
	for _, l := range lims {
		if l.Calls >= l.Max && !l.Warn {
			out = append(out, l)
		}
	}
	return out
}

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

// leaves reports whether a call of a tool would take the workflow out of
// every state whose budget is used up: the tool sends an event, and the
// machine, sent that event with the call's arguments (input; nil when they
// are not known yet) and no result, leaves those states.
func (g *gateCore) leaves(ctx context.Context, v *view, ti *core.ToolInfo, tool string, input any, lims []CallLimit) bool {
	if ti.Event == "" || v.state.Status() != statechart.StatusActive {
		return false
	}
	ns, err := g.engine.Send(ctx, v.state, g.event(ti.Event, tool, input, nil), g.now())
	if err != nil {
		return false
	}
	ids := ns.StateIDs()
	for _, l := range lims {
		if slices.Contains(ids, l.StateID) {
			return false
		}
	}
	return true
}

// allowed reports whether a tool may run now: it is visible and, if some
// budget is used up (lims), it leaves the states concerned.
func (g *gateCore) allowed(ctx context.Context, v *view, tool string, ti *core.ToolInfo, lims []CallLimit, input any) bool {
	if !g.visible(ctx, v, tool, ti) {
		return false
	}
	return len(lims) == 0 || ti.Mode == core.ModeUnbound || g.leaves(ctx, v, ti, tool, input, lims)
}

// available returns the tools of a server that may be called now, in its
// order: the visible ones, less those a used-up budget stops. The start
// tool is not among them (the workflow has started).
func (g *gateCore) available(ctx context.Context, r *rules, v *view, tools []string) []string {
	lims := g.exhausted(v)
	out := []string{}
	for _, t := range tools {
		if t == g.start && g.start != "" {
			continue
		}
		if g.allowed(ctx, v, t, g.info(r, t, true), lims, nil) {
			out = append(out, t)
		}
	}
	return out
}
