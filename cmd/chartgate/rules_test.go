package main

// The tests of this file check that every front door applies chartgate's
// shared rules the same way: the did-you-mean hint (package internal/hint)
// and the JSON path of a problem (jsonx.Path), whether the document goes
// through the Go API (statechart.Compile, flat.Compile, workflow.Load,
// mcpbind.New, gateway.ParseConfig) or through chartgate validate; and the
// tool-pattern language (package internal/toolname), wherever a pattern is
// written and whichever gate reads it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/shellpolicy"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
	"github.com/chartgate/chartgate/statesync"
	"github.com/chartgate/chartgate/workflow"
)

// errorsOf returns the messages of an error list, or of one error.
func errorsOf(err error) []string {
	var list statechart.ErrorList
	if errors.As(err, &list) {
		out := make([]string, len(list))
		for i, e := range list {
			out[i] = e.Error()
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []string{err.Error()}
}

// at returns the message among msgs for the problem at path (its text
// after "path: "), or "".
func at(msgs []string, path string) string {
	for _, m := range msgs {
		if rest, ok := strings.CutPrefix(m, path+": "); ok {
			return rest
		}
	}
	return ""
}

// hintOf returns the did-you-mean part of a message, or "".
func hintOf(msg string) string {
	if i := strings.Index(msg, " (did you mean "); i >= 0 {
		return msg[i:]
	}
	return ""
}

// TestHintsAgree: the same misspelt name gets the same hint, or the same
// absence of one, from the XState loader, the flat engine, the workflow
// loader, chartgate validate and mcpbind's meta.mcp. The cases are those
// on which the loaders' thresholds and case rules used to differ.
func TestHintsAgree(t *testing.T) {
	for _, c := range []struct {
		typo, hint string // hint "" means none
	}{
		{"confirmd", "confirmed"},
		{"CONFIRMD", "confirmed"}, // case does not count
		{"cnfirmd", "confirmed"},  // 2 edits
		{"cnfrmd", "confirmed"},   // 3 edits
		{"cnfrmdx", "confirmed"},  // 4 edits = 7/2+1: the edge
		{"cnfrmdxyz", ""},         // 6 edits > 9/2+1
		{"cfmd", ""},              // 5 edits
	} {
		t.Run(c.typo, func(t *testing.T) {
			want := ""
			if c.hint != "" {
				want = fmt.Sprintf(" (did you mean %q?)", c.hint)
			}
			doc := fmt.Sprintf(`{"id":"m","initial":"idle","states":{"idle":{"on":{"GO":%q}},"confirmed":{}}}`, c.typo)
			check := func(who string, msgs []string) {
				t.Helper()
				msg := at(msgs, "states.idle.on.GO")
				if assert.NotEmpty(t, msg, "%s: no problem at states.idle.on.GO in %q", who, msgs) {
					assert.Equal(t, want, hintOf(msg), "%s: %s", who, msg)
				}
			}
			_, err := statechart.Compile([]byte(doc), nil)
			check("statechart.Compile", errorsOf(err))
			_, err = flat.Compile([]byte(doc))
			check("flat.Compile", errorsOf(err))
			_, err = workflow.Load([]byte(doc), &workflow.Options{Format: workflow.FormatXState})
			check("workflow.Load", errorsOf(err))
			file := writeFile(t, "m.json", doc)
			_, out, _ := chartgate("validate", file)
			var msgs []string
			for _, l := range lines(out) {
				msgs = append(msgs, strings.TrimPrefix(l, file+": "))
			}
			check("chartgate validate", msgs)

			// The same misspelling as an event named in meta.mcp.
			ev := strings.ToUpper(c.typo)
			mx := fmt.Sprintf(`{"id":"m","initial":"idle","states":{"idle":{"on":{"CONFIRMED":"confirmed"},"meta":{"mcp":{"events":{"t":%q}}}},"confirmed":{}}}`, ev)
			m, err := statechart.Compile([]byte(mx), nil)
			require.NoError(t, err)
			_, err = mcpbind.New(m.Engine(), nil)
			msg := at(errorsOf(err), "states.idle.meta.mcp.events.t")
			require.NotEmpty(t, msg, "mcpbind.New: %v", err)
			assert.Equal(t, strings.ToUpper(want), strings.ToUpper(hintOf(msg)), "mcpbind.New: %s", msg)
		})
	}
}

// TestHintsAgreeOnLargeMachines: a misspelt target among 1,500 states
// gets the same hint from statechart.Compile and flat.Compile (flat gave
// none past 1,000 states): both spend one hint.Budget per document.
func TestHintsAgreeOnLargeMachines(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"id":"m","initial":"idle","states":{"idle":{"on":{"GO":"confirmd"}},"confirmed":{}`)
	for i := range 1500 {
		fmt.Fprintf(&b, `,"state_number_%d":{}`, i)
	}
	b.WriteString(`}}`)
	want := ` (did you mean "confirmed"?)`
	_, err := statechart.Compile([]byte(b.String()), nil)
	assert.Equal(t, want, hintOf(at(errorsOf(err), "states.idle.on.GO")), "statechart.Compile: %v", err)
	_, err = flat.Compile([]byte(b.String()))
	assert.Equal(t, want, hintOf(at(errorsOf(err), "states.idle.on.GO")), "flat.Compile: %v", err)
}

// TestPathsAgree: a problem under keys that must be quoted is located by
// the same path by statechart.Compile, flat.Compile, workflow.Load,
// mcpbind.New and chartgate validate, and a gateway configuration writes
// its keys by the same rule.
func TestPathsAgree(t *testing.T) {
	doc := `{"id":"m","initial":"a b","states":{"a b":{"on":{"x.y":{"target":"#nope"}}}}}`
	path := `states["a b"].on["x.y"].target`
	_, err := statechart.Compile([]byte(doc), nil)
	assert.NotEmpty(t, at(errorsOf(err), path), "statechart.Compile: %v", err)
	_, err = flat.Compile([]byte(doc))
	assert.NotEmpty(t, at(errorsOf(err), path), "flat.Compile: %v", err)
	_, err = workflow.Load([]byte(doc), &workflow.Options{Format: workflow.FormatXState})
	assert.NotEmpty(t, at(errorsOf(err), path), "workflow.Load: %v", err)
	file := writeFile(t, "m.json", doc)
	_, out, _ := chartgate("validate", file)
	assert.Contains(t, out, file+": "+path+": ", "chartgate validate")

	mx := `{"id":"m","initial":"a b","states":{"a b":{"meta":{"mcp":{"tools":["bad name"]}}}}}`
	m, err := statechart.Compile([]byte(mx), nil)
	require.NoError(t, err)
	_, err = mcpbind.New(m.Engine(), nil)
	assert.NotEmpty(t, at(errorsOf(err), `states["a b"].meta.mcp.tools[0]`), "mcpbind.New: %v", err)
	file = writeFile(t, "mx.json", mx)
	_, out, _ = chartgate("validate", file)
	assert.Contains(t, out, file+`: states["a b"].meta.mcp.tools[0]: `, "chartgate validate")

	_, err = gateway.ParseConfig([]byte(`{"mcpServers":{"up":{"command":"x","env":{"a.b":1}}}}`), nil)
	assert.Contains(t, fmt.Sprint(err), `mcpServers.up.env["a.b"]: `, "gateway.ParseConfig")
	// A key with a character the path needs no quotes for is written plain
	// by each of them.
	_, err = statechart.Compile([]byte(`{"id":"m","initial":"a/b","states":{"a/b":{"on":{"GO":"#nope"}}}}`), nil)
	assert.NotEmpty(t, at(errorsOf(err), `states.a/b.on.GO`), "statechart.Compile: %v", err)
	_, err = gateway.ParseConfig([]byte(`{"mcpServers":{"up":{"command":"x","env":{"a/b":1}}}}`), nil)
	assert.Contains(t, fmt.Sprint(err), `mcpServers.up.env.a/b: `, "gateway.ParseConfig")
}

// patternCases is the table every front door that reads a tool pattern is
// checked on: whether each name is in the set "cart.*" names.
var patternCases = []struct {
	tool string
	in   bool
}{
	{"cart.items.list", true},
	{"cart.", true},
	{"cart.pay", true},
	{"cart", false},
	{"carts.list", false},
	{"xcart.pay", false},
}

// TestToolPatternsAgree: "cart.*" names the same tools wherever it is
// written: a workflow's meta.mcp tools, deny, ungated and invalidates, a
// Statewright workflow's allowed_tools and disallowed_tools, a statesync
// policy's match and invalidates, checked through the Go API (mcpbind.New,
// Gate.CheckTools, statesync), chartgate validate --tools, chartgate
// serve's tools/list and chartgate hook's verdicts; and the shell's
// command patterns read "*" the same way. It takes cart.items.list (dots
// included) and not cart.
func TestToolPatternsAgree(t *testing.T) {
	xs := `{"id":"m","initial":"a","meta":{"mcp":{"ungated":["cart.*"]}},"states":{"a":{"meta":{"mcp":{"tools":["cart.*"],"deny":["cart.*"]}}}}}`
	sw := `{"id":"m","initial":"a","states":{"a":{"allowed_tools":["cart.*"],"disallowed_tools":["cart.*"],"on":{"GO":"b"}},"b":{"type":"final"}}}`
	for _, c := range patternCases {
		for _, doc := range []string{xs, sw} {
			w, err := workflow.Load([]byte(doc), nil)
			require.NoError(t, err)
			gate, err := mcpbind.New(w.Machine.Engine(), nil)
			require.NoError(t, err)
			errs := gate.CheckTools([]string{c.tool})
			assert.Equal(t, c.in, len(errs) == 0, "%s with %s: %v", c.tool, doc, errs)

			file := writeFile(t, "w.json", doc)
			code, out, _ := chartgate("validate", file, "--tools", c.tool)
			assert.Equal(t, c.in, code == exitOK, "validate --tools %s: %s", c.tool, out)
		}
		assert.Equal(t, c.in, shellpolicy.MatchCommand("cart.*", []string{c.tool}), "shellpolicy %s", c.tool)

		// statesync: a policy's match (the cache directive a tool gets)
		// and its invalidates (what an invalidation names stale).
		layer, err := statesync.New([]statesync.Policy{{Match: "cart.*", CacheControl: statesync.Immutable}},
			&statesync.Options{Default: statesync.NoStore})
		require.NoError(t, err)
		assert.Equal(t, c.in, layer.Resolve(c.tool).CacheControl == statesync.Immutable, "statesync match %s", c.tool)
		assert.Equal(t, c.in, statesync.Event{Patterns: []string{"cart.*"}}.Stale(c.tool), "statesync invalidates %s", c.tool)
	}
}

// TestInvalidatesAgree: a meta.mcp.invalidates "cart.*", run through a
// real gate inside a real statesync layer, names stale exactly the tools
// "cart.*" lets through under tools.
func TestInvalidatesAgree(t *testing.T) {
	doc := `{"id":"m","initial":"a","states":{"a":{"on":{"GO":"b"},"meta":{"mcp":{"events":{"go":"GO"},"invalidates":{"go":["cart.*"]}}}},"b":{}}}`
	m, err := statechart.Compile([]byte(doc), nil)
	require.NoError(t, err)
	gate, err := mcpbind.New(m.Engine(), nil)
	require.NoError(t, err)
	var events []statesync.Event
	layer, err := statesync.New(nil, &statesync.Options{OnInvalidation: func(e statesync.Event) { events = append(events, e) }})
	require.NoError(t, err)
	server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "go"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "went"}}}, nil, nil
	})
	gate.AttachWith(server, layer)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "go"})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	require.Len(t, events, 1)
	tools := `{"id":"m","initial":"a","states":{"a":{"meta":{"mcp":{"tools":["cart.*"]}}}}}`
	w, err := workflow.Load([]byte(tools), nil)
	require.NoError(t, err)
	g2, err := mcpbind.New(w.Machine.Engine(), nil)
	require.NoError(t, err)
	for _, c := range patternCases {
		assert.Equal(t, c.in, events[0].Stale(c.tool), "invalidates %s: %v", c.tool, events[0].Patterns)
		assert.Equal(t, len(g2.CheckTools([]string{c.tool})) == 0, events[0].Stale(c.tool), "tools and invalidates on %s", c.tool)
	}
}

// TestServePatternsAgree: chartgate serve refuses and hides (from a
// 2025-11-25 client, whose tools/list follows its session's state), in a
// state whose meta.mcp.deny is "cart.*" or whose tools bind them to
// another state, exactly the upstream's tools in that set.
func TestServePatternsAgree(t *testing.T) {
	var names []string
	for _, c := range patternCases {
		names = append(names, c.tool)
	}
	for _, doc := range []string{
		`{"id":"m","initial":"a","states":{"a":{"meta":{"mcp":{"deny":["cart.*"]}}}}}`,
		`{"id":"m","initial":"a","states":{"a":{"on":{"GO":"b"}},"b":{"meta":{"mcp":{"tools":["cart.*"]}}}}}`,
	} {
		wf := writeFile(t, "workflow.json", doc)
		cs := serveClient{name: "test"}.start(t, "serve", "--log-level", "warn", "--workflow", wf, "--store", filepath.Join(t.TempDir(), "state.db"),
			"--", "env", envUpstream+"=1", envUpstreamTools+"="+strings.Join(names, ","), testExe(t))
		ctx := context.Background()
		for _, c := range patternCases {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool})
			require.NoError(t, err)
			assert.Equal(t, c.in, res.IsError, "serve runs %s with %s: %v", c.tool, doc, res.Content)
		}
		listed := map[string]bool{}
		for tool, err := range cs.Tools(ctx, nil) {
			require.NoError(t, err)
			listed[tool.Name] = true
		}
		require.True(t, listed["echo"], "unbound tools stay listed: %v", listed)
		for _, c := range patternCases {
			assert.Equal(t, !c.in, listed[c.tool], "serve lists %s with %s", c.tool, doc)
		}
		require.NoError(t, cs.Close())
	}
}

// TestHookPatternsAgree: chartgate hook refuses, in a state whose
// meta.mcp.deny is "cart.*", exactly the tools in that set.
func TestHookPatternsAgree(t *testing.T) {
	bin := chartgateBinary(t)
	project := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(project, ".chartgate"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".chartgate", "workflow.json"),
		[]byte(`{"id":"m","initial":"a","states":{"a":{"meta":{"mcp":{"deny":["cart.*"]}}}}}`), 0o644))
	for _, c := range patternCases {
		in, err := json.Marshal(map[string]any{
			"session_id": "s1", "cwd": project, "hook_event_name": "PreToolUse", "permission_mode": "default",
			"tool_name": c.tool, "tool_input": map[string]any{}, "tool_use_id": "toolu_1",
		})
		require.NoError(t, err)
		r := runHook(t, bin, project, string(in), nil, "claude-code")
		require.Equal(t, 0, r.code, r.errOut)
		assert.Equal(t, c.in, strings.Contains(r.out, `"permissionDecision":"deny"`), "hook on %s: %s", c.tool, r.out)
	}
}
