// This file checks an Actor's fastStep across the emptying of its step
// cache: random machines with more recorded steps than the cache holds
// (maxCachedSteps), and eventless chains whose guards read what the step
// before assigned, run long random event sequences with the cache and
// without it, and must agree after every event; so must those whose events
// often run out of steps, which fastStep's shortcut after a fast step
// must survive (TestActorExactConfiguration).

package statechart

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// manyStepsMachine compiles, with opts, a machine of groups of atomic states, every
// state with a transition on each of the events E0…E5 to a random state
// that sets n to the event's v; about one state in two has eventless
// transitions that add one to n and go to a random state when n is in a
// random set of numbers, one also guarded by the event's w; one in four
// of those states also raises an event no state takes on one of them, a
// microstep fastStep cannot take. Every
// transition adds one to t, which no step sets: a step the cache took
// and failed to undo shows in it. Chains of
// eventless microsteps form and end (n grows along them); a few are longer
// than fastStep takes.
func manyStepsMachine(t *testing.T, rng *rand.Rand, groups, per int, opts *Options) *Machine {
	t.Helper()
	guards := map[string]any{}
	var ids []string
	for g := range groups {
		for i := range per {
			ids = append(ids, fmt.Sprintf("g%ds%d", g, i))
		}
	}
	// guard names a new guard true when n is in a random set of numbers,
	// and the event's w is 1 too with withW.
	guard := func(withW bool) string {
		set := []any{}
		for v := range 24 {
			if rng.IntN(2) == 0 {
				set = append(set, v)
			}
		}
		name := fmt.Sprintf("g%d", len(guards))
		var g any = map[string]any{"field": "context.n", "op": "in", "value": set}
		if withW {
			g = map[string]any{"and": []any{map[string]any{"field": "event.w", "op": "eq", "value": 1}, g}}
		}
		guards[name] = g
		return name
	}
	inc := map[string]any{"type": "xstate.assign", "params": map[string]any{"n": map[string]any{"$inc": 1}, "t": map[string]any{"$inc": 1}}}
	raise := map[string]any{"type": "xstate.raise", "params": map[string]any{"event": map[string]any{"type": "Z"}}}
	states := map[string]any{}
	for g := range groups {
		kids := map[string]any{}
		for i := range per {
			id := fmt.Sprintf("g%ds%d", g, i)
			on := map[string]any{}
			for e := range 6 {
				on[fmt.Sprintf("E%d", e)] = map[string]any{"target": "#" + ids[rng.IntN(len(ids))],
					"actions": map[string]any{"type": "xstate.assign", "params": map[string]any{"n": map[string]any{"$ref": "event.v"}, "t": map[string]any{"$inc": 1}}}}
			}
			st := map[string]any{"id": id, "on": on}
			if rng.IntN(2) == 0 {
				always := []any{
					map[string]any{"target": "#" + ids[rng.IntN(len(ids))], "actions": []any{inc},
						"guard": guard(false)},
					map[string]any{"target": "#" + ids[rng.IntN(len(ids))], "actions": []any{inc},
						"guard": guard(true)},
				}
				if rng.IntN(4) == 0 {
					t := always[rng.IntN(2)].(map[string]any)
					t["actions"] = append(t["actions"].([]any), raise)
				}
				st["always"] = always
			}
			kids[fmt.Sprintf("s%d", i)] = st
		}
		states[fmt.Sprintf("g%d", g)] = map[string]any{"initial": "s0", "states": kids}
	}
	src, err := json.Marshal(map[string]any{"id": "m", "initial": "g0", "context": map[string]any{"n": 0, "t": 0}, "states": states})
	if err != nil {
		t.Fatal(err)
	}
	impl, err := json.Marshal(map[string]any{"guards": guards})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Implementations, err = ParseImplementations(impl); err != nil {
		t.Fatal(err)
	}
	m, err := Compile(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestActorFastStepAcrossCacheResets sends long random event sequences
// to two Actors of machines of manyStepsMachine, one with the step cache
// off: they must agree after every event, while the other's cache fills
// up and is emptied (its plans, closed chains included, dropped) and
// refilled, and takes events and eventless microsteps by fastStep. Some
// machines have small step budgets, which some chains reach.
func TestActorFastStepAcrossCacheResets(t *testing.T) {
	resets, closed, chains, fast, failed := 0, 0, 0, 0, 0
	for seed := uint64(0); seed < 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 256))
		opts := &Options{}
		switch seed % 3 {
		case 1:
			opts.MaxMicrosteps = 3
		case 2:
			opts.MaxSteps = 3
		}
		m := manyStepsMachine(t, rng, 6, 8, opts)
		general, cached := startedPair(t, m)
		count := 0
		for i := range 2000 {
			ev := Event{Type: fmt.Sprintf("E%d", rng.IntN(6)), Data: map[string]any{"v": float64(rng.IntN(24)), "w": float64(rng.IntN(2))}}
			if sendBoth(t, general, cached, ev, "seed %d event %d", seed, i) != nil {
				failed++
				general, cached = startedPair(t, m) // an Actor in error takes no more events
				count = 0
			}
			if c := cached.r.cache.count; c < count {
				resets++
			}
			count = cached.r.cache.count
			for _, c := range cached.r.cache.confs {
				for _, p := range c.plans {
					if p.closed > 0 {
						closed++
					}
				}
			}
			chains += cached.r.cache.chains
			fast += cached.r.cache.fast
			cached.r.cache.chains, cached.r.cache.fast = 0, 0
		}
	}
	if resets < 4 || closed == 0 || chains == 0 || fast == 0 || failed == 0 {
		t.Fatalf("%d cache resets, %d closed chains seen, %d eventless microsteps and %d events taken by fastStep: the test does not exercise them", resets, closed, chains, fast)
	}
	t.Logf("%d cache resets, %d closed chains seen, %d eventless microsteps and %d events taken by fastStep, %d events failed", resets, closed, chains, fast, failed)
}

// TestActorExactConfiguration checks what lets an Actor's fastStep skip
// its checks of the runner and of the configuration (runner's
// cache.exact): whenever exact is the Actor's current snapshot, the runner
// is synced with it, the cache is on, and the record of the configuration
// is that of its nodes. Random machines whose events often run out of
// steps (the call keeps the snapshot the last fast step left, while the
// general path moved the runner on) run long random event sequences, with
// the cache and without it, and must agree after every event.
func TestActorExactConfiguration(t *testing.T) {
	exact, failed := 0, 0
	for seed := uint64(0); seed < 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 512))
		opts := &Options{MaxSteps: 2 + int(seed%3)}
		m := manyStepsMachine(t, rng, 4, 8, opts)
		general, cached := startedPair(t, m)
		for i := range 2000 {
			ev := Event{Type: fmt.Sprintf("E%d", rng.IntN(6)), Data: map[string]any{"v": float64(rng.IntN(24)), "w": float64(rng.IntN(2))}}
			if err := sendBoth(t, general, cached, ev, "seed %d event %d", seed, i); err != nil {
				var budget *StepBudgetError
				if !errors.As(err, &budget) {
					general, cached = startedPair(t, m) // an Actor in error takes no more events
					continue
				}
				failed++
			}
			r := cached.r
			if r.cache.exact != cached.cur {
				continue
			}
			exact++
			if r.s != cached.cur || !r.synced || !r.cacheOn() {
				t.Fatalf("seed %d event %d: exact snapshot, but the runner's snapshot %v, synced %v, cache on %v", seed, i, r.s == cached.cur, r.synced, r.cacheOn())
			}
			if c := r.cache.cur; c != nil && !slices.Equal(c.nodes, cached.cur.nodes) {
				t.Fatalf("seed %d event %d: exact snapshot in %v, its record's configuration %v", seed, i, cached.cur.nodes, c.nodes)
			}
		}
	}
	if exact == 0 || failed == 0 {
		t.Fatalf("%d events left an exact snapshot, %d ran out of steps: the test does not exercise them", exact, failed)
	}
	t.Logf("%d events left an exact snapshot, %d ran out of steps", exact, failed)
}
