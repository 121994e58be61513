// This file implements gate.Steps for the gate: one request on its way
// through the steps gate.Do composes, whichever front door made it. A
// front door makes a steps value (its request translated in), calls
// gate.Do or gate.Decide, and translates what the steps left out.

package mcpbind

import (
	"context"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
)

// steps is a request as gate.Do takes it through the steps: the call,
// what each step found, and the answer for its front door.
type steps struct {
	g *gateCore
	// door is the front door whose request Resolve translates into the
	// call; nil for a caller that made the call itself (c is set).
	door door
	c    *gatedCall

	v      *view // the workflow as the last step saw it (after reserve: as saved)
	before *view // the workflow as load found it
	h      *holder
	did    toolOutcome // what the tool did (given for a tool that already ran)
	out    committed

	// res and err are the answer: the front door's answer (the tool's
	// result), or the answer of the step that stopped the request.
	res any
	err error
	// vd is the answer of the step that refused the request, if one did;
	// its front door translates it (res is not set then).
	vd *verdict
	// unbound: the workflow does not gate the tool (resolve stopped).
	unbound bool
	// dropped: a job's result for a child its workflow no longer runs
	// (load stopped, or the commit changed nothing).
	dropped bool
}

var _ gate.Steps = (*steps)(nil)

// answered reports whether a call is answered through its front door (a
// tools/call through the MCP middleware), which translates the answer;
// every other caller gets errors as they are.
func (c *gatedCall) answered() bool { return c.door != nil && c.kind != callSend }

// Resolve implements gate.Steps.
func (s *steps) Resolve(ctx context.Context) (context.Context, bool) {
	if s.c == nil {
		ctx2, c, res, err := s.door.resolve(ctx)
		if c == nil {
			s.res, s.err = res, err // not gated, the start tool, or answered by the door
			return ctx, false
		}
		ctx, s.c = ctx2, c
	}
	if s.c.info.Mode == core.ModeUnbound && s.c.kind == callTool {
		s.unbound = true // a caller outside MCP asked about a tool the workflow does not gate
		return ctx, false
	}
	return ctx, true
}

// Load implements gate.Steps. A front door that read the workflow for the
// same request (a hook's Workflow, an approval's pending state) sets s.v.
func (s *steps) Load(ctx context.Context) bool {
	c := s.c
	if s.v == nil {
		v, err := s.g.load(ctx, c.target)
		if err != nil {
			s.res, s.err = s.g.loadFailed(ctx, c, err)
			return false
		}
		s.v = v
	}
	s.before = s.v
	switch {
	case c.kind == callStatus:
		s.res, s.err = c.door.status(ctx, c, s.v)
		return false
	case c.report != nil && !wantsJob(s.v.state, c.report.Session):
		s.dropped = true
		return false
	}
	return true
}

// Authorize implements gate.Steps.
func (s *steps) Authorize(ctx context.Context) bool {
	return s.refused(s.g.authorize(ctx, s.c, s.v))
}

// refused keeps a step's refusal, if any, as the answer, and reports
// whether the request goes on.
func (s *steps) refused(vd *verdict) bool {
	if vd == nil {
		return true
	}
	s.vd, s.err = vd, vd.err
	return false
}

// Reserve implements gate.Steps.
func (s *steps) Reserve(ctx context.Context) bool {
	v, h, vd, err := s.g.reserve(ctx, s.c, s.v)
	if err != nil {
		s.res, s.err = nil, err
		if s.c.answered() {
			s.err = s.c.door.storeFailed(err)
		}
		return false
	}
	if !s.refused(vd) {
		return false
	}
	s.v, s.h = v, h
	return true
}

// Run implements gate.Steps: the front door runs the tool, while the
// lease the call holds (if any) is kept alive. A workflow_transition and
// Send have no tool: the event is their effect.
func (s *steps) Run(ctx context.Context) {
	c := s.c
	if c.ran || c.kind != callTool {
		return
	}
	if s.h != nil {
		s.g.keepAlive(ctx, s.h)
		defer s.h.stopRenewals()
	}
	s.res, s.err, s.did = c.door.run(ctx, c)
}

// Commit implements gate.Steps.
func (s *steps) Commit(ctx context.Context) {
	g, c := s.g, s.c
	s.out = g.commit(ctx, c, s.h, s.v, s.did)
	if s.h == nil && c.kind == callTool {
		g.auditCall(ctx, c, s.v, s.did.word()) // a call that held nothing: recorded on its own
	}
	if c.answered() && c.kind == callTool {
		s.out = c.door.followUps(ctx, c, s.v, s.out, s.res, s.err)
	}
}

// Notify implements gate.Steps: the front door tells its client; for
// every other caller, the transition is logged and reported to
// Options.OnTransition and, for a job's result, to the sessions whose
// workflow it moved.
func (s *steps) Notify(ctx context.Context) {
	g, c := s.g, s.c
	if c.answered() {
		s.res, s.err = c.door.notify(ctx, c, s.before, s.out, s.res, s.err)
		return
	}
	tr := s.out.tr
	switch {
	case s.out.err != nil:
		return
	case tr == nil:
		s.dropped = c.report != nil // the child was over by the time its result was processed
		return
	case c.kind == callTool && g.invalidated != nil:
		g.invalidated(ctx, c.name, c.info)
	}
	g.transitioned(ctx, *tr)
	if c.report != nil && g.moved != nil {
		g.moved(ctx, c, s.out)
	}
}
