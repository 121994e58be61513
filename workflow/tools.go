// This file defines Statewright's agent-facing tools, statewright_get_state
// and statewright_transition, as a set of mcpbind workflow tools that
// answer in Statewright's shapes, so that prompts and plugins written for
// Statewright keep working against chartgate serve --compat statewright.

package workflow

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// The names of Statewright's tools.
const (
	StatewrightGetState   = "statewright_get_state"
	StatewrightTransition = "statewright_transition"
)

// ToolSet describes a set of workflow tools (a workflow_status and a
// workflow_transition) that answer in a shape of their own, without MCP
// types: mcpbind's WorkflowToolsOptions with each answer as the text of
// the result.
type ToolSet struct {
	// StatusName and TransitionName name the tools.
	StatusName, TransitionName string
	// StatusDescription and TransitionDescription describe them.
	StatusDescription, TransitionDescription string
	// RenderStatus and RenderTransition write the answers: from the
	// status, or the transition that was made, and the workflow as it is
	// after the call.
	RenderStatus     func(context.Context, gate.WorkflowStatus, *gate.Workflow) string
	RenderTransition func(context.Context, gate.TransitionResult, *gate.Workflow) string
}

// StatewrightTools returns a second set of workflow tools (mcpbind's
// Gate.AddWorkflowTools, through [ToolSet]) named as Statewright's and
// answering in its shapes: statewright_get_state returns {state, is_final,
// allowed_tools, transitions: [{event, target}], iteration, max_iterations,
// instructions, transition_count, blocked_env, env_overrides, context,
// guards, interrupts, pending_approval?, interrupt_handler?, run_id,
// capture_output}, and statewright_transition {transitioned, from, to,
// requires_approval, approval_message, transition_count, usage:
// {transitions}}, both as indented JSON text, as Statewright answers. Its
// refusals keep mcpbind's texts. transition_count counts the transitions
// the run history holds (it is bounded), and usage has no plan limits.
func (w *Workflow) StatewrightTools() *ToolSet {
	return &ToolSet{
		StatusName:            StatewrightGetState,
		TransitionName:        StatewrightTransition,
		StatusDescription:     "Get the current state of the Statewright workflow: the phase, the tools allowed in it, the transitions available, its instructions and context.",
		TransitionDescription: "Move the Statewright workflow to its next phase by sending an event. Put your rationale in data.rationale.",
		RenderStatus:          w.renderState,
		RenderTransition:      w.renderTransition,
	}
}

func (w *Workflow) renderState(_ context.Context, st gate.WorkflowStatus, wf *gate.Workflow) string {
	ids := wf.State.StateIDs()
	out := map[string]any{
		"state":            st.State,
		"is_final":         st.Status == statechart.StatusDone,
		"allowed_tools":    st.Tools,
		"transitions":      w.transitionsFrom(ids, st.Events),
		"instructions":     strings.Join(st.Instructions, "\n"),
		"transition_count": transitionCount(wf.History),
		"context":          publicContext(wf.State.Context()),
		"guards":           json.RawMessage(orNull(gjson.GetBytes(w.JSON, "meta.chartgate.guards").Raw)),
		"interrupts":       w.interruptsJSON(),
		"run_id":           st.Workflow,
		"capture_output":   w.Meta.CaptureOutput,
		"iteration":        0,
		"max_iterations":   nil,
		"blocked_env":      []string{},
		"env_overrides":    map[string]string{},
	}
	for _, l := range st.Limits {
		out["iteration"], out["max_iterations"] = l.Calls, l.Max
	}
	for _, id := range ids {
		p, ok := w.Policies[id]
		if !ok {
			continue
		}
		if p.BlockedEnv != nil {
			out["blocked_env"] = p.BlockedEnv
		}
		if p.EnvOverrides != nil {
			out["env_overrides"] = p.EnvOverrides
		}
	}
	if a := st.Pending; a != nil {
		out["pending_approval"] = map[string]any{"id": a.ID, "event": a.Event, "from": a.From, "to": a.To, "message": a.Message, "expires": a.Expires}
	}
	if r, ok := wf.State.Context()[KeyInterruptReturn]; ok {
		out["interrupt_handler"] = map[string]any{"state": st.State, "return_to": r}
	}
	return jsonText(out)
}

func (w *Workflow) renderTransition(_ context.Context, tr gate.TransitionResult, wf *gate.Workflow) string {
	out := map[string]any{
		"transitioned":      tr.Transitioned,
		"from":              tr.From,
		"to":                tr.To,
		"requires_approval": false,
		"approval_message":  nil,
		"transition_count":  transitionCount(wf.History),
		"usage":             map[string]any{"transitions": transitionCount(wf.History)},
	}
	// A transition that waits for approval stops in its pending state:
	// say so, as Statewright does.
	if a := w.pendingIn(wf.State); a != nil {
		out["requires_approval"], out["approval_message"] = true, a.Message
		out["status"], out["to"] = "pending_approval", a.To
		if p := wf.Pending; p != nil {
			out["approval_id"], out["approval_expires"] = p.ID, p.Expires
		}
	}
	return jsonText(out)
}

// pendingIn returns the approval an active state of s describes.
func (w *Workflow) pendingIn(s statechart.State) *gate.Approval {
	for _, n := range w.Machine.Nodes() {
		if !slices.Contains(s.StateIDs(), n.ID) {
			continue
		}
		meta, _ := n.Meta.(map[string]any)
		m, _ := meta["mcp"].(map[string]any)
		if a, ok := m["approval"].(map[string]any); ok {
			str := func(k string) string { v, _ := a[k].(string); return v }
			return &gate.Approval{Event: str("event"), From: str("from"), To: str("to"), Message: str("message")}
		}
	}
	return nil
}

// transitionsFrom lists the events that can be sent now with their first
// target, from the active states.
func (w *Workflow) transitionsFrom(active, events []string) []map[string]any {
	out := []map[string]any{}
	for _, ev := range events {
		target := ""
		for _, n := range w.Machine.Nodes() {
			if !slices.Contains(active, n.ID) {
				continue
			}
			for _, t := range n.Transitions {
				if t.Event == ev && len(t.Targets) > 0 && target == "" {
					target = t.Targets[0]
				}
			}
		}
		out = append(out, map[string]any{"event": ev, "target": target})
	}
	return out
}

func (w *Workflow) interruptsJSON() map[string]any {
	out := map[string]any{}
	for _, in := range w.Interrupts {
		out[in.Name] = map[string]any{"trigger": map[string]any{"file_pattern": in.FilePattern}, "event": in.Event}
	}
	return out
}

// transitionCount counts the transitions a run history holds.
func transitionCount(h []gate.Transition) int {
	n := 0
	for _, e := range h {
		if e.Event.Type != "" {
			n++
		}
	}
	return n
}

// publicContext is the context without the keys the compiled workflow
// keeps for itself: in a subflow, the subflow's own context, as
// Statewright shows a child workflow's session.
func publicContext(ctx map[string]any) map[string]any {
	out := make(map[string]any, len(ctx))
	for k, v := range ctx {
		if !ReservedKey(k) {
			out[k] = v
		}
	}
	return out
}

func orNull(raw string) string {
	if raw == "" {
		return "null"
	}
	return raw
}

// jsonText answers with v as indented JSON text, as Statewright's tools do.
func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b = []byte(`{"error": "the answer could not be written"}`)
	}
	return string(b)
}
