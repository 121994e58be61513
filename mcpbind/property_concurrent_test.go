package mcpbind_test

// A property test of the gate under concurrent calls: random machines (the
// generator of property_test.go, without call budgets), one workflow, and
// several goroutines calling random tools at once through one instance or
// through two instances that share a store (memory, or a real Redis). The
// handlers log what ran; the log must be a run of the machine that could
// have happened one call at a time.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/redistest"
	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/mcpbind/redisstore"
	"github.com/chartgate/chartgate/statechart"
)

// TestPropertyConcurrentCallsSequential checks, for each machine, that:
//
//   - the calls of tools that send an event ran one at a time, and each
//     was allowed in the state the previous ones left (their events applied
//     in the order they ran, after a success only): a tool the workflow
//     allows once runs once;
//   - every other call ran in a state the workflow was in while the call
//     was in progress;
//   - the workflow ends in the state those events give;
//   - no call was lost, and every refusal was FORBIDDEN.
//
// Each machine runs through two front doors with the same verdicts: MCP
// (clients calling tools of a Streamable HTTP server) and the core with no
// MCP (Gate.Reserve, the tool run in the caller, Reservation.Commit).
func TestPropertyConcurrentCallsSequential(t *testing.T) {
	seed, machines, steps, _ := propRun(t, 60, 8, 20, 6)
	for _, setup := range []string{"one instance", "two instances", "two instances on Redis"} {
		t.Run(setup, func(t *testing.T) {
			var newStore func() mcpbind.Store
			switch setup {
			case "two instances on Redis":
				client := redistest.Start(t)
				newStore = func() mcpbind.Store {
					return redisstore.New(client, &redisstore.Options{Prefix: fmt.Sprintf("prop:%d:", rand.Uint64())})
				}
			default:
				newStore = func() mcpbind.Store { return mcpbind.NewMemoryStore(nil) }
			}
			instances := 1
			if strings.HasPrefix(setup, "two") {
				instances = 2
			}
			for _, door := range []string{"mcp", "core"} {
				t.Run(door, func(t *testing.T) {
					for i := range machines {
						t.Run(fmt.Sprint(i), func(t *testing.T) {
							t.Parallel()
							runConcurrent(t, generateMachine(seed, i), newStore(), instances, 4, steps, door)
						})
					}
				})
			}
		})
	}
}

// runLog is one handler execution.
type runLog struct {
	tool   string
	args   map[string]any
	failed bool // the handler reported a failure (no event)
	// started counts the event-sending runs that had started when the call
	// was made (callStarted) and when its handler started (handlerStarted).
	callStarted, handlerStarted int
}

func runConcurrent(t *testing.T, m *pMachine, store mcpbind.Store, instances, workers, steps int, door string) {
	for _, n := range m.nodes {
		n.maxCalls = 0 // budgets are counted concurrently in limits_test.go
	}
	m.marshal()
	h := &propHarness{t: t, m: m, kind: "full"}
	var (
		mu      sync.Mutex
		log     []runLog // event-sending runs, in the order they started
		others  []runLog // the other runs
		started atomic.Int32
	)
	isEvent := func(tool string) bool { return m.info(tool).event != "" }
	// run is the tool's run, whichever front door called it: it logs the
	// run and reports whether the tool failed (its arguments ask it to).
	// callStarted is how many event-sending runs had started when the
	// call was made.
	run := func(name string, args map[string]any, callStarted int) (failed bool) {
		r := runLog{tool: name, args: args, callStarted: callStarted}
		mu.Lock()
		r.handlerStarted = int(started.Load())
		if isEvent(name) {
			started.Add(1)
			log = append(log, r)
		}
		mu.Unlock()
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) // let calls overlap
		r.failed = args["fail"] == true || args["fail"] == "error"
		mu.Lock()
		if isEvent(name) {
			log[r.handlerStarted].failed = r.failed
		} else {
			others = append(others, r)
		}
		mu.Unlock()
		return r.failed
	}
	var clients []*mcp.ClientSession
	var gates []*mcpbind.Gate
	for range instances {
		server := h.newServer(&mcpbind.Options{Store: store, Handles: mcpbind.HandlesAlways})
		// The handlers newServer added count per session; replace them
		// with ones that log the run.
		for _, name := range m.tools {
			server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					var args map[string]any
					_ = json.Unmarshal(req.Params.Arguments, &args)
					n, _ := req.Params.Meta["callStarted"].(float64)
					failed := run(name, args, int(n))
					if args["fail"] == "error" {
						return nil, fmt.Errorf("%s broke", name)
					}
					if failed {
						return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: name + " failed"}}}, nil
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + name}}, StructuredContent: map[string]any{"tool": name}}, nil
				})
		}
		gates = append(gates, h.gate)
		if door == "core" {
			continue
		}
		srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true}))
		t.Cleanup(srv.Close)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: srv.Client()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		clients = append(clients, cs)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "w"}
	var id string
	if door == "mcp" {
		res, err := clients[0].CallTool(ctx, &mcp.CallToolParams{Name: "workflow_start"})
		if err != nil || res.IsError {
			t.Fatalf("workflow_start: %v %+v", err, res)
		}
		id = res.StructuredContent.(map[string]any)["workflow_id"].(string)
		ref = mcpbind.Ref{ID: id}
	}
	tools := slices.Sorted(slices.Values(m.tools))
	// viaCore calls a tool through the core, as runConcurrent's clients
	// do through MCP: decided and reserved, run here, committed.
	viaCore := func(name string, args map[string]any, callStarted int) error {
		raw, _ := json.Marshal(args)
		g := gates[rand.IntN(len(gates))]
		d, rv, err := g.Reserve(ctx, gate.Request{Ref: ref, Tool: name, Args: raw, Tools: tools})
		switch {
		case err != nil:
			return fmt.Errorf("Reserve: %w", err)
		case !d.Allowed && d.Refusal == nil:
			return fmt.Errorf("refused without a refusal: %s", d.Text)
		case !d.Allowed:
			if d.Refusal.Code != mcpbind.CodeForbidden && d.Refusal.Code != mcpbind.CodeEventRefused {
				return fmt.Errorf("refused with %s: %s", d.Refusal.Code, d.Text)
			}
			return nil
		}
		o := gate.Outcome{Failed: run(name, args, callStarted)}
		if !o.Failed {
			o.Output = json.RawMessage(fmt.Sprintf(`{"tool":%q}`, name))
		}
		if _, err := rv.Commit(ctx, o); err != nil {
			return fmt.Errorf("Commit: %w", err)
		}
		return nil
	}

	var wg sync.WaitGroup
	var calls strings.Builder
	var callsMu sync.Mutex
	for w := range workers {
		rng := rand.New(rand.NewPCG(m.seed, uint64(m.index)<<8|uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range steps {
				name := m.tools[rng.IntN(len(m.tools))]
				unknown := rng.IntN(10) == 0
				if unknown && door == "mcp" {
					name = propUnknownNames[rng.IntN(len(propUnknownNames))]
				}
				args := map[string]any{}
				if id != "" {
					args["workflow_id"] = id
				}
				for _, g := range m.guards {
					if rng.IntN(4) == 0 {
						args[g] = false
					}
				}
				switch p := rng.IntN(100); {
				case p < 10:
					args["fail"] = true
				case p < 14:
					args["fail"] = "error"
				}
				if door == "core" {
					err := viaCore(name, args, int(started.Load()))
					callsMu.Lock()
					fmt.Fprintf(&calls, "\tworker %d: %s %v -> %v\n", w, name, args, err)
					callsMu.Unlock()
					if err != nil {
						t.Errorf("%s: %v", name, err)
					}
					continue
				}
				// How many event-sending runs had started when the call was
				// made travels to the handler in _meta.
				meta := mcp.Meta{"callStarted": started.Load()}
				res, err := clients[rng.IntN(len(clients))].CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
				callsMu.Lock()
				fmt.Fprintf(&calls, "\tworker %d: %s %v -> %s\n", w, name, args, describeResult(res, err))
				callsMu.Unlock()
				switch {
				case !m.registered(name):
					if err == nil || !strings.Contains(err.Error(), "unknown tool") {
						t.Errorf("unknown tool %s: %v %v", name, describeResult(res, err), err)
					}
				case err != nil:
					if args["fail"] != "error" {
						t.Errorf("%s: %v", name, err)
					}
				case res.IsError && args["fail"] == nil:
					if ref := refusal(t, res); ref.Code != mcpbind.CodeForbidden && ref.Code != mcpbind.CodeEventRefused {
						t.Errorf("%s refused with %s: %s", name, ref.Code, resultText(res))
					}
				}
			}
		}()
	}
	wg.Wait()

	// Replay: the event-sending runs in order, each allowed in the state
	// the previous left.
	report := func() string {
		return fmt.Sprintf("seed %d, machine %d (go test ./mcpbind -run 'TestPropertyConcurrentCallsSequential/.*/%s/^%d$' -prop.seed=%d)\nmachine:\n%s\ncalls:\n%s",
			m.seed, m.index, door, m.index, m.seed, indentJSON(m.json), calls.String())
	}
	s, err := h.engine.Start(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	states := []statechart.State{s}
	for i, r := range log {
		if !h.visible(s, r.tool) {
			t.Fatalf("event-sending run %d, %s, ran in state %s, where it is not allowed\n%s", i+1, r.tool, stateJSON(s), report())
		}
		input := map[string]any{}
		for k, v := range r.args {
			if k != "workflow_id" {
				input[k] = v
			}
		}
		if h.guardRefused(s, r.tool, input) {
			t.Fatalf("event-sending run %d, %s, ran in state %s, whose guards refuse its event with %v\n%s", i+1, r.tool, stateJSON(s), input, report())
		}
		if !r.failed {
			s = h.send(s, map[string]int{}, r.tool, input)
		}
		states = append(states, s)
	}
	// The other runs: allowed in one of the states the workflow was in
	// between the call and its handler.
	for _, r := range others {
		lo, hi := max(r.callStarted-1, 0), min(r.handlerStarted, len(states)-1)
		if !slices.ContainsFunc(states[lo:hi+1], func(s statechart.State) bool { return h.visible(s, r.tool) }) {
			t.Fatalf("%s ran, but it is allowed in none of the states %d..%d the workflow was in during the call\n%s", r.tool, lo, hi, report())
		}
	}
	wf, err := gates[0].WorkflowOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if stateJSON(wf.State) != stateJSON(s) {
		t.Fatalf("the workflow ended in %s; its runs give %s\n%s", stateJSON(wf.State), stateJSON(s), report())
	}
}

func describeResult(res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil:
		return "error: " + err.Error()
	case res.IsError:
		return "refused/failed: " + strings.SplitN(resultText(res), "\n", 2)[0]
	}
	return "ok"
}

// TestPropertyConcurrentCore is TestPropertyConcurrentCallsSequential's
// machines through the core with no MCP (the hooks' path: Decide, the
// tool, Commit), with workers calling at once through one gate or two
// sharing a store. Decide holds nothing (a hook's tool runs in another
// process), so what holds is what Commit promises: every commit that
// moved the workflow is saved once, none is lost, and the run history is
// one chain of transitions, from the initial state to the state the
// workflow ends in; every refusal is FORBIDDEN or EVENT_REFUSED, with the
// same code Decide gives through MCP for that state (checked in
// TestPropertyExecutedIffVisible).
func TestPropertyConcurrentCore(t *testing.T) {
	seed, machines, steps, _ := propRun(t, 60, 8, 20, 6)
	for _, instances := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d instances", instances), func(t *testing.T) {
			for i := range machines {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					t.Parallel()
					runConcurrentCore(t, generateMachine(seed, i), instances, 4, steps)
				})
			}
		})
	}
}

func runConcurrentCore(t *testing.T, m *pMachine, instances, workers, steps int) {
	for _, n := range m.nodes {
		n.maxCalls = 0
	}
	m.marshal()
	h := &propHarness{t: t, m: m, kind: "full"}
	store := mcpbind.NewMemoryStore(nil)
	var gates []*mcpbind.Gate
	for range instances {
		h.newServer(&mcpbind.Options{Store: store, HistoryLimit: 1 << 20, HistoryBytes: 1 << 30})
		gates = append(gates, h.gate)
	}
	ctx := context.Background()
	ref := mcpbind.Ref{Name: "w"}
	tools := slices.Sorted(slices.Values(m.tools))
	var (
		mu    sync.Mutex
		moved []*mcpbind.Transition
		calls strings.Builder
		wg    sync.WaitGroup
	)
	for w := range workers {
		rng := rand.New(rand.NewPCG(m.seed, uint64(m.index)<<8|uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range steps {
				name := m.tools[rng.IntN(len(m.tools))]
				args := map[string]any{}
				for _, g := range m.guards {
					if rng.IntN(4) == 0 {
						args[g] = false
					}
				}
				failed := rng.IntN(10) == 0
				raw, _ := json.Marshal(args)
				r := gate.Request{Ref: ref, Tool: name, Args: raw, Tools: tools}
				g := gates[rng.IntN(len(gates))]
				d, err := g.Decide(ctx, r)
				if err != nil {
					t.Errorf("Decide(%s): %v", name, err)
					return
				}
				if !d.Allowed {
					if d.Refusal == nil || d.Refusal.Code != mcpbind.CodeForbidden && d.Refusal.Code != mcpbind.CodeEventRefused {
						t.Errorf("%s refused: %+v", name, d.Refusal)
					}
					continue
				}
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) // the tool runs; let calls overlap
				o := gate.Outcome{Failed: failed}
				if !failed {
					o.Output = json.RawMessage(fmt.Sprintf(`{"tool":%q}`, name))
				}
				tr, err := gates[rng.IntN(len(gates))].Commit(ctx, r, o)
				mu.Lock()
				fmt.Fprintf(&calls, "\tworker %d: %s %s failed=%v -> %v %v\n", w, name, raw, failed, tr != nil, err)
				if tr != nil {
					moved = append(moved, tr)
				}
				mu.Unlock()
				if err != nil {
					t.Errorf("Commit(%s): %v", name, err)
				}
			}
		}()
	}
	wg.Wait()
	report := func() string {
		return fmt.Sprintf("seed %d, machine %d (go test ./mcpbind -run 'TestPropertyConcurrentCore/.*/^%d$' -prop.seed=%d)\nmachine:\n%s\ncalls:\n%s",
			m.seed, m.index, m.index, m.seed, indentJSON(m.json), calls.String())
	}
	wf, err := gates[0].WorkflowOf(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.engine.Start(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(wf.History) != len(moved) {
		t.Fatalf("%d commits moved the workflow, its history has %d transitions\n%s", len(moved), len(wf.History), report())
	}
	at := valueJSON(s.Value())
	for i, tr := range wf.History {
		if valueJSON(tr.From) != at {
			t.Fatalf("history entry %d (%s) moves from %s, but the workflow was in %s\n%s", i+1, tr.Tool, valueJSON(tr.From), at, report())
		}
		at = valueJSON(tr.To)
	}
	if got := valueJSON(wf.State.Value()); got != at {
		t.Fatalf("the workflow ended in %s; its history gives %s\n%s", got, at, report())
	}
}
