// This file defines the Layer, its options, canonical keys and policy
// resolution.

package statesync

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultCacheSize is the number of tool names whose resolution a Layer
// remembers when [Options.CacheSize] is zero.
const DefaultCacheSize = 2048

// DefaultURIScheme is the scheme of the resources/updated URIs a Layer
// sends when [Options.URIScheme] is empty: statesync://stale/<pattern>.
const DefaultURIScheme = "statesync"

// Options configure a [Layer]. The zero value, or a nil *Options, gives the
// defaults.
type Options struct {
	// Default is the cache directive of tools whose first matching policy
	// sets none, and of tools no policy matches. Empty means no directive:
	// such tools are listed unchanged.
	Default CacheControl

	// Separator is the separator of the default canonical key (see
	// [GroupAction]); empty means "_". It is ignored when Key is set.
	Separator string

	// Key maps a tool's wire name to the canonical dot-separated name that
	// policies match, that invalidation notices report as the cause, and
	// that a gate would key its bindings on. Nil means
	// GroupAction(Separator).
	Key func(tool string) string

	// Format renders the notice prepended to the result of a call that
	// invalidates something. Nil means [SystemNotice]; [XMLNotice] is the
	// XML-style alternative. An empty string means no notice; observers and
	// the sink are still told.
	Format func(Event) string

	// OnInvalidation, if set, is called once per successful call that
	// invalidates something, before the result is returned. A panic in it is
	// recovered and logged; the call is unaffected.
	OnInvalidation func(Event)

	// Sink, if set, is called once per invalidated pattern with a
	// notifications/resources/updated notification (see [ServerSink]). An
	// error or a panic is logged; the call is unaffected. It runs on the
	// request's goroutine and context, so that a notification sent from it
	// travels on the request's own stream.
	Sink func(context.Context, Notification) error

	// URIScheme is the scheme of the notifications' URIs,
	// <scheme>://stale/<pattern>. Empty means [DefaultURIScheme]; MCP Fusion
	// used "fusion".
	URIScheme string

	// CacheSize bounds the number of tool names whose resolution is
	// remembered, least recently used first out. Zero means
	// [DefaultCacheSize]; a negative size disables the cache.
	CacheSize int

	// Logger receives the overlap findings at build time (Warn) and the
	// panics and errors of observers and sinks (Error). Nil means
	// slog.Default().
	Logger *slog.Logger

	// Now stamps events. Nil means time.Now.
	Now func() time.Time
}

// A Layer adds cache-control signals to an MCP server built with the go-sdk:
// it decorates tools/list descriptions with their cache directive and
// prepends an invalidation notice to the results of successful calls that
// make other data stale. Install it with [Layer.Middleware].
//
// A Layer is safe for concurrent use. A nil *Layer is valid and does
// nothing: its middleware returns the next handler unchanged.
type Layer struct {
	policies  []compiledPolicy
	def       CacheControl
	key       func(string) string
	format    func(Event) string
	observer  func(Event)
	sink      func(context.Context, Notification) error
	scheme    string
	logger    *slog.Logger
	now       func() time.Time
	overlaps  []Overlap
	overlapEr error

	mu    sync.Mutex
	cache *lru // nil when disabled
	hints map[string]toolHints
	gen   uint64 // bumped by Declare
}

// New validates policies and options and builds a Layer. Every problem is
// reported at once, each with the index of its policy, as a *[ConfigError].
//
// New also runs [DetectOverlaps] on the policies and logs each finding at
// Warn level; [Layer.Overlaps] returns them.
func New(policies []Policy, opts *Options) (*Layer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	probs := validatePolicies(policies)
	probs = append(probs, validateDefault(o.Default)...)
	if o.URIScheme != "" && !validScheme(o.URIScheme) {
		probs = append(probs, Problem{-1, "URIScheme", fmt.Sprintf("URI scheme %q is invalid: it must be a letter followed by letters, digits, \"+\", \"-\" or \".\"", o.URIScheme)})
	}
	if o.Key == nil && strings.Contains(o.Separator, ".") {
		probs = append(probs, Problem{-1, "Separator", fmt.Sprintf("separator %q must not contain \".\"", o.Separator)})
	}
	if len(probs) > 0 {
		return nil, &ConfigError{Problems: probs}
	}
	l := &Layer{
		def:      o.Default,
		key:      o.Key,
		format:   o.Format,
		observer: o.OnInvalidation,
		sink:     o.Sink,
		scheme:   o.URIScheme,
		logger:   o.Logger,
		now:      o.Now,
		hints:    map[string]toolHints{},
	}
	if l.key == nil {
		sep := o.Separator
		if sep == "" {
			sep = "_"
		}
		l.key = GroupAction(sep)
	}
	if l.format == nil {
		l.format = SystemNotice
	}
	if l.scheme == "" {
		l.scheme = DefaultURIScheme
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	if l.now == nil {
		l.now = time.Now
	}
	switch {
	case o.CacheSize == 0:
		l.cache = newLRU(DefaultCacheSize)
	case o.CacheSize > 0:
		l.cache = newLRU(o.CacheSize)
	}
	globs := make([]*Glob, len(policies))
	for i, p := range policies {
		g, _ := CompileGlob(p.Match) // validated above
		globs[i] = g
		l.policies = append(l.policies, compiledPolicy{
			match:       g,
			cache:       p.CacheControl,
			invalidates: dedupe(nil, p.Invalidates),
		})
	}
	l.overlaps, l.overlapEr = detectOverlaps(globs)
	for _, ov := range l.overlaps {
		l.logger.Warn("statesync: "+ov.String(), "kind", ov.Kind.String(), "policy", ov.Policy, "by", ov.By)
	}
	if l.overlapEr != nil {
		l.logger.Warn("statesync: overlap detection incomplete", "error", l.overlapEr)
	}
	return l, nil
}

// validScheme reports whether s is an RFC 3986 scheme.
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if i == 0 && !letter || !letter && !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return s != ""
}

// Overlaps returns the findings of [DetectOverlaps] on the layer's policies,
// computed when the layer was built, and the error of any question it could
// not decide.
func (l *Layer) Overlaps() ([]Overlap, error) {
	if l == nil {
		return nil, nil
	}
	return slices.Clone(l.overlaps), l.overlapEr
}

// GroupAction returns the default canonical-key function for wire names of
// the form group<sep>action: a name that already contains a "." is taken as
// canonical, and otherwise its first sep becomes the "." between group and
// action. With sep "_", "sprints_update" becomes "sprints.update",
// "tasks_move_to_sprint" becomes "tasks.move_to_sprint", "sprints.update"
// and "ping" stay as they are.
func GroupAction(sep string) func(tool string) string {
	return func(tool string) string {
		if sep == "" || strings.Contains(tool, ".") {
			return tool
		}
		group, action, ok := strings.Cut(tool, sep)
		if !ok {
			return tool
		}
		return group + "." + action
	}
}

// SplitAll returns a canonical-key function that reads every sep in a wire
// name as a segment boundary: with sep "_", "billing_invoices_list" becomes
// "billing.invoices.list".
func SplitAll(sep string) func(tool string) string {
	return func(tool string) string {
		if sep == "" {
			return tool
		}
		return strings.ReplaceAll(tool, sep, ".")
	}
}

// A Resolution is what a [Layer] decided for one tool.
type Resolution struct {
	// Tool is the wire name that was resolved.
	Tool string
	// Key is its canonical name, the one policies match.
	Key string
	// Policy is the index of the first matching policy, or -1.
	Policy int
	// Declared reports whether the tool has per-tool options.
	Declared bool
	// CacheControl is the directive its description gets, or "".
	CacheControl CacheControl

	invalidates []string
}

// Invalidates returns the patterns a successful call of the tool
// invalidates, before any added at call time with [Invalidate].
func (r Resolution) Invalidates() []string { return slices.Clone(r.invalidates) }

// Resolve returns the resolution of the tool with the given wire name.
// Precedence, field by field:
//
//   - CacheControl: the tool's own [Cached] or [Stale] option, else the
//     first matching policy's CacheControl, else [Options.Default].
//   - Invalidates: the first matching policy's patterns, then the tool's own
//     [Invalidates] patterns, duplicates removed.
func (l *Layer) Resolve(tool string) Resolution {
	if l == nil {
		return Resolution{Tool: tool, Key: tool, Policy: -1}
	}
	return l.resolve(tool).res
}

// entry is a resolution as the cache holds it, with the last tool
// decorated for it.
type entry struct {
	res  Resolution // immutable once cached
	memo atomic.Pointer[toolMemo]
}

// toolMemo remembers that the tool src, whose description was base when it
// was decorated, decorates to out.
type toolMemo struct {
	src  *mcp.Tool
	base string
	out  *mcp.Tool
}

// resolve returns the shared entry of tool.
func (l *Layer) resolve(tool string) *entry {
	l.mu.Lock()
	if l.cache != nil {
		if r, ok := l.cache.get(tool); ok {
			l.mu.Unlock()
			return r
		}
	}
	h, declared := l.hints[tool]
	gen := l.gen
	l.mu.Unlock()

	r := l.compute(tool, h, declared)

	if l.cache != nil {
		l.mu.Lock()
		if l.gen == gen { // no Declare raced with us
			l.cache.put(tool, r)
		}
		l.mu.Unlock()
	}
	return r
}

func (l *Layer) compute(tool string, h toolHints, declared bool) *entry {
	key := l.key(tool)
	e := &entry{res: Resolution{Tool: tool, Key: key, Policy: -1, Declared: declared}}
	r := &e.res
	var inv []string
	for i := range l.policies {
		p := &l.policies[i]
		if p.match.Match(key) {
			r.Policy = i
			r.CacheControl = p.cache
			inv = p.invalidates
			break
		}
	}
	switch {
	case h.cache != "":
		r.CacheControl = h.cache
	case r.CacheControl == "":
		r.CacheControl = l.def
	}
	if len(h.invalidates) == 0 {
		r.invalidates = inv // already deduplicated
	} else {
		r.invalidates = dedupe(slices.Clip(inv), h.invalidates)
	}
	return e
}

// Unmatched returns the indices of the policies that match none of the given
// wire names, after canonicalisation. A dotted policy that matches nothing
// usually means the tools' names use another separator than the layer
// expects: call it at startup, or in a test, with the names of every tool
// the server registers.
func (l *Layer) Unmatched(tools []string) []int {
	if l == nil {
		return nil
	}
	keys := make([]string, len(tools))
	for i, t := range tools {
		keys[i] = l.key(t)
	}
	var out []int
	for i := range l.policies {
		if !slices.ContainsFunc(keys, l.policies[i].match.Match) {
			out = append(out, i)
		}
	}
	return out
}

// dedupe appends to dst the patterns of src not already in dst.
func dedupe(dst, src []string) []string {
	for _, p := range src {
		if !slices.Contains(dst, p) {
			dst = append(dst, p)
		}
	}
	return dst
}

// callTool is the method name of tools/call; listTools that of tools/list.
const (
	callTool  = "tools/call"
	listTools = "tools/list"
)

// Middleware is the layer as go-sdk receiving middleware:
//
//	server.AddReceivingMiddleware(layer.Middleware)
//
// It decorates the descriptions in tools/list results and adds the
// invalidation notice to tools/call results; every other method passes
// through untouched. With a gate that hides tools by workflow state (such as
// mcpbind), the layer must wrap the gate: add the gate's middleware first
// and the layer's after it (the go-sdk wraps the existing chain with
// middleware added later), or pass both at once, layer first:
//
//	server.AddReceivingMiddleware(layer.Middleware, gate.Middleware)
//	gate.AttachWith(server, layer) // mcpbind's shorthand for the right order
//
// The gate then filters tools/list before the layer decorates it (hidden
// tools are never resolved), refuses hidden calls with an IsError result
// (which invalidates nothing), and can add the patterns a statechart
// transition invalidates with [Invalidate]; they join the tool's own in the
// one notice, event and set of notifications of the call.
func (l *Layer) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	if l == nil {
		return next
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case listTools:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && lr != nil {
				if tools, changed := l.decorateTools(lr.Tools); changed {
					out := *lr
					out.Tools = tools
					return &out, nil
				}
			}
			return res, err
		case callTool:
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok || cr.Params == nil {
				return next(ctx, method, req)
			}
			col := &collector{}
			res, err := next(context.WithValue(ctx, collectorKey{}, col), method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r != nil {
				return l.DecorateResult(ctx, cr, r, col.take()...), nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}
