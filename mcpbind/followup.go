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
func (g *Gate) followUps(ctx context.Context, c *gatedCall, out committed, res mcp.Result, err error) (committed, []string) {
	if g.afterCall == nil || c.kind != callTool {
		return out, nil
	}
	cr, _ := res.(*mcp.CallToolResult)
	if err != nil {
		cr = nil
	}
	fus := g.afterCall(ctx, Call{Tool: c.name, Arguments: c.rawArguments(), Result: cr})
	var notices []string
	for _, f := range fus {
		send := &steps{g: g.core, c: &gatedCall{kind: callSend, rules: c.rules, info: unboundInfo, target: c.target, door: c.door, by: f.Reason, event: f.Event}}
		gate.Do(ctx, send)
		if send.before == nil {
			g.core.log.Warn("mcpbind: a follow-up event after a call", "tool", c.name, "event", f.Event.Type, "error", send.err)
			continue
		}
		if send.err != nil || send.vd != nil {
			g.core.log.Warn("mcpbind: a follow-up event after a call: the workflow was busy or unavailable", "tool", c.name, "event", f.Event.Type, "error", send.err)
			continue
		}
		sent := send.out
		if sent.err != nil || sent.tr == nil {
			continue
		}
		out.after = sent.after
		notices = append(notices, fmt.Sprintf("[Workflow: %s, so the workflow moved from %s to %s. Do what this state asks, then move the workflow on.]",
			f.Reason, stateText(sent.tr.From), stateText(sent.tr.To)))
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
