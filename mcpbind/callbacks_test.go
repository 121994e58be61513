package mcpbind_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// panickyLogger returns a logger whose records the test reads.
func panickyLogger() (*slog.Logger, *syncBuffer) {
	logs := &syncBuffer{}
	return slog.New(slog.NewTextHandler(logs, nil)), logs
}

// wantCallbackLogged checks that a recovered panic of callback was logged
// with its name, its value and a stack.
func wantCallbackLogged(t *testing.T, logs *syncBuffer, callback string) {
	t.Helper()
	out := logs.String()
	if !strings.Contains(out, "a callback panicked") || !strings.Contains(out, "callback=Options."+callback) ||
		!strings.Contains(out, "panic="+callback+"-boom") || !strings.Contains(out, "goroutine ") {
		t.Fatalf("%s's panic not logged:\n%s", callback, out)
	}
}

// TestOnTransitionPanics: an OnTransition that panics neither stops the
// server nor loses the transition: the call that caused it is answered
// with the transition, the next call is served, and Send's transitions
// are saved too.
func TestOnTransitionPanics(t *testing.T) {
	log, logs := panickyLogger()
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), &mcpbind.Options{Logger: log,
		OnTransition: func(context.Context, mcpbind.Transition) { panic("OnTransition-boom") }})
	c := f.connect(t, "2025-11-25")
	res := c.call("cart_add_item", map[string]any{"sku": "a"})
	if res.IsError || !strings.Contains(resultText(res), "ok cart_add_item") {
		t.Fatalf("cart_add_item: %s", resultText(res))
	}
	wantCallbackLogged(t, logs, "OnTransition")
	w, err := f.gate.SessionWorkflow(context.Background(), c.ss)
	if err != nil || w.State.Value() != "has_items" {
		t.Fatalf("after the panic: %+v %v", w, err)
	}
	if res := c.call("cart_checkout", nil); res.IsError {
		t.Fatalf("cart_checkout: %s", resultText(res))
	}
	if w, _ := f.gate.SessionWorkflow(context.Background(), c.ss); w.State.Value() != "payment" {
		t.Fatalf("after cart_checkout: %v", w.State.Value())
	}

	g, err := mcpbind.New(compile(t, "full", checkoutJSON, nil), &mcpbind.Options{Logger: quietLogger(),
		OnTransition: func(context.Context, mcpbind.Transition) { panic("OnTransition-boom") }})
	if err != nil {
		t.Fatal(err)
	}
	ref := mcpbind.Ref{Name: "s"}
	if tr, err := g.Send(context.Background(), ref, statechart.Event{Type: "ADD_ITEM"}, "test"); err != nil || tr == nil {
		t.Fatalf("Send: %+v %v", tr, err)
	}
	if w, _ := g.WorkflowOf(context.Background(), ref); w.State.Value() != "has_items" || len(w.History) != 1 {
		t.Fatalf("after Send: %+v", w)
	}
}

// TestAfterCallPanics: the call's own event is recorded and its result
// returned; the follow-ups are not sent.
func TestAfterCallPanics(t *testing.T) {
	log, logs := panickyLogger()
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), &mcpbind.Options{Logger: log,
		AfterCall: func(context.Context, mcpbind.Call) []mcpbind.FollowUp { panic("AfterCall-boom") }})
	c := f.connect(t, "2025-11-25")
	if res := c.call("cart_add_item", nil); res.IsError || !strings.Contains(resultText(res), "ok cart_add_item") {
		t.Fatalf("cart_add_item: %s", resultText(res))
	}
	wantCallbackLogged(t, logs, "AfterCall")
	if w, _ := f.gate.SessionWorkflow(context.Background(), c.ss); w.State.Value() != "has_items" {
		t.Fatalf("after the panic: %v", w.State.Value())
	}
	if res := c.call("cart_checkout", nil); res.IsError {
		t.Fatalf("next call: %s", resultText(res))
	}
}

// TestCheckpointNoticePanics: the default notice is written instead.
func TestCheckpointNoticePanics(t *testing.T) {
	log, logs := panickyLogger()
	engine := compile(t, "full", `{"id": "w", "initial": "work", "states": {
		"work": {"meta": {"mcp": {"tools": ["edit"], "maxCalls": 1, "onMaxCalls": "warn"}}}}}`, nil)
	f := newFixture(t, engine, &mcpbind.Options{Logger: log,
		CheckpointNotice: func(mcpbind.CallLimit) string { panic("CheckpointNotice-boom") }}, "edit")
	c := f.connect(t, "2025-11-25")
	c.call("edit", nil)
	res := c.call("edit", nil)
	if res.IsError || !strings.Contains(resultText(res), `[CHECKPOINT: 2 tool calls in state "work", which allows 1.`) {
		t.Fatalf("second edit: %s", resultText(res))
	}
	wantCallbackLogged(t, logs, "CheckpointNotice")
}

// TestSessionKeyPanics: a session whose name cannot be had keeps a
// workflow of its own, gated as any.
func TestSessionKeyPanics(t *testing.T) {
	log, logs := panickyLogger()
	f := newFixture(t, compile(t, "full", checkoutJSON, nil), &mcpbind.Options{Logger: log,
		SessionKey: func(*mcp.ServerSession) string { panic("SessionKey-boom") }})
	c := f.connect(t, "2025-11-25")
	if res := c.call("cart_pay", nil); !res.IsError || refusal(t, res).Code != mcpbind.CodeForbidden {
		t.Fatalf("cart_pay in empty: %s", resultText(res))
	}
	if res := c.call("cart_add_item", nil); res.IsError {
		t.Fatalf("cart_add_item: %s", resultText(res))
	}
	wantCallbackLogged(t, logs, "SessionKey")
	if w, _ := f.gate.SessionWorkflow(context.Background(), c.ss); w.State.Value() != "has_items" {
		t.Fatalf("after the panic: %v", w.State.Value())
	}
}

// TestNowAndStartLimitClientPanic: a clock that panics is replaced by
// time.Now for that reading; a StartLimit.Client that panics names no
// client, and the limit holds for all such calls together.
func TestNowAndStartLimitClientPanic(t *testing.T) {
	log, logs := panickyLogger()
	s := newGatedServer(t, &mcpbind.Options{Logger: log, Handles: mcpbind.HandlesAlways,
		Now:        func() time.Time { panic("Now-boom") },
		StartLimit: &mcpbind.StartLimit{Every: time.Hour, Burst: 1, Client: func(*mcp.CallToolRequest) string { panic("StartLimit.Client-boom") }}})
	close(s.release)
	c := (&fixture{server: s.server, gate: s.gate}).connect(t, "2025-11-25")
	res := c.call("workflow_start", nil)
	if res.IsError {
		t.Fatalf("start: %s", resultText(res))
	}
	wantCallbackLogged(t, logs, "Now")
	wantCallbackLogged(t, logs, "StartLimit.Client")
	if res := c.call("workflow_start", nil); refusal(t, res).Code != mcpbind.CodeRateLimited {
		t.Fatalf("second start: %s", resultText(res))
	}
}
