// This file defines how the upstreams' lists become the downstream
// server's features: the naming rule for tools and prompts that collide,
// the first-wins rule for resources, and the diff applied to the server.

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// prefixSep joins an upstream's name and a colliding tool or prompt name:
// "fs__read_file".
const prefixSep = "__"

// entry is a downstream feature and the upstream it comes from.
type entry[T any] struct {
	up   *upstream
	orig string // the name (tools, prompts) or URI (resources, templates) upstream
	def  T      // the definition as listed downstream
	key  string // the definition and its origin in JSON, to detect changes
}

type (
	toolEntry     = entry[*mcp.Tool]
	promptEntry   = entry[*mcp.Prompt]
	resourceEntry = entry[*mcp.Resource]
	templateEntry = entry[*mcp.ResourceTemplate]
)

// sync makes the downstream server's tools, prompts, resources and
// resource templates those the upstreams last listed, changing only what
// changed (go-sdk then notifies the downstream sessions of each list that
// changed).
func (g *Gateway) sync() {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	srv := g.srv()
	if srv == nil {
		return
	}
	lists := make([]features, len(g.upstreams))
	for i, u := range g.upstreams {
		lists[i] = u.features()
	}

	tools, order := mergeNamed(g, "tool", lists, func(f features) []*mcp.Tool { return f.tools },
		func(t *mcp.Tool) string { return t.Name },
		func(t *mcp.Tool, name string) *mcp.Tool { c := *t; c.Name = name; return &c })
	prompts, _ := mergeNamed(g, "prompt", lists, func(f features) []*mcp.Prompt { return f.prompts },
		func(p *mcp.Prompt) string { return p.Name },
		func(p *mcp.Prompt, name string) *mcp.Prompt { c := *p; c.Name = name; return &c })
	resources := mergeURIs(g, "resource", lists, func(f features) []*mcp.Resource { return f.resources },
		func(r *mcp.Resource) string { return r.URI })
	templates := mergeURIs(g, "resource template", lists, func(f features) []*mcp.ResourceTemplate { return f.templates },
		func(t *mcp.ResourceTemplate) string { return t.URITemplate })

	refused := g.refuse(tools, order)

	g.mu.Lock()
	oldTools, oldPrompts, oldResources, oldTemplates := g.tools, g.prompts, g.resources, g.templates
	oldRefused := g.refused
	g.refused = refused
	g.mu.Unlock()
	for _, name := range sortedKeys(refused) {
		if oldRefused[name] != refused[name] {
			g.logger.Error(fmt.Sprintf("tool %q is refused: %s", name, refused[name]))
		}
	}

	apply(g, "tool", oldTools, tools, srv.RemoveTools, func(name string, e *toolEntry) {
		srv.AddTool(e.def, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return g.callTool(ctx, req, e.up, e.orig)
		})
	})
	apply(g, "prompt", oldPrompts, prompts, srv.RemovePrompts, func(name string, e *promptEntry) {
		srv.AddPrompt(e.def, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return g.getPrompt(ctx, req, e.up, e.orig)
		})
	})
	apply(g, "resource", oldResources, resources, srv.RemoveResources, func(uri string, e *resourceEntry) {
		srv.AddResource(e.def, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return g.readResource(ctx, req, e.up)
		})
	})
	apply(g, "resource template", oldTemplates, templates, srv.RemoveResourceTemplates, func(uri string, e *templateEntry) {
		srv.AddResourceTemplate(e.def, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return g.readResource(ctx, req, e.up)
		})
	})

	g.mu.Lock()
	g.tools, g.prompts, g.resources, g.templates = tools, prompts, resources, templates
	g.toolOrder = slices.DeleteFunc(order, func(name string) bool { return tools[name] == nil })
	g.mu.Unlock()
}

// refuse takes out of tools those the lock or Options.RefuseTools refuse,
// and returns why each is refused, by downstream name. A tool the lock
// has no pin for is pinned, a changed one kept pending, and the lock file
// written.
func (g *Gateway) refuse(tools map[string]*toolEntry, order []string) map[string]string {
	refused := map[string]string{}
	if f := g.opts.RefuseTools; f != nil {
		infos := make([]ToolInfo, 0, len(tools))
		for _, name := range order {
			if e := tools[name]; e != nil {
				infos = append(infos, ToolInfo{Name: name, Upstream: e.up.name, UpstreamName: e.orig, Tool: e.def})
			}
		}
		for name, why := range f(infos) {
			if tools[name] != nil {
				refused[name] = why
				delete(tools, name)
			}
		}
	}
	if l := g.opts.ToolLock; l != nil {
		dirty := false
		for _, name := range order {
			e := tools[name]
			if e == nil {
				continue
			}
			fields, d := l.check(e.up.name, e.orig, e.def)
			dirty = dirty || d
			if len(fields) > 0 {
				refused[name] = changedMessage(e.up.name, e.orig, fields, l.path)
				delete(tools, name)
			}
		}
		if dirty {
			if err := l.save(); err != nil {
				g.logger.Error("recording the tools' definitions", "error", err)
			}
		}
	}
	return refused
}

// mergeNamed merges the tools or prompts of the upstreams. A name that
// one upstream lists stays as it is; a name that two or more list becomes
// "<upstream>__<name>" for each of them. A name that is still taken (an
// upstream lists "a__x" as well as "x" colliding on upstream "a") goes to
// the first in configuration order; the other is not proxied, and logged.
func mergeNamed[T any](g *Gateway, kind string, lists []features, items func(features) []T, name func(T) string, rename func(T, string) T) (map[string]*entry[T], []string) {
	count := map[string]int{}
	for _, f := range lists {
		seen := map[string]bool{}
		for _, it := range items(f) {
			if n := name(it); !seen[n] {
				seen[n] = true
				count[n]++
			}
		}
	}
	out := map[string]*entry[T]{}
	var order []string
	for i, f := range lists {
		u := g.upstreams[i]
		for _, it := range items(f) {
			orig := name(it)
			final := orig
			if count[orig] > 1 {
				final = u.name + prefixSep + orig
			}
			if prev := out[final]; prev != nil {
				if prev.up == u && prev.orig == orig {
					u.logger.Warn(fmt.Sprintf("the upstream lists %s %q twice; the first is proxied", kind, orig))
				} else {
					u.logger.Error(fmt.Sprintf("%s %q is not proxied: the name %q is already used by upstream %q's %s %q", kind, orig, final, prev.up.name, kind, prev.orig))
				}
				continue
			}
			def := it
			if final != orig {
				def = rename(it, final)
			}
			out[final] = &entry[T]{up: u, orig: orig, def: def, key: entryKey(u, orig, def)}
			order = append(order, final)
		}
	}
	return out, order
}

// mergeURIs merges resources or resource templates, which are named by
// their URI: when two upstreams list the same URI, the first in
// configuration order has it, and the other's is not proxied (logged).
func mergeURIs[T any](g *Gateway, kind string, lists []features, items func(features) []T, uri func(T) string) map[string]*entry[T] {
	out := map[string]*entry[T]{}
	for i, f := range lists {
		u := g.upstreams[i]
		for _, it := range items(f) {
			key := uri(it)
			if prev := out[key]; prev != nil {
				if prev.up != u {
					u.logger.Warn(fmt.Sprintf("%s %q is not proxied: upstream %q lists it too, and comes first", kind, key, prev.up.name))
				}
				continue
			}
			out[key] = &entry[T]{up: u, orig: key, def: it, key: entryKey(u, key, it)}
		}
	}
	return out
}

func entryKey(u *upstream, orig string, def any) string {
	data, err := json.Marshal(def)
	if err != nil {
		data = fmt.Appendf(nil, "%p", def) // never equal to another: re-added on each sync
	}
	return u.name + "\x00" + orig + "\x00" + string(data)
}

// apply removes from the server what old has and new has not, and adds
// what is new or changed. A definition the server refuses (go-sdk panics
// on an input schema that is not an object, an invalid URI template, ...)
// is logged and left out of new.
func apply[T any](g *Gateway, kind string, old, new map[string]*entry[T], remove func(...string), add func(string, *entry[T])) {
	var gone []string
	for k := range old {
		if new[k] == nil {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		remove(gone...)
	}
	for k, e := range new {
		if o := old[k]; o != nil && o.key == e.key {
			continue
		}
		if err := safely(func() { add(k, e) }); err != nil {
			e.up.logger.Error(fmt.Sprintf("%s %q is not proxied: %v", kind, e.orig, err))
			delete(new, k)
			if old[k] != nil {
				remove(k)
			}
		}
	}
}

// safely runs f and returns the value it panicked with as an error.
func safely(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	f()
	return nil
}
