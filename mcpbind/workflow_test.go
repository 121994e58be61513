package mcpbind_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

func decode[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWorkflowTools(t *testing.T) {
	for _, engine := range engines {
		t.Run(engine, func(t *testing.T) {
			f := newFixture(t, compile(t, engine, checkoutJSON, nil), nil)
			if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
				t.Fatal(err)
			}
			c := f.connect(t, "2025-11-25")
			c.expectTools("empty", "cart_add_item", "cart_view", "workflow_status", "workflow_transition")

			res := c.call("workflow_status", nil)
			st := decode[mcpbind.WorkflowStatus](t, res)
			if st.State != "empty" || st.Status != "active" || strings.Join(st.Tools, " ") != "cart_add_item cart_view workflow_status workflow_transition" ||
				len(st.Events) != 0 || strings.Join(st.Instructions, "|") != "Add a product." {
				t.Fatalf("status %+v", st)
			}
			if want := "Workflow state: \"empty\" (active).\nTools available now: cart_add_item, cart_view, workflow_status, workflow_transition.\nEvents workflow_transition can send now: none.\nInstructions: Add a product."; resultText(res) != want {
				t.Fatalf("status text:\n%s\nwant:\n%s", resultText(res), want)
			}

			// Events bound to tools are sent by calling the tools.
			res = c.call("workflow_transition", map[string]any{"event": "ADD_ITEM"})
			if !res.IsError || resultText(res) != `Event "ADD_ITEM" is sent by calling cart_add_item, not with workflow_transition.` {
				t.Fatalf("ADD_ITEM: %s", resultText(res))
			}
			res = c.call("workflow_transition", map[string]any{"event": "CANCEL"})
			if !res.IsError || resultText(res) != `No transition for event "CANCEL" in state "empty". It accepts no event now.` {
				t.Fatalf("CANCEL in empty: %s", resultText(res))
			}
			res = c.call("workflow_transition", map[string]any{"event": "NOPE"})
			if !res.IsError || !strings.HasPrefix(resultText(res), `Event "NOPE" cannot be sent with workflow_transition.`) {
				t.Fatalf("NOPE: %s", resultText(res))
			}
			if res := c.call("workflow_transition", nil); !res.IsError {
				t.Fatal("a transition without an event was accepted")
			}

			c.call("cart_add_item", map[string]any{"product_id": "p"})
			c.expectChanged("add")
			c.call("cart_checkout", nil)
			c.expectChanged("checkout")
			st = decode[mcpbind.WorkflowStatus](t, c.call("workflow_status", nil))
			if st.State != "payment" || strings.Join(st.Events, " ") != "CANCEL" {
				t.Fatalf("status in payment: %+v", st)
			}

			res = c.call("workflow_transition", map[string]any{"event": "CANCEL", "data": map[string]any{"rationale": "the user changed their mind"}})
			tr := decode[mcpbind.TransitionResult](t, res)
			if res.IsError || !tr.Transitioned || tr.From != "payment" || tr.To != "has_items" || !tr.ToolsChanged {
				t.Fatalf("CANCEL: %s %+v", resultText(res), tr)
			}
			c.expectChanged("cancel")
			c.expectTools("has_items", "cart_add_item", "cart_checkout", "cart_view", "workflow_status", "workflow_transition")

			c.call("workflow_transition", map[string]any{"event": "CLEAR"})
			c.expectChanged("clear")
			if s := stateOf(t, f, c); s != "empty" {
				t.Fatalf("state %v", s)
			}
		})
	}
}

func TestWorkflowTransitionGuardAndFinal(t *testing.T) {
	const machine = `{
	  "id": "deploy", "initial": "testing",
	  "states": {
	    "testing": {"on": {"DEPLOY": {"target": "deployed", "guard": "testsPassed"}}},
	    "deployed": {"type": "final"}
	  }
	}`
	impl, err := statechart.ParseImplementations([]byte(`{"guards": {"testsPassed": {"field": "event.input.test_result", "op": "eq", "value": "pass"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, compile(t, "full", machine, &statechart.Options{Implementations: impl}), nil, "run_tests")
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	res := c.call("workflow_transition", map[string]any{"event": "DEPLOY", "data": map[string]any{"test_result": "fail"}})
	if !res.IsError || resultText(res) != `Event "DEPLOY" was refused by a guard in state "testing". It accepts no event now.` {
		t.Fatalf("guarded DEPLOY: %s", resultText(res))
	}
	res = c.call("workflow_transition", map[string]any{"event": "DEPLOY", "data": map[string]any{"test_result": "pass"}})
	if res.IsError || resultText(res) != `Transitioned from "testing" to "deployed" on DEPLOY.` {
		t.Fatalf("DEPLOY: %s", resultText(res))
	}
	res = c.call("workflow_transition", map[string]any{"event": "DEPLOY", "data": map[string]any{"test_result": "pass"}})
	if !res.IsError || resultText(res) != `Cannot transition: the workflow is in final state "deployed".` {
		t.Fatalf("DEPLOY when final: %s", resultText(res))
	}
}

func TestAddWorkflowToolsErrors(t *testing.T) {
	g, err := mcpbind.New(compile(t, "flat", checkoutJSON, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	if err := g.AddWorkflowTools(s, nil); err == nil || !strings.Contains(err.Error(), "call Attach first") {
		t.Fatalf("before Attach: %v", err)
	}
	g.Attach(s)
	if err := g.AddWorkflowTools(s, &mcpbind.WorkflowToolsOptions{Events: []string{"CANCLE"}}); err == nil ||
		err.Error() != `mcpbind: AddWorkflowTools: machine "checkout": no state handles event "CANCLE" (did you mean "CANCEL"?)` {
		t.Fatalf("bad event: %v", err)
	}
	if err := g.AddWorkflowTools(s, &mcpbind.WorkflowToolsOptions{StatusName: "status!"}); err == nil {
		t.Fatal("bad name accepted")
	}
}

// TestWorkflowToolSets: a second set of workflow tools under other names
// answers in its own shape (RenderStatus, RenderTransition), alongside the
// first.
func TestWorkflowToolSets(t *testing.T) {
	f := newFixture(t, compile(t, "flat", checkoutJSON, nil), nil)
	if err := f.gate.AddWorkflowTools(f.server, nil); err != nil {
		t.Fatal(err)
	}
	err := f.gate.AddWorkflowTools(f.server, &mcpbind.WorkflowToolsOptions{
		StatusName: "compat_state", TransitionName: "compat_transition",
		RenderStatus: func(_ context.Context, st mcpbind.WorkflowStatus, w *mcpbind.Workflow) *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("state=%v tools=%d history=%d", st.State, len(st.Tools), len(w.History))}}}
		},
		RenderTransition: func(_ context.Context, tr mcpbind.TransitionResult, w *mcpbind.Workflow) *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%v->%v now %v", tr.From, tr.To, w.State.Value())}}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := f.connect(t, "2025-11-25")
	c.call("cart_add_item", map[string]any{"product_id": "p"})
	c.call("cart_checkout", nil)
	if got := resultText(c.call("compat_transition", map[string]any{"event": "CANCEL"})); got != "payment->has_items now has_items" {
		t.Fatalf("compat_transition: %q", got)
	}
	if got := resultText(c.call("compat_state", nil)); got != "state=has_items tools=7 history=3" {
		t.Fatalf("compat_state: %q", got)
	}
	if st := decode[mcpbind.WorkflowStatus](t, c.call("workflow_status", nil)); st.State != "has_items" || len(st.Events) != 1 {
		t.Fatalf("workflow_status %+v", st)
	}
	// Refusals keep the gate's text.
	if res := c.call("compat_transition", map[string]any{"event": "PAY"}); !res.IsError || !strings.Contains(resultText(res), "is sent by calling cart_pay") {
		t.Fatalf("compat refusal: %s", resultText(res))
	}
}
