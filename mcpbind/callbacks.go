// This file makes the user's callbacks (the func fields of Options and of
// StartLimit) safe to call: a callback that panics is recovered, logged
// with its name and stack, and the gate goes on as if it had not been
// set for that call. A panic in a callback would otherwise end the
// process (go-sdk does not recover a handler's panic), and with it every
// session, after a transition the callback was only told about.

package mcpbind

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guardCallbacks replaces the callbacks of the core by versions that
// recover a panic. It runs once the logger is known.
func (g *gateCore) guardCallbacks(o *coreOptions) {
	if f := o.OnTransition; f != nil {
		// The transition is saved before OnTransition is called: a panic
		// loses nothing of it.
		g.onTrans = func(ctx context.Context, tr Transition) {
			defer func() {
				if r := recover(); r != nil {
					g.callbackPanicked(ctx, "OnTransition", r)
				}
			}()
			f(ctx, tr)
		}
	}
	if f := o.CheckpointNotice; f != nil {
		// The default notice is written instead.
		g.checkpointText = func(l CallLimit) (text string, ok bool) {
			defer func() {
				if r := recover(); r != nil {
					g.callbackPanicked(context.Background(), "CheckpointNotice", r)
					text, ok = "", false
				}
			}()
			return f(l), true
		}
	}
	if f := o.Now; f != nil {
		g.now = func() (t time.Time) {
			defer func() {
				if r := recover(); r != nil {
					g.callbackPanicked(context.Background(), "Now", r)
					t = time.Now()
				}
			}()
			return f()
		}
	}
}

// guardCallbacks does for the gate's own callbacks what the core's does.
func (g *Gate) guardCallbacks(o *Options) {
	if f := o.AfterCall; f != nil {
		// No follow-up events; the call's own event is recorded already.
		g.afterCall = func(ctx context.Context, c Call) (fus []FollowUp) {
			defer func() {
				if r := recover(); r != nil {
					g.core.callbackPanicked(ctx, "AfterCall", r)
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
					g.core.callbackPanicked(context.Background(), "StartLimit.Client", r)
					name = ""
				}
			}()
			return f(req)
		}
	}
}

// sessionKey is Options.SessionKey as the core calls it: with a
// connection, recovering a panic.
func (g *Gate) sessionKey(f func(*mcp.ServerSession) string) func(conn) string {
	if f == nil {
		return nil
	}
	// "" is the default name: the session's own workflow.
	return func(c conn) (name string) {
		ss, ok := c.(*mcp.ServerSession)
		if !ok {
			return ""
		}
		defer func() {
			if r := recover(); r != nil {
				g.core.callbackPanicked(context.Background(), "SessionKey", r)
				name = ""
			}
		}()
		return f(ss)
	}
}

// callbackPanicked logs a panic recovered from a callback.
func (g *gateCore) callbackPanicked(ctx context.Context, name string, r any) {
	g.log.LogAttrs(ctx, slog.LevelError, "mcpbind: a callback panicked; the gate recovered and went on without it",
		slog.String("callback", "Options."+name), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
}
