// This file checks the assigns an Actor's fast step writes into the slots
// in place against the general path: random machines whose assigns are
// increments and numeric literals of a few keys, read by their guards.

package statechart

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// numericAssigns are the assigns withNumericAssigns puts in place of the
// log pushes: one increment, one literal, or several of distinct keys, the
// shapes whose slots a step may set in place.
var numericAssigns = []string{
	`{"n":{"$inc":1}}`,
	`{"n":0}`,
	`{"m":{"$inc":2}}`,
	`{"m":1}`,
	`{"n":{"$inc":1},"m":{"$inc":1}}`,
	`{"m":0,"n":{"$inc":3}}`,
	`{"n":2,"m":5}`,
}

// withNumericAssigns is withLoggingActions with every log push replaced by
// one of numericAssigns, chosen by rng, and a context of n and m; the
// guard flip reads n, and low (given to every other guarded transition)
// reads m.
func withNumericAssigns(t *testing.T, rng *rand.Rand, src []byte) []byte {
	t.Helper()
	push := regexp.MustCompile(`\{"log":\{"\$push":"[^"]*"\}\}`)
	out := push.ReplaceAllStringFunc(string(withLoggingActions(t, src, false)), func(string) string {
		return numericAssigns[rng.IntN(len(numericAssigns))]
	})
	guard := 0
	out = regexp.MustCompile(`"guard":"flip"`).ReplaceAllStringFunc(out, func(g string) string {
		if guard++; guard%2 == 0 {
			return `"guard":"low"`
		}
		return g
	})
	return []byte(strings.Replace(out, `"context":{"log":[]}`, `"context":{"n":0,"m":0}`, 1))
}

// TestActorSlotAssignsMatchGeneralPath sends the same events to two Actors
// of random machines with numeric assigns, one with the step cache off,
// and takes snapshots of both every few events (which writes the slots
// back and lets the next step load them again): every snapshot, and the
// slots after every event, must agree.
func TestActorSlotAssignsMatchGeneralPath(t *testing.T) {
	impl, err := ParseImplementations([]byte(`{"guards":{
		"flip":{"field":"context.n","op":"in","value":[1,2,4,5,7,8,10,11,13,14,16,17,19,20,22,23]},
		"low":{"field":"context.m","op":"lt","value":3},
		"rare":{"field":"context.n","op":"in","value":[3,9,16,30]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tested, fast := 0, 0
	for seed := uint64(0); tested < 150 && seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 17))
		src := withNumericAssigns(t, rng, randomTree(rng))
		if seed%2 == 1 {
			src = withEventless(t, rng, src) // chains: steps undone on the general path
		}
		general, cached, ok := startBoth(t, src, impl, seed)
		if !ok {
			continue
		}
		tested++
		fast += sendStream(t, general, cached, seed, 60, 2+int(seed%4), func(i int) Event {
			if i%7 == 6 {
				return Event{Type: "OTHER"}
			}
			return Event{Type: "E"}
		})
	}
	checkSlotTest(t, tested, fast)
}

// startBoth compiles src with impl and starts two Actors of it, the first
// with the step cache off, and fails the test (of seed) unless they start
// alike; ok is false for a machine that does not compile or cannot be
// cached, and when both failed to start (an eventless loop at start).
func startBoth(t *testing.T, src []byte, impl Implementations, seed uint64) (general, cached *Actor, ok bool) {
	t.Helper()
	m, err := Compile(src, &Options{Implementations: impl})
	if err != nil || !m.cacheable() {
		return nil, nil, false
	}
	general, cached, _ = actorPair(m, false)
	ctx := context.Background()
	errA, errB := general.Start(ctx), cached.Start(ctx)
	if fmt.Sprint(errA) != fmt.Sprint(errB) {
		t.Fatalf("seed %d: start: general path %v, cached %v", seed, errA, errB)
	}
	return general, cached, errA == nil
}

// sameSnapshots takes a snapshot of the Actors general and cached, which
// writes the slots back and lets the next step load them again, and fails
// the test unless they agree, in the Go types of their values too.
func sameSnapshots(t *testing.T, general, cached *Actor, where string, args ...any) {
	t.Helper()
	a, b := general.Snapshot(), cached.Snapshot()
	if !slices.Equal(a.nodes, b.nodes) || !jsonEqual(a.context, b.context) || fmt.Sprint(a.context) != fmt.Sprint(b.context) {
		t.Fatalf("%s: snapshots %v %v and, with the cache, %v %v", fmt.Sprintf(where, args...), a.nodes, a.context, b.nodes, b.context)
	}
}

// sendStream sends the events next returns, n of them, to the Actors
// general and cached, takes snapshots of both every few (every) events and
// after the last (see sameSnapshots), and returns how many events the
// cached Actor's fast step took.
func sendStream(t *testing.T, general, cached *Actor, seed uint64, n, every int, next func(i int) Event) int {
	t.Helper()
	for i := range n {
		ev := next(i)
		sendBoth(t, general, cached, ev, "seed %d event %d (%v)", seed, i, ev.Data)
		if i%every == every-1 {
			sameSnapshots(t, general, cached, "seed %d event %d", seed, i)
		}
	}
	sameSnapshots(t, general, cached, "seed %d: last", seed)
	return cached.r.cache.fast
}

// checkSlotTest fails a slot test that tested fewer than 100 machines or
// whose events fastStep never took.
func checkSlotTest(t *testing.T, tested, fast int) {
	t.Helper()
	if tested < 100 || fast == 0 {
		t.Fatalf("%d machines tested, %d events taken by fastStep: the test does not exercise it", tested, fast)
	}
	t.Logf("%d machines, %d events taken by fastStep", tested, fast)
}

// eventDataAssigns are the assigns withEventDataAssigns puts in place of
// the log pushes: copies of the event's data, and increments of what they
// copied.
var eventDataAssigns = []string{
	`{"n":{"$ref":"event.q"}}`,
	`{"m":{"$ref":"event.r"}}`,
	`{"n":{"$inc":1}}`,
	`{"m":{"$ref":"event.type"}}`,
	`{"n":{"$ref":"event.q"},"m":{"$inc":1}}`,
}

// eventDataValues are the values of the keys q and r of the events of
// TestActorEventDataMatchesGeneralPath: numbers as JSON decodes them (a
// negative zero among them), and values that are not such a number.
var eventDataValues = []any{0.0, 1.0, 2.0, 3.0, 2.5, math.Copysign(0, -1), 2, int64(3), "2", true, nil, map[string]any{"a": 1.0}, []any{2.0}}

// TestActorEventDataMatchesGeneralPath sends the same events, with data
// of every kind, to two Actors of random machines whose guards compare
// the event's data, and the context keys the assigns copy it into, one with
// the step cache off, and takes snapshots of both every few events: every
// snapshot, and the slots after every event, must agree.
func TestActorEventDataMatchesGeneralPath(t *testing.T) {
	impl, err := ParseImplementations([]byte(`{"guards":{
		"flip":{"or":[{"field":"event.q","op":"gt","value":1},{"field":"event.r","op":"eq","value":2},{"field":"event.q","op":"neq","value":0}]},
		"low":{"and":[{"field":"event.r","op":"exists"},{"field":"event.q","op":"lte","value":2},{"field":"context.n","op":"gte","value":{"$ref":"event.r"}}]},
		"mid":{"or":[{"field":"context.n","op":"gte","value":2},{"field":"context.m","op":"lt","value":1}]},
		"rare":{"or":[{"field":"event.q","op":"in","value":[3,9]},{"field":"event.q","op":"eq","value":0},{"field":"event.r","op":"not_exists"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	push := regexp.MustCompile(`\{"log":\{"\$push":"[^"]*"\}\}`)
	tested, fast := 0, 0
	for seed := uint64(0); tested < 150 && seed < 5000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 23))
		src := randomTree(rng)
		if seed%2 == 1 {
			src = withEventless(t, rng, src)
		}
		out := push.ReplaceAllStringFunc(string(withLoggingActions(t, src, false)), func(string) string {
			return eventDataAssigns[rng.IntN(len(eventDataAssigns))]
		})
		guard := 0
		out = regexp.MustCompile(`"guard":"flip"`).ReplaceAllStringFunc(out, func(string) string {
			guard++
			return `"guard":"` + []string{"flip", "low", "mid"}[guard%3] + `"`
		})
		out = strings.Replace(out, `"context":{"log":[]}`, `"context":{"n":0,"m":0}`, 1)
		general, cached, ok := startBoth(t, []byte(out), impl, seed)
		if !ok {
			continue
		}
		tested++
		fast += sendStream(t, general, cached, seed, 60, 2+int(seed%4), func(i int) Event {
			ev := Event{Type: "E", Data: map[string]any{}}
			if i%7 == 6 {
				ev.Type = "OTHER"
			}
			for _, k := range []string{"q", "r"} {
				if j := rng.IntN(len(eventDataValues) + 1); j < len(eventDataValues) {
					ev.Data[k] = eventDataValues[j]
				}
			}
			return ev
		})
	}
	checkSlotTest(t, tested, fast)
}

// TestActorSlotTestsMatchGeneralPath sends random events to two Actors of
// a machine whose guards are "and"s of plain tests on context keys
// (ordered against a number or another key, compared with a boolean),
// one with the step cache off. SET copies values of every kind into the
// keys (booleans, strings and null take the general path, and the tests
// then meet them), E moves between states by those guards; snapshots
// every few events unload the slots. Every snapshot must agree.
func TestActorSlotTestsMatchGeneralPath(t *testing.T) {
	impl, err := ParseImplementations([]byte(`{"guards":{
		"both":{"and":[{"field":"context.n","op":"lt","value":3},{"field":"context.m","op":"neq","value":false}]},
		"ref":{"and":[{"field":"context.n","op":"gte","value":{"$ref":"context.m"}},{"field":"context.n","op":"lt","value":4}]},
		"on":{"field":"context.m","op":"neq","value":true}},
		"actions":{
		"set":{"assign":{"n":{"$ref":"event.q"},"m":{"$ref":"event.r"}}},
		"inc":{"assign":{"n":{"$inc":1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	src := []byte(`{"id":"t","initial":"a","context":{"n":0,"m":0},
		"on":{"SET":{"actions":"set"}},
		"states":{
		"a":{"on":{"E":[{"target":"b","guard":"both","actions":"inc"},{"target":"c","guard":"ref"},{"target":"d","guard":"on"}]}},
		"b":{"on":{"E":[{"target":"a","guard":"ref","actions":"inc"},{"target":"c","guard":"on"}]}},
		"c":{"on":{"E":[{"target":"a","guard":"on"},{"target":"d","guard":"both","actions":"inc"}]}},
		"d":{"on":{"E":[{"target":"a","guard":"both"},{"target":"b","guard":"ref"}]}}}}`)
	values := append([]any{false, -1.0}, eventDataValues...)
	tested, fast := 0, 0
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 29))
		general, cached, ok := startBoth(t, src, impl, seed)
		if !ok {
			t.Fatalf("seed %d: the machine does not start", seed)
		}
		tested++
		fast += sendStream(t, general, cached, seed, 80, 2+int(seed%5), func(int) Event {
			if rng.IntN(3) == 0 {
				return Event{Type: "SET", Data: map[string]any{"q": values[rng.IntN(len(values))], "r": values[rng.IntN(len(values))]}}
			}
			return Event{Type: "E"}
		})
	}
	checkSlotTest(t, tested, fast)
}
