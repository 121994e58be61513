package main

// The tests of this file check that every front door applies chartgate's
// shared rules the same way: the did-you-mean hint (package internal/hint)
// and the JSON path of a problem (jsonx.Path), whether the document goes
// through the Go API (statechart.Compile, flat.Compile, workflow.Load,
// mcpbind.New, gateway.ParseConfig) or through chartgate validate.

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/gateway"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/shellpolicy"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/statechart/flat"
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

// TestToolPatternsAgree: a tool pattern selects the same tools whether it
// is written in an XState workflow's meta.mcp (tools, deny, ungated) or in
// a Statewright workflow's allowed_tools, checked through the Go API
// (mcpbind.New, Gate.CheckTools) or chartgate validate --tools; and the
// shell's command patterns read "*" the same way. "cart.*" takes
// cart.items.list (dots included) and not cart.
func TestToolPatternsAgree(t *testing.T) {
	xs := `{"id":"m","initial":"a","meta":{"mcp":{"ungated":["cart.*"]}},"states":{"a":{"meta":{"mcp":{"tools":["cart.*"],"deny":["cart.*"]}}}}}`
	sw := `{"id":"m","initial":"a","states":{"a":{"allowed_tools":["cart.*"],"disallowed_tools":["cart.*"],"on":{"GO":"b"}},"b":{"type":"final"}}}`
	for _, c := range []struct {
		tool string
		ok   bool
	}{
		{"cart.items.list", true},
		{"cart.", true},
		{"cart", false},
		{"carts.list", false},
	} {
		for _, doc := range []string{xs, sw} {
			w, err := workflow.Load([]byte(doc), nil)
			require.NoError(t, err)
			gate, err := mcpbind.New(w.Machine.Engine(), nil)
			require.NoError(t, err)
			errs := gate.CheckTools([]string{c.tool})
			assert.Equal(t, c.ok, len(errs) == 0, "%s with %s: %v", c.tool, doc, errs)

			file := writeFile(t, "w.json", doc)
			code, out, _ := chartgate("validate", file, "--tools", c.tool)
			assert.Equal(t, c.ok, code == exitOK, "validate --tools %s: %s", c.tool, out)
		}
		assert.Equal(t, c.ok, shellpolicy.MatchCommand("cart.*", []string{c.tool}), "shellpolicy %s", c.tool)
	}
}
