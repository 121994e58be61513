// This file defines Attach and the go-sdk middleware: tools/list
// filtering, refusal of hidden tools/call, the event after a successful
// call, and notifications/tools/list_changed for the calling session alone.

package mcpbind

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statesync"
)

// Protocol versions the gate tells apart.
const (
	// sessionlessVersion is the first protocol version without sessions,
	// where tool lists must not vary per connection.
	sessionlessVersion = "2026-07-28"
)

// Codes of refused calls ([Refusal.Code]).
const (
	// CodeForbidden: the tool is not available in the workflow's current
	// state (MCP Fusion's FORBIDDEN).
	CodeForbidden = "FORBIDDEN"
	// CodeCallLimit: an active state's meta.mcp.maxCalls is used up; only
	// tools that move the workflow out of that state may run.
	CodeCallLimit = "CALL_LIMIT"
	// CodeWorkflowRequired: with handles, the call has no workflow id
	// argument; the start tool returns one.
	CodeWorkflowRequired = "WORKFLOW_REQUIRED"
	// CodeUnknownWorkflow: with handles, the workflow id names no workflow
	// (never started, or expired).
	CodeUnknownWorkflow = "UNKNOWN_WORKFLOW"
)

// CodeStateNotSaved is the code, under [MetaKey] in the result's _meta, of
// a call that ran but whose event could not be recorded.
const CodeStateNotSaved = "STATE_NOT_SAVED"

// MetaKey is the _meta key of the gate's notes on a call result.
const MetaKey = "chartgate/mcpbind"

// Refusal is the structured content of a refused call (IsError true). The
// text content says the same in prose.
type Refusal struct {
	Code string `json:"code"` // CodeForbidden, CodeCallLimit, CodeWorkflowRequired or CodeUnknownWorkflow
	Tool string `json:"tool"` // the tool that was called
	// Workflow is the workflow id the call named (with handles).
	Workflow string `json:"workflow,omitempty"`
	// State is the current state value, in XState's shape (null when the
	// call names no workflow).
	State any `json:"state"`
	// Available lists the tools that may be called now, in the server's
	// order.
	Available []string `json:"available"`
	// Path is the shortest sequence of tool calls after which Tool is
	// visible; empty when Reachable is false, or when Tool is bound to an
	// event that a guard refuses now. For the codes other than
	// CodeForbidden it is empty and Reachable false, except that
	// CodeWorkflowRequired and CodeUnknownWorkflow give the start tool as
	// the one step.
	Path      []Step `json:"path"`
	Reachable bool   `json:"reachable"`
	// Limits lists the used-up call limits (CodeCallLimit).
	Limits []CallLimit `json:"limits,omitempty"`
	// Instructions are those of the active states (meta.mcp.instructions).
	Instructions []string `json:"instructions,omitempty"`
}

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
	g.mu.Lock()
	if g.attached == nil {
		g.attached = map[*mcp.Server]*attachment{}
	}
	g.attached[s] = a
	g.mu.Unlock()
	if g.start != "" {
		g.addStartTool(s)
	}
	s.AddReceivingMiddleware(g.middleware(a))
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
	wf   atomic.Pointer[workflowTools]
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
					return advertise(ir), nil
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

// advertise returns the initialize result with tools.listChanged set.
func advertise(ir *mcp.InitializeResult) *mcp.InitializeResult {
	out := *ir
	var caps mcp.ServerCapabilities
	if ir.Capabilities != nil {
		caps = *ir.Capabilities
	}
	caps.Tools = &mcp.ToolCapabilities{ListChanged: true}
	out.Capabilities = &caps
	return &out
}

// sessionless reports whether a request follows a protocol without
// sessions (2026-07-28 or later), where lists must not vary per connection.
func sessionless(req interface{ ProtocolVersion() string }) bool {
	return req.ProtocolVersion() >= sessionlessVersion
}

func (g *Gate) unavailable(err error, ranTool bool) error {
	g.log.Error("mcpbind: workflow state unavailable", "error", err)
	msg := "workflow state unavailable; try again later"
	if ranTool {
		msg += " (the tool was not run)"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

func (g *Gate) list(ctx context.Context, next mcp.MethodHandler, a *attachment, req *mcp.ListToolsRequest) (mcp.Result, error) {
	res, err := next(ctx, "tools/list", req)
	if err != nil {
		return res, err
	}
	lr, ok := res.(*mcp.ListToolsResult)
	if !ok || lr == nil {
		return res, nil
	}
	r := g.rules.Load()
	cursor := ""
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	memo := g.listInfos(r, cursor, lr.Tools)
	if g.useHandles(req) {
		out := *lr
		out.Tools = g.handleList(memo, a.wf.Load())
		return &out, nil
	}
	if !memo.gated || sessionless(req) {
		return res, nil
	}
	v, err := g.load(ctx, target{ss: req.Session})
	if err != nil {
		return nil, g.unavailable(err, false)
	}
	filtered := *lr
	filtered.Tools = g.filter(ctx, memo, v, lr.Tools)
	return &filtered, nil
}

// filter returns the visible tools of a list. Without "can" tools and
// exhausted call limits the answer depends only on the active states, and
// is memoized by them.
func (g *Gate) filter(ctx context.Context, memo *listMemo, v *view, tools []*mcp.Tool) []*mcp.Tool {
	lims := g.exhausted(v)
	memoize := !memo.hasCan && len(lims) == 0
	var key string
	if memoize {
		key = configKey(v.active)
		if out, ok := memo.byConfig.Load(key); ok {
			return slices.Clone(out.([]*mcp.Tool))
		}
	}
	keep := make([]bool, len(memo.infos))
	n := 0
	for i, ti := range memo.infos {
		if ti.mode == modeUnbound || g.allowed(ctx, v, tools[i].Name, ti, lims, nil) {
			keep[i] = true
			n++
		}
	}
	out := make([]*mcp.Tool, 0, n)
	for i := range memo.infos {
		if keep[i] {
			out = append(out, tools[i])
		}
	}
	if memoize && memo.nconfigs.Add(1) <= maxConfigMemos {
		memo.byConfig.Store(key, slices.Clone(out))
	}
	return out
}

// listMemo remembers how the tools of one page of tools/list are gated:
// the server lists the same *mcp.Tool values until its tools change, so
// comparing pointers is enough to reuse the answer.
type listMemo struct {
	tools  []*mcp.Tool
	infos  []*toolInfo
	gated  bool // some tool is gated
	hasCan bool // some tool is visible by the machine's "can"

	handled atomic.Pointer[handledList] // the list for handle mode

	byConfig sync.Map // configKey(active states) -> []*mcp.Tool, the visible tools
	nconfigs atomic.Int64
}

const (
	maxListMemos   = 64
	maxConfigMemos = 1024
)

// listInfos returns how the listed tools are gated.
func (g *Gate) listInfos(r *rules, cursor string, tools []*mcp.Tool) *listMemo {
	if m, ok := r.lists.Load(cursor); ok {
		if memo := m.(*listMemo); slices.Equal(memo.tools, tools) {
			return memo
		}
	}
	memo := &listMemo{tools: slices.Clone(tools), infos: make([]*toolInfo, len(tools))}
	for i, t := range tools {
		ti := g.info(r, t.Name, true)
		if t.Name == g.start {
			ti = startInfo
		}
		memo.infos[i] = ti
		memo.gated = memo.gated || ti.mode != modeUnbound
		memo.hasCan = memo.hasCan || ti.mode == modeCan
	}
	if _, ok := r.lists.Load(cursor); ok || r.nlists.Add(1) <= maxListMemos {
		r.lists.Store(cursor, memo)
	}
	return memo
}

func (g *Gate) call(ctx context.Context, next mcp.MethodHandler, a *attachment, req *mcp.CallToolRequest) (mcp.Result, error) {
	name := req.Params.Name
	handles := g.useHandles(req)
	if name == g.start && g.start != "" {
		return g.startCall(ctx, next, req, handles)
	}
	w := a.wf.Load()
	isWF := w != nil && (name == w.statusName || name == w.transitionName)
	r := g.rules.Load()
	ti := unboundInfo
	if !isWF {
		ti = g.info(r, name, false)
		if ti.mode == modeUnbound {
			return next(ctx, "tools/call", req)
		}
	}
	t := target{ss: req.Session}
	if handles {
		id, stripped, refusal := g.takeHandle(ctx, next, req)
		if refusal != nil {
			return refusal, nil
		}
		t.handle, req = id, stripped
		ctx = context.WithValue(ctx, workflowIDKey{}, id)
	}
	v, err := g.load(ctx, t)
	if errors.Is(err, ErrUnknownWorkflow) {
		return g.refuseHandle(ctx, next, req, CodeUnknownWorkflow, t.handle)
	}
	if err != nil {
		return nil, g.unavailable(err, true)
	}
	if isWF {
		return g.workflowCall(ctx, next, a, w, req, t, v)
	}
	if !g.visible(ctx, v, name, ti) {
		return g.refuse(ctx, next, req, r, t, v, ti)
	}
	before := v
	// budgetChanged notifies the session if counting this call used up a
	// budget, for the exits where no transition decides it.
	budgetChanged := func() {
		if v != before {
			g.toolsChanged(ctx, a, req, r, before, v, handles)
		}
	}
	if lims := g.limits(v); len(lims) > 0 {
		if used := usedUp(lims); len(used) > 0 {
			if !g.leaves(ctx, v, ti, name, decodeJSON(req.Params.Arguments), used) {
				return g.refuseLimit(ctx, next, req, r, t, v, used)
			}
		} else {
			// Count only calls of tools the server has.
			if tools, err := g.registered(ctx, next, req); err == nil && !slices.Contains(tools, name) {
				return next(ctx, "tools/call", req)
			}
			_, nv, err := g.reserve(ctx, t, v)
			var le *limitError
			switch {
			case errors.As(err, &le):
				// Concurrent calls used the last calls first.
				return g.refuseLimit(ctx, next, req, r, t, le.view, le.lims)
			case err != nil:
				return nil, g.unavailable(err, true)
			}
			v = nv
		}
	}
	res, err := next(ctx, "tools/call", req)
	cr, ok := res.(*mcp.CallToolResult)
	if err != nil || !ok || cr == nil || ti.event == "" || cr.IsError || cr.NeedsInput() {
		budgetChanged()
		return res, err
	}
	var ev statechart.Event
	if g.dataless && g.onTrans == nil && g.hlimit == 0 {
		ev = g.event(ti.event, name, nil, nil) // nobody would look at the data
	} else {
		ev = g.event(ti.event, name, decodeJSON(req.Params.Arguments), normalize(cr.StructuredContent))
	}
	from, to, tr, err := g.apply(ctx, t, v, ev, name)
	if err != nil {
		budgetChanged()
		return g.notSaved(cr, name, ev, from, err), nil
	}
	if to == nil {
		budgetChanged()
		return res, nil // the machine ignored the event: nothing to invalidate
	}
	g.invalidate(ctx, name, ti)
	changed := g.toolsChanged(ctx, a, req, r, before, to, handles)
	g.transitioned(ctx, tr)
	return withNote(cr, TransitionNote{Event: ev.Type, From: from.state.Value(), To: to.state.Value(), ToolsChanged: changed}), nil
}

// useHandles reports whether a request's workflow is named by a handle.
func (g *Gate) useHandles(req interface{ ProtocolVersion() string }) bool {
	switch g.handles {
	case HandlesAlways:
		return true
	case HandlesNever:
		return false
	}
	return sessionless(req)
}

// invalidate reports the patterns a tool's binding declares for its saved
// transition to the statesync layer wrapping the gate, which adds them to the
// call's invalidation notice. Without a layer around the gate (none
// configured, or one installed inside the gate) there is nothing to do, but
// the declaration is lost, so the gate logs it once.
func (g *Gate) invalidate(ctx context.Context, tool string, ti *toolInfo) {
	if len(ti.invalidates) == 0 {
		return
	}
	err := statesync.Invalidate(ctx, ti.invalidates...)
	switch {
	case err == nil:
	case errors.Is(err, statesync.ErrNoLayer):
		if g.noLayerWarned.CompareAndSwap(false, true) {
			g.log.Warn("mcpbind: a binding declares invalidation patterns but no statesync layer wraps the gate, so they are dropped: install the layer after the gate (Gate.AttachWith), not before it; logged once",
				"tool", tool, "patterns", ti.invalidates)
		}
	default: // the patterns were validated when bound: not expected
		g.log.Error("mcpbind: reporting invalidation patterns", "tool", tool, "error", err)
	}
}

// toolsChanged reports whether the tools a workflow may call differ
// between two of its states, and if they do, sends
// notifications/tools/list_changed to the calling session (sessions only:
// with handles, and under protocol 2026-07-28, lists do not vary).
func (g *Gate) toolsChanged(ctx context.Context, a *attachment, req *mcp.CallToolRequest, r *rules, from, to *view, handles bool) bool {
	changed := !g.signature(ctx, r, from).equal(g.signature(ctx, r, to))
	if changed && a.send != nil && !handles && !sessionless(req) {
		// The notification goes to this session only, on the request's
		// context (over Streamable HTTP: on the POST's stream), before the
		// result.
		n := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: req.Session, Params: &mcp.ToolListChangedParams{}}
		if _, err := a.send(ctx, "notifications/tools/list_changed", n); err != nil {
			g.log.Warn("mcpbind: sending notifications/tools/list_changed", "error", err)
		}
	}
	return changed
}

// transitioned reports a saved transition: a log record and OnTransition.
func (g *Gate) transitioned(ctx context.Context, tr Transition) {
	g.log.LogAttrs(ctx, slog.LevelInfo, "mcpbind: transition",
		slog.String("key", tr.Key), slog.String("tool", tr.Tool), slog.String("event", tr.Event.Type),
		slog.Any("from", tr.From), slog.Any("to", tr.To))
	if g.onTrans != nil {
		g.onTrans(ctx, tr)
	}
}

// TransitionNote is the gate's note under [MetaKey] in the _meta of a call
// result that moved the workflow, for clients that do not follow
// notifications/tools/list_changed.
type TransitionNote struct {
	Event        string `json:"event"`
	From         any    `json:"from"`
	To           any    `json:"to"`
	ToolsChanged bool   `json:"toolsChanged"` // the session's visible tools changed
}

// withNote returns a copy of res with note under MetaKey in _meta.
func withNote(res *mcp.CallToolResult, note any) *mcp.CallToolResult {
	out := *res
	meta := maps.Clone(map[string]any(res.Meta))
	if meta == nil {
		meta = map[string]any{}
	}
	meta[MetaKey] = note
	out.Meta = meta
	return &out
}

// update saves a change to a workflow with compare-and-swap. change maps
// the current view to the new state and record (a nil state: nothing to
// save); on a conflict (another call of the workflow saved first) the gate
// reloads and calls change again on the newer view. update returns the
// view change was last called with and the saved view (nil if none).
func (g *Gate) update(ctx context.Context, t target, cur *view, change func(*view) (statechart.State, record, error)) (from, to *view, err error) {
	// A change after the tool ran must be recorded even if the client
	// goes away.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
	defer cancel()
	var sess *session
	var key string
	if t.handle != "" {
		key = g.handleKey(t.handle)
	} else {
		sess = g.ensureSession(t.ss)
		key = sess.key
	}
	for attempt := 0; ; attempt++ {
		if cur.key != key {
			cur = cur.withKey(key)
		}
		ns, rec, err := change(cur)
		if err != nil || ns == nil {
			return cur, nil, err
		}
		nv, err := g.newView(key, ns, rec, nil, 0)
		if err != nil {
			return cur, nil, err
		}
		ver, err := g.store.CompareAndSwap(ctx, key, cur.version, nv.data)
		if err == nil {
			nv.version = ver
			if sess == nil {
				g.handled.put(key, nv)
			} else {
				g.decoded.Store(key, nv)
				sess.saved.Store(true)
				if g.isClosed(sess) {
					// The session ended while the call ran.
					g.forget(t.ss, sess)
				}
			}
			return cur, nv, nil
		}
		if !isConflict(err) {
			return cur, nil, fmt.Errorf("saving the workflow state: %w", err)
		}
		if attempt >= g.retries {
			return cur, nil, fmt.Errorf("saving the workflow state: gave up after %d conflicts: %w", attempt+1, err)
		}
		backoff(ctx, attempt)
		next, err := g.load(ctx, t)
		if err != nil {
			return cur, nil, err
		}
		cur = next
	}
}

// apply sends an event to a workflow and saves the result (see update). It
// returns the state it was applied to, the new state (nil if the event
// changed nothing) and the transition, as recorded in the run history.
func (g *Gate) apply(ctx context.Context, t target, cur *view, ev statechart.Event, tool string) (from, to *view, tr Transition, err error) {
	from, to, err = g.update(ctx, t, cur, func(cur *view) (statechart.State, record, error) {
		ns, err := g.engine.Send(ctx, cur.state, ev, g.now())
		if err != nil {
			return nil, record{}, fmt.Errorf("the machine failed on event %q: %w", ev.Type, err)
		}
		snap, err := ns.MarshalJSON()
		if err != nil {
			return nil, record{}, fmt.Errorf("marshaling the new state: %w", err)
		}
		if bytes.Equal(snap, cur.rec.snap) {
			return nil, record{}, nil
		}
		tr = Transition{Key: cur.key, Tool: tool, Event: ev, From: cur.state.Value(), To: ns.Value(), Time: g.now()}
		rec := record{snap: snap}
		if g.hlimit > 0 {
			entry, err := appendTransition(nil, tr)
			if err != nil {
				return nil, record{}, fmt.Errorf("recording the transition: %w", err)
			}
			rec.history = appendHistory(cur.rec.history, entry, g.hlimit)
		}
		if len(cur.rec.calls) > 0 {
			ids := ns.StateIDs()
			rec.calls = carryCalls(cur.rec.calls, func(id string) bool { return slices.Contains(ids, id) })
		}
		return ns, rec, nil
	})
	return from, to, tr, err
}

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }

// backoff sleeps a little, more after each conflict, with jitter.
func backoff(ctx context.Context, attempt int) {
	d := 20 * time.Microsecond << min(attempt, 9)
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// notSaved returns the result of a call that ran but whose event could not
// be recorded: the tool's own result, plus a note in the content and under
// MetaKey in _meta. It is not an error result: the tool did its work.
func (g *Gate) notSaved(res *mcp.CallToolResult, tool string, ev statechart.Event, v *view, err error) *mcp.CallToolResult {
	state := v.state.Value()
	g.log.Error("mcpbind: a tool ran but its event was not recorded", "tool", tool, "event", ev.Type, "key", v.key, "error", err)
	out := *res
	out.Content = append(slices.Clip(res.Content), &mcp.TextContent{Text: fmt.Sprintf(
		"Note: %s ran, but the server could not record it in the workflow, so event %q was not applied and the workflow is still in state %s.",
		tool, ev.Type, stateText(state))})
	return withNote(&out, map[string]any{"code": CodeStateNotSaved, "event": ev.Type, "state": state})
}

// refuse answers a call of a hidden tool, without running it.
func (g *Gate) refuse(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest, r *rules, t target, v *view, ti *toolInfo) (mcp.Result, error) {
	name := req.Params.Name
	tools, err := g.registered(ctx, next, req)
	if err != nil {
		g.log.Warn("mcpbind: listing tools for a refusal", "error", err)
	} else if !slices.Contains(tools, name) {
		// Not a tool of this server: let the server report it.
		return next(ctx, "tools/call", req)
	}
	ref := Refusal{Code: CodeForbidden, Tool: name, Workflow: t.handle, State: v.state.Value(), Path: []Step{}, Instructions: g.instructions(v)}
	ref.Available = g.available(ctx, r, v, tools)
	var moves []move
	for _, tool := range tools {
		if tti := g.info(r, tool, true); tti.event != "" {
			moves = append(moves, move{tool: tool, info: tti})
		}
	}
	path, found := g.model.shortestPath(v.active, ti, moves)
	ref.Reachable = found
	if path != nil {
		ref.Path = path
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: ref.text(ti)}},
		StructuredContent: ref,
	}, nil
}

// registered lists the names of the server's tools, through the handlers
// below the gate.
func (g *Gate) registered(ctx context.Context, next mcp.MethodHandler, req *mcp.CallToolRequest) ([]string, error) {
	lreq := &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{}}
	var names []string
	for page := 0; page < 1000; page++ {
		res, err := next(ctx, "tools/list", lreq)
		if err != nil {
			return nil, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok || lr == nil {
			return nil, fmt.Errorf("tools/list returned %T", res)
		}
		for _, t := range lr.Tools {
			names = append(names, t.Name)
		}
		if lr.NextCursor == "" {
			break
		}
		lreq = &mcp.ListToolsRequest{Session: req.Session, Extra: req.Extra, Params: &mcp.ListToolsParams{Cursor: lr.NextCursor}}
	}
	return names, nil
}

// text is the refusal in prose, for the model.
func (ref *Refusal) text(ti *toolInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tool %q is not available in the current workflow state (%s).", ref.Tool, stateText(ref.State))
	switch {
	case !ref.Reachable:
		b.WriteString(" No sequence of tool calls makes it available from this state.")
	case len(ref.Path) == 0:
		fmt.Fprintf(&b, " The workflow does not accept its event %q now: a guard refuses it.", ti.event)
	default:
		b.WriteString(" To make it available, call ")
		for i, s := range ref.Path {
			if i > 0 {
				b.WriteString(", then ")
			}
			b.WriteString(s.Tool)
			switch len(s.Guards) {
			case 0:
			case 1:
				fmt.Fprintf(&b, " (if guard %q allows)", s.Guards[0])
			default:
				fmt.Fprintf(&b, " (if guards %s allow)", strings.Join(quoteAll(s.Guards), " and "))
			}
		}
		b.WriteString(".")
	}
	writeGuidance(&b, ref.Available, ref.Instructions)
	return b.String()
}

// writeGuidance ends a refusal's text with the tools available now and the
// instructions of the active states.
func writeGuidance(b *strings.Builder, available, instructions []string) {
	if len(available) == 0 {
		b.WriteString("\nTools available now: none.")
	} else {
		b.WriteString("\nTools available now: " + strings.Join(available, ", ") + ".")
	}
	for _, in := range instructions {
		b.WriteString("\nInstructions: " + in)
	}
}

// stateText writes a state value for prose: "empty" or {"payment":"card"}.
func stateText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// decodeJSON decodes a call's arguments for the event; invalid or absent
// arguments give an empty object.
func decodeJSON(raw json.RawMessage) any {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return map[string]any{}
	}
	return v
}

// normalize turns a structured result (any Go value) into JSON-shaped
// values (maps, slices, float64...), as guards expect.
func normalize(v any) any {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return decodeJSON(raw)
	}
	if jsonShaped(v, 0) {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// jsonShaped reports whether v is already made of the values
// encoding/json decodes into (and is not too deep to check).
func jsonShaped(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil, string, float64, bool:
		return true
	case map[string]any:
		for _, e := range x {
			if !jsonShaped(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !jsonShaped(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
