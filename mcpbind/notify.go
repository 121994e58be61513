// This file tells others what a call did to its workflow: list_changed to
// the calling session when its tools changed, the statesync layer's
// invalidation patterns, the log record and OnTransition, and the note in
// the call's _meta.

package mcpbind

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statesync"
)

// notify is the last step of a call: it tells the calling session, the
// statesync layer, the log and OnTransition what the call did, and returns
// the call's answer. before is the workflow as the call found it.
func (g *Gate) notify(ctx context.Context, c *core.Call, before *core.View, out core.Committed, res mcp.Result, err error) (mcp.Result, error) {
	after := out.After
	if after == nil {
		after = before
	}
	if out.Tr != nil {
		g.invalidate(ctx, c.Name, c.Info)
	}
	changed := g.toolsChanged(ctx, c, before, after)
	if out.Tr != nil {
		g.core.Transitioned(ctx, *out.Tr)
	}
	if c.Kind == core.CallTransition {
		if out.Tr != nil && g.elicit {
			var asked *mcp.CallToolResult
			if out, asked = g.askApproval(ctx, c, out); asked != nil {
				return asked, nil
			}
		}
		return g.transitionAnswer(ctx, c, out, changed), nil
	}
	cr, _ := res.(*mcp.CallToolResult)
	if cr != nil && len(out.Checkpoints) > 0 {
		cr = g.withCheckpoints(cr, c, out.Checkpoints)
		res = cr
	}
	if cr != nil && len(out.Notices) > 0 {
		cr = withNotices(cr, out.Notices)
		res = cr
	}
	switch {
	case out.Err != nil:
		return g.notSaved(cr, c.Name, out.Ev, out.From, out.Err), nil
	case out.Tr != nil:
		return withNote(cr, TransitionNote{Event: out.Ev.Type, From: out.Tr.From, To: out.Tr.To, ToolsChanged: changed}), nil
	}
	return res, err
}

// withCheckpoints returns a copy of a result with a checkpoint notice
// appended for each budget that warns and that the call went past.
func (g *Gate) withCheckpoints(res *mcp.CallToolResult, c *core.Call, lims []CallLimit) *mcp.CallToolResult {
	out := *res
	out.Content = slices.Clip(res.Content)
	transitionTool := ""
	if c.Wf != nil {
		transitionTool = c.Wf.TransitionName
	}
	for _, l := range lims {
		text := checkpointNotice(l, transitionTool)
		if g.core.CheckpointText != nil {
			if t, ok := g.core.CheckpointText(l); ok {
				text = t
			}
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: text})
	}
	return &out
}

// invalidate reports the patterns a tool's binding declares for its saved
// transition to the statesync layer wrapping the gate, which adds them to the
// call's invalidation notice. Without a layer around the gate (none
// configured, or one installed inside the gate) there is nothing to do, but
// the declaration is lost, so the gate logs it once.
func (g *Gate) invalidate(ctx context.Context, tool string, ti *core.ToolInfo) {
	if len(ti.Invalidates) == 0 {
		return
	}
	err := statesync.Invalidate(ctx, ti.Invalidates...)
	switch {
	case err == nil:
	case errors.Is(err, statesync.ErrNoLayer):
		if g.noLayerWarned.CompareAndSwap(false, true) {
			g.core.Log.Warn("mcpbind: a binding declares invalidation patterns but no statesync layer wraps the gate, so they are dropped: install the layer after the gate (Gate.AttachWith), not before it; logged once",
				"tool", tool, "patterns", ti.Invalidates)
		}
	default: // the patterns were validated when bound: not expected
		g.core.Log.Error("mcpbind: reporting invalidation patterns", "tool", tool, "error", err)
	}
}

// toolsChanged reports whether the tools a workflow may call differ
// between two of its states, and if they do, sends
// notifications/tools/list_changed to the calling session (sessions only:
// with handles, under protocol 2026-07-28 and with Options.ListAllTools,
// lists do not vary).
func (g *Gate) toolsChanged(ctx context.Context, c *core.Call, from, to *core.View) bool {
	if from == to {
		return false
	}
	changed := !g.signature(ctx, c.Rules, from).Equal(g.signature(ctx, c.Rules, to))
	if d := mcpOf(c); changed && d != nil && d.a.send != nil && c.ListsVary {
		// The notification goes to this session only, on the request's
		// context (over Streamable HTTP: on the POST's stream), before the
		// result.
		n := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: d.req.Session, Params: &mcp.ToolListChangedParams{}}
		if _, err := d.a.send(ctx, "notifications/tools/list_changed", n); err != nil {
			g.core.Log.Warn("mcpbind: sending notifications/tools/list_changed", "error", err)
		}
	}
	return changed
}

// jobMoved tells the sessions of this process whose workflow a job's
// result moved that their tools changed.
func (g *Gate) jobMoved(ctx context.Context, c *core.Call, out core.Committed) {
	for _, st := range g.sessionsOfKey(c.Target.Key) {
		c.Door = &mcpDoor{g: g, a: st.a, req: &mcp.CallToolRequest{Session: st.ss}}
		c.ListsVary = g.listsVary(st.ss)
		g.toolsChanged(ctx, c, out.From, out.After)
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

// signature is what the visible set of a session depends on: which of the
// machine's tool patterns are listed by an active state, and which Go-bound
// and "can" tools are visible; or, when an active state's call limit is
// used up, which tools that send an event may still run. Equal signatures
// mean equal visible sets.
func (g *Gate) signature(ctx context.Context, r *core.Rules, v *core.View) core.Bitset {
	if c := v.Sig.Load(); c != nil && c.Rules == r {
		return c.Bits
	}
	// Without budgets and tools whose visibility depends on more than
	// the active states, the signature is that of the active states:
	// kept by them, for a machine of at most 64 nodes.
	byActive := len(r.SigTools) == 0 && !g.core.Limited() && len(v.Active) == 1
	if byActive {
		if sig, ok := r.ActiveSig(v.Active[0]); ok {
			return sig
		}
	}
	n := len(g.core.Patterns) + len(r.SigTools)
	var sig core.Bitset
	defer func() { v.Sig.Store(&core.SigCache{Rules: r, Bits: sig}) }()
	if lims := g.core.Exhausted(v); len(lims) > 0 {
		// Bit n marks the limited signature, which never equals another.
		sig = core.NewBitset(n + 1 + len(r.EventTools))
		sig.Set(n)
		for j, t := range r.EventTools {
			if g.core.Allowed(ctx, v, t, g.core.Info(r, t, false), lims, nil) {
				sig.Set(n + 1 + j)
			}
		}
		return sig
	}
	sig = core.NewBitset(n)
	for i, p := range g.core.Patterns {
		if p.Nodes.Intersects(v.Active) {
			sig.Set(i)
		}
	}
	for j, t := range r.SigTools {
		if g.core.Visible(ctx, v, t, g.core.Info(r, t, false)) {
			sig.Set(len(g.core.Patterns) + j)
		}
	}
	if byActive {
		r.KeepActiveSig(v.Active[0], sig)
	}
	return sig
}

// notSaved returns the result of a call that ran but whose event could not
// be recorded: the tool's own result, plus a note in the content and under
// MetaKey in _meta. It is not an error result: the tool did its work.
func (g *Gate) notSaved(res *mcp.CallToolResult, tool string, ev statechart.Event, v *core.View, err error) *mcp.CallToolResult {
	state := v.State.Value()
	g.core.Log.Error("mcpbind: a tool ran but its event was not recorded", "tool", tool, "event", ev.Type, "key", core.Fingerprint(v.Key), "error", err)
	out := *res
	out.Content = append(slices.Clip(res.Content), &mcp.TextContent{Text: fmt.Sprintf(
		"Note: %s ran, but the server could not record it in the workflow, so event %q was not applied and the workflow is still in state %s.",
		tool, ev.Type, core.StateText(state))})
	return withNote(&out, map[string]any{"code": CodeStateNotSaved, "event": ev.Type, "state": state})
}
