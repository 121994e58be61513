// This file defines a gated tools/call as the MCP middleware takes it in:
// the call's kinds, how it is resolved to a workflow, and how it runs its
// tool. gate.Do composes the steps (steps.go).

package mcpbind

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// callKind says what a gated call is.
type callKind uint8

const (
	callTool       callKind = iota // a tool of the server (or, in a gateway, of an upstream server)
	callStatus                     // workflow_status
	callTransition                 // workflow_transition
	callSend                       // Gate.Send: an event from outside an MCP request
)

// gatedCall is one gated call on its way through the steps.
type gatedCall struct {
	// door is the front door the call came through, for what only it
	// knows; nil for a caller outside any transport (a hook's Decide and
	// Commit, Send, a job's report).
	door    door
	name    string
	kind    callKind
	rules   *rules
	info    *core.ToolInfo // how the tool is gated; unboundInfo for the workflow tools
	wf      *workflowTools // the attachment's workflow tools, if any
	target  target
	handles bool // the workflow is named by a handle
	// listsVary: the session's tool list follows its workflow, and it gets
	// list_changed (sessions of protocols before 2026-07-28, unless
	// Options.ListAllTools).
	listsVary bool
	args      arguments // the call's arguments, checked and decoded
	// event is the event workflow_transition or Send sends.
	event statechart.Event
	by    string // who sent it, for Send
	// report is what a job reports (jobs.go): the event is its done or
	// error event, processed with the engine's Deliver.
	report *statechart.Report
	ran    bool // the tool already ran (Record): nothing to authorize
	// grant is the answer an approval's event carries (approval.go); nil
	// for every other call, which cannot send an approval's event.
	grant *ApprovalGrant

	// decided is what the call's authorization computed of its event, for
	// the commit to save instead of running the event again.
	decided *decidedEvent

	// tools are the names of the tools the caller may call; nil until
	// asked (toolNames), or given by a caller outside MCP.
	tools []string
}

// door is what the steps of a call ask of the front door it came
// through. Its answers (any) are the door's own; the steps hand them back
// to it.
type door interface {
	// resolve translates the door's request into a call, and the context
	// the call runs under. It returns a nil call and the answer for a
	// request that is not a gated call, or that it answers itself.
	resolve(ctx context.Context) (context.Context, *gatedCall, any, error)
	// toolNames lists the tools of the server the call is for.
	toolNames(ctx context.Context) ([]string, error)
	// unknownTool answers a call of a tool the server does not have, as
	// the server itself does.
	unknownTool(ctx context.Context) (answer any, err error)
	// loadFailed answers a call whose workflow could not be loaded.
	loadFailed(ctx context.Context, c *gatedCall, err error) (answer any, rerr error)
	// status answers the workflow_status tool in the state v.
	status(ctx context.Context, c *gatedCall, v *view) (answer any, err error)
	// storeFailed is the error of a call the store failed before the
	// tool ran.
	storeFailed(err error) error
	// run runs the call's tool and returns its answer and what it did.
	run(ctx context.Context, c *gatedCall) (answer any, err error, did toolOutcome)
	// followUps adds to a committed call what the door does after it (the
	// budgets that warn, a server's follow-up events), in the state v.
	followUps(ctx context.Context, c *gatedCall, v *view, out committed, answer any, err error) committed
	// notify tells the door's client what the call did and returns the
	// answer.
	notify(ctx context.Context, c *gatedCall, before *view, out committed, answer any, err error) (any, error)
}

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
}

// toolNames implements door: the tools the handlers below the gate list.
func (d *mcpDoor) toolNames(ctx context.Context) ([]string, error) {
	if d.next == nil {
		return nil, nil
	}
	return d.g.registered(ctx, d.next, d.req)
}

// unknownTool implements door: the server's own answer.
func (d *mcpDoor) unknownTool(ctx context.Context) (any, error) {
	if d.next == nil {
		return nil, nil // a session told of a job's transition: no request to answer
	}
	return d.next(ctx, "tools/call", d.req)
}

// mcpOf returns the MCP side of a call, nil if it did not come through
// MCP.
func mcpOf(c *gatedCall) *mcpDoor {
	d, _ := c.door.(*mcpDoor)
	return d
}

// toolNames returns the names of the tools of the call's server (asked of
// its front door, once per call), or those a caller outside MCP gave.
func (g *gateCore) toolNames(ctx context.Context, c *gatedCall) ([]string, error) {
	if c.tools != nil || c.door == nil {
		return c.tools, nil
	}
	tools, err := c.door.toolNames(ctx)
	if err == nil {
		c.tools = tools
	}
	return tools, err
}

// serialised reports whether the call takes the workflow's lease: it may
// send an event, so no other such call of the workflow may run between
// its authorisation and the saving of its event.
func (c *gatedCall) serialised() bool {
	return c.kind == callTransition || c.kind == callSend || (c.kind == callTool && c.info.Event != "")
}

// call answers a gated tools/call: the MCP request is taken through the
// steps gate.Do composes (resolve, load, authorize, reserve, run, commit,
// notify; see steps.go), and the answer is what they left. Each step that
// refuses the call answers it without running the tool.
func (g *Gate) call(ctx context.Context, next mcp.MethodHandler, a *attachment, req *mcp.CallToolRequest) (mcp.Result, error) {
	s := &steps{g: g.core, door: &mcpDoor{g: g, a: a, next: next, req: req}}
	gate.Do(ctx, s)
	if s.vd != nil {
		g.auditVerdict(ctx, s.c, s.before, s.vd)
		return mcpResult(s.vd), s.vd.err
	}
	return mcpAnswer(s.res, s.err)
}

// resolve implements door: it decides whether a call is gated and which
// workflow it acts on. It returns nil and the answer for calls that are
// not gated (they go straight to the handler), for the start tool, for
// calls refused before any workflow is loaded, and for a client's answer
// to an approval's question.
func (d *mcpDoor) resolve(ctx context.Context) (context.Context, *gatedCall, any, error) {
	c, res, err := d.g.resolve(ctx, d)
	if c == nil {
		return ctx, nil, res, err
	}
	if c.handles {
		ctx = context.WithValue(ctx, workflowIDKey{}, c.target.handle)
	}
	if c.kind == callTransition && d.req.Params.RequestState != "" {
		res, err := d.g.inputAnswered(ctx, c) // the client's answer to an approval's question
		return ctx, nil, res, err
	}
	return ctx, c, nil, nil
}

// resolve is the door's resolve, but for what the call's context and an
// approval's answer need.
func (g *Gate) resolve(ctx context.Context, d *mcpDoor) (*gatedCall, mcp.Result, error) {
	next, a, req := d.next, d.a, d.req
	if g.names.first.CompareAndSwap(false, true) {
		// A client may call tools without listing them: the workflow's
		// names are checked against the server's tools at the first call
		// too.
		g.checkNames(ctx, next, req.Session, req.Extra)
	}
	sets := a.wf.Load()
	c := &gatedCall{door: d, name: req.Params.Name, rules: g.core.rules.Load(), info: unboundInfo, wf: sets.primary()}
	wf, status := sets.byName(c.name)
	switch {
	case c.name == g.core.start && g.core.start != "":
		res, err := g.startCall(ctx, next, req, g.keyingOf(req) == byHandle)
		return nil, res, err
	case wf != nil && status:
		c.kind, c.wf, d.tools = callStatus, &wf.workflowTools, wf
	case wf != nil:
		c.kind, c.wf, d.tools = callTransition, &wf.workflowTools, wf
	default:
		c.info = g.core.info(c.rules, c.name, false)
		if c.info.Mode == core.ModeUnbound {
			res, err := next(ctx, "tools/call", req)
			return nil, res, err
		}
	}
	c.target = target{ss: connOf(req.Session)}
	switch g.keyingOf(req) {
	case byHandle:
		id, stripped, refusal := g.takeHandle(ctx, next, req)
		if refusal != nil {
			return nil, refusal, nil
		}
		c.handles, c.target.handle, c.target.key, d.req = true, id, g.core.handleKey(id), stripped
	case unkeyed:
		return nil, nil, g.unkeyed()
	default:
		c.listsVary = !newProtocol(req) && !g.listAll
	}
	if d.req.Params != nil {
		c.args.raw = d.req.Params.Arguments
	}
	return c, nil, nil
}

// loadFailed answers a call whose workflow could not be loaded: a caller
// outside any transport, and Send, get the error itself.
func (g *gateCore) loadFailed(ctx context.Context, c *gatedCall, err error) (any, error) {
	if c.kind == callSend || c.door == nil {
		return nil, err
	}
	return c.door.loadFailed(ctx, c, err)
}

// loadFailed implements door: a refusal for a handle that names no
// workflow or a workflow that expired, else a JSON-RPC error.
func (d *mcpDoor) loadFailed(ctx context.Context, c *gatedCall, err error) (any, error) {
	g := d.g
	switch {
	case errors.Is(err, ErrUnknownWorkflow):
		return g.refuseHandle(ctx, d.next, d.req, CodeUnknownWorkflow, c.target.handle)
	case errors.Is(err, ErrWorkflowExpired):
		vd := g.core.refuseExpired(ctx, c)
		return mcpResult(vd), vd.err
	}
	return nil, g.unavailable(err, true)
}

// run implements door: it runs the tool's handler, the next handler of
// the chain.
func (d *mcpDoor) run(ctx context.Context, c *gatedCall) (any, error, toolOutcome) {
	res, err := d.next(ctx, "tools/call", d.req)
	return res, err, mcpOutcome(res, err)
}

// status implements door: workflow_status's answer.
func (d *mcpDoor) status(ctx context.Context, c *gatedCall, v *view) (any, error) {
	return d.g.status(ctx, c, v)
}

// storeFailed implements door: a JSON-RPC error that says the tool did not
// run.
func (d *mcpDoor) storeFailed(err error) error { return d.g.unavailable(err, true) }

// followUps implements door: the budgets that warn, as the call found
// them, and the follow-up events the server asks for.
func (d *mcpDoor) followUps(ctx context.Context, c *gatedCall, v *view, out committed, answer any, err error) committed {
	res, _ := mcpAnswer(answer, nil)
	out.checkpoints = checkpoints(d.g.core.limits(v))
	out, out.notices = d.g.followUps(ctx, c, out, res, err)
	return out
}

// notify implements door: the answer with its notes, and the session's
// notifications.
func (d *mcpDoor) notify(ctx context.Context, c *gatedCall, before *view, out committed, answer any, err error) (any, error) {
	res, _ := mcpAnswer(answer, nil)
	return d.g.notify(ctx, c, before, out, res, err)
}

// mcpOutcome is a tool's MCP answer as the commit reads it.
func mcpOutcome(res mcp.Result, err error) toolOutcome {
	cr, ok := succeeded(res, err)
	if !ok {
		return toolOutcome{}
	}
	return toolOutcome{ok: true, output: cr.StructuredContent}
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
		g.core.log.Error("mcpbind: the server makes a new session for every request (stateless Streamable HTTP) and Options.Handles is HandlesNever, so no workflow can outlive a request: every gated call is refused. Use HandlesAuto or HandlesAlways, or name workflows with Options.SessionKey; logged once")
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
		Message: "this server cannot keep a workflow between requests (stateless, without workflow handles); the tool was not run"}
}

// unavailable is the JSON-RPC error of a call or list the gate could not
// serve because the store failed.
func (g *Gate) unavailable(err error, ranTool bool) error {
	g.core.log.Error("mcpbind: workflow state unavailable", "error", err)
	msg := "workflow state unavailable; try again later"
	if errors.Is(err, ErrStoreFull) {
		msg = "the server holds as many workflows as it can; try again later"
	}
	if ranTool {
		msg += " (the tool was not run)"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}
