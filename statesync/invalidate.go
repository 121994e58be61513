// This file defines causal invalidation: the notice prepended to the result
// of a successful call, its formatters, the observer and notification sink,
// and the hook through which a gate adds the patterns of a transition.

package statesync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Event describes one invalidation: a successful call of the tool
// CausedBy made the data named by Patterns stale.
type Event struct {
	// CausedBy is the canonical name of the tool called, e.g. "tasks.update".
	CausedBy string
	// Tool is its wire name, e.g. "tasks_update".
	Tool string
	// Patterns are the invalidated globs, in order: those of the matching
	// policy, then the tool's own, then those added with [Invalidate];
	// without duplicates.
	Patterns []string
	// Time is when the call completed.
	Time time.Time
	// Session is the session of the call, or nil.
	Session *mcp.ServerSession
}

// Stale reports whether e makes the data of the tool with canonical name
// key stale: whether one of its patterns matches key ([Match]).
func (e Event) Stale(key string) bool {
	return slices.ContainsFunc(e.Patterns, func(p string) bool { return Match(p, key) })
}

// SystemNotice formats e the way MCP Fusion's State Sync documents it:
//
//	[System: Cache invalidated for sprints.*, tasks.* — caused by tasks.update]
//
// (patterns joined with ", ", an em dash before "caused by"). It is the
// default [Options.Format].
func SystemNotice(e Event) string {
	return "[System: Cache invalidated for " + strings.Join(e.Patterns, ", ") + " — caused by " + e.CausedBy + "]"
}

// XMLNotice formats e as a self-closing XML element, with both attributes
// escaped:
//
//	<cache_invalidation cause="tasks.update" domains="tasks.*, sprints.*" />
func XMLNotice(e Event) string {
	return `<cache_invalidation cause="` + escapeAttr(e.CausedBy) + `" domains="` + escapeAttr(strings.Join(e.Patterns, ", ")) + `" />`
}

var attrEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&quot;", `'`, "&apos;")

func escapeAttr(s string) string { return attrEscaper.Replace(s) }

// ResourcesUpdated is the method of the notifications a sink receives.
const ResourcesUpdated = "notifications/resources/updated"

// A Notification is what [Options.Sink] receives for each invalidated
// pattern.
type Notification struct {
	// Method is always [ResourcesUpdated].
	Method string
	// URI is <scheme>://stale/<pattern>, e.g. statesync://stale/sprints.*.
	URI string
	// Pattern is the invalidated glob.
	Pattern string
	// CausedBy is the canonical name of the tool whose call caused it.
	CausedBy string
	// Session is the session of the call, or nil.
	Session *mcp.ServerSession
}

// ServerSink returns a sink for [Options.Sink] that sends each notification
// with [mcp.Server.ResourceUpdated], that is, to the sessions of s that
// subscribed (resources/subscribe) to its URI. The server needs a
// SubscribeHandler in its options for clients to be able to subscribe.
func ServerSink(s *mcp.Server) func(context.Context, Notification) error {
	return func(ctx context.Context, n Notification) error {
		return s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: n.URI})
	}
}

// ErrNoLayer is returned by [Invalidate] when ctx does not come from a
// tools/call that a [Layer] middleware wraps.
var ErrNoLayer = errors.New("statesync: no layer wraps this tools/call")

// collectorKey is the context key of the collector of a tools/call.
type collectorKey struct{}

// collector gathers the patterns added with Invalidate during one call.
type collector struct {
	mu       sync.Mutex
	patterns []string
}

func (c *collector) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.patterns
}

// Invalidate adds patterns to the invalidation of the tools/call that ctx
// belongs to. It is the hook for a gate that runs inside the layer's
// middleware (see [Layer.Middleware]): when a successful call makes its
// statechart transition, the gate calls Invalidate with the patterns the
// binding declares for that transition (cart_checkout invalidating
// "cart.*", say). They are added to the tool's own patterns, in one notice,
// one [Event] and one set of notifications; if the call's final result is an
// error, nothing is invalidated after all. A tool handler receives the same
// context and may call Invalidate too, for what only the call itself knows
// it changed.
//
// Invalidate returns [ErrNoLayer] when no layer wraps the call (none is
// configured, or it was installed inside the gate rather than outside), and
// an error naming the first invalid pattern, in which case nothing is added.
// Check patterns when the gate is built with [ValidatePattern].
func Invalidate(ctx context.Context, patterns ...string) error {
	c, _ := ctx.Value(collectorKey{}).(*collector)
	if c == nil {
		return ErrNoLayer
	}
	for k, p := range patterns {
		if msg := invalidatesProblem(k, p); msg != "" {
			return errors.New("statesync: Invalidate: " + msg)
		}
	}
	c.mu.Lock()
	c.patterns = dedupe(c.patterns, patterns)
	c.mu.Unlock()
	return nil
}

// DecorateResult applies the layer to the result of a tools/call outside of
// [Layer.Middleware], for custom pipelines. If res is a completed, successful
// result (IsError false, no pending input requests) and the tool's resolution
// plus extra name patterns to invalidate (an invalid extra pattern is logged
// and ignored), it tells the observer and the sink,
// and returns a copy of res with the notice prepended to its content.
// Otherwise it returns res unchanged. res itself is never modified.
func (l *Layer) DecorateResult(ctx context.Context, req *mcp.CallToolRequest, res *mcp.CallToolResult, extra ...string) *mcp.CallToolResult {
	if l == nil || req == nil || req.Params == nil || res == nil || res.IsError || res.NeedsInput() || res.InputRequests != nil {
		return res
	}
	r := &l.resolve(req.Params.Name).res
	patterns := r.invalidates
	for k, p := range extra {
		if msg := invalidatesProblem(k, p); msg != "" {
			l.logger.Error("statesync: DecorateResult: ignoring an extra pattern: "+msg, "tool", r.Tool)
			continue
		}
		if !slices.Contains(patterns, p) {
			patterns = append(slices.Clip(patterns), p)
		}
	}
	if len(patterns) == 0 {
		return res
	}
	ev := Event{
		CausedBy: r.Key,
		Tool:     r.Tool,
		Patterns: slices.Clone(patterns),
		Time:     l.now(),
		Session:  req.Session,
	}
	notice := l.formatNotice(ev)
	l.observe(ev)
	l.notify(ctx, ev)
	if notice == "" {
		return res
	}
	out := *res
	out.Content = make([]mcp.Content, 0, len(res.Content)+1)
	out.Content = append(out.Content, &mcp.TextContent{Text: notice})
	out.Content = append(out.Content, res.Content...)
	return &out
}

// formatNotice runs the formatter; a panicking formatter is logged and
// replaced by SystemNotice.
func (l *Layer) formatNotice(ev Event) (s string) {
	defer func() {
		if v := recover(); v != nil {
			l.logger.Error("statesync: Format panicked; using SystemNotice", "panic", fmt.Sprint(v), "tool", ev.Tool)
			s = SystemNotice(ev)
		}
	}()
	ev.Patterns = slices.Clone(ev.Patterns)
	return l.format(ev)
}

// observe calls OnInvalidation, recovering and logging a panic.
func (l *Layer) observe(ev Event) {
	if l.observer == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			l.logger.Error("statesync: OnInvalidation panicked", "panic", fmt.Sprint(v), "tool", ev.Tool)
		}
	}()
	ev.Patterns = slices.Clone(ev.Patterns)
	l.observer(ev)
}

// notify sends one notification per pattern to the sink, logging errors and
// recovering panics one notification at a time.
func (l *Layer) notify(ctx context.Context, ev Event) {
	if l.sink == nil {
		return
	}
	for _, p := range ev.Patterns {
		n := Notification{
			Method:   ResourcesUpdated,
			URI:      l.scheme + "://stale/" + p,
			Pattern:  p,
			CausedBy: ev.CausedBy,
			Session:  ev.Session,
		}
		l.send(ctx, n)
	}
}

func (l *Layer) send(ctx context.Context, n Notification) {
	defer func() {
		if v := recover(); v != nil {
			l.logger.Error("statesync: Sink panicked", "panic", fmt.Sprint(v), "uri", n.URI)
		}
	}()
	if err := l.sink(ctx, n); err != nil {
		l.logger.Error("statesync: Sink failed", "error", err, "uri", n.URI)
	}
}
