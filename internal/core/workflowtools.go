// This file authorizes workflow_transition's events.

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// PendingHelp tells the agent what a pending approval means for it.
const PendingHelp = "A person approves or rejects it (in the client when it asks them, or with chartgate approve and the approval's id); the agent cannot, and no transition can be made until then."

// WorkflowTools are the names of a set of workflow tools and the rules
// of workflow_transition.
type WorkflowTools struct {
	StatusName, TransitionName string // transitionName "" without workflow_transition
	Events                     []string
	AnyEvent                   bool
	ExplainGuard               func(context.Context, *gate.Workflow, string, map[string]any) string
}

// TransitionEvents returns the events workflow_transition may send, in the
// machine's order.
func (g *Core) TransitionEvents(r *Rules, w *WorkflowTools) []string {
	if w.TransitionName == "" {
		return nil
	}
	if w.Events != nil {
		return w.Events
	}
	byTool := g.toolEvents(r)
	var out []string
	for _, d := range g.Events.Descriptors {
		if strings.Contains(d, "*") || strings.HasPrefix(d, "xstate.") || ReservedEvent(d) || byTool[d] != "" {
			continue
		}
		out = append(out, d)
	}
	return out
}

// toolEvents maps each event a tool sends to (the first, by name) tool
// that sends it.
func (g *Core) toolEvents(r *Rules) map[string]string {
	out := map[string]string{}
	add := func(ev, tool string) {
		if prev, ok := out[ev]; !ok || tool < prev {
			out[ev] = tool
		}
	}
	for tool, ti := range r.Bound {
		if ti.Event != "" {
			add(ti.Event, tool)
		}
	}
	for tool, ev := range g.jsonEvents {
		if _, ok := r.Bound[tool]; !ok {
			add(ev, tool)
		}
	}
	return out
}

// AcceptedEvents returns the events of candidates the machine would handle
// now.
func (g *Core) AcceptedEvents(ctx context.Context, v *View, candidates []string, tool string) []string {
	out := []string{}
	if v.State.Status() != statechart.StatusActive {
		return out
	}
	for _, ev := range candidates {
		if ok, err := g.engine.Can(ctx, v.State, g.Event(ev, tool, nil, nil)); err == nil && ok {
			out = append(out, ev)
		}
	}
	return out
}

// authorizeTransition decides whether workflow_transition may send the
// event its arguments name, in the state v; it sets the call's event.
func (g *Core) authorizeTransition(ctx context.Context, c *Call, v *View) *Verdict {
	w := c.Wf
	var in struct {
		Event string         `json:"event"`
		Data  map[string]any `json:"data"`
	}
	if err := json.Unmarshal(c.RawArguments(), &in); err != nil || in.Event == "" {
		return &Verdict{Text: fmt.Sprintf(`%s needs {"event": "<EVENT>", "data": {...}}.`, w.TransitionName)}
	}
	candidates := g.TransitionEvents(c.Rules, w)
	state := StateText(v.State.Value())
	if a := g.WaitingFor(v); a != nil {
		return &Verdict{Text: "A transition is pending " + g.PendingText(a) + ". " + PendingHelp}
	}
	if ReservedEvent(in.Event) {
		return &Verdict{Text: fmt.Sprintf("Event %q is reserved: approvals and interrupts are sent by the server or by a person, not with %s.", in.Event, w.TransitionName)}
	}
	accepted := func() string {
		evs := g.AcceptedEvents(ctx, v, candidates, w.TransitionName)
		if len(evs) == 0 {
			return " It accepts no event now."
		}
		return " Events it accepts now: " + strings.Join(evs, ", ") + "."
	}
	refuse := func(format string, args ...any) *Verdict {
		return &Verdict{Text: fmt.Sprintf(format, args...)}
	}
	// A final workflow takes no event: say so whatever the event.
	switch st := v.State.Status(); st {
	case statechart.StatusActive:
	case statechart.StatusDone:
		return refuse("Cannot transition: the workflow is in final state %s.", state)
	default:
		return refuse("Cannot transition: the workflow is not active (status %s, state %s).", st, state)
	}
	if !slices.Contains(candidates, in.Event) {
		if tool := g.toolEvents(c.Rules)[in.Event]; tool != "" {
			return refuse("Event %q is sent by calling %s, not with %s.", in.Event, tool, w.TransitionName)
		}
		if !w.AnyEvent || strings.HasPrefix(in.Event, "xstate.") {
			return refuse("Event %q cannot be sent with %s.%s", in.Event, w.TransitionName, accepted())
		}
	}
	if in.Data == nil {
		in.Data = map[string]any{}
	}
	c.Event = g.Event(in.Event, w.TransitionName, in.Data, nil)
	ok, err := g.engine.Can(ctx, v.State, c.Event)
	if err != nil {
		return refuse("The workflow failed on event %q: %v", in.Event, err)
	}
	if !ok {
		if g.Model.StructurallyVisible(v.Active, &ToolInfo{Mode: ModeCan, Event: in.Event}, false) {
			why := ""
			if w.ExplainGuard != nil {
				if e := w.ExplainGuard(ctx, g.WorkflowOfView(v), in.Event, in.Data); e != "" {
					why = " " + e
				}
			}
			return refuse("Event %q was refused by a guard in state %s.%s%s", in.Event, state, why, accepted())
		}
		return refuse("No transition for event %q in state %s.%s", in.Event, state, accepted())
	}
	if _, err := g.engine.Send(ctx, v.State, c.Event, g.Now()); err != nil {
		return refuse("The workflow failed on event %q: %v", in.Event, err)
	}
	return nil
}
