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

// messageText is an approval's message for prose: ": message" or "".
func messageText(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// mcpWorkflowTools is a set of workflow tools as AddWorkflowTools added
// them to a server: their names and rules, and how their MCP answers are
// rendered.
type mcpWorkflowTools struct {
	core.WorkflowTools
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
	w := &mcpWorkflowTools{WorkflowTools: core.WorkflowTools{StatusName: o.StatusName, TransitionName: o.TransitionName, Events: o.Events,
		AnyEvent: o.AnyEvent, ExplainGuard: o.ExplainGuard},
		renderStatus: o.RenderStatus, renderTransition: o.RenderTransition}
	if w.StatusName == "" {
		w.StatusName = "workflow_status"
	}
	if w.TransitionName == "" {
		w.TransitionName = "workflow_transition"
	}
	if o.NoTransition {
		w.TransitionName = ""
	}
	for _, name := range []string{w.StatusName, w.TransitionName} {
		if name == "" {
			continue
		}
		if msg := core.CheckToolName(name, false); msg != "" {
			return fmt.Errorf("mcpbind: AddWorkflowTools: %s", msg)
		}
	}
	for _, ev := range w.Events {
		if strings.Contains(ev, "*") {
			return fmt.Errorf("mcpbind: AddWorkflowTools: %q: events must not be wildcards", ev)
		}
		if msg := g.core.Events.Check(ev); msg != "" {
			return fmt.Errorf("mcpbind: AddWorkflowTools: machine %q: %s", g.core.Engine().ID(), msg)
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
		Name:        w.StatusName,
		Description: o.StatusDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}, unreachable)
	if w.TransitionName != "" {
		s.AddTool(&mcp.Tool{
			Name:        w.TransitionName,
			Description: o.TransitionDescription,
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"event":{"type":"string","description":"the event to send, e.g. CANCEL"},` +
				`"data":{"type":"object","description":"data for the workflow's rules (optional)"}` +
				`},"required":["event"]}`),
		}, unreachable)
	}
	for _, name := range []string{w.StatusName, w.TransitionName} {
		if name != "" {
			g.core.OwnTools.Add(name)
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
func (s *workflowToolSets) primary() *core.WorkflowTools {
	if s == nil || len(s.list) == 0 {
		return nil
	}
	return &s.list[0].WorkflowTools
}

// byName returns the set a tool belongs to, and whether it is its status
// tool.
func (s *workflowToolSets) byName(name string) (*mcpWorkflowTools, bool) {
	for _, w := range s.all() {
		switch name {
		case w.StatusName:
			return w, true
		case w.TransitionName:
			return w, false
		}
	}
	return nil, false
}

// status answers workflow_status.
func (g *Gate) status(ctx context.Context, c *core.Call, v *core.View) (mcp.Result, error) {
	tools, err := g.core.ToolNames(ctx, c)
	if err != nil {
		return nil, err
	}
	st := WorkflowStatus{
		Workflow:     c.Target.Handle,
		State:        v.State.Value(),
		Status:       v.State.Status(),
		Tools:        g.core.Available(ctx, c.Rules, v, tools),
		Events:       g.core.AcceptedEvents(ctx, v, g.core.TransitionEvents(c.Rules, c.Wf), c.Wf.TransitionName),
		Limits:       g.core.Limits(v),
		Instructions: g.core.Instructions(v),
		Pending:      g.core.WaitingFor(v),
	}
	if d := mcpOf(c); d != nil && d.tools != nil && d.tools.renderStatus != nil {
		return d.tools.renderStatus(ctx, st, g.core.WorkflowOfView(v)), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: statusText(&st, c.Wf.TransitionName)}}, StructuredContent: st}, nil
}

// transitionAnswer is the answer of workflow_transition once its event was
// sent.
func (g *Gate) transitionAnswer(ctx context.Context, c *core.Call, out core.Committed, toolsChanged bool) *mcp.CallToolResult {
	res := g.transitionResult(c, out, toolsChanged)
	if d := mcpOf(c); d != nil && d.tools != nil && d.tools.renderTransition != nil && out.Err == nil {
		after := out.After
		if after == nil {
			after = out.From
		}
		return d.tools.renderTransition(ctx, res.StructuredContent.(TransitionResult), g.core.WorkflowOfView(after))
	}
	return res
}

// transitionResult is workflow_transition's own answer.
func (g *Gate) transitionResult(c *core.Call, out core.Committed, toolsChanged bool) *mcp.CallToolResult {
	if out.Err != nil {
		g.core.Log.Error("mcpbind: workflow_transition not recorded", "event", c.Event.Type, "key", core.Fingerprint(out.From.Key), "error", out.Err)
		return toolError(fmt.Sprintf("Event %q could not be recorded; the workflow is still in state %s. Try again later.", c.Event.Type, core.StateText(out.From.State.Value())))
	}
	res := TransitionResult{Event: c.Event.Type, From: out.From.State.Value(), To: out.From.State.Value()}
	if out.Tr == nil {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Event %q changed nothing; the workflow is still in state %s.", c.Event.Type, core.StateText(res.From))}},
			StructuredContent: res,
		}
	}
	res.Transitioned, res.To, res.ToolsChanged = true, out.Tr.To, toolsChanged
	text := fmt.Sprintf("Transitioned from %s to %s on %s.", core.StateText(res.From), core.StateText(res.To), c.Event.Type)
	if res.ToolsChanged {
		text += " The available tools changed."
	}
	if a := out.Tr.Approval; a != nil {
		verb := "approved"
		if !a.Approved {
			verb = "rejected"
		}
		text += fmt.Sprintf(" Approval %s was %s by %s (%s).", a.ID, verb, a.By, a.Channel)
	}
	if out.After != nil {
		if a := g.core.WaitingFor(out.After); a != nil {
			text += " The transition is pending " + g.core.PendingText(a) + ". " + core.PendingHelp
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: res}
}

// statusText is the status in prose.
func statusText(st *WorkflowStatus, transitionName string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow state: %s (%s).", core.StateText(st.State), st.Status)
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
		b.WriteString("\nPending " + a.Text() + ". " + core.PendingHelp)
	}
	for _, in := range st.Instructions {
		b.WriteString("\nInstructions: " + in)
	}
	return b.String()
}
