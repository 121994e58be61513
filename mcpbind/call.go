// This file defines a gated tools/call as the MCP middleware takes it in:
// how it is resolved to a workflow, how it runs its tool, and how its
// answer goes out. gate.Do composes the steps (internal/core's steps.go).

package mcpbind

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
)

// mcpDoor is the MCP side of a gated tools/call: the server's
// attachment, the handlers below the gate (the tool runs there) and the
// request as the handler gets it (workflow_id removed).
type mcpDoor struct {
	g    *Gate
	a    *attachment
	next mcp.MethodHandler
	req  *mcp.CallToolRequest
	// tools is the set of workflow tools the call is one of, if it is.
	tools *mcpWorkflowTools
	// x is what resolve fills in (the call; with a handle, the request
	// without its workflow_id and the context naming the workflow), if
	// the door was allocated with it.
	x *mcpCall
}

// mcpCall is what a gated tools/call allocates, in one: its steps, its
// door and its call, and for a call of a handle, its request as the
// handler gets it and the context naming the workflow.
type mcpCall struct {
	steps    core.Steps
	door     mcpDoor
	call     core.Call
	stripped strippedRequest
	hctx     handleContext
}

// ToolNames implements core.Door: the tools the handlers below the gate list.
func (d *mcpDoor) ToolNames(ctx context.Context) ([]string, error) {
	if d.next == nil {
		return nil, nil
	}
	return d.g.registered(ctx, d.next, d.req)
}

// UnknownTool implements core.Door: the server's own answer.
func (d *mcpDoor) UnknownTool(ctx context.Context) (any, error) {
	if d.next == nil {
		return nil, nil // a session told of a job's transition: no request to answer
	}
	return d.next(ctx, "tools/call", d.req)
}

// mcpOf returns the MCP side of a call, nil if it did not come through
// MCP.
func mcpOf(c *core.Call) *mcpDoor {
	d, _ := c.Door.(*mcpDoor)
	return d
}

// call answers a gated tools/call: the MCP request is taken through the
// steps gate.Do composes (resolve, load, authorize, reserve, run, commit,
// notify; internal/core's steps.go), and the answer is what they left.
// Each step that refuses the call answers it without running the tool.
func (g *Gate) call(ctx context.Context, next mcp.MethodHandler, a *attachment, req *mcp.CallToolRequest) (mcp.Result, error) {
	x := &mcpCall{door: mcpDoor{g: g, a: a, next: next, req: req}}
	x.door.x = x
	x.steps = core.Steps{G: g.core, Door: &x.door}
	s := &x.steps
	gate.Do(ctx, s)
	if s.Vd != nil {
		g.auditVerdict(ctx, s.C, s.Before, s.Vd)
		return mcpResult(s.Vd), s.Vd.Err
	}
	return mcpAnswer(s.Res, s.Err)
}

// Resolve implements core.Door: it decides whether a call is gated and which
// workflow it acts on. It returns nil and the answer for calls that are
// not gated (they go straight to the handler), for the start tool, for
// calls refused before any workflow is loaded, and for a client's answer
// to an approval's question.
func (d *mcpDoor) Resolve(ctx context.Context) (context.Context, *core.Call, any, error) {
	c, res, err := d.g.resolve(ctx, d)
	if c == nil {
		return ctx, nil, res, err
	}
	if c.Handles {
		if x := d.x; x != nil {
			x.hctx = handleContext{Context: ctx, id: c.Target.Handle}
			ctx = &x.hctx
		} else {
			ctx = withWorkflowID(ctx, c.Target.Handle)
		}
	}
	if c.Kind == core.CallTransition && d.req.Params.RequestState != "" {
		res, err := d.g.inputAnswered(ctx, c) // the client's answer to an approval's question
		return ctx, nil, res, err
	}
	return ctx, c, nil, nil
}

// resolve is the door's resolve, but for what the call's context and an
// approval's answer need.
func (g *Gate) resolve(ctx context.Context, d *mcpDoor) (*core.Call, mcp.Result, error) {
	next, a, req := d.next, d.a, d.req
	if g.names.first.CompareAndSwap(false, true) {
		// A client may call tools without listing them: the workflow's
		// names are checked against the server's tools at the first call
		// too.
		g.checkNames(ctx, next, req.Session, req.Extra)
	}
	sets := a.wf.Load()
	var c *core.Call
	var stripped *strippedRequest
	if d.x != nil {
		c, stripped = &d.x.call, &d.x.stripped
	} else {
		c = new(core.Call)
	}
	*c = core.Call{Door: d, Name: req.Params.Name, Rules: g.core.Rules.Load(), Info: core.UnboundInfo, Wf: sets.primary()}
	wf, status := sets.byName(c.Name)
	switch {
	case c.Name == g.core.Start && g.core.Start != "":
		res, err := g.startCall(ctx, next, req, g.keyingOf(req) == byHandle)
		return nil, res, err
	case wf != nil && status:
		c.Kind, c.Wf, d.tools = core.CallStatus, &wf.WorkflowTools, wf
	case wf != nil:
		c.Kind, c.Wf, d.tools = core.CallTransition, &wf.WorkflowTools, wf
	default:
		c.Info = g.core.Info(c.Rules, c.Name, false)
		if c.Info.Mode == core.ModeUnbound {
			res, err := next(ctx, "tools/call", req)
			return nil, res, err
		}
	}
	c.Target = core.Target{Ss: connOf(req.Session)}
	switch g.keyingOf(req) {
	case byHandle:
		id, key, sreq, refusal := g.takeHandle(ctx, next, req, stripped)
		if refusal != nil {
			return nil, refusal, nil
		}
		c.Handles, c.Target.Handle, c.Target.Key, d.req = true, id, key, sreq
	case unkeyed:
		return nil, nil, g.unkeyed()
	default:
		c.ListsVary = !newProtocol(req) && !g.listAll
	}
	if d.req.Params != nil {
		c.Args.Raw = d.req.Params.Arguments
	}
	return c, nil, nil
}

// LoadFailed implements core.Door: a refusal for a handle that names no
// workflow or a workflow that expired, else a JSON-RPC error.
func (d *mcpDoor) LoadFailed(ctx context.Context, c *core.Call, err error) (any, error) {
	g := d.g
	switch {
	case errors.Is(err, ErrUnknownWorkflow):
		return g.refuseHandle(ctx, d.next, d.req, CodeUnknownWorkflow, c.Target.Handle)
	case errors.Is(err, ErrWorkflowExpired):
		vd := g.core.RefuseExpired(ctx, c)
		return mcpResult(vd), vd.Err
	}
	return nil, g.unavailable(err, true)
}

// Run implements core.Door: it runs the tool's handler, the next handler of
// the chain.
func (d *mcpDoor) Run(ctx context.Context, c *core.Call) (any, core.ToolOutcome, error) {
	res, err := d.next(ctx, "tools/call", d.req)
	return res, mcpOutcome(res, err), err
}

// Status implements core.Door: workflow_status's answer.
func (d *mcpDoor) Status(ctx context.Context, c *core.Call, v *core.View) (any, error) {
	return d.g.status(ctx, c, v)
}

// StoreFailed implements core.Door: a JSON-RPC error that says the tool did not
// run.
func (d *mcpDoor) StoreFailed(err error) error { return d.g.unavailable(err, true) }

// FollowUps implements core.Door: the budgets that warn, as the call found
// them, and the follow-up events the server asks for.
func (d *mcpDoor) FollowUps(ctx context.Context, c *core.Call, v *core.View, out core.Committed, answer any, err error) core.Committed {
	res, _ := mcpAnswer(answer, nil)
	out.Checkpoints = checkpoints(d.g.core.Limits(v))
	out, out.Notices = d.g.followUps(ctx, c, out, res, err)
	return out
}

// Notify implements core.Door: the answer with its notes, and the session's
// notifications.
func (d *mcpDoor) Notify(ctx context.Context, c *core.Call, before *core.View, out core.Committed, answer any, err error) (any, error) {
	res, _ := mcpAnswer(answer, nil)
	return d.g.notify(ctx, c, before, out, res, err)
}

// mcpOutcome is a tool's MCP answer as the commit reads it.
func mcpOutcome(res mcp.Result, err error) core.ToolOutcome {
	cr, ok := succeeded(res, err)
	if !ok {
		return core.ToolOutcome{}
	}
	return core.ToolOutcome{Ok: true, Output: cr.StructuredContent}
}

// succeeded reports whether a tool's answer is a success, which sends the
// tool's event: no error, not IsError, and no input required.
func succeeded(res mcp.Result, err error) (*mcp.CallToolResult, bool) {
	cr, ok := res.(*mcp.CallToolResult)
	if err != nil || !ok || cr == nil || cr.IsError || cr.NeedsInput() {
		return cr, false
	}
	return cr, true
}

// unkeyed is the JSON-RPC error of a gated call that no workflow can be
// kept for: HandlesNever on a server that makes a session per request.
func (g *Gate) unkeyed() error {
	if g.unkeyedLogged.CompareAndSwap(false, true) {
		g.core.Log.Error("mcpbind: the server makes a new session for every request (stateless Streamable HTTP) and Options.Handles is HandlesNever, so no workflow can outlive a request: every gated call is refused. Use HandlesAuto or HandlesAlways, or name workflows with Options.SessionKey; logged once")
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: "this server cannot keep a workflow between requests (stateless, without workflow handles); the tool was not run"}
}

// unavailable is the JSON-RPC error of a call or list the gate could not
// serve because the store failed.
func (g *Gate) unavailable(err error, ranTool bool) error {
	g.core.Log.Error("mcpbind: workflow state unavailable", "error", err)
	msg := "workflow state unavailable; try again later"
	if errors.Is(err, ErrStoreFull) {
		msg = "the server holds as many workflows as it can; try again later"
	}
	if ranTool {
		msg += " (the tool was not run)"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}
