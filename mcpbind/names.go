// This file checks the tool names a workflow gives against the tools a
// server has: a name that matches no tool is most often a misspelling,
// which leaves the tool it meant ungated (unless Options.DefaultDeny).

package mcpbind

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// CheckTools returns, with their JSON paths, the tool names and patterns
// that the machine's meta.mcp (tools, events, invalidates, ungated) and
// the Go bindings ([Gate.Bind]) give but that match none of tools, the
// names of the server's tools (and Options.ExternalTools, and the second
// names Options.GatedAs gives them); nil if every one matches. A name
// that no tool has is most often misspelt, and then the tool it meant is
// not gated by it:
//
//	states.draft.meta.mcp.tools[0]: "aprove_doc" matches no tool of the server (did you mean "approve_doc"?)
//
// The gate checks this itself when it first lists or calls the server's
// tools, and logs each such name once, at Error level.
func (g *Gate) CheckTools(tools []string) statechart.ErrorList {
	tools = append(slices.Clip(tools), g.core.External...) // gated elsewhere, but tools all the same
	for _, t := range tools[:len(tools)-len(g.core.External)] {
		if a := g.core.Alias(t); a != "" {
			tools = append(tools, a) // "up1__x" is also "x" (Options.GatedAs)
		}
	}
	var errs statechart.ErrorList
	report := func(path, name string, pattern bool) {
		if slices.ContainsFunc(tools, func(t string) bool { return core.MatchGlob(name, t) }) {
			return
		}
		what := fmt.Sprintf("%q matches no tool of the server", name)
		if !pattern || !strings.Contains(name, "*") {
			if hint := core.DidYouMean(name, tools); hint != "" {
				what += fmt.Sprintf(" (did you mean %q?)", hint)
			}
		}
		errs = append(errs, &statechart.Error{Path: path, Msg: what})
	}
	for _, ref := range g.core.Refs {
		report(ref.Path, ref.Name, ref.Pattern)
	}
	r := g.core.Rules.Load()
	for _, name := range core.SortedKeys(r.Bound) {
		report(fmt.Sprintf("Bind(%q)", name), name, false)
	}
	return errs
}

// Unnamed returns the tools among tools that the workflow does not name
// (no state lists them, they send no event, no Go binding): without
// [Options.DefaultDeny] they are always visible; with it, refused unless
// ungated. The gate's own tools are not among them.
func (g *Gate) Unnamed(tools []string) []string {
	r := g.core.Rules.Load()
	var out []string
	for _, t := range tools {
		if g.core.OwnTools.Has(t) {
			continue
		}
		if m := g.core.Info(r, t, false).Mode; m == core.ModeUnbound || m == core.ModeDenied {
			out = append(out, t)
		}
	}
	return out
}

// nameCheck remembers which tool lists the gate checked its names
// against, and which problems it logged.
type nameCheck struct {
	first  atomic.Bool // the first call checked them
	mu     sync.Mutex
	lists  map[string]bool // the lists checked, as their names joined
	logged map[string]bool // the problems logged
}

// checkNames checks the workflow's names against the server's tools (see
// CheckTools), once per distinct list, and logs each problem once.
func (g *Gate) checkNames(ctx context.Context, next mcp.MethodHandler, session *mcp.ServerSession, extra *mcp.RequestExtra) {
	tools, err := g.registered(ctx, next, &mcp.CallToolRequest{Session: session, Extra: extra})
	if err != nil {
		return
	}
	key := strings.Join(tools, "\x00")
	n := &g.names
	n.mu.Lock()
	if n.lists[key] || len(n.lists) >= 64 {
		n.mu.Unlock()
		return
	}
	if n.lists == nil {
		n.lists, n.logged = map[string]bool{}, map[string]bool{}
	}
	n.lists[key] = true
	n.mu.Unlock()
	for _, e := range g.CheckTools(tools) {
		msg := e.Error()
		n.mu.Lock()
		seen := n.logged[msg]
		n.logged[msg] = true
		n.mu.Unlock()
		if !seen {
			consequence := "the tool it was meant for is not gated by it"
			if g.core.DefaultDeny {
				consequence = "the tool it was meant for is refused (DefaultDeny)"
			}
			g.core.Log.Error("mcpbind: machine "+g.core.Engine().ID()+": "+msg+": "+consequence, "machine", g.core.Engine().ID())
		}
	}
}
