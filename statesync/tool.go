// This file defines per-tool options: Cached, Stale and Invalidates, given
// when a tool is registered.

package statesync

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A ToolOption declares the cache behaviour of one tool, next to its
// registration. See [Layer.Resolve] for how it combines with policies.
type ToolOption struct {
	cache       CacheControl
	invalidates []string
}

// Cached marks the tool's data as reference data that never changes: its
// description gets [Immutable].
func Cached() ToolOption { return ToolOption{cache: Immutable} }

// Stale marks the tool's data as volatile: its description gets [NoStore].
func Stale() ToolOption { return ToolOption{cache: NoStore} }

// Invalidates declares that a successful call of the tool makes the data
// named by patterns stale.
func Invalidates(patterns ...string) ToolOption {
	return ToolOption{invalidates: patterns}
}

// toolHints are the merged options of one tool.
type toolHints struct {
	cache       CacheControl
	invalidates []string
}

// Declare sets the options of the tool with the given wire name, replacing
// any declared before; with no options it forgets them. When options
// conflict, the last [Cached] or [Stale] wins and [Invalidates] patterns
// accumulate. It reports every invalid pattern, in which case nothing
// changes.
//
// Per-tool options take precedence over policies for the cache directive and
// add to them for invalidation (see [Layer.Resolve]); they do not take part
// in first-match-wins, so they neither shadow policies nor are shadowed.
func (l *Layer) Declare(tool string, opts ...ToolOption) error {
	var (
		h    toolHints
		bad  []string
		next int
	)
	for _, o := range opts {
		if o.cache != "" {
			h.cache = o.cache
		}
		for _, p := range o.invalidates {
			if msg := invalidatesProblem(next, p); msg != "" {
				bad = append(bad, msg)
			}
			next++
		}
		h.invalidates = dedupe(h.invalidates, o.invalidates)
	}
	if len(bad) > 0 {
		return fmt.Errorf("statesync: tool %q: %s", tool, strings.Join(bad, "; "))
	}
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(opts) == 0 {
		delete(l.hints, tool)
	} else {
		l.hints[tool] = h
	}
	l.gen++
	if l.cache != nil {
		l.cache.remove(tool)
	}
	return nil
}

// Tool declares opts for t (see [Layer.Declare]) and returns t, so that the
// declaration sits in the registration, whatever registers the tool:
//
//	mcp.AddTool(server, layer.Tool(&mcp.Tool{Name: "sprints_create"}, statesync.Invalidates("sprints.*")), createSprint)
//
// Like the go-sdk's AddTool, it panics on a programming error: here, an
// invalid pattern.
func (l *Layer) Tool(t *mcp.Tool, opts ...ToolOption) *mcp.Tool {
	if err := l.Declare(t.Name, opts...); err != nil {
		panic(err)
	}
	return t
}

// AddTool registers a typed tool on s with [mcp.AddTool] after declaring its
// options on l (see [Layer.Tool]). A nil l only registers the tool.
func AddTool[In, Out any](s *mcp.Server, l *Layer, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out], opts ...ToolOption) {
	mcp.AddTool(s, l.Tool(t, opts...), h)
}
