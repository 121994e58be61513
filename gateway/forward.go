// This file defines what the gateway forwards: downstream requests to the
// upstream that serves them (tools, prompts, resources, completions,
// subscriptions, the logging level), and upstream notifications and
// requests to the downstream sessions (progress, log messages, sampling,
// elicitation).

//lint:file-ignore SA1019 logging and sampling are deprecated from protocol 2026-07-28 on; the gateway passes them through for the versions that have them.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inflight is a downstream request being served by an upstream.
type inflight struct {
	ss  *mcp.ServerSession
	ctx context.Context // the downstream request's
	seq uint64
}

// progressRoute is where an upstream's progress notifications go.
type progressRoute struct {
	ss    *mcp.ServerSession
	ctx   context.Context
	token any // the downstream client's token
}

// track records a request of ss in flight to u until the returned
// function is called.
func (g *Gateway) track(ctx context.Context, u *upstream, ss *mcp.ServerSession) func() {
	g.mu.Lock()
	g.nextToken++
	c := &inflight{ss: ss, ctx: ctx, seq: g.nextToken}
	if g.calls[u] == nil {
		g.calls[u] = map[*inflight]struct{}{}
	}
	g.calls[u][c] = struct{}{}
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		delete(g.calls[u], c)
		g.mu.Unlock()
	}
}

// callTool forwards a tools/call to the tool's upstream, under its
// upstream name, with the arguments and _meta as they came, the progress
// token replaced by one of the gateway's (the upstream's progress goes
// back to this call), and the call's context (cancelling the downstream
// request cancels the upstream one). The result comes back unchanged. If
// the upstream is down, exits or loses the connection during the call,
// the result is an error result that says so.
func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest, u *upstream, name string) (*mcp.CallToolResult, error) {
	cs, ended, err := u.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return errorResult(err), nil
	}
	defer g.track(ctx, u, req.Session)()
	params := &mcp.CallToolParams{Meta: forwardMeta(req.Params.Meta), Name: name}
	if req.Params.Arguments != nil {
		params.Arguments = req.Params.Arguments
	}
	if tok := req.Params.GetProgressToken(); tok != nil {
		our := g.routeProgress(ctx, req.Session, tok)
		defer g.dropProgress(our)
		params.SetProgressToken(our)
	}
	if conn := u.rawConn(cs); conn != nil {
		// A stdio child: the call goes without go-sdk's client, whose
		// decoding costs more than the rest of the hop.
		if raw, err := rawParams(name, req.Params.Arguments, params.Meta); err == nil {
			if res, sent, err := g.rawCallTool(ctx, u, conn, name, raw); sent {
				return res, err
			}
		}
	}
	callCtx, timeout := ctx, g.callTimeout(u)
	if timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, timeout, errCallTimeout)
		defer cancel()
	}
	var res *mcp.CallToolResult
	if session, version, ok := u.httpSession(cs); ok {
		// An HTTP upstream: the call goes without go-sdk's client too.
		var raw []byte
		if raw, err = rawParams(name, req.Params.Arguments, params.Meta); err != nil {
			return nil, err
		}
		res, err = g.httpCallTool(callCtx, &hop{u: u, cs: cs, session: session, version: version}, raw)
	} else {
		res, err = cs.CallTool(callCtx, params)
	}
	var werr *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case context.Cause(callCtx) == errCallTimeout:
		// Cancelling callCtx sent the upstream notifications/cancelled.
		return errorResult(fmt.Errorf("%s did not answer the call of tool %q within %v: the gateway cancelled it, and it may or may not have taken effect",
			u.describe(), name, timeout)), nil
	case errors.As(err, &werr):
		return nil, werr // the upstream's answer
	}
	// Lost: say so to the model, and let a gate see a failed call.
	return errorResult(errors.New(g.upstreamError(ctx, u, ended, err).Error())), nil
}

// errCallTimeout is the cause of a tool call's context whose
// Options.CallTimeout passed.
var errCallTimeout = errors.New("the tool call's timeout passed")

// callTimeout is how long a tool call to u may take; 0 is no bound.
func (g *Gateway) callTimeout(u *upstream) time.Duration {
	if u.cfg.CallTimeout != 0 {
		return u.cfg.CallTimeout
	}
	return max(g.opts.CallTimeout, 0)
}

// errorResult is a tool result reporting err to the model.
func errorResult(err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	res.SetError(err)
	return res
}

// upstreamError turns the error of a request forwarded to u into the
// downstream error: the downstream request's own cancellation, the
// upstream's JSON-RPC error unchanged, or an error naming the upstream
// (for a lost connection, how it was lost). ended is closed when the
// session the request went to has ended.
func (g *Gateway) upstreamError(ctx context.Context, u *upstream, ended <-chan struct{}, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return werr
	}
	// Did the session end? The request's error (EOF, connection closed)
	// comes a moment before the supervisor sees the end.
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-ended:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"%s stopped during the request: %s. The gateway is restarting it; the request may or may not have taken effect.",
			u.describe(), u.downReason(err))}
	case <-t.C:
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("upstream %q: %v", u.name, err)}
}

// forwardMeta is the _meta of a request as it goes upstream: the client's,
// less the SEP-2575 per-request keys, which describe the downstream
// connection (its protocol version, client, capabilities and log level),
// not the gateway's.
func forwardMeta(m mcp.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for _, k := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel, mcp.MetaKeySubscriptionID} {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// forward runs a request on u's session, with the downstream request's
// context, and maps its error.
func forward[R any](ctx context.Context, g *Gateway, u *upstream, ss *mcp.ServerSession, call func(*mcp.ClientSession) (R, error)) (R, error) {
	var zero R
	cs, ended, err := u.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	defer g.track(ctx, u, ss)()
	res, err := call(cs)
	if err != nil {
		return zero, g.upstreamError(ctx, u, ended, err)
	}
	return res, nil
}

func (g *Gateway) getPrompt(ctx context.Context, req *mcp.GetPromptRequest, u *upstream, name string) (*mcp.GetPromptResult, error) {
	return forward(ctx, g, u, req.Session, func(cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: forwardMeta(req.Params.Meta), Name: name, Arguments: req.Params.Arguments})
	})
}

func (g *Gateway) readResource(ctx context.Context, req *mcp.ReadResourceRequest, u *upstream) (*mcp.ReadResourceResult, error) {
	return forward(ctx, g, u, req.Session, func(cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: forwardMeta(req.Params.Meta), URI: req.Params.URI})
	})
}

// middleware sits in the downstream server's receiving chain, inside any
// middleware added later (a workflow gate): it tells the upstreams the
// logging level the downstream clients asked for; it sends a call of a
// tool or prompt the server does not have to the upstream if there is only
// one; and it reads resources that no upstream lists (and no listed
// template matches) from the upstreams that serve resources.
func (g *Gateway) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			g.reloadLock()
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if n := len(r.Params.Arguments); n > g.opts.MaxArgumentBytes {
					return errorResult(fmt.Errorf("the arguments of the call of tool %q are %d bytes, more than the %d the gateway accepts: the call was not forwarded",
						r.Params.Name, n, g.opts.MaxArgumentBytes)), nil
				}
				if why := g.refusal(r.Params.Name); why != "" {
					return errorResult(errors.New(why)), nil
				}
			}
		}
		res, err := next(ctx, method, req)
		switch method {
		case "logging/setLevel":
			if r, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams]); ok && err == nil && r.Params != nil {
				g.setLevel(ctx, r.Session, r.Params.Level)
			}
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && isUnknown(err, "tool", r.Params.Name) {
				if u := g.soleUpstream(); u != nil {
					return g.callTool(ctx, r, u, r.Params.Name)
				}
			}
		case "prompts/get":
			if r, ok := req.(*mcp.GetPromptRequest); ok && r.Params != nil && isUnknown(err, "prompt", r.Params.Name) {
				if u := g.soleUpstream(); u != nil {
					return g.getPrompt(ctx, r, u, r.Params.Name)
				}
			}
		case "resources/read":
			if r, ok := req.(*mcp.ReadResourceRequest); ok && isNotFound(err) && r.Params != nil {
				if res, err := g.readUnlisted(ctx, r); res != nil || !isNotFound(err) {
					return res, err
				}
			}
		}
		return res, err
	}
}

// refusal is why calls of the tool are refused (its definition changed
// since it was pinned, or Options.RefuseTools), "" if they are not. A
// refused tool is looked up again after the lock file changed.
func (g *Gateway) refusal(name string) string {
	g.mu.Lock()
	why := g.refused[name]
	g.mu.Unlock()
	if why == "" || !g.reloadLock() {
		return why
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused[name]
}

// reloadLock reads the lock file again when a tool is refused and the
// file changed (a person accepted tools), and then makes the downstream
// tools again; it reports whether it did.
func (g *Gateway) reloadLock() bool {
	l := g.opts.ToolLock
	if l == nil {
		return false
	}
	g.mu.Lock()
	none := len(g.refused) == 0
	g.mu.Unlock()
	if none {
		return false
	}
	changed, err := l.reload()
	if err != nil {
		g.logger.Error("reading the tool lock again", "error", err)
	}
	if changed {
		g.sync()
	}
	return changed
}

// isUnknown reports whether err is go-sdk's answer to a call of a tool or
// prompt the server does not have.
func isUnknown(err error, kind, name string) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams && werr.Message == fmt.Sprintf("unknown %s %q", kind, name)
}

// soleUpstream returns the upstream when there is only one: a name that
// it does not list is still its to answer (it may serve tools it does not
// list, and its error for an unknown name is its own). With several
// upstreams, or a ToolLock (a tool that is not listed has no pinned
// definition), the gateway's server answers.
func (g *Gateway) soleUpstream() *upstream {
	if len(g.upstreams) == 1 && g.opts.ToolLock == nil {
		return g.upstreams[0]
	}
	return nil
}

// isNotFound reports whether err says a resource does not exist: -32002
// (older servers) or -32602 (invalid params, since SEP-2164).
func isNotFound(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && (werr.Code == -32002 || werr.Code == mcp.CodeResourceNotFound)
}

// readUnlisted reads a URI no upstream lists from each upstream that
// serves resources, in configuration order, until one has it.
func (g *Gateway) readUnlisted(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	var lastErr error = mcp.ResourceNotFoundError(req.Params.URI)
	for _, u := range g.upstreams {
		if u.capabilities().Resources == nil {
			continue
		}
		res, err := g.readResource(ctx, req, u)
		if err == nil {
			return res, nil
		}
		if !isNotFound(err) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// subscribe subscribes to a resource on the upstream that lists it, or
// else on the first upstream supporting subscriptions that accepts it.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	var lastErr error = fmt.Errorf("no upstream accepts a subscription to %q", uri)
	for _, u := range g.resourceUpstreams(uri, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil && c.Resources.Subscribe }) {
		_, err := forward(ctx, g, u, req.Session, func(cs *mcp.ClientSession) (struct{}, error) {
			return struct{}{}, cs.Subscribe(ctx, &mcp.SubscribeParams{Meta: forwardMeta(req.Params.Meta), URI: uri})
		})
		if err == nil {
			u.mu.Lock()
			u.subs[uri]++
			u.mu.Unlock()
			return nil
		}
		lastErr = err
	}
	return lastErr
}

// unsubscribe drops a downstream subscription; the upstream's goes when
// no downstream subscription through it is left.
func (g *Gateway) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	for _, u := range g.upstreams {
		u.mu.Lock()
		n := u.subs[uri]
		if n > 1 {
			u.subs[uri]--
		} else {
			delete(u.subs, uri)
		}
		u.mu.Unlock()
		if n == 1 {
			_, err := forward(ctx, g, u, req.Session, func(cs *mcp.ClientSession) (struct{}, error) {
				return struct{}{}, cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{Meta: forwardMeta(req.Params.Meta), URI: uri})
			})
			return err
		}
		if n > 1 {
			return nil
		}
	}
	return nil
}

// resourceUpstreams returns the upstream that lists uri as a resource or
// template, or else every upstream whose capabilities pass ok.
func (g *Gateway) resourceUpstreams(uri string, ok func(*mcp.ServerCapabilities) bool) []*upstream {
	g.mu.Lock()
	var owner *upstream
	if e := g.resources[uri]; e != nil {
		owner = e.up
	} else if e := g.templates[uri]; e != nil {
		owner = e.up
	}
	g.mu.Unlock()
	if owner != nil {
		return []*upstream{owner}
	}
	var out []*upstream
	for _, u := range g.upstreams {
		if ok(u.capabilities()) {
			out = append(out, u)
		}
	}
	return out
}

// complete forwards completion/complete to the upstream of the prompt or
// resource template it refers to (under its upstream name), or else to
// each upstream with completions until one answers.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := *req.Params.Ref
	var ups []*upstream
	switch ref.Type {
	case "ref/prompt":
		g.mu.Lock()
		if e := g.prompts[ref.Name]; e != nil {
			ups, ref.Name = []*upstream{e.up}, e.orig
		}
		g.mu.Unlock()
	case "ref/resource":
		ups = g.resourceUpstreams(ref.URI, func(*mcp.ServerCapabilities) bool { return false })
	}
	if ups == nil {
		for _, u := range g.upstreams {
			if u.capabilities().Completions != nil {
				ups = append(ups, u)
			}
		}
	}
	var lastErr error
	for _, u := range ups {
		if u.capabilities().Completions == nil {
			continue
		}
		params := *req.Params
		params.Meta, params.Ref = forwardMeta(req.Params.Meta), &ref
		res, err := forward(ctx, g, u, req.Session, func(cs *mcp.ClientSession) (*mcp.CompleteResult, error) {
			return cs.Complete(ctx, &params)
		})
		if err == nil {
			return res, nil
		}
		lastErr = err
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
}

// routeProgress returns a progress token for an upstream request whose
// progress goes to ss as tok.
func (g *Gateway) routeProgress(ctx context.Context, ss *mcp.ServerSession, tok any) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextToken++
	our := "chartgate-" + strconv.FormatUint(g.nextToken, 10)
	g.progress[our] = &progressRoute{ss: ss, ctx: ctx, token: tok}
	return our
}

func (g *Gateway) dropProgress(our string) {
	g.mu.Lock()
	delete(g.progress, our)
	g.mu.Unlock()
}

// forwardProgress sends an upstream's progress notification to the
// downstream call it belongs to, with the downstream client's token.
func (g *Gateway) forwardProgress(p *mcp.ProgressNotificationParams) {
	g.mu.Lock()
	r := g.progress[fmt.Sprint(p.ProgressToken)]
	g.mu.Unlock()
	if r == nil {
		return // the call is over
	}
	q := *p
	q.ProgressToken = r.token
	if err := r.ss.NotifyProgress(r.ctx, &q); err != nil {
		g.logger.Debug("forwarding progress", "error", err)
	}
}

// forwardLog sends an upstream's log message to every downstream session
// (each filters it by the level it set). A session with a request in
// flight to the upstream gets it on that request's context, so that over
// Streamable HTTP it travels with the request's response.
func (g *Gateway) forwardLog(u *upstream, p *mcp.LoggingMessageParams) {
	srv := g.srv()
	if srv == nil {
		return
	}
	for ss := range srv.Sessions() {
		ctx := context.Background()
		if c := g.latestCall(u, ss); c != nil {
			ctx = c.ctx
		}
		if err := ss.Log(ctx, p); err != nil {
			g.logger.Debug("forwarding a log message", "error", err)
		}
	}
}

// latestCall returns ss's most recent request in flight to u, if any.
func (g *Gateway) latestCall(u *upstream, ss *mcp.ServerSession) *inflight {
	g.mu.Lock()
	defer g.mu.Unlock()
	var latest *inflight
	for c := range g.calls[u] {
		if c.ss == ss && (latest == nil || c.seq > latest.seq) {
			latest = c
		}
	}
	return latest
}

// route finds the downstream session a request of u (sampling,
// elicitation) is for: the one client with requests in flight to u, or
// the only client connected. The context is that of its latest request
// to u, cancelled also when upstreamCtx is.
func (g *Gateway) route(upstreamCtx context.Context, u *upstream, what string) (*mcp.ServerSession, context.Context, context.CancelFunc, error) {
	g.mu.Lock()
	var latest *inflight
	sessions := map[*mcp.ServerSession]bool{}
	for c := range g.calls[u] {
		sessions[c.ss] = true
		if latest == nil || c.seq > latest.seq {
			latest = c
		}
	}
	g.mu.Unlock()
	var ss *mcp.ServerSession
	base := context.Background()
	switch len(sessions) {
	case 1:
		ss, base = latest.ss, latest.ctx
	case 0:
		var all []*mcp.ServerSession
		if srv := g.srv(); srv != nil {
			all = slices.Collect(srv.Sessions())
		}
		if len(all) != 1 {
			return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
				"chartgate cannot tell which client upstream %q's %s is for: no client has a request in flight to it, and %d clients are connected", u.name, what, len(all))}
		}
		ss = all[0]
	default:
		return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"chartgate cannot tell which client upstream %q's %s is for: %d clients have requests in flight to it", u.name, what, len(sessions))}
	}
	ctx, cancel := context.WithCancel(base)
	stop := context.AfterFunc(upstreamCtx, cancel)
	return ss, ctx, func() { stop(); cancel() }, nil
}

// createMessage forwards an upstream's sampling/createMessage to the
// downstream client it is for.
func (g *Gateway) createMessage(ctx context.Context, u *upstream, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	ss, fctx, done, err := g.route(ctx, u, "sampling request")
	if err != nil {
		return nil, err
	}
	defer done()
	return ss.CreateMessageWithTools(fctx, p)
}

// elicit forwards an upstream's elicitation/create to the downstream
// client it is for.
func (g *Gateway) elicit(ctx context.Context, u *upstream, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ss, fctx, done, err := g.route(ctx, u, "elicitation request")
	if err != nil {
		return nil, err
	}
	defer done()
	if p.ElicitationID != "" {
		g.mu.Lock()
		g.elicits[p.ElicitationID] = ss
		g.mu.Unlock()
	}
	return ss.Elicit(fctx, p)
}

// resourceUpdated forwards an upstream's notifications/resources/updated
// to the downstream sessions.
func (g *Gateway) resourceUpdated(ctx context.Context, u *upstream, p *mcp.ResourceUpdatedNotificationParams) {
	if srv := g.srv(); srv == nil {
		return
	} else if err := srv.ResourceUpdated(ctx, p); err != nil {
		u.logger.Warn("forwarding notifications/resources/updated", "error", err)
	}
}

// elicitationComplete forwards notifications/elicitation/complete to the
// client the elicitation went to.
func (g *Gateway) elicitationComplete(ctx context.Context, u *upstream, p *mcp.ElicitationCompleteParams) {
	g.mu.Lock()
	ss := g.elicits[p.ElicitationID]
	delete(g.elicits, p.ElicitationID)
	g.mu.Unlock()
	if ss == nil {
		var done func()
		var err error
		if ss, _, done, err = g.route(ctx, u, "elicitation/complete notification"); err != nil {
			g.logger.Warn("dropping notifications/elicitation/complete", "upstream", u.name, "error", err)
			return
		}
		done()
	}
	if err := ss.NotifyElicitationComplete(ctx, p); err != nil {
		g.logger.Debug("forwarding notifications/elicitation/complete", "error", err)
	}
}

// levels orders the MCP logging levels, lowest first.
var levels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// setLevel records the logging level ss asked for, and sends the lowest
// level any session asked for to the upstreams that log (each downstream
// session still gets only what it asked for: go-sdk filters by its
// level).
func (g *Gateway) setLevel(ctx context.Context, ss *mcp.ServerSession, level mcp.LoggingLevel) {
	g.mu.Lock()
	_, known := g.levels[ss]
	g.levels[ss] = level
	changed := g.updateLevel()
	g.mu.Unlock()
	if !known {
		g.forgetLevel(ss)
	}
	if changed == "" {
		return
	}
	for _, u := range g.upstreams {
		if u.capabilities().Logging == nil {
			continue
		}
		u.mu.Lock()
		cs := u.cs
		u.mu.Unlock()
		if cs == nil {
			continue // set when it reconnects
		}
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: changed}); err != nil {
			u.logger.Warn("setting the logging level", "level", changed, "error", err)
		}
	}
}

// forgetLevel has the level ss set forgotten when ss ends: the server's
// log tells of a session with an id (onSessionEnd); one without (stdio,
// a session per process) is waited on.
func (g *Gateway) forgetLevel(ss *mcp.ServerSession) {
	forget := func() {
		g.mu.Lock()
		delete(g.levels, ss)
		g.updateLevel() // the upstreams keep the old level until the next setLevel
		g.mu.Unlock()
	}
	id := ss.ID()
	if id == "" {
		go func() {
			_ = ss.Wait()
			forget()
		}()
		return
	}
	g.levelEnds.Store(id, forget)
	g.levelWatch.Do(func() {
		g.onSessionEnd(func(id string) {
			if f, ok := g.levelEnds.LoadAndDelete(id); ok {
				go f.(func())() // not under the server's lock, which onSessionEnd's callers hold
			}
		})
	})
}

// updateLevel recomputes g.level from g.levels, and returns it if it
// changed. g.mu is held.
func (g *Gateway) updateLevel() mcp.LoggingLevel {
	lowest := mcp.LoggingLevel("")
	for _, l := range g.levels {
		if lowest == "" || slices.Index(levels, l) < slices.Index(levels, lowest) {
			lowest = l
		}
	}
	if lowest == g.level {
		return ""
	}
	g.level = lowest
	return lowest
}

// logLevel is the level the upstreams were asked for, "" if none.
func (g *Gateway) logLevel() mcp.LoggingLevel {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.level
}
