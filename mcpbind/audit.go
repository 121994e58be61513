// This file records gated calls in their workflow's run history
// (Options.AuditCalls): those that ran and those that were refused, not
// only the transitions.

package mcpbind

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
)

// auditVerdict records a refused call (not the server's own answer to a
// name it does not have).
func (g *Gate) auditVerdict(ctx context.Context, c *core.Call, v *core.View, vd *core.Verdict) {
	if vd.Answer != nil { // the door's own answer: a refusal only if it carries one
		ref, _ := RefusalOf(asResult(mcpResult(vd)))
		vd = &core.Verdict{Ref: ref, Err: vd.Err}
	}
	g.core.AuditRefusal(ctx, c, v, vd)
}

func asResult(r mcp.Result) *mcp.CallToolResult {
	cr, _ := r.(*mcp.CallToolResult)
	return cr
}
