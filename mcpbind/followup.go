// This file sends the events that follow a call (Options.AfterCall): a
// gateway's file interrupts, when a tool that ran wrote a file a workflow
// watches.

package mcpbind

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// Call describes a gated call that ran, for [Options.AfterCall].
type Call struct {
	Tool      string
	Arguments json.RawMessage     // as the tool got them
	Result    *mcp.CallToolResult // nil if the call ended with a protocol error
}

// FollowUp is an event the gate sends to a workflow after a call
// ([Options.AfterCall]).
type FollowUp struct {
	Event statechart.Event
	// Reason says why, for the run history (the sender) and the notice
	// appended to the call's result when the event moves the workflow:
	// "file config/.env matches interrupt secrets".
	Reason string
}

// followUps sends the events AfterCall gives for a call that ran, each as
// Send would (serialised, recorded with the reason as sender), and
// returns what the call left in the workflow after them and a notice per
// event that moved it.
func (g *Gate) followUps(ctx context.Context, c *core.Call, out core.Committed, res mcp.Result, err error) (core.Committed, []string) {
	if g.afterCall == nil || c.Kind != core.CallTool {
		return out, nil
	}
	cr, _ := res.(*mcp.CallToolResult)
	if err != nil {
		cr = nil
	}
	fus := g.afterCall(ctx, Call{Tool: c.Name, Arguments: c.RawArguments(), Result: cr})
	var notices []string
	for _, f := range fus {
		send := &core.Steps{G: g.core, C: &core.Call{Kind: core.CallSend, Rules: c.Rules, Info: core.UnboundInfo, Target: c.Target, Door: c.Door, By: f.Reason, Event: f.Event}}
		gate.Do(ctx, send)
		if send.Before == nil {
			g.core.Log.Warn("mcpbind: a follow-up event after a call", "tool", c.Name, "event", f.Event.Type, "error", send.Err)
			continue
		}
		if send.Err != nil || send.Vd != nil {
			g.core.Log.Warn("mcpbind: a follow-up event after a call: the workflow was busy or unavailable", "tool", c.Name, "event", f.Event.Type, "error", send.Err)
			continue
		}
		sent := send.Out
		if sent.Err != nil || sent.Tr == nil {
			continue
		}
		out.After = sent.After
		notices = append(notices, fmt.Sprintf("[Workflow: %s, so the workflow moved from %s to %s. Do what this state asks, then move the workflow on.]",
			f.Reason, core.StateText(sent.Tr.From), core.StateText(sent.Tr.To)))
	}
	return out, notices
}

// withNotices returns a copy of res with notices appended to its content.
func withNotices(res *mcp.CallToolResult, notices []string) *mcp.CallToolResult {
	if res == nil || len(notices) == 0 {
		return res
	}
	out := *res
	out.Content = slices.Clip(res.Content)
	for _, n := range notices {
		out.Content = append(out.Content, &mcp.TextContent{Text: n})
	}
	return &out
}
