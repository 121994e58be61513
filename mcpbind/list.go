// This file filters tools/list: the visible tools of a session's
// workflow, memoized per page and per configuration.

package mcpbind

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
)

func (g *Gate) list(ctx context.Context, next mcp.MethodHandler, a *attachment, req *mcp.ListToolsRequest) (mcp.Result, error) {
	res, err := next(ctx, "tools/list", req)
	if err != nil {
		return res, err
	}
	lr, ok := res.(*mcp.ListToolsResult)
	if !ok || lr == nil {
		return res, nil
	}
	r := g.core.Rules.Load()
	cursor := ""
	if req.Params != nil {
		cursor = req.Params.Cursor
	}
	memo, fresh := g.listInfos(r, cursor, lr.Tools)
	if fresh {
		// The server's tools (or the bindings) changed: check the
		// workflow's names against them.
		g.checkNames(ctx, next, req.Session, req.Extra)
	}
	switch k := g.keyingOf(req); {
	case k == byHandle:
		out := *lr
		out.Tools = g.handleList(memo, a.wf.Load())
		return &out, nil
	case k == unkeyed:
		// Its gated tools are refused: only the others are listed.
		return ungatedList(lr, memo), nil
	case newProtocol(req) || g.listAll:
		// Every tool, the same at every call (Options.ListAllTools).
		out := *lr
		out.Tools = g.connectionList(memo, a.wf.Load())
		return &out, nil
	case !memo.gated:
		return res, nil
	}
	v, err := g.core.Load(ctx, core.Target{Ss: connOf(req.Session)})
	filtered := *lr
	switch {
	case errors.Is(err, ErrWorkflowExpired):
		return ungatedList(lr, memo), nil
	case err != nil:
		return nil, g.unavailable(err, false)
	default:
		filtered.Tools = g.filter(ctx, memo, v, lr.Tools)
	}
	// The list depends on the session's workflow: only this client may
	// cache it, and only until it changes (list_changed).
	filtered.CacheScope, filtered.TTLMs = "private", 0
	return &filtered, nil
}

// ungatedList returns a list with only the tools that are not gated.
func ungatedList(lr *mcp.ListToolsResult, memo *listMemo) *mcp.ListToolsResult {
	out := *lr
	out.Tools = nil
	for i, ti := range memo.infos {
		if ti.Mode == core.ModeUnbound {
			out.Tools = append(out.Tools, lr.Tools[i])
		}
	}
	return &out
}

// filter returns the visible tools of a list. Without "can" tools and
// exhausted call limits the answer depends only on the active states, and
// is memoized by them.
func (g *Gate) filter(ctx context.Context, memo *listMemo, v *core.View, tools []*mcp.Tool) []*mcp.Tool {
	lims := g.core.Exhausted(v)
	checkpoint := g.checkpointOwn && checkpointed(g.core.Limits(v))
	memoize := !memo.hasCan && len(lims) == 0 && !checkpoint
	var key string
	if memoize {
		key = core.ConfigKey(v.Active)
		if out, ok := memo.byConfig.Load(key); ok {
			return slices.Clone(out.([]*mcp.Tool))
		}
	}
	keep := make([]bool, len(memo.infos))
	n := 0
	for i, ti := range memo.infos {
		if checkpoint && !g.core.OwnTools.Has(tools[i].Name) {
			continue
		}
		if ti.Mode == core.ModeUnbound || g.core.Allowed(ctx, v, tools[i].Name, ti, lims, nil) {
			keep[i] = true
			n++
		}
	}
	out := make([]*mcp.Tool, 0, n)
	for i := range memo.infos {
		if keep[i] {
			out = append(out, tools[i])
		}
	}
	if memoize && memo.nconfigs.Add(1) <= maxConfigMemos {
		memo.byConfig.Store(key, slices.Clone(out))
	}
	return out
}

// checkpointed reports whether a budget that only warns is used up.
func checkpointed(lims []CallLimit) bool {
	return slices.ContainsFunc(lims, func(l CallLimit) bool { return l.Warn && l.Calls >= l.Max })
}

// listMemo remembers how the tools of one page of tools/list are gated:
// the server lists the same *mcp.Tool values until its tools change, so
// comparing pointers is enough to reuse the answer.
type listMemo struct {
	tools  []*mcp.Tool
	infos  []*core.ToolInfo
	gated  bool // some tool is gated
	hasCan bool // some tool is visible by the machine's "can"

	handled    atomic.Pointer[handledList] // the list for handle mode
	connection atomic.Pointer[handledList] // the list of a 2026-07-28 connection's workflow

	byConfig sync.Map // configKey(active states) -> []*mcp.Tool, the visible tools
	nconfigs atomic.Int64
}

const (
	maxListMemos   = 64
	maxConfigMemos = 1024
)

// listInfos returns how the listed tools are gated, and whether it
// computed that anew (the tools or the bindings changed).
func (g *Gate) listInfos(r *core.Rules, cursor string, tools []*mcp.Tool) (*listMemo, bool) {
	if m, ok := r.Lists.Load(cursor); ok {
		if memo := m.(*listMemo); slices.Equal(memo.tools, tools) {
			return memo, false
		}
	}
	memo := &listMemo{tools: slices.Clone(tools), infos: make([]*core.ToolInfo, len(tools))}
	for i, t := range tools {
		ti := g.core.Info(r, t.Name, true)
		if t.Name == g.core.Start {
			ti = startInfo
		}
		memo.infos[i] = ti
		memo.gated = memo.gated || ti.Mode != core.ModeUnbound
		memo.hasCan = memo.hasCan || ti.Mode == core.ModeCan
	}
	if _, ok := r.Lists.Load(cursor); ok || r.Nlists.Add(1) <= maxListMemos {
		r.Lists.Store(cursor, memo)
	}
	return memo, true
}
