// This file defines the change feed of a store (Watcher, Change, Feed) and
// how a gate follows it: when a workflow's record is written by another
// instance (or, here, outside the session's own call: an approval, a
// Gate.Send), the sessions of this instance whose workflow it is get
// notifications/tools/list_changed if their tools changed.

package mcpbind

import (
	"context"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// watchers implements core.Options.Watchers: the sessions of this
// instance whose workflow is stored under key, told by tell.
func (g *Gate) watchers(key string) core.Teller {
	sessions := g.sessionsOfKey(key)
	if len(sessions) == 0 {
		return nil
	}
	return func(ctx context.Context, before, after *core.View, except core.Conn) {
		g.tell(ctx, sessions, before, after, except)
	}
}

// tell tells sessions, but for except, of a change from before to after
// made elsewhere: list_changed if their tools differ, and the new state's
// guidance.
func (g *Gate) tell(ctx context.Context, sessions []sessionTarget, before, after *core.View, except core.Conn) {
	r := g.core.Rules.Load()
	toolsChanged := !g.signature(ctx, r, before).Equal(g.signature(ctx, r, after))
	guidance := g.guidance(before, after)
	if !toolsChanged && guidance == nil {
		return
	}
	for _, st := range sessions {
		if st.ss == except {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, g.core.Timeout)
		if toolsChanged && st.a.send != nil && g.listsVary(st.ss) {
			n := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: st.ss, Params: &mcp.ToolListChangedParams{}}
			if _, err := st.a.send(sctx, "notifications/tools/list_changed", n); err != nil && ctx.Err() == nil {
				g.core.Log.Warn("mcpbind: sending notifications/tools/list_changed", "error", err)
			}
		}
		// The new state's guidance, as a log message: the one
		// notification a server may send unasked that carries text. The
		// SDK sends it only to a client that set a log level; 2026-07-28
		// deprecates logging (SEP-2577), so its sessions get none.
		if guidance != nil && sessionful(st.ss) {
			if err := sendGuidance(sctx, st.ss, guidance); err != nil && ctx.Err() == nil {
				g.core.Log.Warn("mcpbind: sending the new state's guidance", "error", err)
			}
		}
		cancel()
	}
}
