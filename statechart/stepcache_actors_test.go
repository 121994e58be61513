// This file checks the step cache on the microsteps of an actor system
// that start and stop invoked children: random machines whose states
// invoke child machines and promises run the same events with the cache
// and with the general algorithm alone, and must agree on every snapshot,
// children included.

package statechart

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// withInvokes gives about one state in three of a machine config (the root
// and history states aside) an invoke: of the child machine "kid" (which
// says HI to its parent when it starts, and answers PING with PONG), of
// the child machine "quiet" (which does nothing), or of the promise "p",
// whose done event is logged. Some of these states also
// send PING to their child in an entry action, before it exists. The root
// logs every HI and PONG.
func withInvokes(t *testing.T, rng *rand.Rand, src []byte) []byte {
	t.Helper()
	return editStates(t, src, func(cfg map[string]any, _ []string, states []map[string]any) {
		push := func(what string) map[string]any {
			return map[string]any{"type": "xstate.assign", "params": map[string]any{"log": map[string]any{"$push": what}}}
		}
		for i, n := range states {
			if n["id"] == cfg["id"] || rng.IntN(3) != 0 {
				continue
			}
			id := fmt.Sprintf("c%d", i)
			switch rng.IntN(3) {
			case 0:
				n["invoke"] = map[string]any{"src": "quiet", "id": id}
				continue
			case 1:
				n["invoke"] = map[string]any{"src": "kid", "id": id}
				if rng.IntN(2) == 0 {
					entry, _ := n["entry"].([]any)
					n["entry"] = append(entry, map[string]any{"type": "xstate.sendTo", "params": map[string]any{"to": id, "event": map[string]any{"type": "PING"}}})
				}
				continue
			}
			n["invoke"] = map[string]any{"src": "p", "id": id, "onDone": map[string]any{"actions": []any{push("done:" + id)}}}
		}
		on, _ := cfg["on"].(map[string]any)
		if on == nil {
			on = map[string]any{}
			cfg["on"] = on
		}
		on["HI"] = map[string]any{"actions": []any{push("hi")}}
		on["PONG"] = map[string]any{"actions": []any{push("pong")}}
	})
}

// compileWithInvokes compiles a machine of withInvokes and its actors; with
// general, neither it nor its child machine may use the step cache.
func compileWithInvokes(t *testing.T, src []byte, general bool) *Machine {
	t.Helper()
	impl := declarativeGuards(t)
	actors, err := ParseImplementations([]byte(`{"actors":{"p":{"promise":{"resolve":{"ok":true}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	kid, err := Compile([]byte(`{"id":"kid","initial":"on","entry":{"type":"xstate.sendParent","params":{"event":{"type":"HI"}}},
		"states":{"on":{"on":{"PING":{"actions":{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	quiet, err := Compile([]byte(`{"id":"quiet","initial":"a","states":{"a":{"on":{"NEXT":"b"}},"b":{}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	impl.Actors = map[string]ActorLogic{"kid": kid, "quiet": quiet, "p": actors.Actors["p"]}
	m, err := Compile(src, &Options{Implementations: impl})
	if err != nil {
		return nil
	}
	if general {
		// A machine with history states takes no step from the cache.
		kid.hasHistory, quiet.hasHistory, m.hasHistory = true, true, true
	}
	return m
}

func TestStepCacheStartsAndStopsChildrenAsTheGeneralPath(t *testing.T) {
	ctx := context.Background()
	tested, invoking, fast := 0, 0, 0
	for seed := uint64(0); tested < 150 && seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 21))
		src := withInvokes(t, rng, randomDeclarative(t, seed, 21))
		cachedM := compileWithInvokes(t, src, false)
		if cachedM == nil || !cachedM.cacheable() {
			continue
		}
		tested++
		general, cached := NewActor(compileWithInvokes(t, src, true), nil), NewActor(cachedM, nil)
		errA, errB := general.Start(ctx), cached.Start(ctx)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("seed %d: start: general path %v, cached %v", seed, errA, errB)
		}
		for i := range 40 {
			ev := Event{Type: "E"}
			if i%7 == 6 {
				ev = Event{Type: "OTHER"}
			}
			sendBothJSON(t, general, cached, ev, fmt.Sprintf("seed %d event %d", seed, i))
		}
		if cached.sys == nil {
			continue
		}
		if r := cached.sys.root.r; r != nil {
			for _, c := range r.cache.confs {
				for _, p := range c.plans {
					if p.invokes {
						invoking++
					}
				}
			}
			fast += r.cache.fast
		}
	}
	if tested < 100 || invoking == 0 || fast == 0 {
		t.Fatalf("%d machines tested, %d plans that start or stop children, %d events taken by fastStep: the test does not exercise them", tested, invoking, fast)
	}
	t.Logf("%d machines, %d plans that start or stop children, %d events taken by fastStep", tested, invoking, fast)
}
