package statechart

import (
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

// TestCellKeepsItsRunner: a machine cell keeps one runner, and with it its
// step cache, from one macrostep to the next (a collection does not take
// it, as it would from the pool), and gives it back when it stops.
func TestCellKeepsItsRunner(t *testing.T) {
	ctx := t.Context()
	child, err := Compile([]byte(`{"id":"c","initial":"a","states":{"a":{"on":{"GO":"b"}},"b":{"on":{"GO":"a"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compile([]byte(`{"id":"p","initial":"idle","states":{
		"idle":{"on":{"START":"running"}},
		"running":{"invoke":{"src":"child","id":"kid"},"on":{
			"GO":{"actions":{"type":"xstate.sendTo","params":{"to":"kid","event":{"type":"GO"}}}},
			"STOP":"idle"}}}}`),
		&Options{Implementations: Implementations{Actors: map[string]ActorLogic{"child": child}}})
	if err != nil {
		t.Fatal(err)
	}
	a := NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
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
