// This file checks the step cache against the general algorithm: random
// machines, with entry and exit actions that log their order in the
// context, run the same events with and without the cache and must agree
// on every snapshot.

package statechart

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// withLoggingActions adds to every state of a machine config entry and
// exit actions that push "in:<id>" and "out:<id>" onto context.log.
func withLoggingActions(t *testing.T, src []byte) []byte {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(src, &cfg); err != nil {
		t.Fatal(err)
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		id, _ := n["id"].(string)
		push := func(what string) []any {
			return []any{map[string]any{"type": "xstate.assign", "params": map[string]any{"log": map[string]any{"$push": what + ":" + id}}}}
		}
		if n["type"] != "history" {
			n["entry"], n["exit"] = push("in"), push("out")
		}
		states, _ := n["states"].(map[string]any)
		for _, c := range states {
			walk(c.(map[string]any))
		}
	}
	walk(cfg)
	cfg["context"] = map[string]any{"log": []any{}}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStepCacheMatchesGeneralPath(t *testing.T) {
	ctx := context.Background()
	var now time.Time
	tested, replayed := 0, 0
	for seed := uint64(0); tested < 150 && seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 12))
		m, err := Compile(withLoggingActions(t, randomTree(rng)), nil)
		if err != nil || !m.cacheable() {
			continue // an invalid random config, or one with history states
		}
		tested++
		start, err := m.Start(ctx, now)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		general, cached := newRunner(m), newRunner(m)
		general.cache.off = true
		a, b := start, start
		for i := range 40 {
			ev := Event{Type: "E"}
			if i%7 == 6 {
				ev = Event{Type: "OTHER"}
			}
			step := func(r *runner, s *Snapshot) *Snapshot {
				if s.status != StatusActive {
					return s
				}
				next := s.clone()
				r.begin(ctx, next, now)
				r.macrostep(ev)
				if r.err != nil {
					t.Fatalf("seed %d event %d: %v", seed, i, r.err)
				}
				return next
			}
			a, b = step(general, a), step(cached, b)
			if !slices.Equal(a.nodes, b.nodes) || a.status != b.status || !jsonEqual(a.context, b.context) {
				t.Fatalf("seed %d event %d: general path %v %v %v, cached %v %v %v",
					seed, i, a.nodes, a.status, a.context["log"], b.nodes, b.status, b.context["log"])
			}
		}
		if general.cache.hits != 0 {
			t.Fatalf("seed %d: the cache was used while off", seed)
		}
		replayed += cached.cache.hits
	}
	if tested < 100 || replayed == 0 {
		t.Fatalf("%d machines tested, %d steps replayed: the test does not exercise the cache", tested, replayed)
	}
	t.Logf("%d machines, %d steps replayed", tested, replayed)
}
