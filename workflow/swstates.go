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

	"github.com/chartgate/chartgate/internal/toolname"
	"github.com/chartgate/chartgate/statechart"
)

// swStateView is what statewright_get_state shows of one state of the
// workflow file.
type swStateView struct {
	// on lists the state's "on" entries, sorted by event, as
	// {event, target}: a guarded array's first target, a fork's or an
	// invoke's on_complete (Statewright's TransitionDef::target).
	on []swOn
	// guards are the definitions of the guards the state's transitions
	// name, by name; nil when they name none.
	guards map[string]any
	// tools is allowed_tools ([] when unset), instructions the state's.
	tools        []string
	deny         []string // disallowed_tools, nil when unset
	instructions string
	maxIter      int
}

// swOn is an "on" entry of a state's view, {event, target}.
type swOn = map[string]any

// swViews reads the views of a document's states, by state name.
func swViews(d *swDoc) map[string]*swStateView {
	out := make(map[string]*swStateView, len(d.states))
	for _, s := range d.states {
		v := &swStateView{on: []swOn{}, tools: []string{}, deny: s.deny, instructions: s.instructions, maxIter: s.maxIter}
		if s.tools != nil {
			v.tools = s.tools
		}
		events := slices.Clone(s.on)
		slices.SortFunc(events, func(a, b *swEvent) int { return strings.Compare(a.name, b.name) })
		for _, ev := range events {
			v.on = append(v.on, swOn{"event": ev.name, "target": ev.tr.firstTarget()})
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

// BranchTools returns, while branch of the top-level fork running in s
// is running, the test of the tools its session may call: those its
// active states' meta.mcp.tools name, less those any of them denies, and
// those the root's meta.mcp.ungated names, as a Statewright branch
// session may call its branch state's allowed_tools only. A tool matches
// by any of its names (a gateway's SERVER__NAME and NAME). It also
// returns the names the active states list, for a refusal to show. ok is
// false when no fork runs or the branch is not running.
func (w *Workflow) BranchTools(s statechart.State, branch string) (allows func(names ...string) bool, listed []string, ok bool) {
	forkKey, _, forked := w.forkOfValue(s.Value())
	if !forked {
		return nil, nil, false
	}
	_, fork, _ := w.ActiveFork(s)
	if b, _ := fork["branches"].(map[string]any)[branch].(map[string]any); b["status"] != "running" {
		return nil, nil, false
	}
	root := w.Machine.ID()
	forkID, regionID := root+"."+forkKey, ""
	var allow, deny, ungated []string
	byID := map[string]statechart.Node{}
	for _, n := range w.Machine.Nodes() {
		byID[n.ID] = n
		switch {
		case n.Parent == forkID && n.Key == branch:
			regionID = n.ID
		case n.ID == root:
			ungated = metaNames(n, "ungated")
		}
	}
	if regionID == "" {
		return nil, nil, false
	}
	for _, id := range s.StateIDs() {
		if !strings.HasPrefix(id, regionID+".") {
			continue
		}
		allow = append(allow, metaNames(byID[id], "tools")...)
		deny = append(deny, metaNames(byID[id], "deny")...)
	}
	matches := func(patterns, names []string) bool {
		for _, p := range patterns {
			for _, n := range names {
				if n != "" && toolname.Match(p, n) {
					return true
				}
			}
		}
		return false
	}
	allows = func(names ...string) bool {
		if matches(ungated, names) {
			return true
		}
		return matches(allow, names) && !matches(deny, names)
	}
	return allows, allow, true
}

// metaNames is the list of names a state's meta.mcp has under key.
func metaNames(n statechart.Node, key string) []string {
	meta, _ := n.Meta.(map[string]any)
	m, _ := meta["mcp"].(map[string]any)
	var out []string
	switch v := m[key].(type) {
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, v...)
	}
	return out
}

// ImplicitEvent returns the event that makes a tool the current state
// refuses available, for Statewright's implicit transition taken safely
// (chartgate serve --implicit-transitions): the workflow is in a
// top-level state of the file (no fork, subflow or pending approval),
// whose meta.mcp does not allow the tool (by any of its names), and
// exactly one of the state's own "on" events leads, unguarded, to a
// plain state that is not final, needs no approval, and allows it. ok is
// false otherwise (none, or more than one: the agent chooses).
func (w *Workflow) ImplicitEvent(s statechart.State, names ...string) (event string, ok bool) {
	name, isName := s.Value().(string)
	v := w.views[name]
	if !isName || v == nil || s.Status() != statechart.StatusActive {
		return "", false
	}
	byID := map[string]statechart.Node{}
	for _, n := range w.Machine.Nodes() {
		byID[n.ID] = n
	}
	current, ok := byID[w.Machine.ID()+"."+name]
	if !ok || nodeAllows(current, names) {
		return "", false
	}
	own := map[string]bool{}
	for _, on := range v.on {
		ev, _ := on["event"].(string)
		own[ev] = true
	}
	// An event with a guard anywhere (a guarded array's unguarded last
	// branch too) is not taken.
	count := map[string]int{}
	for _, t := range current.Transitions {
		count[t.Event]++
		if t.Guard != "" {
			count[t.Event]++
		}
	}
	found := 0
	for _, t := range current.Transitions {
		if !own[t.Event] || count[t.Event] != 1 || len(t.Targets) != 1 {
			continue
		}
		target, ok := byID[t.Targets[0]]
		if !ok || target.Type != "atomic" || approvalOf(target) != nil || !nodeAllows(target, names) {
			continue
		}
		found++
		event = t.Event
	}
	if found != 1 {
		return "", false
	}
	return event, true
}

// nodeAllows reports whether a state's meta.mcp lists a tool (by any of
// its names) and does not deny it.
func nodeAllows(n statechart.Node, names []string) bool {
	match := func(patterns []string) bool {
		for _, p := range patterns {
			for _, name := range names {
				if name != "" && toolname.Match(p, name) {
					return true
				}
			}
		}
		return false
	}
	return match(metaNames(n, "tools")) && !match(metaNames(n, "deny"))
}
