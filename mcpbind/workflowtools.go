// This file defines the agent-facing workflow tools: workflow_status, which
// describes the session's workflow, and workflow_transition, which sends an
// event explicitly (Statewright's statewright_get_state and
// statewright_transition).

package mcpbind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// WorkflowToolsOptions configures [Gate.AddWorkflowTools]. The zero value
// (or nil) means the defaults.
type WorkflowToolsOptions struct {
	// StatusName and TransitionName name the tools; defaults
	// "workflow_status" and "workflow_transition".
	StatusName, TransitionName string
	// NoTransition adds workflow_status only.
	NoTransition bool
	// Events lists the events workflow_transition may send. By default it
	// may send every event the machine handles (wildcards and xstate.*
	// events aside) that no tool sends: an event bound to a tool is sent by
	// calling the tool, so the agent cannot skip the tool's work.
	Events []string
	// Descriptions replace the tools' descriptions, if set.
	StatusDescription, TransitionDescription string
	// RenderStatus and RenderTransition, if set, write the answers of the
	// two tools in another shape (the gateway's Statewright-compatible
	// statewright_get_state and statewright_transition): from the status,
	// or the transition that was made (refusals keep the gate's text), and
	// the workflow as it is after the call.
	RenderStatus     func(context.Context, WorkflowStatus, *Workflow) *mcp.CallToolResult
	RenderTransition func(context.Context, TransitionResult, *Workflow) *mcp.CallToolResult
	// AnyEvent lets the transition tool send events the machine names
	// only through a wildcard (Statewright's safe_next, which takes any
	// event its state does not handle). Reserved events and events a tool
	// sends stay refused; the machine decides the rest.
	AnyEvent bool
	// ExplainGuard, if set, adds to the refusal of an event a guard
	// refused an explanation (which guard, what it checks, the value it
	// saw), from the workflow before the event and the data sent with it.
	ExplainGuard func(ctx context.Context, wf *Workflow, event string, data map[string]any) string
}

// pendingHelp tells the agent what a pending approval means for it.
const pendingHelp = "A person approves or rejects it (in the client when it asks them, or with chartgate approve and the approval's id); the agent cannot, and no transition can be made until then."

// messageText is an approval's message for prose: ": message" or "".
func messageText(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// workflowTools are the names of a set of workflow tools and the rules
// of workflow_transition.
type workflowTools struct {
	statusName, transitionName string // transitionName "" without workflow_transition
	events                     []string
	anyEvent                   bool
	explainGuard               func(context.Context, *Workflow, string, map[string]any) string
}

// mcpWorkflowTools is a set of workflow tools as AddWorkflowTools added
// them to a server: their names and rules, and how their MCP answers are
// rendered.
type mcpWorkflowTools struct {
	workflowTools
	renderStatus     func(context.Context, WorkflowStatus, *Workflow) *mcp.CallToolResult
	renderTransition func(context.Context, TransitionResult, *Workflow) *mcp.CallToolResult
}

// AddWorkflowTools adds workflow_status and workflow_transition to a server
// the gate is attached to. Both are always visible.
//
// workflow_status takes no arguments and answers with a [WorkflowStatus]:
// the state value and status, the visible tools, the events
// workflow_transition would send now, and the instructions of the active
// states.
//
// workflow_transition takes {"event": "CANCEL", "data": {...}} and sends
// the event {"type": "CANCEL", "tool": "workflow_transition", "input":
// data}, so guards read data as they read a tool's arguments
// (event.input.x). The machine's guards decide. The answer is a
// [TransitionResult] (from, to, whether the tools changed, and a
// list_changed notification to the session if they did), or an error
// result that says why not: the event is not one it may send (and which
// tool sends it), the workflow is final, the state has no transition for
// the event, or a guard refused it.
func (g *Gate) AddWorkflowTools(s *mcp.Server, opts *WorkflowToolsOptions) error {
	var o WorkflowToolsOptions
	if opts != nil {
		o = *opts
	}
	g.amu.Lock()
	a := g.attached[s]
	g.amu.Unlock()
	if a == nil {
		return errors.New("mcpbind: AddWorkflowTools: the gate is not attached to this server; call Attach first")
	}
	w := &mcpWorkflowTools{workflowTools: workflowTools{statusName: o.StatusName, transitionName: o.TransitionName, events: o.Events,
		anyEvent: o.AnyEvent, explainGuard: o.ExplainGuard},
		renderStatus: o.RenderStatus, renderTransition: o.RenderTransition}
	if w.statusName == "" {
		w.statusName = "workflow_status"
	}
	if w.transitionName == "" {
		w.transitionName = "workflow_transition"
	}
	if o.NoTransition {
		w.transitionName = ""
	}
	for _, name := range []string{w.statusName, w.transitionName} {
		if name == "" {
			continue
		}
		if msg := core.CheckToolName(name, false); msg != "" {
			return fmt.Errorf("mcpbind: AddWorkflowTools: %s", msg)
		}
	}
	for _, ev := range w.events {
		if strings.Contains(ev, "*") {
			return fmt.Errorf("mcpbind: AddWorkflowTools: %q: events must not be wildcards", ev)
		}
		if msg := g.core.events.Check(ev); msg != "" {
			return fmt.Errorf("mcpbind: AddWorkflowTools: machine %q: %s", g.core.engine.ID(), msg)
		}
	}
	// The handlers are never run: the gate's middleware answers these calls,
	// since it needs the server's tool list.
	unreachable := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("mcpbind: workflow tools are answered by the gate's middleware")
	}
	if o.StatusDescription == "" {
		o.StatusDescription = "Show the current state of the workflow: the state, the tools available now, the events workflow_transition can send now, and the instructions for this state."
	}
	if o.TransitionDescription == "" {
		o.TransitionDescription = "Send an event to the workflow to move it to another state. The workflow's rules decide whether the event is accepted; data is passed to them."
	}
	s.AddTool(&mcp.Tool{
		Name:        w.statusName,
		Description: o.StatusDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, unreachable)
	if w.transitionName != "" {
		s.AddTool(&mcp.Tool{
			Name:        w.transitionName,
			Description: o.TransitionDescription,
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"event":{"type":"string","description":"the event to send, e.g. CANCEL"},` +
				`"data":{"type":"object","description":"data for the workflow's rules (optional)"}` +
				`},"required":["event"]}`),
		}, unreachable)
	}
	for _, name := range []string{w.statusName, w.transitionName} {
		if name != "" {
			g.core.ownTools.add(name)
		}
	}
	for {
		old := a.wf.Load()
		sets := &workflowToolSets{list: append(slices.Clone(old.all()), w)}
		if a.wf.CompareAndSwap(old, sets) {
			return nil
		}
	}
}

// workflowToolSets are the workflow tools added to one server: usually one
// set, and another for a compatible set of names and answers.
type workflowToolSets struct{ list []*mcpWorkflowTools }

func (s *workflowToolSets) all() []*mcpWorkflowTools {
	if s == nil {
		return nil
	}
	return s.list
}

// primary is the first set, whose transition tool refusals name.
func (s *workflowToolSets) primary() *workflowTools {
	if s == nil || len(s.list) == 0 {
		return nil
	}
	return &s.list[0].workflowTools
}

// byName returns the set a tool belongs to, and whether it is its status
// tool.
func (s *workflowToolSets) byName(name string) (*mcpWorkflowTools, bool) {
	for _, w := range s.all() {
		switch name {
		case w.statusName:
			return w, true
		case w.transitionName:
			return w, false
		}
	}
	return nil, false
}

// transitionEvents returns the events workflow_transition may send, in the
// machine's order.
func (g *gateCore) transitionEvents(r *rules, w *workflowTools) []string {
	if w.transitionName == "" {
		return nil
	}
	if w.events != nil {
		return w.events
	}
	byTool := g.toolEvents(r)
	var out []string
	for _, d := range g.events.Descriptors {
		if strings.Contains(d, "*") || strings.HasPrefix(d, "xstate.") || core.ReservedEvent(d) || byTool[d] != "" {
			continue
		}
		out = append(out, d)
	}
	return out
}

// toolEvents maps each event a tool sends to (the first, by name) tool
// that sends it.
func (g *gateCore) toolEvents(r *rules) map[string]string {
	out := map[string]string{}
	add := func(ev, tool string) {
		if prev, ok := out[ev]; !ok || tool < prev {
			out[ev] = tool
		}
	}
	for tool, ti := range r.bound {
		if ti.Event != "" {
			add(ti.Event, tool)
		}
	}
	for tool, ev := range g.jsonEvents {
		if _, ok := r.bound[tool]; !ok {
			add(ev, tool)
		}
	}
	return out
}

// acceptedEvents returns the events of candidates the machine would handle
// now.
func (g *gateCore) acceptedEvents(ctx context.Context, v *view, candidates []string, tool string) []string {
	out := []string{}
	if v.state.Status() != statechart.StatusActive {
		return out
	}
	for _, ev := range candidates {
		if ok, err := g.engine.Can(ctx, v.state, g.event(ev, tool, nil, nil)); err == nil && ok {
			out = append(out, ev)
		}
	}
	return out
}

// status answers workflow_status.
func (g *Gate) status(ctx context.Context, c *gatedCall, v *view) (mcp.Result, error) {
	tools, err := g.core.toolNames(ctx, c)
	if err != nil {
		return nil, err
	}
	st := WorkflowStatus{
		Workflow:     c.target.handle,
		State:        v.state.Value(),
		Status:       v.state.Status(),
		Tools:        g.core.available(ctx, c.rules, v, tools),
		Events:       g.core.acceptedEvents(ctx, v, g.core.transitionEvents(c.rules, c.wf), c.wf.transitionName),
		Limits:       g.core.limits(v),
		Instructions: g.core.instructions(v),
		Pending:      g.core.pending(v),
	}
	if d := mcpOf(c); d != nil && d.tools != nil && d.tools.renderStatus != nil {
		return d.tools.renderStatus(ctx, st, g.core.workflowOf(v)), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: statusText(&st, c.wf.transitionName)}}, StructuredContent: st}, nil
}

// authorizeTransition decides whether workflow_transition may send the
// event its arguments name, in the state v; it sets the call's event.
func (g *gateCore) authorizeTransition(ctx context.Context, c *gatedCall, v *view) *verdict {
	w := c.wf
	var in struct {
		Event string         `json:"event"`
		Data  map[string]any `json:"data"`
	}
	if err := json.Unmarshal(c.rawArguments(), &in); err != nil || in.Event == "" {
		return &verdict{text: fmt.Sprintf(`%s needs {"event": "<EVENT>", "data": {...}}.`, w.transitionName)}
	}
	candidates := g.transitionEvents(c.rules, w)
	state := stateText(v.state.Value())
	if a := g.pending(v); a != nil {
		return &verdict{text: "A transition is pending " + g.pendingText(a) + ". " + pendingHelp}
	}
	if core.ReservedEvent(in.Event) {
		return &verdict{text: fmt.Sprintf("Event %q is reserved: approvals and interrupts are sent by the server or by a person, not with %s.", in.Event, w.transitionName)}
	}
	accepted := func() string {
		evs := g.acceptedEvents(ctx, v, candidates, w.transitionName)
		if len(evs) == 0 {
			return " It accepts no event now."
		}
		return " Events it accepts now: " + strings.Join(evs, ", ") + "."
	}
	refuse := func(format string, args ...any) *verdict {
		return &verdict{text: fmt.Sprintf(format, args...)}
	}
	// A final workflow takes no event: say so whatever the event.
	switch st := v.state.Status(); st {
	case statechart.StatusActive:
	case statechart.StatusDone:
		return refuse("Cannot transition: the workflow is in final state %s.", state)
	default:
		return refuse("Cannot transition: the workflow is not active (status %s, state %s).", st, state)
	}
	if !slices.Contains(candidates, in.Event) {
		if tool := g.toolEvents(c.rules)[in.Event]; tool != "" {
			return refuse("Event %q is sent by calling %s, not with %s.", in.Event, tool, w.transitionName)
		}
		if !w.anyEvent || strings.HasPrefix(in.Event, "xstate.") {
			return refuse("Event %q cannot be sent with %s.%s", in.Event, w.transitionName, accepted())
		}
	}
	if in.Data == nil {
		in.Data = map[string]any{}
	}
	c.event = g.event(in.Event, w.transitionName, in.Data, nil)
	ok, err := g.engine.Can(ctx, v.state, c.event)
	if err != nil {
		return refuse("The workflow failed on event %q: %v", in.Event, err)
	}
	if !ok {
		if g.model.StructurallyVisible(v.active, &core.ToolInfo{Mode: core.ModeCan, Event: in.Event}, false) {
			why := ""
			if w.explainGuard != nil {
				if e := w.explainGuard(ctx, g.workflowOf(v), in.Event, in.Data); e != "" {
					why = " " + e
				}
			}
			return refuse("Event %q was refused by a guard in state %s.%s%s", in.Event, state, why, accepted())
		}
		return refuse("No transition for event %q in state %s.%s", in.Event, state, accepted())
	}
	if _, err := g.engine.Send(ctx, v.state, c.event, g.now()); err != nil {
		return refuse("The workflow failed on event %q: %v", in.Event, err)
	}
	return nil
}

// transitionAnswer is the answer of workflow_transition once its event was
// sent.
func (g *Gate) transitionAnswer(ctx context.Context, c *gatedCall, out committed, toolsChanged bool) *mcp.CallToolResult {
	res := g.transitionResult(c, out, toolsChanged)
	if d := mcpOf(c); d != nil && d.tools != nil && d.tools.renderTransition != nil && out.err == nil {
		after := out.after
		if after == nil {
			after = out.from
		}
		return d.tools.renderTransition(ctx, res.StructuredContent.(TransitionResult), g.core.workflowOf(after))
	}
	return res
}

// transitionResult is workflow_transition's own answer.
func (g *Gate) transitionResult(c *gatedCall, out committed, toolsChanged bool) *mcp.CallToolResult {
	if out.err != nil {
		g.core.log.Error("mcpbind: workflow_transition not recorded", "event", c.event.Type, "key", fingerprint(out.from.key), "error", out.err)
		return toolError(fmt.Sprintf("Event %q could not be recorded; the workflow is still in state %s. Try again later.", c.event.Type, stateText(out.from.state.Value())))
	}
	res := TransitionResult{Event: c.event.Type, From: out.from.state.Value(), To: out.from.state.Value()}
	if out.tr == nil {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Event %q changed nothing; the workflow is still in state %s.", c.event.Type, stateText(res.From))}},
			StructuredContent: res,
		}
	}
	res.Transitioned, res.To, res.ToolsChanged = true, out.tr.To, toolsChanged
	text := fmt.Sprintf("Transitioned from %s to %s on %s.", stateText(res.From), stateText(res.To), c.event.Type)
	if res.ToolsChanged {
		text += " The available tools changed."
	}
	if a := out.tr.Approval; a != nil {
		verb := "approved"
		if !a.Approved {
			verb = "rejected"
		}
		text += fmt.Sprintf(" Approval %s was %s by %s (%s).", a.ID, verb, a.By, a.Channel)
	}
	if out.after != nil {
		if a := g.core.pending(out.after); a != nil {
			text += " The transition is pending " + g.core.pendingText(a) + ". " + pendingHelp
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: res}
}

// statusText is the status in prose.
func statusText(st *WorkflowStatus, transitionName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow state: %s (%s).", stateText(st.State), st.Status)
	b.WriteString("\nTools available now: " + strings.Join(st.Tools, ", ") + ".")
	if transitionName != "" {
		if len(st.Events) == 0 {
			fmt.Fprintf(&b, "\nEvents %s can send now: none.", transitionName)
		} else {
			fmt.Fprintf(&b, "\nEvents %s can send now: %s.", transitionName, strings.Join(st.Events, ", "))
		}
	}
	for _, l := range st.Limits {
		fmt.Fprintf(&b, "\nState %q: %d of %d tool calls used.", l.State, l.Calls, l.Max)
	}
	if a := st.Pending; a != nil {
		b.WriteString("\nPending " + a.Text() + ". " + pendingHelp)
	}
	for _, in := range st.Instructions {
		b.WriteString("\nInstructions: " + in)
	}
	return b.String()
}
