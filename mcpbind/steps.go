// This file implements gate.Steps for the gate: one request on its way
// through the steps gate.Do composes, whichever front door made it. A
// front door makes a steps value (its request translated in), calls
// gate.Do or gate.Decide, and translates what the steps left out.

package mcpbind

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
)

// steps is a request as gate.Do takes it through the steps: the call,
// what each step found, and the answer for its front door.
type steps struct {
	g *Gate
	c *gatedCall // nil until an MCP request is resolved

	// The MCP request to resolve, for a tools/call through the middleware.
	next mcp.MethodHandler
	a    *attachment
	req  *mcp.CallToolRequest

	v      *view // the workflow as the last step saw it (after reserve: as saved)
	before *view // the workflow as load found it
	h      *holder
	did    toolOutcome // what the tool did (given for a tool that already ran)
	out    committed

	// res and err are the answer: the tool's result (given for a tool that
	// already ran), or the answer of the step that stopped the request.
	res mcp.Result
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

// viaMCP reports whether a call is answered to an MCP client (a tools/call
// through the middleware), whose answer is an MCP result; every other
// caller gets errors as they are.
func (c *gatedCall) viaMCP() bool { return c.onMCP() != nil && c.kind != callSend }

// Resolve implements gate.Steps.
func (s *steps) Resolve(ctx context.Context) (context.Context, bool) {
	if s.c == nil {
		c, res, err := s.g.resolve(ctx, s.next, s.a, s.req)
		if c == nil {
			s.res, s.err = res, err // not gated, the start tool, or refused
			return ctx, false
		}
		s.c = c
	}
	c := s.c
	if c.info.Mode == core.ModeUnbound && c.kind == callTool {
		s.unbound = true // a caller outside MCP asked about a tool the workflow does not gate
		return ctx, false
	}
	if c.handles {
		ctx = context.WithValue(ctx, workflowIDKey{}, c.target.handle)
	}
	if c.kind == callTransition && c.onMCP().req.Params.RequestState != "" {
		s.res, s.err = s.g.inputAnswered(ctx, c) // the client's answer to an approval's question
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
			s.res, s.err = mcpAnswer(s.g.loadFailed(ctx, c, err))
			return false
		}
		s.v = v
	}
	s.before = s.v
	switch {
	case c.kind == callStatus:
		s.res, s.err = s.g.status(ctx, c, s.v)
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
		if s.c.viaMCP() {
			s.err = s.g.unavailable(err, true)
		}
		return false
	}
	if !s.refused(vd) {
		return false
	}
	s.v, s.h = v, h
	return true
}

// Run implements gate.Steps.
func (s *steps) Run(ctx context.Context) {
	if !s.c.ran {
		s.res, s.err = s.g.run(ctx, s.c, s.h)
		s.did = mcpOutcome(s.res, s.err)
	}
}

// Commit implements gate.Steps.
func (s *steps) Commit(ctx context.Context) {
	g, c := s.g, s.c
	s.out = g.commit(ctx, c, s.h, s.v, s.did)
	if s.h == nil && c.kind == callTool {
		g.auditCall(ctx, c, s.v, s.did.word()) // a call that held nothing: recorded on its own
	}
	if c.viaMCP() && c.kind == callTool {
		s.out.checkpoints = checkpoints(g.limits(s.v)) // the budgets that warn, as the call found them
		s.out, s.out.notices = g.followUps(ctx, c, s.out, s.res, s.err)
	}
}

// Notify implements gate.Steps.
func (s *steps) Notify(ctx context.Context) {
	g, c := s.g, s.c
	if c.viaMCP() {
		s.res, s.err = g.notify(ctx, c, s.before, s.out, s.res, s.err)
		return
	}
	tr := s.out.tr
	switch {
	case s.out.err != nil:
		return
	case tr == nil:
		s.dropped = c.report != nil // the child was over by the time its result was processed
		return
	case c.kind == callTool:
		g.invalidate(ctx, c.name, c.info)
	}
	g.transitioned(ctx, *tr)
	if c.report != nil {
		// The sessions of this process whose workflow a job moved.
		for _, st := range g.sessionsOfKey(c.target.key) {
			c.door = &mcpDoor{g: g, a: st.a, req: &mcp.CallToolRequest{Session: st.ss}}
			c.listsVary = g.listsVary(st.ss)
			g.toolsChanged(ctx, c, s.out.from, s.out.after)
		}
	}
}
