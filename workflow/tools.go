// This file defines Statewright's agent-facing tools, statewright_get_state
// and statewright_transition, as a set of mcpbind workflow tools that
// answer in Statewright's shapes, so that prompts and plugins written for
// Statewright keep working against chartgate serve --compat statewright.

package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/jsonx"
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
	// AnyEvent lets the transition tool take an event no state of the
	// workflow names (Statewright's safe_next takes any unrecognised event).
	AnyEvent bool
	// ExplainGuard, if set, says why guards refused an event; the text is
	// added to the refusal.
	ExplainGuard func(ctx context.Context, wf *gate.Workflow, event string, data map[string]any) string
}

// StatewrightTools returns a second set of workflow tools (mcpbind's
// Gate.AddWorkflowTools, through [ToolSet]) named as Statewright's and
// answering in its shapes: statewright_get_state returns {state, is_final,
// allowed_tools, transitions: [{event, target}], iteration, max_iterations,
// instructions, model, default_model, thinking_level, transition_count,
// blocked_env, env_overrides, allowed_commands, disallowed_tools,
// direct_execution, model_ladder, context, guards, meta (the file's,
// or null), interrupts?:
// {name: {file_pattern, target}}, pending_approval?: {approval_id, event,
// from_state, to_state, message}, interrupt_handler?: {return_state,
// message}, fork?, run_id, capture_output}. For a state of a Statewright
// file, allowed_tools is the state's allowed_tools, transitions every
// entry of its "on" sorted by event (a guarded array's first target, a
// fork's or an invoke's on_complete), and guards the definitions of the
// guards they name (null if none), as Statewright lists them. While a
// transition waits for approval, state is the state it leaves; while a
// fork runs, the state of the current branch (the first running one by
// name) with fork {active, current_branch, branches: {b: {status,
// initial, terminal}}, join} and without run_id and capture_output, as
// Statewright's gateway answers the session that forked, or, in a
// session that joined a branch ([WithBranch]), the branch's state with
// the whole fork ([Workflow.ActiveFork]); in a subflow, state, from and to
// name the child workflow's state, in which the agent works while the
// parent waits. statewright_transition returns
// {transitioned, from, to, requires_approval, approval_message,
// transition_count, usage: {transitions, limit, remaining}}, with
// invoke {machine, on_complete, on_fail, input} for a transition that
// invokes a subflow (to is then its on_complete, as Statewright writes
// it, while the agent works in the subflow's first state), with the
// fields of Statewright's gateway for a fork ({forked, branches,
// current_branch, join, on_complete} and the fork) and for
// BRANCH_DONE:<b> ({branch_completed, next_branch, completed,
// remaining}, or {joined, completed_branches}). Both answer as indented
// JSON text, as Statewright does; refusals keep mcpbind's texts.
// transition_count counts the transitions the run history holds (it is
// bounded) as Statewright counts them (an approved transition once; a
// rejected one, pause and resume not), and usage has no plan limits
// (limit and remaining are null).
func (w *Workflow) StatewrightTools() *ToolSet {
	return &ToolSet{
		StatusName:            StatewrightGetState,
		TransitionName:        StatewrightTransition,
		StatusDescription:     "Get the current state of the Statewright workflow: the phase, the tools allowed in it, the transitions available, its instructions and context.",
		TransitionDescription: "Move the Statewright workflow to its next phase by sending an event. Put your rationale in data.rationale.",
		RenderStatus:          w.renderState,
		RenderTransition:      w.renderTransition,
		AnyEvent:              true,
		ExplainGuard:          w.explainGuard,
	}
}

func (w *Workflow) renderState(ctx context.Context, st gate.WorkflowStatus, wf *gate.Workflow) string {
	ids := wf.State.StateIDs()
	state := subflowLeaf(st.State)
	// A transition waiting for approval waits in a state of its own;
	// Statewright's session stays in the state it leaves.
	if a := w.pendingIn(wf.State); a != nil {
		state = a.From
	}
	from, fork, forked := w.ActiveFork(wf.State)
	branch := branchOf(ctx)
	parent := false // the session that forked, not one in a branch
	if forked {
		// A branch's session is in the branch's state; Statewright's
		// parent session shows its current branch's.
		state = from
		branches := fork["branches"].(map[string]any)
		if b, ok := branches[branch].(map[string]any); ok && b["status"] == "running" {
			state = b["state"]
			fork["current_branch"] = branch
		} else {
			parent = true
			if cur, ok := fork["current_branch"].(string); ok {
				if s, _ := branches[cur].(map[string]any)["state"].(string); s != "" {
					state = s
				}
			}
		}
	}
	out := map[string]any{
		"state":            state,
		"is_final":         st.Status == statechart.StatusDone,
		"allowed_tools":    st.Tools,
		"transitions":      w.transitionsFrom(ids, st.Events),
		"instructions":     orNil(strings.Join(st.Instructions, "\n")),
		"transition_count": w.transitionCount(wf.History),
		"context":          publicContext(wf.State.Context()),
		"guards":           nil,
		"run_id":           st.Workflow,
		"capture_output":   w.Meta.CaptureOutput,
		"iteration":        0,
		"max_iterations":   nil,
		"blocked_env":      nil,
		"env_overrides":    nil,
		"allowed_commands": nil,
		"disallowed_tools": nil,
		"model":            nil,
		"default_model":    nil,
		"thinking_level":   nil,
		"model_ladder":     nil,
		"direct_execution": false,
		"meta":             w.metaValue(),
		"workflow":         w.Machine.ID(),
	}
	var defaultModel string
	if json.Unmarshal(w.Meta.Extra["default_model"], &defaultModel) == nil && defaultModel != "" {
		out["default_model"], out["model"] = defaultModel, defaultModel
	}
	if len(w.Interrupts) > 0 {
		out["interrupts"] = w.interruptsJSON()
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
		if p.AllowedCommands != nil {
			out["allowed_commands"] = p.AllowedCommands
		}
		if p.Model != "" {
			out["model"] = p.Model
		}
		if p.ThinkingLevel != "" {
			out["thinking_level"] = p.ThinkingLevel
		}
		if p.ModelLadder != nil {
			out["model_ladder"] = p.ModelLadder
		}
	}
	// A state of the workflow file shows its own "on" entries and guards,
	// as Statewright lists them (every entry, whether or not its guard
	// passes now).
	if name, ok := state.(string); ok {
		if v := w.views[name]; v != nil {
			out["transitions"], out["allowed_tools"] = v.on, v.tools
			if v.deny != nil {
				out["disallowed_tools"] = v.deny
			}
			if v.guards != nil {
				out["guards"] = v.guards
			}
			if forked && name != from {
				// A branch's state: its own instructions.
				out["instructions"] = orNil(v.instructions)
				if v.maxIter > 0 {
					out["max_iterations"] = v.maxIter
				}
			}
		}
	}
	if a := st.Pending; a != nil {
		out["pending_approval"] = map[string]any{"approval_id": a.ID, "event": a.Event, "from_state": a.From, "to_state": a.To, "message": orNil(a.Message)}
	}
	if r, ok := wf.State.Context()[KeyInterruptReturn].(string); ok {
		out["interrupt_handler"] = map[string]any{"return_state": r, "message": interruptHandlerMessage}
	}
	switch {
	case parent:
		// As Statewright's gateway answers the parent during a fork: the
		// fork's progress, and neither run_id nor capture_output.
		progress := map[string]any{}
		for name, b := range fork["branches"].(map[string]any) {
			b := b.(map[string]any)
			progress[name] = map[string]any{"status": b["status"], "initial": b["initial"], "terminal": b["terminal"]}
		}
		out["fork"] = map[string]any{"active": true, "current_branch": fork["current_branch"], "branches": progress, "join": fork["join"]}
		delete(out, "run_id")
		delete(out, "capture_output")
	case forked:
		out["fork"] = fork
	}
	return jsonx.Indented(out)
}

func (w *Workflow) renderTransition(ctx context.Context, tr gate.TransitionResult, wf *gate.Workflow) string {
	out := map[string]any{
		"transitioned":      tr.Transitioned,
		"from":              subflowLeaf(tr.From),
		"to":                subflowLeaf(tr.To),
		"requires_approval": false,
		"approval_message":  nil,
		"transition_count":  w.transitionCount(wf.History),
		"usage":             map[string]any{"transitions": w.transitionCount(wf.History), "limit": nil, "remaining": nil},
	}
	if in, ok := w.enteredInvoke(tr); ok {
		// As Statewright answers an invoke: the subflow to run, and
		// on_complete as where the transition leads.
		out["invoke"], out["to"] = in, in["on_complete"]
		out["subflow_started"] = in["machine"]
	} else if w.leftInvoke(tr) {
		out["subflow_completed"] = true
	}
	_, fork, forked := w.ActiveFork(wf.State)
	fromKey, _, wasForked := w.forkOfValue(tr.From)
	if branch := branchOf(ctx); branch != "" && wasForked {
		// A branch's session sees its branch's states.
		out["from"] = regionValue(tr.From, fromKey, branch)
		if forked {
			out["to"] = regionValue(tr.To, fromKey, branch)
		}
	}
	switch {
	case forked && !wasForked:
		// A transition that forks says so, with the fork, in the fields
		// of Statewright's transition result and of its gateway's answer.
		out["fork"], out["forked"] = fork, true
		out["branches"], out["join"], out["on_complete"] = fork["branches"], fork["join"], fork["on_complete"]
		out["current_branch"] = fork["current_branch"]
	case strings.HasPrefix(tr.Event, BranchDone) && wasForked && tr.Transitioned:
		// BRANCH_DONE:<b> answers as Statewright's gateway does: the join,
		// or the branches still to finish.
		branch := strings.TrimPrefix(tr.Event, BranchDone)
		if forked {
			completed, total := 0, 0
			for _, b := range fork["branches"].(map[string]any) {
				total++
				if b.(map[string]any)["status"] == "completed" {
					completed++
				}
			}
			out["branch_completed"], out["next_branch"] = branch, fork["current_branch"]
			out["completed"], out["remaining"] = completed, total-completed
			break
		}
		// Every branch was done when the join ran: those done before, and
		// this one.
		completed := 1
		regions, _ := tr.From.(map[string]any)[fromKey].(map[string]any)
		for name, b := range w.forks[fromKey]["branches"].(map[string]any) {
			if name != branch && regions[name] == b.(map[string]any)["terminal"] {
				completed++
			}
		}
		out["joined"], out["completed_branches"] = true, completed
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
	return jsonx.Indented(out)
}

// metaValue is the workflow's meta as its file writes it (the root's
// meta.chartgate.workflow), or nil (JSON null) when it has none.
func (w *Workflow) metaValue() any {
	for _, n := range w.Machine.Nodes() {
		if n.ID != w.Machine.ID() {
			continue
		}
		meta, _ := n.Meta.(map[string]any)
		cg, _ := meta["chartgate"].(map[string]any)
		if m, ok := cg["workflow"].(map[string]any); ok {
			return m
		}
	}
	return nil
}

// enteredInvoke returns the invoke of the top-level subflow a
// transition entered, in Statewright's shape.
func (w *Workflow) enteredInvoke(tr gate.TransitionResult) (map[string]any, bool) {
	to, _ := tr.To.(map[string]any)
	from, _ := tr.From.(map[string]any)
	for key := range to {
		if in, ok := w.invokes[key]; ok {
			if _, already := from[key]; !already {
				return in, true
			}
		}
	}
	return nil, false
}

// leftInvoke reports whether tr left a running subflow: its From is in an
// invoke's state and its To is not.
func (w *Workflow) leftInvoke(tr gate.TransitionResult) bool {
	to, _ := tr.To.(map[string]any)
	from, _ := tr.From.(map[string]any)
	for key := range from {
		if _, ok := w.invokes[key]; ok {
			if _, still := to[key]; !still {
				return true
			}
		}
	}
	return false
}

// regionValue is the state of a fork's branch in a state value, or v when
// v is not in that fork.
func regionValue(v any, forkKey, branch string) any {
	m, _ := v.(map[string]any)
	rs, ok := m[forkKey].(map[string]any)
	if !ok {
		return v
	}
	if r, ok := rs[branch]; ok {
		return r
	}
	return v
}

// subflowLeaf is the state of a subflow's state value ({"S:E:invoke":
// "triage"}, nested for a subflow in a subflow) as Statewright names it:
// the child workflow's state ("triage"), in which the agent works while the
// parent waits. Any other value is returned as it is.
func subflowLeaf(v any) any {
	for {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return v
		}
		for k, inner := range m {
			if !strings.HasSuffix(k, ":invoke") {
				return v
			}
			v = inner
		}
	}
}

// interruptHandlerMessage is what statewright_get_state says in an
// interrupt's handler, in Statewright's words.
const interruptHandlerMessage = "You are in an interrupt handler. Complete validation and transition to return."

// orNil is s, or nil (JSON null) for "", as Statewright writes an unset
// Option<String>.
func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// pendingIn returns the approval an active state of s describes.
func (w *Workflow) pendingIn(s statechart.State) *gate.Approval {
	for _, n := range w.Machine.Nodes() {
		if !slices.Contains(s.StateIDs(), n.ID) {
			continue
		}
		if a := approvalOf(n); a != nil {
			return a
		}
	}
	return nil
}

// approvalOf returns the approval an approval state's meta.mcp describes,
// or nil for any other state.
func approvalOf(n statechart.Node) *gate.Approval {
	meta, _ := n.Meta.(map[string]any)
	m, _ := meta["mcp"].(map[string]any)
	a, ok := m["approval"].(map[string]any)
	if !ok {
		return nil
	}
	str := func(k string) string { v, _ := a[k].(string); return v }
	return &gate.Approval{Event: str("event"), From: str("from"), To: str("to"), Message: str("message")}
}

// stateKey is the state a target id means to the agent: the state's key
// in the workflow file (for an approval state, the state the approval
// leads to).
func (w *Workflow) stateKey(id string) string {
	for _, n := range w.Machine.Nodes() {
		if n.ID == id {
			if a := approvalOf(n); a != nil {
				return a.To
			}
			break
		}
	}
	return strings.TrimPrefix(id, w.Machine.ID()+".")
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
					target = w.stateKey(t.Targets[0])
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
		out[in.Name] = map[string]any{"file_pattern": in.FilePattern, "target": w.interruptTarget(in.Event)}
	}
	return out
}

// interruptTarget is the state an interrupt's event leads to (nil if no
// state handles it).
func (w *Workflow) interruptTarget(event string) any {
	for _, n := range w.Machine.Nodes() {
		for _, t := range n.Transitions {
			if t.Event == event && len(t.Targets) > 0 {
				return w.stateKey(t.Targets[0])
			}
		}
	}
	return nil
}

// transitionCount counts the transitions a run history holds as
// Statewright counts them: a transition that waits for approval counts
// once, when it is approved (not when it parks, nor when it is rejected),
// and pausing and resuming (which Statewright does not count as
// transitions) not at all.
func (w *Workflow) transitionCount(h []gate.Transition) int {
	parks := w.approvalKeys()
	n := 0
	for _, e := range h {
		switch e.Event.Type {
		case "", eventReject, EventPause, EventResume:
			continue
		}
		if len(parks) > 0 && inStates(e.To, parks) {
			continue // parked for approval
		}
		n++
	}
	return n
}

// approvalKeys are the keys of the states where transitions wait for
// approval.
func (w *Workflow) approvalKeys() map[string]bool {
	out := map[string]bool{}
	for _, n := range w.Machine.Nodes() {
		if approvalOf(n) != nil {
			out[n.Key] = true
		}
	}
	return out
}

// inStates reports whether a state value names one of keys, at any depth.
func inStates(v any, keys map[string]bool) bool {
	switch v := v.(type) {
	case string:
		return keys[v]
	case map[string]any:
		for k, inner := range v {
			if keys[k] || inStates(inner, keys) {
				return true
			}
		}
	}
	return false
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

// Compat names a compatibility mode of [Options.Compat].
type Compat string

// The compatibility modes.
const (
	CompatNone        Compat = ""
	CompatStatewright Compat = "statewright"
)

// ToolOptions returns the options of the gate's own workflow tools
// (workflow_status and workflow_transition) for this workflow, in their
// default names and shapes: a guard's refusal explains itself
// ([Workflow.ExplainGuard]).
func (w *Workflow) ToolOptions() *ToolSet {
	return &ToolSet{ExplainGuard: w.explainGuard}
}

func (w *Workflow) explainGuard(_ context.Context, wf *gate.Workflow, event string, data map[string]any) string {
	return w.ExplainGuard(wf.State, event, data)
}

// ExplainGuard says why the workflow's guards refuse event in state s:
// for each transition of an active state on the event, the first
// Statewright guard that fails, what it checks and the value it saw
// ("guard 'has_items' failed: item_count gt 0, and item_count is 0"), and
// whether the data sent with the event could have changed that: guards
// check the context before the event, and data is merged after it, as in
// Statewright. It returns "" when no Statewright guard refuses the event.
func (w *Workflow) ExplainGuard(s statechart.State, event string, data map[string]any) string {
	if len(w.guards.defs) == 0 {
		return ""
	}
	ctx := s.Context()
	var failed []string
	seen := map[string]bool{}
	for _, id := range s.StateIDs() {
		for _, names := range w.guards.on[id][event] {
			for _, name := range names {
				g, ok := w.guards.defs[name]
				if !ok || g.Eval(ctx) {
					continue
				}
				seen[g.Field] = true
				failed = append(failed, describeFailure(name, g, ctx))
				break // the first failing guard of a branch, as Statewright reports it
			}
		}
	}
	if len(failed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(strings.Join(failed, "; "))
	b.WriteString(". Guards check the context as it was before the event")
	var sent []string
	for f := range seen {
		if _, ok := data[f]; ok {
			sent = append(sent, f)
		}
	}
	slices.Sort(sent)
	switch {
	case len(sent) > 0:
		fmt.Fprintf(&b, ": the data sent with it (%s) is merged into the context only after the transition, so the guard does not see it; send it with an earlier transition.", strings.Join(sent, ", "))
	default:
		b.WriteString("; data sent with an event is merged into the context only after the transition, so a guard does not see it.")
	}
	return b.String()
}

// guardIndex holds what ExplainGuard needs, read once at Load: the
// Statewright guards (meta.chartgate.guards) by name, and for each state
// id and event, the named guards of each of its transitions.
type guardIndex struct {
	defs map[string]Guard
	on   map[string]map[string][][]string
}

// indexGuards reads the guard index from the machine's nodes and their
// JSON values (in the same order).
func indexGuards(nodes []statechart.Node, values []gjson.Result, defs map[string]Guard) guardIndex {
	ix := guardIndex{defs: defs, on: map[string]map[string][][]string{}}
	if len(defs) == 0 {
		return ix
	}
	for i, n := range nodes {
		member(values[i], "on").ForEach(func(ev, t gjson.Result) bool {
			ts := []gjson.Result{t}
			if t.IsArray() {
				ts = t.Array()
			}
			for _, tr := range ts {
				if names := guardNames(member(tr, "guard")); len(names) > 0 {
					if ix.on[n.ID] == nil {
						ix.on[n.ID] = map[string][][]string{}
					}
					ix.on[n.ID][ev.String()] = append(ix.on[n.ID][ev.String()], names)
				}
			}
			return true
		})
	}
	return ix
}

// describeFailure says what a failed guard checks and the value it saw.
func describeFailure(name string, g Guard, ctx map[string]any) string {
	check := g.Field + " " + g.Op
	if g.Op != "exists" && g.Op != "not_exists" {
		v, _ := json.Marshal(g.Value)
		check += " " + string(v)
	}
	saw := g.Field + " is not set"
	if v, ok := ctx[g.Field]; ok {
		b, _ := json.Marshal(v)
		saw = g.Field + " is " + string(b)
	}
	return fmt.Sprintf("guard '%s' failed: %s, and %s", name, check, saw)
}

// guardNames are the named guards of a transition's guard: a name, or the
// names xstate.and combines.
func guardNames(g gjson.Result) []string {
	switch {
	case g.Type == gjson.String:
		return []string{g.String()}
	case g.IsObject() && member(g, "type").String() == "xstate.and":
		var out []string
		member(member(g, "params"), "guards").ForEach(func(_, x gjson.Result) bool {
			out = append(out, guardNames(x)...)
			return true
		})
		return out
	}
	return nil
}

// StatewrightState summarises a session's workflow as Statewright's
// statewright_get_status and statewright_load_workflow report it: state
// (the state a pending approval leaves), is_final, iteration (the calls
// made in the state with max_iterations), transition_count, and run_id
// (null: a session's workflow has no handle).
func (w *Workflow) StatewrightState(wf *gate.Workflow) map[string]any {
	var state any = wf.State.Value()
	if a := w.pendingIn(wf.State); a != nil {
		state = a.From
	}
	out := map[string]any{
		"state":            state,
		"is_final":         wf.State.Status() == statechart.StatusDone,
		"iteration":        0,
		"transition_count": w.transitionCount(wf.History),
		"run_id":           nil,
	}
	for _, l := range wf.Limits {
		out["iteration"] = l.Calls
	}
	return out
}

// StateNames lists the workflow's top-level states, as the workflow file
// names them (without the states the compilation adds: approvals, forks,
// subflows), sorted, as Statewright lists them.
func (w *Workflow) StateNames() []string {
	var out []string
	for _, n := range w.Machine.Nodes() {
		if n.Parent == w.Machine.ID() && !strings.Contains(n.Key, ":") {
			out = append(out, n.Key)
		}
	}
	slices.Sort(out)
	return out
}

// ActiveFork returns, while a top-level fork runs in s, the state that
// forked and the fork in Statewright's shape, {active: true,
// current_branch, branches: {b: {initial, terminal, state, status}}, join,
// on_complete, on_fail}, current_branch being the first running branch
// by name (null when none runs), status being
// running, completed (in its terminal state) or failed (in another final
// state); ok is false when no fork runs.
func (w *Workflow) ActiveFork(s statechart.State) (from string, fork map[string]any, ok bool) {
	v, isMap := s.Value().(map[string]any)
	if !isMap {
		return "", nil, false
	}
	for key, regions := range v {
		f, known := w.forks[key]
		if !known {
			continue
		}
		rs, _ := regions.(map[string]any)
		branches := map[string]any{}
		for name, def := range f["branches"].(map[string]any) {
			d := maps.Clone(def.(map[string]any))
			state, _ := rs[name].(string)
			d["state"], d["status"] = state, "running"
			switch {
			case state == d["terminal"]:
				d["status"] = "completed"
			case w.finalStates()[state]:
				d["status"] = "failed"
			}
			branches[name] = d
		}
		out := maps.Clone(f)
		out["branches"], out["active"], out["current_branch"] = branches, true, nil
		for _, name := range slices.Sorted(maps.Keys(branches)) {
			if branches[name].(map[string]any)["status"] == "running" {
				out["current_branch"] = name
				break
			}
		}
		from, _, _ = strings.Cut(key, ":")
		return from, out, true
	}
	return "", nil, false
}

// finalStates are the keys of the workflow's top-level final states.
func (w *Workflow) finalStates() map[string]bool {
	out := map[string]bool{}
	for _, n := range w.Machine.Nodes() {
		if n.Parent == w.Machine.ID() && n.Type == "final" {
			out[n.Key] = true
		}
	}
	return out
}

// forkOfValue reports whether a state value is in a top-level fork.
func (w *Workflow) forkOfValue(v any) (string, map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", nil, false
	}
	for key := range m {
		if f, known := w.forks[key]; known {
			return key, f, true
		}
	}
	return "", nil, false
}
