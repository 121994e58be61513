package mcpbind_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/mcpbind"
)

// docJSON misspells approve_doc in its draft state.
const docJSON = `{
  "id": "doc", "initial": "draft",
  "meta": {"mcp": {"ungated": ["help"]}},
  "states": {
    "draft": {"on": {"APPROVE": "approved"}, "meta": {"mcp": {"tools": ["edit_doc", "aprove_doc"], "events": {"aprove_doc": "APPROVE"}}}},
    "approved": {"meta": {"mcp": {"tools": ["publish_doc"]}}}
  }
}`

// TestMisspeltToolReported: a name in the machine that no tool of the
// server has is logged (once, with its JSON path and a did-you-mean) and
// reported by CheckTools; before, it was silent and the tool it meant ran
// ungated.
func TestMisspeltToolReported(t *testing.T) {
	var logs syncBuffer
	f := newFixture(t, compile(t, "full", docJSON, nil), &mcpbind.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		"edit_doc", "approve_doc", "publish_doc", "help")
	want := `states.draft.meta.mcp.tools[1]: "aprove_doc" matches no tool of the server (did you mean "approve_doc"?)`
	errs := f.gate.CheckTools([]string{"edit_doc", "approve_doc", "publish_doc", "help"})
	if len(errs) != 2 || errs[1].Error() != want ||
		errs[0].Error() != `states.draft.meta.mcp.events.aprove_doc: "aprove_doc" matches no tool of the server (did you mean "approve_doc"?)` {
		for _, e := range errs {
			t.Log(e)
		}
		t.Fatalf("CheckTools: %d errors", len(errs))
	}
	c := f.connect(t, "2025-11-25")
	c.tools()
	c.tools()
	if n := strings.Count(logs.String(), "matches no tool of the server"); n != 2 || !strings.Contains(logs.String(), "states.draft.meta.mcp.tools[1]") || !strings.Contains(logs.String(), "is not gated by it") {
		t.Fatalf("log:\n%s", logs.String())
	}
	if got := f.gate.Unnamed([]string{"edit_doc", "approve_doc", "help"}); strings.Join(got, ",") != "approve_doc,help" {
		t.Fatalf("Unnamed: %v", got)
	}
	// Without DefaultDeny the misspelling leaves approve_doc ungated.
	if res := c.call("approve_doc", nil); res.IsError {
		t.Fatal(resultText(res))
	}
}

// TestDefaultDeny: with DefaultDeny a tool the workflow does not name is
// hidden and refused, unless ungated (meta.mcp.ungated or Options.Ungated);
// the gate's own tools stay.
func TestDefaultDeny(t *testing.T) {
	f := newFixture(t, compile(t, "full", docJSON, nil), &mcpbind.Options{DefaultDeny: true, Ungated: []string{"stat*"}},
		"edit_doc", "approve_doc", "publish_doc", "help", "stats")
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.expectTools("draft", "edit_doc", "help", "stats", "workflow_status", "workflow_transition")
	res := c.call("approve_doc", nil)
	ref := refusal(t, res)
	if ref.Code != mcpbind.CodeForbidden || ref.Reachable || !strings.Contains(resultText(res), `Tool "approve_doc" is not part of the "doc" workflow`) {
		t.Fatalf("refusal %+v: %s", ref, resultText(res))
	}
	if f.ran("approve_doc") != 0 {
		t.Fatal("approve_doc ran")
	}
	for _, tool := range []string{"help", "stats", "edit_doc"} {
		if res := c.call(tool, nil); res.IsError {
			t.Fatalf("%s: %s", tool, resultText(res))
		}
	}
	// Under 2026-07-28 the denied tool is not listed at all.
	h := f.connect(t, "2026-07-28")
	lr, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range lr.Tools {
		if tool.Name == "approve_doc" {
			b, _ := json.Marshal(tool)
			t.Fatalf("a denied tool is listed with handles: %s", b)
		}
	}
}

// TestUngatedOnlyOnRoot: meta.mcp.ungated applies to the whole machine.
func TestUngatedOnlyOnRoot(t *testing.T) {
	_, err := mcpbind.New(compile(t, "full", `{"id": "m", "initial": "a", "states": {"a": {"meta": {"mcp": {"ungated": ["x"]}}}}}`, nil), nil)
	if err == nil || err.Error() != "states.a.meta.mcp.ungated: ungated applies to the whole machine: write it in the root state's meta.mcp" {
		t.Fatalf("New: %v", err)
	}
	_, err = mcpbind.New(compile(t, "full", `{"id": "m", "initial": "a", "states": {"a": {}}}`, nil), &mcpbind.Options{Ungated: []string{"bad name"}})
	if err == nil || !strings.Contains(err.Error(), "Options.Ungated[0]") {
		t.Fatalf("New: %v", err)
	}
}

// TestLogsCarryNoWorkflowID: workflow ids are bearer tokens; the gate's
// logs name a workflow by a short fingerprint of its key, never by the id
// (before, "workflow started" and "transition" logged the key in clear).
func TestLogsCarryNoWorkflowID(t *testing.T) {
	var logs syncBuffer
	s := newGatedServer(t, &mcpbind.Options{Handles: mcpbind.HandlesAlways, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	close(s.release)
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	id := c.start()
	c.call("claim_bonus", withID(id, nil))
	c.call("claim_bonus", withID(id, nil))
	out := logs.String()
	if !strings.Contains(out, "workflow started") || !strings.Contains(out, "mcpbind: transition") {
		t.Fatalf("log:\n%s", out)
	}
	if strings.Contains(out, id) || strings.Contains(out, id[:16]) {
		t.Fatalf("the log holds the workflow id %s:\n%s", id, out)
	}
}

// TestExternalToolsNotReported: names of tools gated outside the server
// (an agent host's own, through its hooks) are not reported as unknown.
func TestExternalToolsNotReported(t *testing.T) {
	g, err := mcpbind.New(compile(t, "full", `{"id": "m", "initial": "a", "states": {"a": {"meta": {"mcp": {"tools": ["Read", "read_file", "Raed"]}}}}}`, nil),
		&mcpbind.Options{ExternalTools: []string{"Read", "Bash"}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	errs := g.CheckTools([]string{"read_file"})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `"Raed" matches no tool of the server (did you mean "Read"?)`) {
		t.Fatalf("CheckTools: %v", errs)
	}
}
