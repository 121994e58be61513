package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statesync"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite testdata/demo.txt")

// TestDemo runs the scripted session and compares its transcript with
// testdata/demo.txt (go test -update rewrites it).
func TestDemo(t *testing.T) {
	var out, errs bytes.Buffer
	if err := run(context.Background(), nil, &out, &errs); err != nil {
		t.Fatal(err, errs.String())
	}
	if *update {
		if err := os.WriteFile("testdata/demo.txt", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/demo.txt")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("transcript differs from testdata/demo.txt:\n%s", out.String())
	}
	for _, line := range []string{
		"countries_list  List country codes. [Cache-Control: immutable]",
		"sprints_list    List workspace sprints with their tasks. [Cache-Control: no-store]",
		"[System: Cache invalidated for sprints.* — caused by sprints.create]",
		"[System: Cache invalidated for tasks.*, sprints.* — caused by tasks.update]",
		"[System: Cache invalidated for sprints.* — caused by sprints.delete]",
		"[System: Cache invalidated for sprints.* — caused by sprints.update]",
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("transcript lacks %q", line)
		}
	}
	if errs.Len() != 0 {
		t.Errorf("stderr: %s", errs.String())
	}
}

func TestRunArguments(t *testing.T) {
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"extra"}, &out, &errs); err == nil {
		t.Error("stray argument accepted")
	}
	if err := run(context.Background(), []string{"-nope"}, &out, &errs); err == nil {
		t.Error("unknown flag accepted")
	}
}

// TestPoliciesFitTheTools: every policy reaches a tool through the
// canonical keys, and the policies do not overlap.
func TestPoliciesFitTheTools(t *testing.T) {
	_, layer, err := newServer(newStore(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := layer.Unmatched(toolNames); len(u) != 0 {
		t.Errorf("policies matching no tool: %v", u)
	}
	if ov, err := layer.Overlaps(); len(ov) != 0 || err != nil {
		t.Errorf("overlaps: %v %v", ov, err)
	}
	for tool, want := range map[string][]string{
		"sprints_list":   nil,
		"sprints_create": {"sprints.*"},
		"sprints_update": {"sprints.*"},
		"sprints_delete": {"sprints.*"},
		"tasks_update":   {"tasks.*", "sprints.*"},
		"countries_list": nil,
	} {
		r := layer.Resolve(tool)
		wantCC := statesync.NoStore
		if tool == "countries_list" {
			wantCC = statesync.Immutable
		}
		if r.CacheControl != wantCC || !slices.Equal(r.Invalidates(), want) {
			t.Errorf("%s: %s %v", tool, r.CacheControl, r.Invalidates())
		}
	}
}

// pipeClient connects a go-sdk client to serve() over a pair of pipes, as a
// host would over the process's stdin and stdout.
func pipeClient(t *testing.T, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, &mcp.IOTransport{Reader: serverIn, Writer: serverOut}) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, copts)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop")
		}
	})
	return cs
}

func textsOf(r *mcp.CallToolResult) []string {
	var out []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}

// TestStdioServer drives the -stdio server the way a host would: tool
// arguments, notices, failures and resources/updated notifications.
func TestStdioServer(t *testing.T) {
	updated := make(chan string, 8)
	cs := pipeClient(t, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	required := map[string][]string{}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		schema, _ := tool.InputSchema.(map[string]any)
		req, _ := schema["required"].([]any) // tools without arguments have none
		for _, r := range req {
			required[tool.Name] = append(required[tool.Name], r.(string))
		}
		if !strings.HasSuffix(tool.Description, "[Cache-Control: no-store]") && !strings.HasSuffix(tool.Description, "[Cache-Control: immutable]") {
			t.Errorf("%s: undecorated %q", tool.Name, tool.Description)
		}
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(toolNames)); !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	for tool, want := range map[string][]string{
		"sprints_create": {"name"},
		"sprints_update": {"id"},
		"sprints_delete": {"id"},
		"tasks_update":   {"id"},
	} {
		if !slices.Equal(required[tool], want) {
			t.Errorf("%s requires %v, want %v", tool, required[tool], want)
		}
	}

	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "statesync://stale/sprints.*"}); err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	res := call("tasks_update", map[string]any{"id": "t1", "title": "Write the spec, v2", "sprint_id": "s2"})
	if got := textsOf(res); len(got) != 2 || got[0] != "[System: Cache invalidated for tasks.*, sprints.* — caused by tasks.update]" ||
		got[1] != `{"id":"t1","sprint_id":"s2","title":"Write the spec, v2"}` {
		t.Errorf("tasks_update = %q", got)
	}
	select {
	case uri := <-updated:
		if uri != "statesync://stale/sprints.*" {
			t.Errorf("resources/updated %q", uri)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no resources/updated")
	}

	for _, bad := range []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{"sprints_create", map[string]any{"name": "  "}, "a sprint needs a name"},
		{"sprints_update", map[string]any{"id": "s9", "name": "x"}, `no sprint "s9"`},
		{"sprints_delete", map[string]any{"id": "s1"}, `sprint "s1" still has 1 task(s)`},
		{"tasks_update", map[string]any{"id": "t2", "sprint_id": "s9"}, `no sprint "s9"`},
		{"tasks_update", map[string]any{"id": "t9"}, `no task "t9"`},
		{"tasks_update", map[string]any{"id": "t2", "title": ""}, "a task needs a title"},
	} {
		res := call(bad.tool, bad.args)
		got := textsOf(res)
		if !res.IsError || len(got) != 1 || !strings.Contains(got[0], bad.msg) {
			t.Errorf("%s %v = %v %q, want an error containing %q and no notice", bad.tool, bad.args, res.IsError, got, bad.msg)
		}
	}
	if got := textsOf(call("countries_list", map[string]any{})); len(got) != 1 || !strings.Contains(got[0], `"JP"`) {
		t.Errorf("countries_list = %q", got)
	}
	// The failed task update left t2 alone: its title is unchanged.
	if got := textsOf(call("sprints_list", map[string]any{})); len(got) != 1 || !strings.Contains(got[0], `"title":"Build the API"`) {
		t.Errorf("sprints_list = %q", got)
	}
}
