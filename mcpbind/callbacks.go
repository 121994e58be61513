// This file makes the user's callbacks (the func fields of Options and of
// StartLimit) safe to call: a callback that panics is recovered, logged
// with its name and stack, and the gate goes on as if it had not been
// set for that call. A panic in a callback would otherwise end the
// process (go-sdk does not recover a handler's panic), and with it every
// session, after a transition the callback was only told about.

package mcpbind

import (
	"context"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guardCallbacks does for the gate's own callbacks what the core's does.
func (g *Gate) guardCallbacks(o *Options) {
	if f := o.AfterCall; f != nil {
		// No follow-up events; the call's own event is recorded already.
		g.afterCall = func(ctx context.Context, c Call) (fus []FollowUp) {
			defer func() {
				if r := recover(); r != nil {
					g.core.CallbackPanicked(ctx, "AfterCall", r)
					fus = nil
				}
			}()
			return f(ctx, c)
		}
	}
	if g.startLimit != nil && o.StartLimit != nil && o.StartLimit.Client != nil {
		f := o.StartLimit.Client
		// "" is the name all clients without one share: the limit holds.
		g.startLimit.client = func(req *mcp.CallToolRequest) (name string) {
			defer func() {
				if r := recover(); r != nil {
					g.core.CallbackPanicked(context.Background(), "StartLimit.Client", r)
					name = ""
				}
			}()
			return f(req)
		}
	}
}

// sessionKey is Options.SessionKey as the core calls it: with a
// connection, recovering a panic.
func (g *Gate) sessionKey(f func(*mcp.ServerSession) string) func(core.Conn) string {
	if f == nil {
		return nil
	}
	// "" is the default name: the session's own workflow.
	return func(c core.Conn) (name string) {
		ss, ok := c.(*mcp.ServerSession)
		if !ok {
			return ""
		}
		defer func() {
			if r := recover(); r != nil {
				g.core.CallbackPanicked(context.Background(), "SessionKey", r)
				name = ""
			}
		}()
		return f(ss)
	}
}
