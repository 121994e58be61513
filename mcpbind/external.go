// This file gates tools that run outside an MCP request: an agent host's
// own tools (a shell, a file editor), which the host's hooks ask about
// before they run and report after. The rules are the gate's: the same
// authorization as a tools/call, the same budgets, events and history.

package mcpbind

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Decision is the answer of [Gate.Check].
type Decision struct {
	Allowed bool
	// Refusal and Text say why not, and what may be done instead: the
	// guidance a refused tools/call gets.
	Refusal *Refusal
	Text    string
}

// Host describes the caller of [Gate.Check] and [Gate.Record]: an agent
// host whose own tools run outside MCP.
type Host struct {
	// Tools lists the names of the tools the agent may call, for the
	// refusal's guidance (the tools available now, the path).
	Tools []string
	// TransitionTool names the tool through which the agent sends events
	// (a gateway's workflow_transition), if it has one: a refusal's path
	// may then go through it.
	TransitionTool string
}

// externalCall is a call of a tool outside MCP: no server below the gate,
// no MCP request, the host's list of tool names.
func (g *Gate) externalCall(ref Ref, tool string, args json.RawMessage, host Host) (*gatedCall, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	tools := host.Tools
	if tools == nil {
		tools = []string{}
	}
	r := g.rules.Load()
	c := &gatedCall{
		a: &attachment{}, name: tool, kind: callTool, rules: r, info: g.info(r, tool, false), target: t, tools: tools,
		args: arguments{raw: args}, // no MCP request: the arguments are the host's
	}
	if host.TransitionTool != "" {
		c.wf = &workflowTools{transitionName: host.TransitionTool}
	}
	return c, nil
}

// Check decides whether a tool may run now in the workflow ref names, as a
// tools/call of it would be decided: visible in the current state, within
// the budgets, its arguments acceptable. A tool the workflow does not gate
// is allowed (unless Options.DefaultDeny).
func (g *Gate) Check(ctx context.Context, ref Ref, tool string, args json.RawMessage, host Host) (Decision, error) {
	c, err := g.externalCall(ref, tool, args, host)
	if err != nil {
		return Decision{}, err
	}
	if c.info.mode == modeUnbound {
		return Decision{Allowed: true}, nil
	}
	v, err := g.load(ctx, c.target)
	if err != nil {
		return Decision{}, err
	}
	vd := g.authorize(ctx, c, v)
	if vd == nil {
		return Decision{Allowed: true}, nil
	}
	if vd.err != nil {
		return Decision{}, vd.err
	}
	res := asResult(vd.res)
	ref2, _ := RefusalOf(res)
	text := ""
	if res != nil && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	return Decision{Refusal: ref2, Text: text}, nil
}

// Record records a call of a tool that ran outside an MCP request (a
// host's own tool, reported after it ran): it is counted against the
// budgets of the active states, and if it succeeded (res is nil or not an
// error) the tool's event is sent, with the arguments and res's structured
// content, and saved, as after a tools/call. It returns the transition,
// or nil if the workflow did not move. The tool ran whatever the workflow
// says now: Record does not refuse it (Check did, or did not, before).
func (g *Gate) Record(ctx context.Context, ref Ref, tool string, args json.RawMessage, res *mcp.CallToolResult, host Host) (*Transition, error) {
	c, err := g.externalCall(ref, tool, args, host)
	if err != nil {
		return nil, err
	}
	if c.info.mode == modeUnbound {
		return nil, nil
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	c.ran = true
	v, err := g.load(ctx, c.target)
	if err != nil {
		return nil, err
	}
	v, h, vd, err := g.reserve(ctx, c, v)
	if err == nil && vd != nil {
		err = vd.err
		if err == nil {
			err = ErrWorkflowBusy
		}
	}
	if err != nil {
		return nil, err
	}
	out := g.commit(ctx, c, h, v, res, nil)
	if h == nil {
		g.auditCall(ctx, c, v, callOutcome(res, nil))
	}
	if out.err != nil {
		return nil, out.err
	}
	if out.tr != nil {
		g.invalidate(ctx, c.name, c.info)
		g.transitioned(ctx, *out.tr)
	}
	return out.tr, nil
}
