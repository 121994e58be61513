// This file gates tools that run outside an MCP request: an agent host's
// own tools (a shell, a file editor), which the host's hooks ask about
// before they run and report after. The rules are the gate's: the same
// authorization as a tools/call, the same budgets, events and history.
// Gate implements gate.Decider with them, so that package hook needs no
// MCP type.

package mcpbind

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
)

// Decision is the answer of [Gate.Check]: [gate.Decision].
type Decision = gate.Decision

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

var _ gate.Decider = (*Gate)(nil)

// externalCall is a call of a tool outside MCP: no server below the gate,
// no MCP request, the caller's list of tool names.
func (g *gateCore) externalCall(r gate.Request) (*gatedCall, error) {
	t, err := g.refTarget(r.Ref)
	if err != nil {
		return nil, err
	}
	tools := r.Tools
	if tools == nil {
		tools = []string{}
	}
	rules := g.rules.Load()
	c := &gatedCall{
		name: r.Tool, kind: callTool, rules: rules, info: g.info(rules, r.Tool, false), target: t, tools: tools,
		args: arguments{raw: r.Args},
	}
	if r.TransitionTool != "" {
		c.wf = &workflowTools{transitionName: r.TransitionTool}
	}
	return c, nil
}

// Decide is [Gate.Decide].
func (g *gateCore) Decide(ctx context.Context, r gate.Request) (gate.Decision, error) {
	c, err := g.externalCall(r)
	if err != nil {
		return gate.Decision{}, err
	}
	s := &steps{g: g, c: c}
	s.v, _ = g.snapshotOf(r.Workflow, c.target)
	if gate.Decide(ctx, s) || s.unbound {
		return gate.Decision{Allowed: true}, nil
	}
	if s.err != nil || s.vd == nil {
		return gate.Decision{}, s.err
	}
	return gate.Decision{Refusal: s.vd.ref, Text: s.vd.text}, nil
}

// snapshotOf returns the view a Workflow this gate read keeps, if it is
// one of t's.
func (g *gateCore) snapshotOf(wf *Workflow, t target) (*view, bool) {
	if wf == nil {
		return nil, false
	}
	v, ok := wf.Snapshot.(*view)
	if !ok || v.gate != g || v.key != t.key {
		return nil, false
	}
	return v, true
}

// Commit is [Gate.Commit].
func (g *gateCore) Commit(ctx context.Context, r gate.Request, o gate.Outcome) (*Transition, error) {
	c, err := g.externalCall(r)
	if err != nil {
		return nil, err
	}
	return g.record(ctx, c, outcomeOf(o))
}

// record commits a call c of a tool that already ran with outcome o: it
// goes through the steps as a tools/call does, but for authorize (it ran)
// and run.
func (g *gateCore) record(ctx context.Context, c *gatedCall, o toolOutcome) (*Transition, error) {
	c.ran = true
	s := &steps{g: g, c: c, did: o}
	gate.Do(ctx, s)
	switch {
	case s.unbound:
		return nil, nil
	case s.vd != nil && s.err == nil:
		return nil, ErrWorkflowBusy
	case s.err != nil:
		return nil, s.err
	case s.out.err != nil:
		return nil, s.out.err
	}
	return s.out.tr, nil
}

// Check decides whether a tool may run now in the workflow ref names: it
// is [Gate.Decide] with the host's tools.
func (g *Gate) Check(ctx context.Context, ref Ref, tool string, args json.RawMessage, host Host) (Decision, error) {
	return g.core.Decide(ctx, gate.Request{Ref: ref, Tool: tool, Args: args, Tools: host.Tools, TransitionTool: host.TransitionTool})
}

// Record records a call of a tool that ran outside an MCP request, as
// [Gate.Commit] does, with res (nil for a success without a result) as
// the tool's result: its structured content is the event's output.
func (g *Gate) Record(ctx context.Context, ref Ref, tool string, args json.RawMessage, res *mcp.CallToolResult, host Host) (*Transition, error) {
	c, err := g.core.externalCall(gate.Request{Ref: ref, Tool: tool, Args: args, Tools: host.Tools, TransitionTool: host.TransitionTool})
	if err != nil {
		return nil, err
	}
	if res == nil {
		return g.core.record(ctx, c, toolOutcome{ok: true})
	}
	return g.core.record(ctx, c, mcpOutcome(res, nil))
}
