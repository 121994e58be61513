// This file generates random Statewright workflows (every transition form,
// forks, interrupts, approvals, safe_next, guards) and checks what must
// hold for each that loads: mcpbind accepts its meta.mcp, its JSON loads
// again as the same workflow, and random walks never fail.

package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/mcpbind"
	"github.com/chartgate/chartgate/statechart"
	"github.com/chartgate/chartgate/workflow"
)

// genWorkflow returns a random Statewright workflow.
func genWorkflow(rng *rand.Rand) map[string]any {
	nWork := 2 + rng.IntN(6)
	var work, finals []string
	for i := range nWork {
		work = append(work, fmt.Sprintf("s%d", i))
	}
	finals = []string{"done", "failed"}
	all := append(append([]string{}, work...), finals...)
	pick := func(from []string) string { return from[rng.IntN(len(from))] }
	events := []string{"A", "B", "C", "D"}
	guardNames := []string{"g0", "g1", "g2"}
	states := map[string]any{}
	hasInterrupt := rng.IntN(3) == 0
	handler := ""
	if hasInterrupt {
		handler = "check"
		states["check"] = map[string]any{"allowed_tools": []any{"Read"}, "on": map[string]any{"OK": "$return", "GIVE_UP": "failed"}}
	}
	for i, s := range work {
		st := map[string]any{}
		if rng.IntN(2) == 0 {
			st["allowed_tools"] = []any{pick([]string{"Read", "Edit", "Bash", "mcp_*"})}
		}
		if rng.IntN(4) == 0 {
			st["disallowed_tools"] = []any{"Write"}
		}
		if rng.IntN(3) == 0 {
			st["max_iterations"] = 1 + rng.IntN(5)
		}
		if rng.IntN(4) == 0 {
			st["safe_next"] = pick(all)
		}
		if rng.IntN(4) == 0 {
			st["allowed_commands"] = []any{"go test"}
		}
		on := map[string]any{}
		// A path forward, so that most states are reachable.
		next := "done"
		if i+1 < len(work) {
			next = work[i+1]
		}
		on["NEXT"] = next
		for range rng.IntN(3) {
			ev := pick(events)
			switch rng.IntN(6) {
			case 0:
				on[ev] = pick(all)
			case 1:
				on[ev] = map[string]any{"target": pick(all), "guard": pick(guardNames)}
			case 2:
				on[ev] = map[string]any{"target": pick(all), "requires_approval": true}
			case 3:
				var branches []any
				for range 1 + rng.IntN(3) {
					br := map[string]any{"target": pick(all)}
					if rng.IntN(2) == 0 {
						br["guards"] = []any{pick(guardNames)}
					}
					branches = append(branches, br)
				}
				on[ev] = branches
			case 4:
				// A fork whose branches are the states after this one.
				if i+2 < len(work) {
					on[ev] = map[string]any{"fork": map[string]any{
						"branches": map[string]any{
							"x": map[string]any{"initial": work[i+1], "terminal": "done"},
							"y": map[string]any{"initial": work[i+2], "terminal": "done"},
						},
						"join":        pick([]string{"all", "any"}),
						"on_complete": pick(all),
					}}
				}
			case 5:
				if hasInterrupt {
					on[ev] = "$return"
				}
			}
		}
		st["on"] = on
		states[s] = st
	}
	states["done"] = map[string]any{"type": "final"}
	states["failed"] = map[string]any{"type": "final"}
	guards := map[string]any{}
	for _, g := range guardNames {
		guards[g] = map[string]any{"field": pick([]string{"k", "n"}), "op": pick([]string{"eq", "neq", "gt", "gte", "lt", "lte", "exists", "not_exists", "in", "contains"}), "value": rng.IntN(3)}
	}
	wf := map[string]any{"id": "r", "initial": "s0", "states": states, "guards": guards}
	if hasInterrupt {
		wf["interrupts"] = map[string]any{"i": map[string]any{"trigger": map[string]any{"file_pattern": "**/*.env"}, "target": handler}}
	}
	return wf
}

func TestRandomWorkflows(t *testing.T) {
	loaded := 0
	const n = 400
	for seed := range uint64(n) {
		rng := rand.New(rand.NewPCG(seed, 7))
		src, _ := json.Marshal(genWorkflow(rng))
		w, err := workflow.Load(src, nil)
		if err != nil {
			var list statechart.ErrorList
			if !errors.As(err, &list) || strings.Contains(err.Error(), "the machine compiled") {
				t.Fatalf("seed %d: %v\n%s", seed, err, src)
			}
			continue
		}
		loaded++
		if _, err := mcpbind.New(w.Machine.Engine(), &mcpbind.Options{Logger: slog.New(slog.DiscardHandler)}); err != nil {
			t.Fatalf("seed %d: mcpbind.New: %v\n%s", seed, err, w.JSON)
		}
		again, err := workflow.Load(w.JSON, &workflow.Options{Format: workflow.FormatXState})
		if err != nil || !reflect.DeepEqual(again.Policies, w.Policies) || !reflect.DeepEqual(again.Interrupts, w.Interrupts) {
			t.Fatalf("seed %d: reload: %v", seed, err)
		}
		walk(t, seed, w, rng)
	}
	t.Logf("%d of %d random workflows loaded", loaded, n)
	if loaded < n/3 {
		t.Fatalf("only %d of %d random workflows loaded: the generator tests little", loaded, n)
	}
}

// walk sends random events (those of the workflow, interrupts, approvals)
// with random data, and checks that the machine never fails.
func walk(t *testing.T, seed uint64, w *workflow.Workflow, rng *rand.Rand) {
	ctx := context.Background()
	s, err := w.Machine.Start(ctx, time.Time{})
	if err != nil {
		t.Fatalf("seed %d: Start: %v", seed, err)
	}
	var events []string
	for _, ev := range w.Machine.Events() {
		if !strings.HasPrefix(ev, "xstate.") {
			events = append(events, ev)
		}
	}
	for step := range 40 {
		if s.Status() != statechart.StatusActive {
			return
		}
		ev := events[rng.IntN(len(events))]
		data := map[string]any{"k": float64(rng.IntN(3)), "n": float64(rng.IntN(3)), "_interrupt_return": "s0"}
		next, err := w.Machine.Transition(ctx, s, transitionEvent(ev, data), time.Time{})
		if err != nil {
			t.Fatalf("seed %d step %d: %s in %v: %v\n%s", seed, step, ev, s.Value(), err, w.JSON)
		}
		// Only an interrupt sets _interrupt_return; the data cannot.
		before, had := s.Context()[workflow.KeyInterruptReturn]
		after, has := next.Context()[workflow.KeyInterruptReturn]
		if has && !strings.HasPrefix(ev, workflow.InterruptEventPrefix) && (!had || after != before) {
			t.Fatalf("seed %d step %d: %s set _interrupt_return to %v", seed, step, ev, after)
		}
		s = next
	}
}
