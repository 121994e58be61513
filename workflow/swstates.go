// This file keeps what Statewright's tools show of a Statewright
// workflow's states, read once at Load: each state's "on" entries as
// statewright_get_state lists them, its guards, tools and instructions,
// and the guard definitions ExplainGuard needs; and the fork branch a
// session joined (statewright_load_workflow {branch}).

package workflow

import (
	"context"
	"slices"
	"strings"
)

// swStateView is what statewright_get_state shows of one state of the
// workflow file.
type swStateView struct {
	// on lists the state's "on" entries, sorted by event, as
	// {event, target}: a guarded array's first target, a fork's or an
	// invoke's on_complete (Statewright's TransitionDef::target).
	on []map[string]any
	// guards are the definitions of the guards the state's transitions
	// name, by name; nil when they name none.
	guards map[string]any
	// tools is allowed_tools ([] when unset), instructions the state's.
	tools        []string
	deny         []string // disallowed_tools, nil when unset
	instructions string
	maxIter      int
}

// swViews reads the views of a document's states, by state name.
func swViews(d *swDoc) map[string]*swStateView {
	out := make(map[string]*swStateView, len(d.states))
	for _, s := range d.states {
		v := &swStateView{on: []map[string]any{}, tools: []string{}, deny: s.deny, instructions: s.instructions, maxIter: s.maxIter}
		if s.tools != nil {
			v.tools = s.tools
		}
		events := slices.Clone(s.on)
		slices.SortFunc(events, func(a, b *swEvent) int { return strings.Compare(a.name, b.name) })
		for _, ev := range events {
			v.on = append(v.on, map[string]any{"event": ev.name, "target": ev.tr.firstTarget()})
			for _, b := range ev.tr.branches {
				for _, g := range b.guards {
					def, ok := d.guardByName[g]
					if !ok {
						continue
					}
					if v.guards == nil {
						v.guards = map[string]any{}
					}
					v.guards[g] = map[string]any{"field": def.def.Field, "op": def.def.Op, "value": def.def.Value}
				}
			}
		}
		out[s.name] = v
	}
	return out
}

// firstTarget is the target Statewright's TransitionDef::target gives.
func (t *swTransition) firstTarget() string {
	switch {
	case t.kind == kindFork && t.fork != nil:
		return t.fork.onComplete
	case t.kind == kindInvoke && t.invoke != nil:
		return t.invoke.onComplete
	case len(t.branches) > 0:
		return t.branches[0].target
	}
	return ""
}

// branchKey is the context key of the fork branch a session works in.
type branchKey struct{}

// WithBranch returns a context saying that the session works in the fork
// branch named branch, as a Statewright sub-agent that joined it with
// statewright_load_workflow {"branch"}: statewright_get_state and
// statewright_transition then answer for the branch, as Statewright's
// branch session does.
func WithBranch(ctx context.Context, branch string) context.Context {
	return context.WithValue(ctx, branchKey{}, branch)
}

func branchOf(ctx context.Context) string {
	b, _ := ctx.Value(branchKey{}).(string)
	return b
}
