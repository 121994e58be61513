// This file records gated calls in their workflow's run history
// (Options.AuditCalls): those that ran and those that were refused, not
// only the transitions.

package mcpbind

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
)

// callEntry is the history entry of a call that moved nothing.
func (g *gateCore) callEntry(c *gatedCall, v *view, outcome string) []byte {
	return core.AppendTransition(nil, Transition{Tool: c.name, By: c.by, Outcome: outcome, From: v.state.Value(), Time: g.now()})
}

// auditVerdict records a refused call (not the server's own answer to a
// name it does not have).
func (g *Gate) auditVerdict(ctx context.Context, c *gatedCall, v *view, vd *verdict) {
	if vd.answer != nil { // the door's own answer: a refusal only if it carries one
		ref, _ := RefusalOf(asResult(mcpResult(vd)))
		vd = &verdict{ref: ref, err: vd.err}
	}
	g.core.auditRefusal(ctx, c, v, vd)
}

// auditRefusal records a refused call: its refusal's code, or REFUSED for
// a workflow_transition refused with a text only.
func (g *gateCore) auditRefusal(ctx context.Context, c *gatedCall, v *view, vd *verdict) {
	if !g.audit || v == nil {
		return
	}
	code := ""
	if vd.ref != nil {
		code = vd.ref.Code
	} else if c.kind == callTransition && vd.err == nil {
		code = "REFUSED"
	}
	if code != "" {
		g.auditCall(ctx, c, v, code)
	}
}

func asResult(r mcp.Result) *mcp.CallToolResult {
	cr, _ := r.(*mcp.CallToolResult)
	return cr
}

// auditCall appends a call's entry to its workflow's history, with
// compare-and-swap (keeping whatever lease the record holds). A failure is
// logged: the call's answer does not depend on it.
func (g *gateCore) auditCall(ctx context.Context, c *gatedCall, v *view, outcome string) {
	if !g.audit || g.hlimit == 0 {
		return
	}
	ar := core.NewAfterRun(ctx, g.timeout)
	defer ar.Stop()
	ctx = ar
	_, err := g.rewrite(ctx, c.target, v, func(v *view, snap []byte) (core.Record, bool, error) {
		rec := v.rec
		rec.Snap = snap
		rec.History = core.AppendHistory(v.rec.History, g.callEntry(c, v, outcome), g.hlimit, g.hbytes)
		return rec, false, nil
	})
	if err != nil && !isConflict(err) {
		g.log.Warn("mcpbind: recording a call in the run history", "key", fingerprint(v.key), "tool", c.name, "error", err)
	}
}
