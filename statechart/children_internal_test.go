package statechart

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// TestChildListKeepsJavaScriptOrder sets and removes ids at random in a
// childList, across the length at which it starts indexing them, and
// checks its order and lookups against a plain model of JavaScript's key
// order: array indexes ascending, then the other keys in insertion order.
func TestChildListKeepsJavaScriptOrder(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var l *childList
		var named []string // model: the other keys, in insertion order
		index := map[uint64]bool{}
		val := map[string]string{}
		for step := range 60 {
			if l == nil || rng.IntN(4) > 0 {
				l = l.clone() // as the runner does once per call
			}
			var id string
			if rng.IntN(2) == 0 {
				id = strconv.Itoa(rng.IntN(30))
			} else {
				id = fmt.Sprintf("c%d", rng.IntN(30))
			}
			if _, ok := val[id]; ok && rng.IntN(3) == 0 {
				l.remove(id)
				delete(val, id)
				if n, err := strconv.ParseUint(id, 10, 64); err == nil {
					delete(index, n)
				} else {
					named = slices.DeleteFunc(named, func(x string) bool { return x == id })
				}
				continue
			}
			src := fmt.Sprintf("s%d", step)
			l.set(childEntry{id: id, src: src})
			if _, ok := val[id]; !ok {
				if n, err := strconv.ParseUint(id, 10, 64); err == nil {
					index[n] = true
				} else {
					named = append(named, id)
				}
			}
			val[id] = src
		}
		var want []string
		var ns []uint64
		for n := range index {
			ns = append(ns, n)
		}
		sort.Slice(ns, func(i, j int) bool { return ns[i] < ns[j] })
		for _, n := range ns {
			want = append(want, strconv.FormatUint(n, 10))
		}
		want = append(want, named...)
		var got []string
		for _, e := range l.compact().all() {
			got = append(got, e.id)
			if e.src != val[e.id] {
				t.Fatalf("seed %d: %s holds %s, want %s", seed, e.id, e.src, val[e.id])
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: order %v, want %v", seed, got, want)
		}
		if l.len() != len(want) {
			t.Fatalf("seed %d: len %d, want %d", seed, l.len(), len(want))
		}
		for id, src := range val {
			if e, ok := l.get(id); !ok || e.src != src {
				t.Fatalf("seed %d: get(%s) = %v %v, want %s", seed, id, e, ok, src)
			}
		}
		if _, ok := l.get("missing"); ok {
			t.Fatalf("seed %d: get of an id never set succeeded", seed)
		}
	}
}

// startParentOf starts an Actor whose machine invokes child (id "kid") in
// state running, entered by START and left by STOP, and forwards the
// events of type forward to it.
func startParentOf(t *testing.T, child *Machine, forward string) *Actor {
	t.Helper()
	m, err := Compile([]byte(fmt.Sprintf(`{"id":"p","initial":"idle","states":{
		"idle":{"on":{"START":"running"}},
		"running":{"invoke":{"src":"child","id":"kid"},"on":{
			%q:{"actions":{"type":"xstate.sendTo","params":{"to":"kid","event":{"type":%q}}}},
			"STOP":"idle"}}}}`, forward, forward)),
		&Options{Implementations: Implementations{Actors: map[string]ActorLogic{"child": child}}})
	if err != nil {
		t.Fatal(err)
	}
	a := NewActor(m, nil)
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCellKeepsItsRunner: a machine cell keeps one runner, and with it its
// step cache, from one macrostep to the next (a collection does not take
// it, as it would from the pool), and gives it back when it stops.
func TestCellKeepsItsRunner(t *testing.T) {
	ctx := t.Context()
	child, err := Compile([]byte(`{"id":"c","initial":"a","states":{"a":{"on":{"GO":"b"}},"b":{"on":{"GO":"a"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := startParentOf(t, child, "GO")
	send := func(typ string) {
		t.Helper()
		if err := a.Send(ctx, Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	send("START")
	var kid *cell
	for _, c := range a.sys.bySession {
		if c.id == "kid" {
			kid = c
		}
	}
	if kid == nil {
		t.Fatal("no cell for the invoked child")
	}
	send("GO")
	r := kid.r
	if r == nil {
		t.Fatal("the child has no runner after a macrostep")
	}
	for range 10 {
		send("GO")
		runtime.GC()
	}
	if kid.r != r {
		t.Fatal("the child's runner changed between macrosteps")
	}
	if r.cache.hits == 0 {
		t.Fatal("the child's steps were not replayed from its step cache")
	}
	if got := kid.snap.Value(); got != "b" {
		t.Fatalf("child in %v after 11 GO, want b", got)
	}
	send("STOP")
	if kid.r != nil {
		t.Fatal("a stopped child still holds its runner")
	}
}

// TestPlainInitialReused: a child machine started without input, whose
// initial steps are declarative (an entry assign and an eventless
// transition), gets its initial snapshot from the machine's template
// after the first start; every child still starts with a context of its
// own, equal to the first child's (even when a snapshot handed out was
// changed), and the template is not kept when a Go action took part.
func TestPlainInitialReused(t *testing.T) {
	ctx := t.Context()
	impl, err := ParseImplementations([]byte(`{"actions":{"hello":{"assign":{"visits":{"$inc":1}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	child, err := Compile([]byte(`{"id":"c","context":{"visits":0,"n":0},"initial":"a","states":{
		"a":{"entry":"hello","always":"b"},
		"b":{"on":{"BUMP":{"actions":{"type":"xstate.assign","params":{"n":{"$inc":1}}}}}}}}`), &Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	a := startParentOf(t, child, "BUMP")
	for i := range 3 {
		for _, typ := range []string{"START", "BUMP", "BUMP"} {
			if err := a.Send(ctx, Event{Type: typ}); err != nil {
				t.Fatal(err)
			}
			if typ == "START" && i > 0 {
				// The child's context is the template's. A snapshot is
				// not to be changed; changing it changes no child even so.
				if kid, ok := a.Snapshot().Child("kid"); ok && kid.Snapshot != nil {
					kid.Snapshot.Context()["visits"] = "spoiled"
				}
			}
		}
		kid, ok := a.Snapshot().Child("kid")
		if !ok || kid.Snapshot == nil {
			t.Fatalf("round %d: no child", i)
		}
		if got := kid.Snapshot.Value(); got != "b" {
			t.Fatalf("round %d: child in %v, want b", i, got)
		}
		if got := kid.Snapshot.Context(); got["visits"] != 1.0 || got["n"] != 2.0 {
			t.Fatalf("round %d: child context %v, want visits 1 and n 2", i, got)
		}
		if child.plainInitial.Load() == nil {
			t.Fatalf("round %d: no initial template kept", i)
		}
		if err := a.Send(ctx, Event{Type: "STOP"}); err != nil {
			t.Fatal(err)
		}
	}
	if tpl := child.plainInitial.Load(); tpl.context["n"] != 0.0 || tpl.context["visits"] != 1.0 {
		t.Fatalf("the template's context changed: %v", tpl.context)
	}

	// A Go action in the initial steps: no template.
	goImpl := Implementations{Actions: map[string]ActionFunc{"hello": func(context.Context, *ActionArgs) error { return nil }}}
	withGo, err := Compile([]byte(`{"id":"c","initial":"a","states":{"a":{"entry":"hello"}}}`), &Options{Implementations: goImpl})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Compile([]byte(`{"id":"p","initial":"on","states":{"on":{"invoke":{"src":"child","id":"kid"}}}}`),
		&Options{Implementations: Implementations{Actors: map[string]ActorLogic{"child": withGo}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := NewActor(m2, nil).Start(ctx); err != nil {
		t.Fatal(err)
	}
	if withGo.plainInitial.Load() != nil {
		t.Fatal("an initial snapshot a Go action took part in was kept as a template")
	}
}

// TestDoneEventsKeepTheirData: the done events of promises share one data
// map while nothing can keep them, but a done event that a parent
// forwards keeps its own: a Go callback that holds every event it
// receives sees each with the data it was sent with.
func TestDoneEventsKeepTheirData(t *testing.T) {
	ctx := t.Context()
	impl, err := ParseImplementations([]byte(`{"actors":{"one":{"promise":{"resolve":1}},"two":{"promise":{"resolve":2}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	impl.Actors["log"] = Callback(func(_ context.Context, args CallbackArgs) func() {
		args.Receive(func(ev Event) { got = append(got, ev) })
		return nil
	})
	a := startActor(t, impl, `{"id":"p","initial":"idle","invoke":{"src":"log","id":"log"},"context":{"sum":0},"states":{
		"idle":{"on":{"ONE":"one","TWO":"two","QUIET":"quiet"}},
		"one":{"invoke":{"src":"one","id":"one","onDone":{"target":"idle","actions":{"type":"xstate.forwardTo","params":{"to":"log"}}}}},
		"two":{"invoke":{"src":"two","id":"two","onDone":{"target":"idle","actions":{"type":"xstate.forwardTo","params":{"to":"log"}}}}},
		"quiet":{"invoke":{"src":"one","id":"quiet","onDone":{"target":"idle","actions":{"type":"xstate.assign","params":{"sum":{"$ref":"event.output"}}}}}}}}`)
	for _, typ := range []string{"QUIET", "ONE", "QUIET", "TWO", "QUIET", "ONE", "QUIET"} {
		if err := a.Send(ctx, Event{Type: typ}); err != nil {
			t.Fatal(err)
		}
		if v := a.Snapshot().Value(); v != "idle" {
			t.Fatalf("after %s: %v, want idle", typ, v)
		}
	}
	want := []string{"one 1", "two 2", "one 1"}
	if len(got) != len(want) {
		t.Fatalf("the callback received %d events, want %d", len(got), len(want))
	}
	for i, ev := range got {
		if s := fmt.Sprint(ev.Data["actorId"], " ", ev.Data["output"]); ev.Type != "xstate.done.actor."+ev.Data["actorId"].(string) || s != want[i] {
			t.Errorf("event %d: %s %v, want the data %s", i, ev.Type, ev.Data, want[i])
		}
	}
	if a.sys.doneData == nil {
		t.Error("no done-event data map kept for reuse")
	}
}

// TestSettledPromiseCellsReusedOnlyOnceGone: the cell of a declarative
// promise that settled is used again for a later child only once its
// parent no longer lists it. One region cycles promises (each cell used
// again); the other holds a settled promise that stays listed, and keeps
// its session, status and output.
func TestSettledPromiseCellsReusedOnlyOnceGone(t *testing.T) {
	ctx := t.Context()
	impl, err := ParseImplementations([]byte(`{"actors":{"one":{"promise":{"resolve":{"n":1}}},"two":{"promise":{"resolve":{"n":2}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := startActor(t, impl, `{"id":"p","type":"parallel","context":{"got":0},"states":{
		"a":{"initial":"held","states":{"held":{"invoke":{"src":"one","id":"held","onDone":{"actions":{"type":"xstate.assign","params":{"held":{"$ref":"event.output"}}}}}}}},
		"b":{"initial":"idle","states":{
			"idle":{"on":{"GO":"loading"}},
			"loading":{"invoke":{"src":"two","id":"cycle","onDone":{"target":"idle","actions":{"type":"xstate.assign","params":{"got":{"$ref":"event.output.n"}}}}}}}}}}`)
	first, ok := a.Snapshot().Child("held")
	if !ok || first.Status != StatusDone {
		t.Fatalf("held child %+v, want a done one", first)
	}
	var sessions []string
	for i := range 5 {
		if err := a.Send(ctx, Event{Type: "GO"}); err != nil {
			t.Fatal(err)
		}
		s := a.Snapshot()
		held, ok := s.Child("held")
		if !ok || held.Session != first.Session || held.Status != StatusDone || fmt.Sprint(held.Output) != "map[n:1]" {
			t.Fatalf("round %d: held child %+v, want %+v", i, held, first)
		}
		if got := s.Context()["got"]; got != 2.0 {
			t.Fatalf("round %d: got %v, want 2", i, got)
		}
		if _, listed := s.Child("cycle"); listed {
			t.Fatalf("round %d: the settled promise is still listed", i)
		}
		sessions = append(sessions, a.sys.free[0].sessionID())
	}
	if len(a.sys.free) != 1 {
		t.Fatalf("%d cells kept for reuse, want 1 (the cycling region's)", len(a.sys.free))
	}
	if distinct := slices.Compact(slices.Clone(sessions)); len(distinct) != len(sessions) {
		t.Fatalf("the reused cell kept an old session: %v", sessions)
	}
}

// startActor compiles src with impl and starts an Actor of it, stopped
// when the test ends.
func startActor(t *testing.T, impl Implementations, src string) *Actor {
	t.Helper()
	m, err := Compile([]byte(src), &Options{Implementations: impl})
	if err != nil {
		t.Fatal(err)
	}
	a := NewActor(m, nil)
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	return a
}
