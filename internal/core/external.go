// This file implements gate.Decider: a tool that runs outside any
// transport (an agent host's own tool, asked about by its hook before it
// runs and reported after) is decided and recorded by the same steps as a
// tools/call.

package core

import (
	"context"

	"github.com/chartgate/chartgate/gate"
)

// ExternalCall is a call of a tool outside MCP: no server below the gate,
// no MCP request, the caller's list of tool names.
func (g *Core) ExternalCall(r gate.Request) (*Call, error) {
	t, err := g.refTarget(r.Ref)
	if err != nil {
		return nil, err
	}
	tools := r.Tools
	if tools == nil {
		tools = []string{}
	}
	rules := g.Rules.Load()
	c := &Call{
		Name: r.Tool, Kind: CallTool, Rules: rules, Info: g.Info(rules, r.Tool, false), Target: t, tools: tools,
		Args: arguments{Raw: r.Args},
	}
	if r.TransitionTool != "" {
		c.Wf = &WorkflowTools{TransitionName: r.TransitionTool}
	}
	return c, nil
}

// Decide implements mcpbind's Gate.Decide.
func (g *Core) Decide(ctx context.Context, r gate.Request) (gate.Decision, error) {
	c, err := g.ExternalCall(r)
	if err != nil {
		return gate.Decision{}, err
	}
	s := &Steps{G: g, C: c}
	s.v, _ = g.snapshotOf(r.Workflow, c.Target)
	if gate.Decide(ctx, s) || s.unbound {
		return gate.Decision{Allowed: true}, nil
	}
	if s.Err != nil || s.Vd == nil {
		return gate.Decision{}, s.Err
	}
	return gate.Decision{Refusal: s.Vd.Ref, Text: s.Vd.Text}, nil
}

// snapshotOf returns the view a Workflow this gate read keeps, if it is
// one of t's.
func (g *Core) snapshotOf(wf *gate.Workflow, t Target) (*View, bool) {
	if wf == nil {
		return nil, false
	}
	v, ok := wf.Snapshot.(*View)
	if !ok || v.gate != g || v.Key != t.Key {
		return nil, false
	}
	return v, true
}

// Commit implements mcpbind's Gate.Commit.
func (g *Core) Commit(ctx context.Context, r gate.Request, o gate.Outcome) (*gate.Transition, error) {
	c, err := g.ExternalCall(r)
	if err != nil {
		return nil, err
	}
	return g.Record(ctx, c, outcomeOf(o))
}

// Record commits a call c of a tool that already ran with outcome o: it
// goes through the steps as a tools/call does, but for authorize (it ran)
// and run.
func (g *Core) Record(ctx context.Context, c *Call, o ToolOutcome) (*gate.Transition, error) {
	c.ran = true
	s := &Steps{G: g, C: c, did: o}
	gate.Do(ctx, s)
	switch {
	case s.unbound:
		return nil, nil
	case s.Vd != nil && s.Err == nil:
		return nil, gate.ErrWorkflowBusy
	case s.Err != nil:
		return nil, s.Err
	case s.Out.Err != nil:
		return nil, s.Out.Err
	}
	return s.Out.Tr, nil
}
