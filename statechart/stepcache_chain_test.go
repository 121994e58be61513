// This file checks the eventless microsteps that an Actor's fastStep takes
// after a step against the general algorithm: random machines whose
// eventless transitions have guards that read what the step before them
// assigned, and the event's data.

package statechart

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// withEventlessChains gives about one state in three of a machine config
// eventless transitions whose guards read what the steps before them
// assigned, and the event's data: to a random state when states were
// entered since the last eventless transition (context.n passed
// context.mark) and n is in one quarter of the numbers; to another when
// the event's k is 1 and n in another quarter; for some states first a
// targetless one that counts c up to the event's k, set to 0 again when the state is
// left, and a targetless one without actions when k is 2. Chains of eventless microsteps form and
// end; a few loop until a budget ends them.
func withEventlessChains(t *testing.T, rng *rand.Rand, src []byte) []byte {
	t.Helper()
	return editStates(t, src, func(_ map[string]any, ids []string, states []map[string]any) {
		assign := func(params map[string]any) []any {
			return []any{map[string]any{"type": "xstate.assign", "params": params}}
		}
		for _, n := range states {
			if rng.IntN(3) != 0 {
				continue
			}
			id := n["id"].(string)
			always := []any{
				map[string]any{"target": "#" + ids[rng.IntN(len(ids))], "guard": "fresh",
					"actions": assign(map[string]any{"mark": map[string]any{"$ref": "context.n"}, "log": map[string]any{"$push": "fresh:" + id}})},
				map[string]any{"target": "#" + ids[rng.IntN(len(ids))], "guard": "k1",
					"actions": assign(map[string]any{"mark": map[string]any{"$ref": "context.n"}, "log": map[string]any{"$push": "k1:" + id}})},
			}
			if rng.IntN(3) == 0 {
				always = append([]any{
					map[string]any{"guard": "loop", "actions": assign(map[string]any{"c": map[string]any{"$inc": 1}, "log": map[string]any{"$push": "loop:" + id}})},
					map[string]any{"guard": "k2"},
				}, always...)
				exit, _ := n["exit"].([]any)
				n["exit"] = append(exit, assign(map[string]any{"c": 0})...)
			}
			n["always"] = always
		}
	})
}

// TestActorFastStepEventlessChains sends the same events, with data, to
// two Actors of random machines with eventless chains
// (withEventlessChains), one with the step cache off: every snapshot,
// every error and what subscribers see must agree, and the other Actor
// must have taken eventless microsteps by fastStep. Some machines have
// small step budgets, which some chains reach.
func TestActorFastStepEventlessChains(t *testing.T) {
	impl, err := ParseImplementations([]byte(`{"guards":{
		"flip":{"field":"context.n","op":"in","value":[1,2,4,5,7,8,10,11,13,14,16,17,19,20,22,23]},
		"fresh":{"and":[{"field":"context.n","op":"gt","value":{"$ref":"context.mark"}},
			{"field":"context.n","op":"in","value":[1,5,9,13,17,21,25,29,33,37,41,45,49,53,57,61,65,69,73,77,81,85,89,93,97]}]},
		"k1":{"and":[{"field":"event.k","op":"eq","value":1},
			{"field":"context.n","op":"in","value":[2,6,10,14,18,22,26,30,34,38,42,46,50,54,58,62,66,70,74,78,82,86,90,94,98]}]},
		"k2":{"field":"event.k","op":"eq","value":2},
		"loop":{"field":"context.c","op":"lt","value":{"$ref":"event.k"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tested, chains, failed := 0, 0, 0
	for seed := uint64(0); tested < 200 && seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 21))
		src := withEventlessChains(t, rng, withDeclarativeActions(t, randomTree(rng), seed%5 == 0))
		src = []byte(strings.Replace(string(src), `"n":0}`, `"c":0,"mark":-1,"n":0}`, 1))
		// Loops end in ErrInfiniteLoop, or in a StepBudgetError when
		// MaxSteps is the lower budget.
		opts := &Options{Implementations: impl, MaxMicrosteps: 30}
		switch seed % 4 {
		case 1:
			opts.MaxMicrosteps = 3
		case 2:
			opts.MaxSteps = 2 + int(seed%3)
		case 3:
			opts.MaxSteps = 25
		}
		m, err := Compile(src, opts)
		if err != nil || !m.cacheable() {
			continue
		}
		tested++
		general, cached, seen := actorPair(m, seed%6 == 1)
		errA, errB := general.Start(ctx), cached.Start(ctx)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("seed %d: start: general path error %v, cached %v", seed, errA, errB)
		}
		for i := range 60 {
			ev := Event{Type: "E", Data: map[string]any{"k": float64(i % 3)}}
			if i%7 == 6 {
				ev = Event{Type: "OTHER"}
			}
			if sendBoth(t, general, cached, ev, "seed %d event %d", seed, i) != nil {
				failed++
			}
		}
		if !slices.Equal(seen[0], seen[1]) {
			t.Fatalf("seed %d: subscribers saw\n%v\nand, with the cache,\n%v", seed, seen[0], seen[1])
		}
		if general.r.cache.chains != 0 {
			t.Fatalf("seed %d: fastStep took eventless microsteps with the cache off", seed)
		}
		chains += cached.r.cache.chains
	}
	if tested < 100 || chains < 100 || failed == 0 {
		t.Fatalf("%d machines tested, %d eventless microsteps taken by fastStep, %d events that failed: the test does not exercise them", tested, chains, failed)
	}
	t.Logf("%d machines, %d eventless microsteps taken by fastStep, %d events that failed", tested, chains, failed)
}

// TestActorFastStepEventlessBudget runs eventless chains whose length
// the event sets against small step budgets: a chain the cache takes
// fast once must still end in the general path's error when a longer one
// runs out of steps or microsteps.
func TestActorFastStepEventlessBudget(t *testing.T) {
	for name, opts := range map[string]Options{"MaxSteps 4": {MaxSteps: 4}, "MaxMicrosteps 3": {MaxMicrosteps: 3}} {
		m := countingChain(t, &opts)
		general, cached := startedPair(t, m)
		failed := 0
		for i, k := range []float64{1, 1, 1, 0, 1, 3, 1, 2, 1} {
			ev := Event{Type: "E", Data: map[string]any{"k": k}}
			if sendBoth(t, general, cached, ev, "%s event %d", name, i) != nil {
				failed++
			}
		}
		if failed == 0 || cached.r.cache.chains == 0 {
			t.Fatalf("%s: %d events failed, %d eventless microsteps taken by fastStep: the test does not exercise them", name, failed, cached.r.cache.chains)
		}
	}
}

// TestActorFastStepClosedChainBudget: a step whose eventless microsteps
// are all recorded takes them without an undo log only when they are pure
// and fit the call's budget. From v, the one microstep raises an event:
// the general path takes it. Entered at z, y or x, the chain takes two,
// three or four eventless microsteps, each counting; with MaxSteps 4 (the
// event's step and three) the last runs out of steps, and must leave the
// context as it was, once its plans are all recorded too.
func TestActorFastStepClosedChainBudget(t *testing.T) {
	src := []byte(`{"id":"m","initial":"a","context":{"c":0},"states":{
		"a":{"on":{"GOX":{"target":"x","actions":"count"},"GOY":{"target":"y","actions":"count"},"GOZ":{"target":"z","actions":"count"},
			"GOV":{"target":"v","actions":"count"},"PING":{"actions":"count"}}},
		"v":{"always":{"target":"a","actions":["count",{"type":"xstate.raise","params":{"event":{"type":"PING"}}}]}},
		"x":{"always":{"target":"y","actions":"count"}},
		"y":{"always":{"target":"z","actions":"count"}},
		"z":{"always":{"target":"w","actions":"count"}},
		"w":{"always":{"target":"a","actions":"count"}}}}`)
	impl, err := ParseImplementations([]byte(`{"actions":{"count":{"assign":{"c":{"$inc":1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile(src, &Options{Implementations: impl, MaxSteps: 4})
	if err != nil {
		t.Fatal(err)
	}
	general, cached := startedPair(t, m)
	failed := 0
	for i, typ := range []string{"GOZ", "GOY", "GOZ", "GOY", "GOX", "GOX", "GOY", "GOX", "GOZ", "GOX", "GOY", "GOV", "GOV", "GOZ", "GOV"} {
		if sendBoth(t, general, cached, Event{Type: typ}, "event %d (%s)", i, typ) != nil {
			failed++
		}
	}
	if failed == 0 || cached.r.cache.chains == 0 {
		t.Fatalf("%d events failed, %d eventless microsteps taken by fastStep: the test does not exercise them", failed, cached.r.cache.chains)
	}
}

// startedPair returns two started Actors of m, the first with the step
// cache off.
func startedPair(t *testing.T, m *Machine) (general, cached *Actor) {
	t.Helper()
	general, cached = NewActor(m, nil), NewActor(m, nil)
	general.r.cache.off = true
	for _, a := range []*Actor{general, cached} {
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return general, cached
}

// countingChain compiles, with opts, a machine whose event E leads to a
// state whose eventless microsteps count c up to the event's k, and back.
func countingChain(tb testing.TB, opts *Options) *Machine {
	tb.Helper()
	src := []byte(`{"id":"m","initial":"a","context":{"c":0},"states":{
		"a":{"on":{"E":"b"}},
		"b":{"always":[
			{"guard":"more","actions":"count"},
			{"target":"a","actions":"reset"}]}}}`)
	impl, err := ParseImplementations([]byte(`{
		"guards":{"more":{"field":"context.c","op":"lt","value":{"$ref":"event.k"}}},
		"actions":{"count":{"assign":{"c":{"$inc":1}}},"reset":{"assign":{"c":0}}}}`))
	if err != nil {
		tb.Fatal(err)
	}
	opts.Implementations = impl
	m, err := Compile(src, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// BenchmarkActorChainOverFastLimit sends events whose eventless chain
// (twenty targetless microsteps) is longer than fastStep takes
// (maxFastChain): once it found so, fastStep leaves the step to the
// general path (stepPlan.noChain) instead of replaying and undoing the
// chain's first microsteps on every event.
func BenchmarkActorChainOverFastLimit(b *testing.B) {
	m := countingChain(b, &Options{})
	ctx := context.Background()
	a := NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ev := Event{Type: "E", Data: map[string]any{"k": float64(20)}}
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Send(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
}
