package statesync_test

import (
	"context"
	"testing"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDecorateSeedTable is the seed's "Cache-Control Decoration" before and
// after, and the read-only reports example.
func TestDecorateSeedTable(t *testing.T) {
	for _, c := range []struct {
		before string
		cc     statesync.CacheControl
		after  string
	}{
		{"Manage workspace sprints.", statesync.NoStore, "Manage workspace sprints. [Cache-Control: no-store]"},
		{"List country codes.", statesync.Immutable, "List country codes. [Cache-Control: immutable]"},
		{"Generate reports.", statesync.NoStore, "Generate reports. [Cache-Control: no-store]"},
	} {
		if got := statesync.DecorateDescription(c.before, c.cc); got != c.after {
			t.Errorf("DecorateDescription(%q, %q) = %q, want %q", c.before, c.cc, got, c.after)
		}
	}
}

// TestDecorateDescription mirrors MCP Fusion's DescriptionDecorator tests.
func TestDecorateDescription(t *testing.T) {
	for _, c := range []struct {
		name, in string
		cc       statesync.CacheControl
		want     string
	}{
		{"empty description gives the tag alone", "", statesync.NoStore, "[Cache-Control: no-store]"},
		{"no directive leaves it unchanged", "List sprints.", "", "List sprints."},
		{"idempotent", "List sprints. [Cache-Control: no-store]", statesync.NoStore, "List sprints. [Cache-Control: no-store]"},
		{"replaces immutable with no-store", "List sprints. [Cache-Control: immutable]", statesync.NoStore, "List sprints. [Cache-Control: no-store]"},
		{"replaces a directive it does not know", "List. [Cache-Control: max-age=60]", statesync.Immutable, "List. [Cache-Control: immutable]"},
		{"loose spacing", "List.   [Cache-Control:   immutable]", statesync.NoStore, "List. [Cache-Control: no-store]"},
		{"tag alone", "[Cache-Control: immutable]", statesync.NoStore, "[Cache-Control: no-store]"},
		{"other brackets kept", "See [docs]", statesync.NoStore, "See [docs] [Cache-Control: no-store]"},
		{"tag not at the end kept", "[Cache-Control: immutable] then text", statesync.NoStore, "[Cache-Control: immutable] then text [Cache-Control: no-store]"},
		{"empty tag is not a directive", "x [Cache-Control: ]", statesync.NoStore, "x [Cache-Control: ] [Cache-Control: no-store]"},
		{"nested opening", "x [Cache-Control: [Cache-Control: immutable]", statesync.NoStore, "x [Cache-Control: [Cache-Control: no-store]"},
		{"multi-line", "Line one.\nLine two.\n[Cache-Control: immutable]", statesync.NoStore, "Line one.\nLine two. [Cache-Control: no-store]"},
	} {
		got := statesync.DecorateDescription(c.in, c.cc)
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
		if again := statesync.DecorateDescription(got, c.cc); again != got {
			t.Errorf("%s: not idempotent: %q", c.name, again)
		}
	}
}

func listThrough(t *testing.T, l *statesync.Layer, in *mcp.ListToolsResult) *mcp.ListToolsResult {
	t.Helper()
	h := l.Middleware(func(context.Context, string, mcp.Request) (mcp.Result, error) { return in, nil })
	res, err := h(context.Background(), "tools/list", &mcp.ListToolsRequest{Params: &mcp.ListToolsParams{}})
	if err != nil {
		t.Fatal(err)
	}
	return res.(*mcp.ListToolsResult)
}

// TestMiddlewareDecoratesList: descriptions get their directive, the tools
// the server shares between requests are never modified, and the rest of
// the result is kept.
func TestMiddlewareDecoratesList(t *testing.T) {
	l := mustNew(t, seedPolicies(), &statesync.Options{Default: statesync.NoStore})
	sprints := &mcp.Tool{Name: "sprints_list", Description: "List workspace sprints"}
	countries := &mcp.Tool{Name: "countries_list", Description: "List country codes."}
	empty := &mcp.Tool{Name: "tasks_update"}
	in := &mcp.ListToolsResult{Tools: []*mcp.Tool{sprints, countries, empty, nil}, NextCursor: "next"}

	out := listThrough(t, l, in)
	got := []string{out.Tools[0].Description, out.Tools[1].Description, out.Tools[2].Description}
	wantDesc := []string{
		"List workspace sprints [Cache-Control: no-store]",
		"List country codes. [Cache-Control: immutable]",
		"[Cache-Control: no-store]",
	}
	for i := range wantDesc {
		if got[i] != wantDesc[i] {
			t.Errorf("tool %d: %q, want %q", i, got[i], wantDesc[i])
		}
	}
	if out.Tools[3] != nil || out.NextCursor != "next" || out == in {
		t.Error("result not copied faithfully")
	}
	if sprints.Description != "List workspace sprints" || countries.Description != "List country codes." || empty.Description != "" {
		t.Error("the shared tools were modified")
	}
	if in.Tools[0] != sprints {
		t.Error("the input slice was modified")
	}
	if out.Tools[0].Name != "sprints_list" {
		t.Error("copy lost fields")
	}

	// Decorating an already decorated list changes nothing and allocates
	// no new result.
	again := listThrough(t, l, out)
	if again != out {
		t.Error("re-decorating should return the result as is")
	}
}

func TestMiddlewareListWithoutDirectives(t *testing.T) {
	l := mustNew(t, []statesync.Policy{{Match: "tasks.update", Invalidates: []string{"tasks.*"}}}, nil)
	in := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "tasks_update", Description: "Update a task"}}}
	if out := listThrough(t, l, in); out != in || out.Tools[0].Description != "Update a task" {
		t.Error("with no directive to add, the result should pass through untouched")
	}
	tools := in.Tools
	if got := l.DecorateTools(tools); &got[0] != &tools[0] {
		t.Error("DecorateTools should return its input when nothing changes")
	}
}

// TestDecoratedToolsAreReused: listing the same tools again reuses the
// copies; a replaced tool or a changed description is decorated afresh.
func TestDecoratedToolsAreReused(t *testing.T) {
	l := mustNew(t, nil, &statesync.Options{Default: statesync.NoStore})
	a := &mcp.Tool{Name: "a", Description: "one"}
	first := l.DecorateTools([]*mcp.Tool{a})
	second := l.DecorateTools([]*mcp.Tool{a})
	if first[0] != second[0] || first[0] == a || first[0].Description != "one [Cache-Control: no-store]" {
		t.Errorf("copies not reused: %p %p", first[0], second[0])
	}
	b := &mcp.Tool{Name: "a", Description: "two"} // the tool was replaced
	if got := l.DecorateTools([]*mcp.Tool{b})[0].Description; got != "two [Cache-Control: no-store]" {
		t.Errorf("replaced tool: %q", got)
	}
	a.Description = "changed in place"
	if got := l.DecorateTools([]*mcp.Tool{a})[0].Description; got != "changed in place [Cache-Control: no-store]" {
		t.Errorf("changed description: %q", got)
	}
	if err := l.Declare("a", statesync.Cached()); err != nil {
		t.Fatal(err)
	}
	if got := l.DecorateTools([]*mcp.Tool{a})[0].Description; got != "changed in place [Cache-Control: immutable]" {
		t.Errorf("after Declare: %q", got)
	}
}
