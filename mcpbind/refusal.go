// This file defines refusals: the answer to a call the gate does not run,
// with the guidance that tells the agent what it may do instead.

package mcpbind

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
)

// MetaKey is the _meta key of the gate's notes on a call result.
const MetaKey = "chartgate/mcpbind"

// RefusalOf returns the refusal of a call result the gate refused (for Go
// clients: the refusal is under [MetaKey] in the result's _meta). It
// returns false for a result that is not a refusal: the call ran.
func RefusalOf(res *mcp.CallToolResult) (*Refusal, bool) {
	if res == nil || !res.IsError {
		return nil, false
	}
	switch v := res.Meta[MetaKey].(type) {
	case *Refusal:
		return v, true
	case nil:
		return nil, false
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		var ref Refusal
		if json.Unmarshal(b, &ref) != nil || ref.Code == "" {
			return nil, false
		}
		return &ref, true
	}
}

// refusal begins the answer to a call of a tool of the server that will
// not run: a Refusal with the code, the state, the tools available now
// and the instructions, and the server's tool names. For a name the server
// does not have, it returns instead the server's own answer (its "unknown
// tool" error) as the verdict.
func (g *gateCore) refusal(ctx context.Context, c *gatedCall, v *view, code string) (*Refusal, []string, *verdict) {
	tools, err := g.toolNames(ctx, c)
	if err != nil {
		g.log.Warn("mcpbind: listing tools for a refusal", "error", err)
	} else if c.kind == callTool && c.door != nil && !slices.Contains(tools, c.name) {
		res, err := c.door.unknownTool(ctx)
		return nil, nil, &verdict{answer: res, err: err}
	}
	ref := &Refusal{Code: code, Tool: c.name, Workflow: c.target.handle, Path: []Step{}}
	if v != nil {
		ref.State = v.state.Value()
		ref.Available = g.available(ctx, c.rules, v, tools)
		ref.Instructions = g.instructions(v)
	}
	return ref, tools, nil
}

// refused is the answer to a call that did not run: IsError, the text for
// the model, and the Refusal for programs under MetaKey in _meta. Not in
// structuredContent: a client validates that against the tool's output
// schema, error results included (the TypeScript SDK throws on a mismatch,
// and the agent never sees the refusal).
func refused(ref *Refusal, text string) *verdict {
	return &verdict{ref: ref, text: text}
}

// mcpAnswer is an answer the MCP door made, as an MCP result.
func mcpAnswer(answer any, err error) (mcp.Result, error) {
	res, _ := answer.(mcp.Result)
	return res, err
}

// mcpResult is a verdict as an MCP tool result: a refusal is IsError with
// the text and the Refusal under MetaKey in _meta, a tool error IsError
// with the text; an answer the MCP door made is returned as it is.
func mcpResult(vd *verdict) mcp.Result {
	switch {
	case vd.answer != nil:
		res, _ := mcpAnswer(vd.answer, nil)
		return res
	case vd.ref != nil:
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: vd.text}},
			Meta:    mcp.Meta{MetaKey: vd.ref},
		}
	case vd.text != "":
		return toolError(vd.text)
	}
	return nil
}

// refuse answers a call of a hidden tool.
func (g *gateCore) refuse(ctx context.Context, c *gatedCall, v *view) *verdict {
	ref, tools, vd := g.refusal(ctx, c, v, CodeForbidden)
	if vd != nil {
		return vd
	}
	var moves []core.Move
	for _, tool := range tools {
		if tti := g.info(c.rules, tool, true); tti.Event != "" {
			moves = append(moves, core.Move{Tool: tool, Info: tti})
		}
	}
	transitionTool := ""
	if c.wf != nil && c.wf.transitionName != "" {
		// The events workflow_transition may send are steps too.
		transitionTool = c.wf.transitionName
		for _, ev := range g.transitionEvents(c.rules, c.wf) {
			moves = append(moves, core.Move{Tool: transitionTool, Info: &core.ToolInfo{Mode: core.ModeCan, Event: ev}})
		}
	}
	moves = append(moves, g.waits...) // a job's result may be the step that helps
	path, found := g.model.ShortestPath(v.active, c.info, moves)
	ref.Reachable = found
	if path != nil {
		ref.Path = path
	}
	if c.info.Mode == core.ModeDenied {
		var b strings.Builder
		fmt.Fprintf(&b, "Tool %q is not part of the %q workflow: no state of it allows the tool, so this server does not run it.", c.name, g.engine.ID())
		writeGuidance(&b, ref.Available, ref.Instructions)
		return refused(ref, b.String())
	}
	return refused(ref, refusalText(ref, c.info, transitionTool))
}

// registered lists the names of the server's tools, through the handlers
// below the gate.
func (g *Gate) registered(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest) ([]string, error) {
	lreq := &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{}}
	var names []string
	for page := 0; page < 1000; page++ {
		res, err := next(ctx, "tools/list", lreq)
		if err != nil {
			return nil, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok || lr == nil {
			return nil, fmt.Errorf("tools/list returned %T", res)
		}
		for _, t := range lr.Tools {
			names = append(names, t.Name)
		}
		if lr.NextCursor == "" {
			break
		}
		lreq = &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{Cursor: lr.NextCursor}}
	}
	return names, nil
}

// refusalText is the refusal in prose, for the model. transitionTool names
// workflow_transition, whose steps say which event to send.
func refusalText(ref *Refusal, ti *core.ToolInfo, transitionTool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q is not available in the current workflow state (%s).", ref.Tool, stateText(ref.State))
	switch {
	case !ref.Reachable:
		b.WriteString(" No sequence of tool calls makes it available from this state.")
	case len(ref.Path) == 0:
		fmt.Fprintf(&b, " The workflow does not accept its event %q now: a guard refuses it.", ti.Event)
	default:
		b.WriteString(" To make it available, ")
		calling := false
		for i, s := range ref.Path {
			if i > 0 {
				b.WriteString(", then ")
			}
			if s.Actor != "" {
				outcome := "finish"
				if strings.HasPrefix(s.Event, "xstate.error.actor.") {
					outcome = "fail"
				}
				fmt.Fprintf(&b, "wait for %q (running in the background) to %s", s.Actor, outcome)
				calling = false
				continue
			}
			if !calling {
				b.WriteString("call ")
				calling = true
			}
			b.WriteString(s.Tool)
			if s.Tool == transitionTool && transitionTool != "" {
				fmt.Fprintf(&b, " with event %q", s.Event)
			}
			switch len(s.Guards) {
			case 0:
			case 1:
				fmt.Fprintf(&b, " (if guard %q allows)", s.Guards[0])
			default:
				fmt.Fprintf(&b, " (if guards %s allow)", strings.Join(core.QuoteAll(s.Guards), " and "))
			}
		}
		b.WriteString(".")
	}
	writeGuidance(&b, ref.Available, ref.Instructions)
	return b.String()
}

// writeGuidance ends a refusal's text with the tools available now and the
// instructions of the active states.
func writeGuidance(b *strings.Builder, available, instructions []string) {
	if len(available) == 0 {
		b.WriteString("\nTools available now: none.")
	} else {
		b.WriteString("\nTools available now: " + strings.Join(available, ", ") + ".")
	}
	for _, in := range instructions {
		b.WriteString("\nInstructions: " + in)
	}
}

// stateText writes a state value for prose: "empty" or {"payment":"card"}.
func stateText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// refuseLimit answers a call stopped by a used-up budget.
func (g *gateCore) refuseLimit(ctx context.Context, c *gatedCall, v *view, lims []CallLimit) *verdict {
	ref, _, vd := g.refusal(ctx, c, v, CodeCallLimit)
	if vd != nil {
		return vd
	}
	ref.Limits = lims
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: ", ref.Tool)
	for i, l := range lims {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "state %q allows %d tool calls and all of them are used", l.State, l.Max)
	}
	b.WriteString(". Move the workflow on to another state first.")
	writeGuidance(&b, ref.Available, ref.Instructions)
	return refused(ref, b.String())
}

// refuseBusy answers a call that waited too long for another call of its
// workflow to finish.
func (g *gateCore) refuseBusy(ctx context.Context, c *gatedCall, v *view) *verdict {
	if c.kind == callSend {
		return &verdict{err: ErrWorkflowBusy}
	}
	ref, _, vd := g.refusal(ctx, c, v, CodeWorkflowBusy)
	if vd != nil {
		return vd
	}
	other := "another call"
	if l := v.rec.Lease; l != nil && l.Tool != "" {
		other = fmt.Sprintf("a call of %s", l.Tool)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: %s in the same workflow is still in progress (it did not finish within %s). The workflow runs such calls one at a time; call %s again once it has finished.",
		c.name, other, g.busyWait, c.name)
	writeGuidance(&b, ref.Available, ref.Instructions)
	return refused(ref, b.String())
}

// refuseExpired answers a call of a session whose workflow expired.
func (g *gateCore) refuseExpired(ctx context.Context, c *gatedCall) *verdict {
	ref, _, vd := g.refusal(ctx, c, nil, CodeWorkflowExpired)
	if vd != nil {
		return vd
	}
	return refused(ref, fmt.Sprintf("Tool %q was not run: this session's %q workflow is no longer kept by the server (it was not used for too long, or was removed), and it is not started again. Start a new session to start a new workflow.",
		c.name, g.engine.ID()))
}

// refuseArguments answers a call whose arguments the gate cannot take.
func (g *gateCore) refuseArguments(ctx context.Context, c *gatedCall, why string) *verdict {
	ref, _, vd := g.refusal(ctx, c, nil, CodeTooLarge)
	if vd != nil {
		return vd
	}
	return refused(ref, fmt.Sprintf("Tool %q was not run: %s. Pass smaller arguments (for large data, a reference such as a file path).", c.name, why))
}

// refuseEvent answers a call whose event the workflow would fail on.
func (g *gateCore) refuseEvent(ctx context.Context, c *gatedCall, v *view, err error) *verdict {
	g.log.Warn("mcpbind: the machine fails on a call's event; the call is refused", "tool", c.name, "event", c.info.Event, "key", fingerprint(v.key), "error", err)
	ref, _, vd := g.refusal(ctx, c, v, CodeWorkflowError)
	if vd != nil {
		return vd
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: the workflow cannot take its event %q with these arguments (%v).", c.name, c.info.Event, err)
	writeGuidance(&b, ref.Available, ref.Instructions)
	return refused(ref, b.String())
}

// refuseGuards answers a call of an available tool whose event the
// workflow would not accept with the call's arguments: guards refuse it.
func (g *gateCore) refuseGuards(ctx context.Context, c *gatedCall, v *view, guards []string) *verdict {
	ref, _, vd := g.refusal(ctx, c, v, CodeEventRefused)
	if vd != nil {
		return vd
	}
	ref.Event, ref.Guards, ref.Reachable = c.info.Event, guards, true
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: the workflow does not accept its event %q with these arguments now: ", c.name, c.info.Event)
	if len(guards) == 1 {
		fmt.Fprintf(&b, "guard %q refuses it.", guards[0])
	} else {
		fmt.Fprintf(&b, "guards %s refuse it.", strings.Join(core.QuoteAll(guards), " and "))
	}
	b.WriteString(" Call it with arguments the guard accepts, or do what the instructions say first.")
	writeGuidance(&b, ref.Available, ref.Instructions)
	return refused(ref, b.String())
}

// orError turns a failed answer into an error result.
func orError(res mcp.Result, err error) mcp.Result {
	if err != nil {
		return toolError(err.Error())
	}
	return res
}

// refuseHandle answers a call that names no workflow (code
// CodeWorkflowRequired) or an unknown one (CodeUnknownWorkflow), without
// running it. A name the server does not have goes to the server, which
// reports it.
func (g *Gate) refuseHandle(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest, code, id string) (mcp.Result, error) {
	name := req.Params.Name
	tools, err := g.registered(ctx, next, req)
	if err == nil && !slices.Contains(tools, name) {
		return next(ctx, "tools/call", req)
	}
	ref := Refusal{Code: code, Tool: name, Available: []string{g.core.start}, Path: []Step{{Tool: g.core.start}}, Reachable: true}
	var text string
	if code == CodeWorkflowRequired {
		text = fmt.Sprintf("Tool %q is part of the %q workflow and needs its %s argument. Call %s first to start a workflow, then pass the %s it returns to %s.",
			name, g.core.engine.ID(), handleArg, g.core.start, handleArg, name)
	} else {
		if validHandle(id) {
			ref.Workflow = id
		}
		text = fmt.Sprintf("Tool %q was not run: %s %s names no running %q workflow (it may have expired). Call %s to start a new one and pass the %s it returns.",
			name, handleArg, truncate(id, 80), g.core.engine.ID(), g.core.start, handleArg)
	}
	return mcpResult(refused(&ref, text)), nil
}

// truncate quotes s, shortened to at most n bytes.
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// instructions returns the instructions of the active states, outermost
// first.
func (g *gateCore) instructions(v *view) []string {
	var out []string
	for i, sm := range g.mcp {
		if sm != nil && sm.Instructions != "" && v.active.Has(i) {
			out = append(out, sm.Instructions)
		}
	}
	return out
}
