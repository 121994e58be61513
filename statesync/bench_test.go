package statesync_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchPolicies is the seeds' mixed configuration padded to 24 policies, the
// tool under test matching none of them so resolution walks them all.
func benchPolicies() []statesync.Policy {
	p := []statesync.Policy{
		{Match: "countries.*", CacheControl: statesync.Immutable},
		{Match: "currencies.*", CacheControl: statesync.Immutable},
		{Match: "timezones.*", CacheControl: statesync.Immutable},
		{Match: "sprints.create", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.update", Invalidates: []string{"sprints.*"}},
		{Match: "sprints.delete", Invalidates: []string{"sprints.*"}},
		{Match: "tasks.update", Invalidates: []string{"tasks.*", "sprints.*"}},
	}
	for i := len(p); i < 24; i++ {
		p = append(p, statesync.Policy{Match: fmt.Sprintf("group%d.**.action", i), Invalidates: []string{fmt.Sprintf("group%d.*", i)}})
	}
	return p
}

func benchLayer(b *testing.B, cacheSize int) *statesync.Layer {
	l, err := statesync.New(benchPolicies(), &statesync.Options{Default: statesync.NoStore, CacheSize: cacheSize})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func BenchmarkResolveCached(b *testing.B) {
	l := benchLayer(b, 0)
	l.Resolve("reports_generate")
	b.ReportAllocs()
	for b.Loop() {
		l.Resolve("reports_generate")
	}
}

func BenchmarkResolveUncached(b *testing.B) {
	l := benchLayer(b, -1)
	b.ReportAllocs()
	for b.Loop() {
		l.Resolve("reports_generate")
	}
}

func BenchmarkResolveCachedParallel(b *testing.B) {
	l := benchLayer(b, 0)
	l.Resolve("reports_generate")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Resolve("reports_generate")
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	g, _ := statesync.CompileGlob("**.tasks.*.get")
	b.ReportAllocs()
	for b.Loop() {
		g.Match("workspace.projects.tasks.t42.get")
	}
}

func thousandTools() []*mcp.Tool {
	groups := []string{"sprints", "tasks", "countries", "reports", "billing"}
	tools := make([]*mcp.Tool, 1000)
	for i := range tools {
		tools[i] = &mcp.Tool{
			Name:        fmt.Sprintf("%s_action%d", groups[i%len(groups)], i),
			Description: fmt.Sprintf("Tool number %d of the benchmark.", i),
		}
	}
	return tools
}

// BenchmarkDecorate1000Tools is one tools/list through the middleware with
// 1,000 tools, resolutions cached (the steady state).
func BenchmarkDecorate1000Tools(b *testing.B) {
	l := benchLayer(b, 0)
	res := &mcp.ListToolsResult{Tools: thousandTools()}
	h := l.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil })
	req := &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}}
	ctx := context.Background()
	if _, err := h(ctx, "tools/list", req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h(ctx, "tools/list", req)
	}
}

// BenchmarkDecorate1000ToolsUncached is the same with the resolution cache
// disabled: every tool is matched against every policy on every list.
func BenchmarkDecorate1000ToolsUncached(b *testing.B) {
	l := benchLayer(b, -1)
	res := &mcp.ListToolsResult{Tools: thousandTools()}
	h := l.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil })
	req := &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h(ctx, "tools/list", req)
	}
}

// BenchmarkCallWithInvalidation is one successful tools/call that
// invalidates two patterns, through the middleware.
func BenchmarkCallWithInvalidation(b *testing.B) {
	l := benchLayer(b, 0)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}
	h := l.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil })
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "tasks_update"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h(ctx, "tools/call", req)
	}
}

func BenchmarkDetectOverlaps(b *testing.B) {
	p := benchPolicies()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := statesync.DetectOverlaps(p); err != nil {
			b.Fatal(err)
		}
	}
}
