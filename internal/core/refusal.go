// This file writes refusals: the reason, the tools available now and
// the shortest path to a state that allows the tool.

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chartgate/chartgate/gate"
)

// refusal begins the answer to a call of a tool of the server that will
// not run: a Refusal with the code, the state, the tools available now
// and the instructions, and the server's tool names. For a name the server
// does not have, it returns instead the server's own answer (its "unknown
// tool" error) as the verdict.
func (g *Core) refusal(ctx context.Context, c *Call, v *View, code string) (*gate.Refusal, []string, *Verdict) {
	tools, err := g.ToolNames(ctx, c)
	if err != nil {
		g.Log.Warn("mcpbind: listing tools for a refusal", "error", err)
	} else if c.Kind == CallTool && c.Door != nil && !slices.Contains(tools, c.Name) {
		res, err := c.Door.UnknownTool(ctx)
		return nil, nil, &Verdict{Answer: res, Err: err}
	}
	ref := &gate.Refusal{Code: code, Tool: c.Name, Workflow: c.Target.Handle, Path: []gate.Step{}}
	if v != nil {
		ref.State = v.State.Value()
		ref.Available = g.Available(ctx, c.Rules, v, tools)
		ref.Instructions = g.Instructions(v)
	}
	return ref, tools, nil
}

// Refused is the answer to a call that did not run: IsError, the text for
// the model, and the Refusal for programs under MetaKey in _meta. Not in
// structuredContent: a client validates that against the tool's output
// schema, error results included (the TypeScript SDK throws on a mismatch,
// and the agent never sees the refusal).
func Refused(ref *gate.Refusal, text string) *Verdict {
	return &Verdict{Ref: ref, Text: text}
}

// refuse answers a call of a hidden tool.
func (g *Core) refuse(ctx context.Context, c *Call, v *View) *Verdict {
	ref, tools, vd := g.refusal(ctx, c, v, gate.CodeForbidden)
	if vd != nil {
		return vd
	}
	var moves []Move
	for _, tool := range tools {
		if tti := g.Info(c.Rules, tool, true); tti.Event != "" {
			moves = append(moves, Move{Tool: tool, Info: tti})
		}
	}
	transitionTool := ""
	if c.Wf != nil && c.Wf.TransitionName != "" {
		// The events workflow_transition may send are steps too.
		transitionTool = c.Wf.TransitionName
		for _, ev := range g.TransitionEvents(c.Rules, c.Wf) {
			moves = append(moves, Move{Tool: transitionTool, Info: &ToolInfo{Mode: ModeCan, Event: ev}})
		}
	}
	moves = append(moves, g.waits...) // a job's result may be the step that helps
	path, found := g.Model.ShortestPath(v.Active, c.Info, moves)
	ref.Reachable = found
	if path != nil {
		ref.Path = path
	}
	if c.Info.Mode == ModeDenied {
		var b strings.Builder
		fmt.Fprintf(&b, "Tool %q is not part of the %q workflow: no state of it allows the tool, so this server does not run it.", c.Name, g.engine.ID())
		writeGuidance(&b, ref.Available, ref.Instructions)
		return Refused(ref, b.String())
	}
	return Refused(ref, refusalText(ref, c.Info, transitionTool))
}

// refusalText is the refusal in prose, for the model. transitionTool names
// workflow_transition, whose steps say which event to send.
func refusalText(ref *gate.Refusal, ti *ToolInfo, transitionTool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q is not available in the current workflow state (%s).", ref.Tool, StateText(ref.State))
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
				fmt.Fprintf(&b, " (if guards %s allow)", strings.Join(QuoteAll(s.Guards), " and "))
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

// StateText writes a state value for prose: "empty" or {"payment":"card"}.
func StateText(v any) string {
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
func (g *Core) refuseLimit(ctx context.Context, c *Call, v *View, lims []gate.CallLimit) *Verdict {
	ref, _, vd := g.refusal(ctx, c, v, gate.CodeCallLimit)
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
	return Refused(ref, b.String())
}

// refuseBusy answers a call that waited too long for another call of its
// workflow to finish.
func (g *Core) refuseBusy(ctx context.Context, c *Call, v *View) *Verdict {
	if c.Kind == CallSend {
		return &Verdict{Err: gate.ErrWorkflowBusy}
	}
	ref, _, vd := g.refusal(ctx, c, v, gate.CodeWorkflowBusy)
	if vd != nil {
		return vd
	}
	other := "another call"
	if l := v.Rec.Lease; l != nil && l.Tool != "" {
		other = fmt.Sprintf("a call of %s", l.Tool)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: %s in the same workflow is still in progress (it did not finish within %s). The workflow runs such calls one at a time; call %s again once it has finished.",
		c.Name, other, g.busyWait, c.Name)
	writeGuidance(&b, ref.Available, ref.Instructions)
	return Refused(ref, b.String())
}

// RefuseExpired answers a call of a session whose workflow expired.
func (g *Core) RefuseExpired(ctx context.Context, c *Call) *Verdict {
	ref, _, vd := g.refusal(ctx, c, nil, gate.CodeWorkflowExpired)
	if vd != nil {
		return vd
	}
	return Refused(ref, fmt.Sprintf("Tool %q was not run: this session's %q workflow is no longer kept by the server (it was not used for too long, or was removed), and it is not started again. Start a new session to start a new workflow.",
		c.Name, g.engine.ID()))
}

// refuseArguments answers a call whose arguments the gate cannot take.
func (g *Core) refuseArguments(ctx context.Context, c *Call, why string) *Verdict {
	ref, _, vd := g.refusal(ctx, c, nil, gate.CodeTooLarge)
	if vd != nil {
		return vd
	}
	return Refused(ref, fmt.Sprintf("Tool %q was not run: %s. Pass smaller arguments (for large data, a reference such as a file path).", c.Name, why))
}

// refuseEvent answers a call whose event the workflow would fail on.
func (g *Core) refuseEvent(ctx context.Context, c *Call, v *View, err error) *Verdict {
	g.Log.Warn("mcpbind: the machine fails on a call's event; the call is refused", "tool", c.Name, "event", c.Info.Event, "key", Fingerprint(v.Key), "error", err)
	ref, _, vd := g.refusal(ctx, c, v, gate.CodeWorkflowError)
	if vd != nil {
		return vd
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: the workflow cannot take its event %q with these arguments (%v).", c.Name, c.Info.Event, err)
	writeGuidance(&b, ref.Available, ref.Instructions)
	return Refused(ref, b.String())
}

// refuseGuards answers a call of an available tool whose event the
// workflow would not accept with the call's arguments: guards refuse it.
func (g *Core) refuseGuards(ctx context.Context, c *Call, v *View, guards []string) *Verdict {
	ref, _, vd := g.refusal(ctx, c, v, gate.CodeEventRefused)
	if vd != nil {
		return vd
	}
	ref.Event, ref.Guards, ref.Reachable = c.Info.Event, guards, true
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q was not run: the workflow does not accept its event %q with these arguments now: ", c.Name, c.Info.Event)
	if len(guards) == 1 {
		fmt.Fprintf(&b, "guard %q refuses it.", guards[0])
	} else {
		fmt.Fprintf(&b, "guards %s refuse it.", strings.Join(QuoteAll(guards), " and "))
	}
	b.WriteString(" Call it with arguments the guard accepts, or do what the instructions say first.")
	writeGuidance(&b, ref.Available, ref.Instructions)
	return Refused(ref, b.String())
}

// Instructions returns the instructions of the active states, outermost
// first.
func (g *Core) Instructions(v *View) []string {
	var out []string
	for i, sm := range g.mcp {
		if sm != nil && sm.Instructions != "" && v.Active.Has(i) {
			out = append(out, sm.Instructions)
		}
	}
	return out
}
