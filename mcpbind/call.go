// This file defines the path of a gated tools/call, from the workflow it
// names to the notification of the transition it caused.

package mcpbind

import (
	"context"
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/statechart"
)

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
