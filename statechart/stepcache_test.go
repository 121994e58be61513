// This file checks the step cache against the general algorithm: random
// machines, with entry and exit actions that log their order in the
// context, run the same events with and without the cache and must agree
// on every snapshot.

package statechart

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
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

// withDeclarativeActions is withLoggingActions with every log push also
// counting in context.n, for the declarative guard of
// TestActorFastStepMatchesGeneralPath.
func withDeclarativeActions(t *testing.T, src []byte, silent bool) []byte {
	t.Helper()
	out := strings.ReplaceAll(string(withLoggingActions(t, src, silent)), `"params":{"log":`, `"params":{"n":{"$inc":1},"log":`)
	return []byte(strings.Replace(out, `"context":{"log":[]}`, `"context":{"log":[],"n":0}`, 1))
}

// withEventless gives about one state in four of a machine config an
// eventless transition to a random state, guarded by "rare" (true for a
// few values of context.n), so that some configurations have eventless
// transitions to try after a step and some steps take one.
func withEventless(t *testing.T, rng *rand.Rand, src []byte) []byte {
	t.Helper()
	return editStates(t, src, func(_ map[string]any, ids []string, states []map[string]any) {
		for _, n := range states {
			if rng.IntN(4) == 0 {
				n["always"] = map[string]any{"target": "#" + ids[rng.IntN(len(ids))], "guard": "rare"}
			}
		}
	})
}

// editStates decodes a machine config, calls edit with it, the ids of its
// states (history states aside) and those states, both in the order of
// their ids (map order is random; the random choices of edit must not
// be), and encodes the config edit changed.
func editStates(t *testing.T, src []byte, edit func(cfg map[string]any, ids []string, states []map[string]any)) []byte {
	t.Helper()
	var cfg map[string]any
	if err := json.Unmarshal(src, &cfg); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var states []map[string]any
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if n["type"] != "history" {
			id, _ := n["id"].(string)
			ids = append(ids, id)
			states = append(states, n)
		}
		kids, _ := n["states"].(map[string]any)
		for _, c := range kids {
			walk(c.(map[string]any))
		}
	}
	walk(cfg)
	slices.Sort(ids)
	slices.SortFunc(states, func(a, b map[string]any) int { return strings.Compare(a["id"].(string), b["id"].(string)) })
	edit(cfg, ids, states)
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// actorPair returns two Actors of m, the first with the step cache off;
// with subscribe, a subscriber of each records the snapshots in seen.
func actorPair(m *Machine, subscribe bool) (general, cached *Actor, seen *[2][]string) {
	general, cached, seen = NewActor(m, nil), NewActor(m, nil), new([2][]string)
	general.r.cache.off = true
	if subscribe {
		for i, a := range []*Actor{general, cached} {
			a.Subscribe(func(s *Snapshot) { seen[i] = append(seen[i], fmt.Sprint(s.nodes, s.status, s.context)) })
		}
	}
	return general, cached, seen
}

// sendBoth sends ev to the Actors general and cached, fails the test
// unless they return the same error and agree (see sameActorStates), and
// returns the error.
func sendBoth(t *testing.T, general, cached *Actor, ev Event, where string, args ...any) error {
	t.Helper()
	ctx := context.Background()
	errA, errB := general.Send(ctx, ev), cached.Send(ctx, ev)
	if fmt.Sprint(errA) != fmt.Sprint(errB) {
		t.Fatalf("%s: general path error %v, cached %v", fmt.Sprintf(where, args...), errA, errB)
	}
	sameActorStates(t, general, cached, where, args...)
	return errA
}

// sameActorStates fails the test unless the Actors general (the step
// cache off) and cached are in the same configuration and status, with
// the same context (the slots of cached included); where and its args
// say which event the test sent last.
func sameActorStates(t *testing.T, general, cached *Actor, where string, args ...any) {
	t.Helper()
	a, b := general.cur, cached.cur
	if bc := slotView(cached); !slices.Equal(a.nodes, b.nodes) || a.status != b.status || !jsonEqual(a.context, bc) {
		t.Fatalf("%s: general path %v %v %v, cached %v %v %v", fmt.Sprintf(where, args...), a.nodes, a.status, a.context, b.nodes, b.status, bc)
	}
}

// declarativeGuards are the guards of the machines of randomDeclarative:
// flip, and rare for their eventless transitions.
func declarativeGuards(t *testing.T) Implementations {
	t.Helper()
	impl, err := ParseImplementations([]byte(`{"guards":{
		"flip":{"field":"context.n","op":"in","value":[1,2,4,5,7,8,10,11,13,14,16,17,19,20,22,23]},
		"rare":{"field":"context.n","op":"in","value":[3,9,16,30]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return impl
}

// randomDeclarative is a random machine config with declarative actions
// (withDeclarativeActions; one in three silent) and, for odd seeds,
// eventless transitions (withEventless).
func randomDeclarative(t *testing.T, seed, stream uint64) []byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, stream))
	src := withDeclarativeActions(t, randomTree(rng), seed%3 == 0)
	if seed%2 == 1 {
		src = withEventless(t, rng, src)
	}
	return src
}

// TestActorFastStepMatchesGeneralPath sends the same events to two Actors
// of random machines whose guards and actions are declarative, one with
// the step cache off: every snapshot, and what subscribers see, must
// agree, and the other Actor must have taken some events without a
// working copy (fastStep).
func TestActorFastStepMatchesGeneralPath(t *testing.T) {
	impl := declarativeGuards(t)
	ctx := context.Background()
	tested, fast := 0, 0
	for seed := uint64(0); tested < 150 && seed < 5000; seed++ {
		m, err := Compile(randomDeclarative(t, seed, 13), &Options{Implementations: impl})
		if err != nil || !m.cacheable() {
			continue
		}
		tested++
		// A subscriber holds every snapshot: the context is shared.
		general, cached, seen := actorPair(m, seed%4 == 1)
		if err := general.Start(ctx); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := cached.Start(ctx); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for i := range 40 {
			ev := Event{Type: "E"}
			if i%7 == 6 {
				ev = Event{Type: "OTHER"}
			}
			errA, errB := general.Send(ctx, ev), cached.Send(ctx, ev)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("seed %d event %d: general path error %v, cached %v", seed, i, errA, errB)
			}
			if seed%5 == 2 && i == 20 {
				// A snapshot handed out shares the context from now on.
				general.Snapshot()
				cached.Snapshot()
			}
			sameActorStates(t, general, cached, "seed %d event %d", seed, i)
		}
		if !slices.Equal(seen[0], seen[1]) {
			t.Fatalf("seed %d: subscribers saw\n%v\nand, with the cache,\n%v", seed, seen[0], seen[1])
		}
		if general.r.cache.fast != 0 {
			t.Fatalf("seed %d: fastStep taken with the cache off", seed)
		}
		fast += cached.r.cache.fast
	}
	if tested < 100 || fast == 0 {
		t.Fatalf("%d machines tested, %d events taken by fastStep: the test does not exercise it", tested, fast)
	}
	t.Logf("%d machines, %d events taken by fastStep", tested, fast)
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

// TestCellFastStepMatchesGeneralPath runs random machines with
// declarative guards and actions as the invoked child of a parent that
// forwards every event to it (xstate.sendTo), and the same machines as a
// plain Actor with the step cache off: the child's snapshot must agree
// with the Actor's after every event, and some of the child's macrosteps
// must have been taken by the cell's fastStep. In the child every
// transition's actions also send PONG to the parent (xstate.sendParent),
// which counts them: the count must be the number of transition actions
// the child's log shows.
func TestCellFastStepMatchesGeneralPath(t *testing.T) {
	impl := declarativeGuards(t)
	ctx := context.Background()
	forward := func(typ string) string {
		return fmt.Sprintf(`%q:{"actions":{"type":"xstate.sendTo","params":{"to":"kid","event":{"type":%q}}}}`, typ, typ)
	}
	parentSrc := `{"id":"p","context":{"pongs":0},"initial":"on","states":{"on":{"invoke":{"src":"kid","id":"kid"},"on":{` +
		forward("E") + `,` + forward("OTHER") + `,"PONG":{"actions":{"type":"xstate.assign","params":{"pongs":{"$inc":1}}}}}}}}`
	transitionAction := regexp.MustCompile(`\{"params":\{(?:"n":\{"\$inc":1\},"log":\{"\$push":"t\d+:[^"]*"\}|"log":\{"\$push":"t\d+:[^"]*"\},"n":\{"\$inc":1\})\},"type":"xstate.assign"\}`)
	tested, fast := 0, 0
	for seed := uint64(0); tested < 100 && seed < 5000; seed++ {
		src := randomDeclarative(t, seed, 14)
		child, err := Compile(src, &Options{Implementations: impl})
		if err != nil || !child.cacheable() {
			continue
		}
		withSends := transitionAction.ReplaceAll(src, []byte(`$0,{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}`))
		sender, err := Compile(withSends, &Options{Implementations: impl})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		kidImpl := impl
		kidImpl.Actors = map[string]ActorLogic{"kid": sender}
		parent, err := Compile([]byte(parentSrc), &Options{Implementations: kidImpl})
		if err != nil {
			t.Fatal(err)
		}
		general, sys := NewActor(child, nil), NewActor(parent, nil)
		general.r.cache.off = true
		if err := general.Start(ctx); err != nil {
			continue // the child would fail to start as well
		}
		if err := sys.Start(ctx); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var kid *cell
		for _, c := range sys.sys.bySession {
			if c.id == "kid" {
				kid = c
			}
		}
		if kid == nil {
			if general.cur.status == StatusActive {
				t.Fatalf("seed %d: no child cell, while the machine alone is active", seed)
			}
			continue // the child ended at its start
		}
		tested++
		for i := range 40 {
			ev := Event{Type: "E"}
			if i%7 == 6 {
				ev = Event{Type: "OTHER"}
			}
			_ = general.Send(ctx, ev)
			if err := sys.Send(ctx, ev); err != nil {
				t.Fatalf("seed %d event %d: %v", seed, i, err)
			}
			// The cells' maps, as a snapshot handed out would read them.
			kid.leaveSlots()
			sys.sys.root.leaveSlots()
			a, b := general.cur, kid.snap
			if !slices.Equal(a.nodes, b.nodes) || a.status != b.status || !jsonEqual(a.context, b.context) {
				t.Fatalf("seed %d event %d: general path %v %v %v, child cell %v %v %v",
					seed, i, a.nodes, a.status, a.context, b.nodes, b.status, b.context)
			}
			sent := 0
			log, _ := b.context["log"].([]any)
			for _, e := range log {
				if s, _ := e.(string); strings.HasPrefix(s, "t") {
					sent++
				}
			}
			if got := sys.sys.root.snap.context["pongs"]; got != float64(sent) {
				t.Fatalf("seed %d event %d: the parent counted %v PONGs, the child's log shows %d transitions", seed, i, got, sent)
			}
			if a.status != StatusActive {
				break
			}
		}
		if kid.r != nil {
			fast += kid.r.cache.fast
		}
	}
	if tested < 50 || fast == 0 {
		t.Fatalf("%d machines tested, %d events taken by the cell's fastStep: the test does not exercise it", tested, fast)
	}
	t.Logf("%d machines, %d events taken by the cell's fastStep", tested, fast)
}

// slotView returns the context of a's current snapshot as its slots have
// it, without writing them back (which would change what the next events
// do): the map with the slots set since it was last written.
func slotView(a *Actor) map[string]any {
	x := &a.r.slotCtx
	if !x.live {
		return a.cur.context
	}
	c := maps.Clone(a.cur.context)
	for _, i := range x.dirty {
		switch _, ok := x.cells[i].v.(undefined); {
		case x.cells[i].num:
			c[a.m.slots.keys[i]] = x.cells[i].n
		case ok:
			delete(c, a.m.slots.keys[i])
		default:
			c[a.m.slots.keys[i]] = x.cells[i].v
		}
	}
	return c
}

// TestActorSubscriberPanicOnFastStep: a subscriber that panics on a step
// the cache takes leaves the actor usable once the caller recovers, as on
// the general path.
func TestActorSubscriberPanicOnFastStep(t *testing.T) {
	m, err := Compile([]byte(`{"id":"t","initial":"a","states":{"a":{"on":{"T":"b"}},"b":{"on":{"T":"a"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := NewActor(m, nil)
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for range 20 { // the cache learns both steps
		if err := a.Send(ctx, Event{Type: "T"}); err != nil {
			t.Fatal(err)
		}
	}
	a.Subscribe(func(*Snapshot) { panic("subscriber") })
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the subscriber's panic did not reach Send's caller")
			}
		}()
		_ = a.Send(ctx, Event{Type: "T"})
	}()
	done := make(chan any, 1)
	go func() { done <- a.Snapshot().Value() }()
	select {
	case v := <-done:
		if v != "b" {
			t.Errorf("value %v after the step, want b", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the actor stays locked after a subscriber's panic")
	}
}
