// This file makes the user's callbacks safe to call: a callback that
// panics is recovered, logged with its name and stack, and the gate goes
// on as if it had not been set for that call.

package core

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/chartgate/chartgate/gate"
)

// guardCallbacks replaces the callbacks of the core by versions that
// recover a panic. It runs once the logger is known.
func (g *Core) guardCallbacks(o *Options) {
	if f := o.OnTransition; f != nil {
		// The transition is saved before OnTransition is called: a panic
		// loses nothing of it.
		g.onTrans = func(ctx context.Context, tr gate.Transition) {
			defer func() {
				if r := recover(); r != nil {
					g.CallbackPanicked(ctx, "OnTransition", r)
				}
			}()
			f(ctx, tr)
		}
	}
	if f := o.CheckpointNotice; f != nil {
		// The default notice is written instead.
		g.CheckpointText = func(l gate.CallLimit) (text string, ok bool) {
			defer func() {
				if r := recover(); r != nil {
					g.CallbackPanicked(context.Background(), "CheckpointNotice", r)
					text, ok = "", false
				}
			}()
			return f(l), true
		}
	}
	if f := o.Now; f != nil {
		g.Now = func() (t time.Time) {
			defer func() {
				if r := recover(); r != nil {
					g.CallbackPanicked(context.Background(), "Now", r)
					t = time.Now()
				}
			}()
			return f()
		}
	}
}

// CallbackPanicked logs a panic recovered from a callback.
func (g *Core) CallbackPanicked(ctx context.Context, name string, r any) {
	g.Log.LogAttrs(ctx, slog.LevelError, "mcpbind: a callback panicked; the gate recovered and went on without it",
		slog.String("callback", "Options."+name), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
}
