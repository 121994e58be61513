// This file checks the step cache against the general algorithm: random
// machines, with entry and exit actions that log their order in the
// context, run the same events with and without the cache and must agree
// on every snapshot.

package statechart

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// withLoggingActions adds to every state of a machine config entry and
// exit actions that push "in:<id>" and "out:<id>" onto context.log.
// With silent, it adds only the guards, so that steps run no action.
func withLoggingActions(t *testing.T, src []byte, silent bool) []byte {
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
		if n["type"] != "history" && !silent {
			n["entry"], n["exit"] = push("in"), push("out")
		}
		// Every other transition on E gets a guard whose answer changes
		// with the log's length, and every one logs itself.
		if on, ok := n["on"].(map[string]any); ok {
			list, _ := on["E"].([]any)
			for i, t := range list {
				obj, ok := t.(map[string]any)
				if !ok {
					obj = map[string]any{"target": t}
				}
				if i%2 == 0 {
					obj["guard"] = "flip"
				}
				if !silent {
					obj["actions"] = push(fmt.Sprintf("t%d", i))
				}
				list[i] = obj
			}
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
	// flip passes or fails with the length of context.log.
	flip := Implementations{Guards: map[string]GuardFunc{
		"flip": func(_ context.Context, args GuardArgs) (bool, error) {
			log, _ := args.Context["log"].([]any)
			return len(log)%3 != 0, nil
		},
	}}
	ctx := context.Background()
	var now time.Time
	tested, replayed := 0, 0
	for seed := uint64(0); tested < 150 && seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 12))
		m, err := Compile(withLoggingActions(t, randomTree(rng), seed%3 == 0), &Options{Implementations: flip})
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

// BenchmarkGeneralPath measures the microsteps the cache does not serve:
// the bench machines with the cache off.
func BenchmarkGeneralPath(b *testing.B) {
	for _, bm := range []struct{ name, src, event string }{
		{"toggle", `{"id":"t","initial":"off","states":{"off":{"on":{"TOGGLE":"on"}},"on":{"on":{"TOGGLE":"off"}}}}`, "TOGGLE"},
		{"hierarchy", `{"id":"h","initial":"a","states":{
	  "a":{"initial":"a1","states":{"a1":{"initial":"a11","states":{"a11":{"initial":"a111","states":{"a111":{"on":{"GO":"#h.b.b1.b11.b111"}}}}}}}},
	  "b":{"initial":"b1","states":{"b1":{"initial":"b11","states":{"b11":{"initial":"b111","states":{"b111":{"on":{"GO":"#h.a.a1.a11.a111"}}}}}}}}}}`, "GO"},
		{"parallel", `{"id":"p","type":"parallel","states":{
	  "r1":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}},
	  "r2":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}},
	  "r3":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}},
	  "r4":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}}}}`, "GO"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			ctx := context.Background()
			m, err := Compile([]byte(bm.src), nil)
			if err != nil {
				b.Fatal(err)
			}
			a := NewActor(m, nil)
			a.r.cache.off = true
			if err := a.Start(ctx); err != nil {
				b.Fatal(err)
			}
			ev := Event{Type: bm.event}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := a.Send(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStepCacheBounded: a machine with more distinct steps than the cache
// holds keeps at most maxCachedSteps plans, and still runs correctly.
func TestStepCacheBounded(t *testing.T) {
	const n = 3 * maxCachedSteps
	var b strings.Builder
	b.WriteString(`{"id":"ring","initial":"s0","states":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"s%d":{"on":{"NEXT":"s%d"}}`, i, (i+1)%n)
	}
	b.WriteString(`}}`)
	m, err := Compile([]byte(b.String()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	paused := false
	for i := range 2*n + 5 {
		paused = paused || a.r.cache.pause > 0
		if err := a.Send(ctx, Event{Type: "NEXT"}); err != nil {
			t.Fatal(err)
		}
		plans := 0
		for _, c := range a.r.cache.confs {
			plans += len(c.plans)
		}
		if plans > maxCachedSteps || a.r.cache.count > maxCachedSteps {
			t.Fatalf("after %d events the cache holds %d plans", i+1, plans)
		}
	}
	if got, want := a.Snapshot().Value(), fmt.Sprintf("s%d", (2*n+5)%n); got != want {
		t.Fatalf("value %v, want %s", got, want)
	}
	// The steps never repeat within the bound: the cache filled up
	// without replaying, and rests rather than record more.
	if !paused {
		t.Fatal("the cache never paused on a ring longer than its bound")
	}
}
