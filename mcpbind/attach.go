// This file defines Attach and the go-sdk middleware that routes
// initialize, tools/list and tools/call to the gate.

package mcpbind

import (
	"context"
	"sync/atomic"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions the gate tells apart.
const (
	// sessionlessVersion is the first protocol version without sessions,
	// where tool lists must not vary per connection.
	sessionlessVersion = "2026-07-28"
)

// Attach installs the gate on a server: a receiving middleware that gates
// tools/list and tools/call and advertises tools.listChanged in the
// initialize result, and a sending middleware that gives the gate the
// server's inner sending handler, to notify one session (the go-sdk has no
// API for that). Unless [Options.Handles] is HandlesNever, it also adds
// the start tool (workflow_start) for workflow handles. Call Attach once
// per server; a gate may serve several servers.
//
// Middleware added to the server later runs before the gate's
// (AddReceivingMiddleware wraps the current chain); sending middleware
// added later does not see the gate's list_changed notifications. A
// statesync layer belongs outside the gate: use [Gate.AttachWith].
func (g *Gate) Attach(s *mcp.Server) {
	a := &attachment{}
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		a.send = next // called at once, by AddSendingMiddleware
		return next
	})
	g.amu.Lock()
	if g.attached == nil {
		g.attached = map[*mcp.Server]*attachment{}
	}
	g.attached[s] = a
	g.amu.Unlock()
	if g.core.Start != "" {
		g.addStartTool(s)
	}
	s.AddReceivingMiddleware(g.middleware(a))
	g.core.StartWatch()
}

// AttachWith attaches the gate to s (see [Gate.Attach]) and installs the
// statesync layer around it, in the one order in which both work together
// without double work:
//
//	gate.AttachWith(server, layer)
//	// same as: gate.Attach(server); server.AddReceivingMiddleware(layer.Middleware)
//
// tools/list is filtered by the gate before the layer decorates it, so only
// the visible tools get their [Cache-Control: …] tag; a refused call is an
// error result, which the layer leaves alone; and the patterns of a saved
// transition ([Binding.Invalidates], meta.mcp.invalidates) join the tool's
// own in the call's single invalidation notice. Middleware added to s later
// runs outside both. A nil layer only attaches the gate.
func (g *Gate) AttachWith(s *mcp.Server, layer *statesync.Layer) {
	g.Attach(s)
	if layer != nil {
		s.AddReceivingMiddleware(layer.Middleware)
	}
}

// attachment is the gate's link to one server.
type attachment struct {
	send mcp.MethodHandler // the server's sending handler, below the gate's
	wf   atomic.Pointer[workflowToolSets]
}

// AddTool binds a tool and adds it to the server, like [mcp.AddTool]. It
// panics if the binding is invalid, as mcp.AddTool does for a bad tool.
func AddTool[In, Out any](s *mcp.Server, g *Gate, t *mcp.Tool, b Binding, h mcp.ToolHandlerFor[In, Out]) {
	if err := g.Bind(t.Name, b); err != nil {
		panic(err)
	}
	mcp.AddTool(s, t, h)
}

func (g *Gate) middleware(a *attachment) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize":
				res, err := next(ctx, method, req)
				if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir != nil {
					// A session that ends with its request receives no
					// list_changed from the gate: none is advertised.
					return advertise(ir, !g.ephemeral(req)), nil
				}
				return res, err
			case "tools/list":
				if lr, ok := req.(*mcp.ListToolsRequest); ok && lr.Session != nil {
					return g.list(ctx, next, a, lr)
				}
			case "tools/call":
				if cr, ok := req.(*mcp.CallToolRequest); ok && cr.Session != nil && cr.Params != nil {
					return g.call(ctx, next, a, cr)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// advertise returns the initialize result with tools.listChanged set as
// given.
func advertise(ir *mcp.InitializeResult, listChanged bool) *mcp.InitializeResult {
	out := *ir
	var caps mcp.ServerCapabilities
	if ir.Capabilities != nil {
		caps = *ir.Capabilities
	}
	caps.Tools = &mcp.ToolCapabilities{ListChanged: listChanged}
	out.Capabilities = &caps
	return &out
}

// keying says how the workflow of a request is named.
type keying uint8

const (
	bySession keying = iota // its session's own workflow
	byHandle                // the workflow its workflow_id names
	// unkeyed: HandlesNever, and the request has no session that outlives
	// it (stateless HTTP): every gated call is refused.
	unkeyed
)

// keyingOf decides how a request's workflow is named, from the gate's
// HandleMode, the request's protocol and its transport:
//
//   - a request of protocol 2026-07-28 or later has no session;
//   - a request that came over HTTP in a session without an id has a
//     session that ends with the request: a stateless Streamable HTTP
//     server (StreamableHTTPOptions.Stateless) makes one per request. A
//     workflow keyed by it would start afresh at every request, so such
//     requests use handles whatever their protocol, unless
//     Options.SessionKey names their workflow;
//   - otherwise (stdio, in-memory, stateful HTTP) the session carries the
//     workflow.
func (g *Gate) keyingOf(req mcp.Request) keying {
	switch {
	case g.handles == HandlesAlways:
		return byHandle
	case g.ephemeral(req):
		if g.handles == HandlesNever {
			return unkeyed
		}
		return byHandle
	case g.handles == HandlesAuto && newProtocol(req) && overHTTP(req):
		return byHandle
	}
	return bySession
}

// overHTTP reports whether a request came over HTTP (it has headers): a
// connection that does not last (Streamable HTTP under 2026-07-28 has no
// sessions), where a workflow must be named by a handle. A request over
// stdio or an in-memory transport comes on the one connection of one
// client, which carries its workflow whatever the protocol.
func overHTTP(req mcp.Request) bool {
	extra := req.GetExtra()
	return extra != nil && extra.Header != nil
}

// ephemeral reports whether a request's session ends with it: it came
// over HTTP, its session has no id, and SessionKey gives it no name.
func (g *Gate) ephemeral(req mcp.Request) bool {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	extra := req.GetExtra()
	return ss != nil && extra != nil && extra.Header != nil && g.core.SessionName(ss) == ""
}

// newProtocol reports whether a request follows protocol 2026-07-28 or
// later, which has no sessions and where tool lists must not vary per
// connection. The version is the one in the request's own _meta: a client
// that asked for 2026-07-28 in an initialize handshake was answered with
// an older version (the handshake cannot negotiate a newer one), and
// follows that one.
func newProtocol(req mcp.Request) bool {
	var meta map[string]any
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	case *mcp.ListToolsRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	}
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= sessionlessVersion
}
