// This file defines how the gateway learns that a session of its server
// ended without a goroutine waiting on each session.

package gateway

import (
	"context"
	"log/slog"
)

// sessionDisconnected is the message go-sdk's server logs, at Info with
// the session's id as "session_id", when it forgets a session that ended
// (closed by its client's DELETE, by an idle timeout, a keepalive
// failure or the server): the moment [mcp.ServerSession.Wait] returns.
const sessionDisconnected = "server session disconnected"

// endHook is the handler of the server's logger: it logs what the
// logger given to the server logs, and tells the gateway of each session
// the server disconnects. go-sdk has no other callback when a session
// ends; waiting on [mcp.ServerSession.Wait] costs a goroutine (2 KB of
// stack at least) per session.
type endHook struct {
	slog.Handler // the logger's
	g            *Gateway
}

// Enabled reports true at Info, the level of sessionDisconnected, once
// someone asked to be told of sessions ending (onSessionEnd), and
// otherwise whether the logger's handler is enabled. Until then, the
// server's log costs what the logger makes it cost (a record made and
// handled deepens the logging goroutine's stack, which stays grown in
// a stdio session's goroutine).
func (h endHook) Enabled(ctx context.Context, l slog.Level) bool {
	return l == slog.LevelInfo && h.g.watching.Load() || h.Handler.Enabled(ctx, l)
}

// Handle tells the gateway of a session disconnected, and passes r on if
// the logger's handler is enabled at its level.
func (h endHook) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && r.Message == sessionDisconnected {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key != "session_id" {
				return true
			}
			if id := a.Value.String(); id != "" {
				h.g.sessionEnded(id)
			}
			return false
		})
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs returns the hook in front of the logger's handler with attrs.
func (h endHook) WithAttrs(attrs []slog.Attr) slog.Handler {
	return endHook{Handler: h.Handler.WithAttrs(attrs), g: h.g}
}

// WithGroup returns the hook in front of the logger's handler with a group.
func (h endHook) WithGroup(name string) slog.Handler {
	return endHook{Handler: h.Handler.WithGroup(name), g: h.g}
}

// onSessionEnd has f called with the id of each session of the server
// that ends (sessions without an id, such as stdio's, excepted). f runs
// while go-sdk's server holds its lock: it must not call the server.
func (g *Gateway) onSessionEnd(f func(id string)) {
	g.endsMu.Lock()
	defer g.endsMu.Unlock()
	g.ends = append(g.ends, f)
	g.watching.Store(true)
}

// sessionEnded tells whoever asked (onSessionEnd) that session id ended.
func (g *Gateway) sessionEnded(id string) {
	g.endsMu.RLock()
	defer g.endsMu.RUnlock()
	for _, f := range g.ends {
		f(id)
	}
}
