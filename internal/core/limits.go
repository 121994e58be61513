// This file counts the calls of states with maxCalls.

package core

import (
	"context"
	"slices"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// Limits returns the call budgets of the active states with maxCalls, in
// document order.
func (g *Core) Limits(v *View) []gate.CallLimit {
	if !g.limited {
		return nil
	}
	var out []gate.CallLimit
	for i, sm := range g.mcp {
		if sm != nil && sm.MaxCalls > 0 && v.Active.Has(i) {
			name := g.Paths[i]
			if name == "" {
				name = g.engine.ID()
			}
			out = append(out, gate.CallLimit{State: name, Calls: v.Rec.Calls[sm.StateID], Max: sm.MaxCalls, Warn: sm.OnMaxCalls == "warn", StateID: sm.StateID})
		}
	}
	return out
}

// Exhausted returns the used-up budgets among limits(v) that stop calls.
func (g *Core) Exhausted(v *View) []gate.CallLimit { return usedUp(g.Limits(v)) }

// usedUp returns the budgets of lims that are used up and stop calls (not
// those that only warn).
func usedUp(lims []gate.CallLimit) []gate.CallLimit {
	var out []gate.CallLimit
	for _, l := range lims {
		if l.Calls >= l.Max && !l.Warn {
			out = append(out, l)
		}
	}
	return out
}

// leaves reports whether a call of a tool would take the workflow out of
// every state whose budget is used up: the tool sends an event, and the
// machine, sent that event with the call's arguments (input; nil when they
// are not known yet) and no result, leaves those states.
func (g *Core) leaves(ctx context.Context, v *View, ti *ToolInfo, tool string, input any, lims []gate.CallLimit) bool {
	if ti.Event == "" || v.State.Status() != statechart.StatusActive {
		return false
	}
	ns, err := g.engine.Send(ctx, v.State, g.Event(ti.Event, tool, input, nil), g.Now())
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

// Allowed reports whether a tool may run now: it is visible and, if some
// budget is used up (lims), it leaves the states concerned.
func (g *Core) Allowed(ctx context.Context, v *View, tool string, ti *ToolInfo, lims []gate.CallLimit, input any) bool {
	if !g.Visible(ctx, v, tool, ti) {
		return false
	}
	return len(lims) == 0 || ti.Mode == ModeUnbound || g.leaves(ctx, v, ti, tool, input, lims)
}

// Available returns the tools of a server that may be called now, in its
// order: the visible ones, less those a used-up budget stops. The start
// tool is not among them (the workflow has started).
func (g *Core) Available(ctx context.Context, r *Rules, v *View, tools []string) []string {
	lims := g.Exhausted(v)
	out := []string{}
	for _, t := range tools {
		if t == g.Start && g.Start != "" {
			continue
		}
		if g.Allowed(ctx, v, t, g.Info(r, t, true), lims, nil) {
			out = append(out, t)
		}
	}
	return out
}
