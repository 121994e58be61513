// This file records calls that moved nothing in the run history
// (Options.AuditCalls).

package core

import (
	"context"

	"github.com/chartgate/chartgate/gate"
)

// callEntry is the history entry of a call that moved nothing.
func (g *Core) callEntry(c *Call, v *View, outcome string) []byte {
	return AppendTransition(nil, gate.Transition{Tool: c.Name, By: c.By, Outcome: outcome, From: v.State.Value(), Time: g.Now()})
}

// AuditRefusal records a refused call: its refusal's code, or REFUSED for
// a workflow_transition refused with a text only.
func (g *Core) AuditRefusal(ctx context.Context, c *Call, v *View, vd *Verdict) {
	if !g.audit || v == nil {
		return
	}
	code := ""
	if vd.Ref != nil {
		code = vd.Ref.Code
	} else if c.Kind == CallTransition && vd.Err == nil {
		code = "REFUSED"
	}
	if code != "" {
		g.auditCall(ctx, c, v, code)
	}
}

// auditCall appends a call's entry to its workflow's history, with
// compare-and-swap (keeping whatever lease the record holds). A failure is
// logged: the call's answer does not depend on it.
func (g *Core) auditCall(ctx context.Context, c *Call, v *View, outcome string) {
	if !g.audit || g.hlimit == 0 {
		return
	}
	ar := NewAfterRun(ctx, g.Timeout)
	defer ar.Stop()
	ctx = ar
	_, err := g.Rewrite(ctx, c.Target, v, func(v *View, snap []byte) (Record, bool, error) {
		rec := v.Rec
		rec.Snap = snap
		rec.History = AppendHistory(v.Rec.History, g.callEntry(c, v, outcome), g.hlimit, g.hbytes)
		return rec, false, nil
	})
	if err != nil && !gate.IsConflict(err) {
		g.Log.Warn("mcpbind: recording a call in the run history", "key", Fingerprint(v.Key), "tool", c.Name, "error", err)
	}
}
