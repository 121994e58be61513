package mcpbind_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// codingJSON gates an agent host's own tools: Read everywhere, Edit only
// while implementing, and a successful Bash call (the tests) moves on.
const codingJSON = `{
  "id": "coding", "initial": "plan",
  "states": {
    "plan": {"on": {"PLANNED": "implement"}, "meta": {"mcp": {"tools": ["Read", "Grep"], "instructions": "Read the code and plan."}}},
    "implement": {"on": {"TESTED": "done"}, "meta": {"mcp": {"tools": ["Read", "Edit", "Bash"], "events": {"Bash": "TESTED"}, "maxCalls": 3}}},
    "done": {"type": "final", "meta": {"mcp": {"tools": ["*"]}}}
  }
}`

// TestCheckAndRecord: a host's tools, decided and recorded by name outside
// MCP, follow the same rules as tools/call: refusals with guidance,
// budgets, events, history.
func TestCheckAndRecord(t *testing.T) {
	g, err := mcpbind.New(compile(t, "full", codingJSON, nil), &mcpbind.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "agent-session-1"}
	host := mcpbind.Host{Tools: []string{"Read", "Grep", "Edit", "Bash", "WebFetch"}, TransitionTool: "workflow_transition"}
	d, err := g.Check(ctx, ref, "Edit", json.RawMessage(`{"file_path": "a.go"}`), host)
	if err != nil || d.Allowed || d.Refusal.Code != mcpbind.CodeForbidden || !strings.Contains(d.Text, `Tool "Edit" is not available in the current workflow state ("plan")`) ||
		!strings.Contains(d.Text, `To make it available, call workflow_transition with event "PLANNED".`) || !strings.Contains(d.Text, "Tools available now: Read, Grep.") {
		t.Fatalf("Edit in plan: %+v %v\n%s", d, err, d.Text)
	}
	if d, err := g.Check(ctx, ref, "Read", nil, host); err != nil || !d.Allowed {
		t.Fatalf("Read: %+v %v", d, err)
	}
	if tr, err := g.Send(ctx, ref, mcpEvent("PLANNED"), "agent"); err != nil || tr == nil {
		t.Fatalf("PLANNED: %v %v", tr, err)
	}
	if d, _ := g.Check(ctx, ref, "Edit", nil, host); !d.Allowed {
		t.Fatalf("Edit in implement: %+v", d)
	}
	// A failed Bash call (the tests failed) sends no event; a successful one does.
	if tr, err := g.Record(ctx, ref, "Bash", json.RawMessage(`{"command": "go test ./..."}`), &mcp.CallToolResult{IsError: true}, host); err != nil || tr != nil {
		t.Fatalf("failed Bash: %v %v", tr, err)
	}
	if _, err := g.Record(ctx, ref, "Edit", nil, nil, host); err != nil {
		t.Fatal(err)
	}
	// Two calls counted of three: the budget is not used up yet.
	w, err := g.WorkflowOf(ctx, ref)
	if err != nil || len(w.Limits) != 1 || w.Limits[0].Calls != 2 {
		t.Fatalf("limits %+v %v", w, err)
	}
	tr, err := g.Record(ctx, ref, "Bash", json.RawMessage(`{"command": "go test ./..."}`), nil, host)
	if err != nil || tr == nil || tr.To != "done" {
		t.Fatalf("Bash: %+v %v", tr, err)
	}
	if d, _ := g.Check(ctx, ref, "WebFetch", nil, host); !d.Allowed {
		t.Fatalf("after the final state: %+v", d)
	}
}

func mcpEvent(typ string) statechart.Event { return statechart.Event{Type: typ} }
