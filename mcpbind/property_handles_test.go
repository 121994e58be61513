package mcpbind_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
)

// TestPropertyHandles runs the random machines of
// TestPropertyExecutedIffVisible in handle mode (HandlesAlways, protocol
// 2026-07-28, over one in-memory connection): one client
// starts two workflows and calls tools at random, naming a workflow by its
// workflow_id, or none. After every call it checks:
//
//   - the list never changes: every tool of the server and workflow_start;
//     no list_changed is sent;
//   - a bound tool runs iff the named workflow's state allows it (the
//     documented rules and call budgets, the call's arguments deciding
//     under a used-up budget), with WorkflowID giving the handler that
//     workflow; otherwise it is refused with FORBIDDEN or CALL_LIMIT, or,
//     without a workflow_id, WORKFLOW_REQUIRED;
//   - unbound tools run whatever the arguments; names the server does not
//     have get its own error;
//   - each workflow equals a shadow instance driven by the test, and a call
//     in one workflow never changes the other.
func TestPropertyHandles(t *testing.T) {
	seed, machines, steps, stats := propRun(t, 100, 30, 20, 12)
	for i := range machines {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			runHandles(t, generateMachine(seed, i), steps, stats)
		})
	}
}

// handleWorkflow is one workflow of the handle-mode run, as the test
// expects it.
type handleWorkflow struct {
	id     string
	shadow statechart.State
	calls  map[string]int
}

func runHandles(t *testing.T, m *pMachine, steps int, stats *propStats) {
	h := &propHarness{t: t, m: m, kind: "full", stats: stats, runs: map[*mcp.ServerSession]map[string]int{}, sent: map[*mcp.ServerSession]*atomic.Int32{},
		rng: rand.New(rand.NewPCG(m.seed, uint64(m.index)<<32|2))}
	server := h.newServer(&mcpbind.Options{Handles: mcpbind.HandlesAlways})
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sent atomic.Int32
	h.mu.Lock()
	h.sent[ss] = &sent
	h.mu.Unlock()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	x := &propSession{name: "agent", cs: cs, ss: ss}
	wantList := slices.Sorted(slices.Values(append(slices.Clone(m.tools), "workflow_start")))
	if got := h.listTools(x); !slices.Equal(got, wantList) {
		h.fatalf("tools %v, want %v", got, wantList)
	}

	var wfs []*handleWorkflow
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
		if err != nil || res.IsError {
			h.fatalf("workflow_start: %v %+v", err, res)
		}
		w := &handleWorkflow{id: decode[mcpbind.WorkflowStart](t, res).WorkflowID, calls: map[string]int{}}
		if w.shadow, err = h.engine.Start(ctx, time.Now()); err != nil {
			h.fatalf("Start: %v", err)
		}
		wfs = append(wfs, w)
	}

	for i := range steps {
		k := h.rng.IntN(len(wfs)) // len(wfs): no workflow_id
		if h.rng.IntN(8) == 0 {
			k = len(wfs)
		}
		name := m.tools[h.rng.IntN(len(m.tools))]
		if h.rng.IntN(8) == 0 {
			name = propUnknownNames[h.rng.IntN(len(propUnknownNames))]
		}
		args := map[string]any{}
		for _, g := range m.guards {
			if h.rng.IntN(4) == 0 {
				args[g] = false
			}
		}
		switch h.rng.IntN(10) {
		case 0:
			args["fail"] = true
		case 1:
			args["fail"] = "error"
		}
		input := maps.Clone(args) // what the handler and the guards see
		if k < len(wfs) {
			args["workflow_id"] = wfs[k].id
		}
		argJSON, _ := json.Marshal(args)
		fmt.Fprintf(&h.log, "\t%d. calls %s %s\n", i+1, name, argJSON)

		in := m.info(name)
		bound := in.mode != pUnbound
		var w *handleWorkflow
		expectRun, code := true, ""
		switch {
		case !m.registered(name):
			expectRun = false
		case !bound:
		case k == len(wfs):
			expectRun, code = false, mcpbind.CodeWorkflowRequired
		default:
			w = wfs[k]
			ex := h.exhausted(w.shadow, w.calls)
			switch {
			case !h.visible(w.shadow, name):
				expectRun, code = false, mcpbind.CodeForbidden
			case len(ex) > 0 && !h.leaves(w.shadow, name, input, ex):
				expectRun, code = false, mcpbind.CodeCallLimit
			case h.guardRefused(w.shadow, name, input):
				expectRun, code = false, mcpbind.CodeEventRefused
			}
		}
		before := map[string]int{}
		h.mu.Lock()
		for _, wf := range wfs {
			before[wf.id] = h.wfRuns[wf.id][name]
		}
		total := h.runs[ss][name]
		h.mu.Unlock()

		res, callErr := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})

		h.mu.Lock()
		ran := h.runs[ss][name] - total
		ranIn := map[string]int{}
		for _, wf := range wfs {
			ranIn[wf.id] = h.wfRuns[wf.id][name] - before[wf.id]
		}
		h.mu.Unlock()
		if (ran == 1) != expectRun || ran > 1 {
			h.fatalf("%s ran %d times, want it run: %v (code %q)", name, ran, expectRun, code)
		}
		for _, wf := range wfs {
			if want := ran == 1 && bound && wf == w; (ranIn[wf.id] == 1) != want {
				h.fatalf("%s ran %d times for workflow %s", name, ranIn[wf.id], wf.id)
			}
		}

		outcome := "ok"
		switch {
		case !m.registered(name):
			// The server's own answer: a JSON-RPC error, or under
			// 2026-07-28 an error result.
			if (callErr == nil || !strings.Contains(callErr.Error(), "unknown tool")) &&
				(res == nil || !res.IsError || res.StructuredContent != nil || !strings.Contains(resultText(res), "unknown tool")) {
				h.fatalf("%s, which the server does not have: %v, %+v %q", name, callErr, res, resultText(res))
			}
			outcome = "unknown tool"
		case code != "":
			if callErr != nil || !res.IsError {
				h.fatalf("%s: want a refusal with code %s: %v %+v", name, code, callErr, res)
			}
			ref := refusal(t, res)
			if ref.Code != code || ref.Tool != name {
				h.fatalf("%s: refusal %+v, want code %s", name, ref, code)
			}
			if w != nil && (ref.Workflow != w.id || valueJSON(ref.State) != valueJSON(w.shadow.Value())) {
				h.fatalf("%s: refusal %+v names workflow %s in state %s", name, ref, w.id, valueJSON(w.shadow.Value()))
			}
			outcome = "refused " + code
		case args["fail"] == "error":
			if callErr == nil {
				h.fatalf("%s, whose handler errs: no error", name)
			}
			outcome = "protocol error"
		case callErr != nil:
			h.fatalf("%s: %v", name, callErr)
		case args["fail"] == true:
			if !res.IsError {
				h.fatalf("%s, which fails: IsError false", name)
			}
			outcome = "failed"
		case res.IsError:
			h.fatalf("%s: IsError: %s", name, resultText(res))
		}

		// The shadow: a budget counts a bound call that ran; a successful
		// one sends the event.
		if w != nil && ran == 1 {
			if len(h.exhausted(w.shadow, w.calls)) == 0 && h.limited(w.shadow) {
				h.count(w.shadow, w.calls)
			}
			if outcome == "ok" && in.event != "" {
				old := w.shadow
				if w.shadow = h.send(old, w.calls, name, input); stateJSON(old) != stateJSON(w.shadow) {
					stats.add("transitions", 1)
				}
			}
		}
		for _, wf := range wfs {
			got, err := h.gate.Workflow(ctx, wf.id)
			if err != nil {
				h.fatalf("Workflow(%s): %v", wf.id, err)
			}
			if valueJSON(got.State.Value()) != valueJSON(wf.shadow.Value()) || got.State.Status() != wf.shadow.Status() {
				h.fatalf("after %s: workflow %s is in %s, want %s", name, wf.id, valueJSON(got.State.Value()), valueJSON(wf.shadow.Value()))
			}
		}
		fmt.Fprintf(&h.log, "\t   -> %s\n", outcome)
		stats.add("calls "+outcome, 1)
		if h.rng.IntN(5) == 0 {
			if got := h.listTools(x); !slices.Equal(got, wantList) {
				h.fatalf("the tools changed to %v", got)
			}
		}
	}
	if n := sent.Load(); n != 0 {
		h.fatalf("%d list_changed sent under protocol 2026-07-28", n)
	}
}
