// This file tests TransitionInto and AdvanceInto, the pure API that
// writes into storage the caller hands back: over random event sequences
// they give the snapshots the immutable API gives, they never change a
// snapshot another function returned, and they allocate nothing per event
// for a machine without actors.

package statechart_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// bufferGoMachine has Go guards and actions that read the context (so the
// context map is handed to implementations), a Go action that fails, and
// an eventless loop that runs out of steps.
const bufferGoMachine = `{"id":"g","context":{"n":0,"items":[]},"initial":"a","states":{
  "a":{"on":{"INC":{"actions":"count"},"GO":{"target":"b","guard":"big"},"FAIL":{"actions":"boom"},
    "LOOP":{"target":"spin","actions":"count"},"ADD":{"actions":"add"},"GOCOUNT":{"actions":"goCount"}}},
  "b":{"entry":"goCount","on":{"BACK":{"target":"a","guard":"goSmall"},"INC":{"actions":["count","goCount"]},"FAIL":{"actions":["count","boom"]}}},
  "spin":{"always":"spin2"},"spin2":{"always":"spin"}}}`

const bufferGoImpl = `{"guards":{"big":{"field":"context.n","op":"gte","value":3}},
  "actions":{"count":{"assign":{"n":{"$inc":1}}},"add":{"assign":{"items":{"$push":{"$ref":"event.sku"}},"last":{"$ref":"context.n"}}}}}`

func bufferGoOptions(t testing.TB) *statechart.Options {
	impl, err := statechart.ParseImplementations([]byte(bufferGoImpl))
	if err != nil {
		t.Fatal(err)
	}
	impl = impl.Merge(statechart.Implementations{Guards: map[string]statechart.GuardFunc{
		"goSmall": func(_ context.Context, a statechart.GuardArgs) (bool, error) {
			n, _ := a.Context["n"].(float64)
			return int(n)%2 == 0, nil
		},
	}, Actions: map[string]statechart.ActionFunc{
		"goCount": func(_ context.Context, a *statechart.ActionArgs) error {
			n, _ := a.Context["n"].(float64)
			a.Assign(map[string]any{"gone": n * 10})
			return nil
		},
		"boom": func(context.Context, *statechart.ActionArgs) error { return errors.New("boom") },
	}})
	return &statechart.Options{Implementations: impl, MaxSteps: 50}
}

// bufferMachine is a machine the tests step both ways, with its alphabet:
// an event type, or "+<ms>" to advance the time.
type bufferMachine struct {
	name  string
	m     *statechart.Machine
	steps []string
}

func bufferMachines(t *testing.T) []bufferMachine {
	counterImpl, err := statechart.ParseImplementations([]byte(benchCounterImpl))
	if err != nil {
		t.Fatal(err)
	}
	counter := &statechart.Options{Implementations: counterImpl}
	out := []bufferMachine{
		{"toggle", compile(t, benchToggle, nil), []string{"TOGGLE", "NOPE"}},
		{"hierarchy", compile(t, benchHierarchy, nil), []string{"GO", "NOPE"}},
		{"parallel", compile(t, benchParallel, nil), []string{"GO", "NOPE"}},
		{"counter", compile(t, benchCounter, counter), []string{"TICK", "TICK", "TICK", "NOPE"}},
		{"always", compile(t, benchAlways, nil), []string{"GO", "NOPE"}},
		{"go", compile(t, bufferGoMachine, bufferGoOptions(t)), []string{"INC", "INC", "GO", "BACK", "FAIL", "LOOP", "ADD", "GOCOUNT", "NOPE"}},
	}
	worker := compile(t, `{"id":"worker","context":{"n":0},"initial":"a","states":{"a":{"on":{"NEXT":"b"}},"b":{"on":{"NEXT":"a"}}}}`, nil)
	echo := compile(t, `{"id":"e","initial":"on","states":{"on":{"on":{"PING":{"actions":{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}}}}}}`, nil)
	actors := &statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"worker": worker, "echo": echo}}}
	out = append(out,
		bufferMachine{"spawnstop", compile(t, benchSpawnStop, actors), []string{"START", "STOP", "NEXT"}},
		bufferMachine{"pingpong", compile(t, benchPingPong, actors), []string{"PING", "PONG", "NOPE"}})
	for _, fm := range fuzzMachines {
		impl, err := statechart.ParseImplementations([]byte(fm.impl))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bufferMachine{fm.name, compile(t, fm.json, &statechart.Options{Implementations: impl, AllowMissingGuards: true}), fm.steps})
	}
	return out
}

// persistedForm is the snapshot's persisted form, the strongest
// comparison of two snapshots.
func persistedForm(t *testing.T, s *statechart.Snapshot) string {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// kept is a snapshot the immutable API returned, with its persisted form
// then.
type kept struct {
	s    *statechart.Snapshot
	form string
}

// TestIntoMatchesTheImmutableAPI steps each machine with random events and
// time advances twice: with Transition and Advance, and with
// TransitionInto and AdvanceInto on buffers used in every way (stepped in
// place, written from the other buffer, written from an immutable
// snapshot, handed to the immutable API, read through Context). After
// every step both give the same error and, often, the same persisted
// snapshot; at the end every snapshot the immutable API returned still
// reads as it did.
func TestIntoMatchesTheImmutableAPI(t *testing.T) {
	ctx := context.Background()
	for _, bm := range bufferMachines(t) {
		t.Run(bm.name, func(t *testing.T) {
			m := bm.m
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, 21))
				now := epoch
				start, err := m.Start(ctx, now)
				if err != nil {
					t.Fatal(err)
				}
				imm := start
				var bufs [2]statechart.Snapshot
				cur, other := &bufs[0], &bufs[1]
				fresh := true // cur does not hold imm's state yet
				var all []kept
				keep := func(s *statechart.Snapshot) { all = append(all, kept{s, persistedForm(t, s)}) }
				keep(start)
				for i := range 60 {
					step := bm.steps[rng.IntN(len(bm.steps))]
					ev := statechart.NewEvent(step)
					if step == "ADD" {
						ev.Data = map[string]any{"sku": fmt.Sprintf("sku-%d-%d", seed, i)}
					}
					prev := imm
					var want, got error
					how := rng.IntN(8)
					if ms, ok := strings.CutPrefix(step, "+"); ok {
						var d int
						if _, err := fmt.Sscan(ms, &d); err != nil {
							t.Fatal(err)
						}
						now = now.Add(time.Duration(d) * time.Millisecond)
						imm, want = m.Advance(ctx, prev, now)
						switch {
						case fresh || how == 0:
							got = m.AdvanceInto(ctx, cur, prev, now)
						case how == 1:
							got = m.AdvanceInto(ctx, other, cur, now)
							cur, other = other, cur
						default:
							got = m.AdvanceInto(ctx, cur, cur, now)
						}
					} else {
						imm, want = m.Transition(ctx, prev, ev, now)
						switch {
						case fresh || how == 0:
							got = m.TransitionInto(ctx, cur, prev, ev, now)
						case how == 1:
							got = m.TransitionInto(ctx, other, cur, ev, now)
							cur, other = other, cur
						case how == 2:
							// The buffer as the immutable API's input: its result
							// must not share the buffer's storage.
							before := persistedForm(t, cur)
							x, err := m.Transition(ctx, cur, ev, now)
							if !sameError(err, want) || persistedForm(t, x) != persistedForm(t, imm) {
								t.Fatalf("seed %d step %d (%s): Transition of a buffer gave %v\n%s\nwant %v\n%s", seed, i, step, err, persistedForm(t, x), want, persistedForm(t, imm))
							}
							if persistedForm(t, cur) != before {
								t.Fatalf("seed %d step %d: Transition changed the buffer it was given", seed, i)
							}
							keep(x)
							got = m.TransitionInto(ctx, cur, cur, ev, now)
						default:
							got = m.TransitionInto(ctx, cur, cur, ev, now)
						}
					}
					fresh = false
					if imm != prev {
						keep(imm)
					}
					if !sameError(got, want) {
						t.Fatalf("seed %d step %d (%s): Into returned %v, the immutable API %v", seed, i, step, got, want)
					}
					if how == 3 {
						_ = cur.Context()["n"] // brings the map up to date
					}
					if how < 4 || i == 59 {
						if g, w := persistedForm(t, cur), persistedForm(t, imm); g != w {
							t.Fatalf("seed %d step %d (%s): Into gave\n%s\nthe immutable API\n%s", seed, i, step, g, w)
						}
					}
					if imm.Status() != statechart.StatusActive && rng.IntN(2) == 0 {
						imm, fresh = start, true // start again
					}
				}
				for j, k := range all {
					if form := persistedForm(t, k.s); form != k.form {
						t.Fatalf("seed %d: snapshot %d the immutable API returned changed from\n%s\nto\n%s", seed, j, k.form, form)
					}
				}
			}
		})
	}
}

// TestIntoNeverWritesASharedSnapshot checks that a snapshot another
// function returned is refused as dst, and left as it was.
func TestIntoNeverWritesASharedSnapshot(t *testing.T) {
	ctx := context.Background()
	m := compilePure(t, benchCounter)
	s, err := m.Start(ctx, epoch)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := m.Restore([]byte(persistedForm(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	tick := statechart.NewEvent("TICK")
	for _, shared := range []*statechart.Snapshot{s, restored} {
		before := persistedForm(t, shared)
		if err := m.TransitionInto(ctx, shared, shared, tick, epoch); !errors.Is(err, statechart.ErrSharedSnapshot) {
			t.Errorf("TransitionInto into a shared snapshot returned %v, want ErrSharedSnapshot", err)
		}
		if err := m.AdvanceInto(ctx, shared, s, epoch); !errors.Is(err, statechart.ErrSharedSnapshot) {
			t.Errorf("AdvanceInto into a shared snapshot returned %v, want ErrSharedSnapshot", err)
		}
		if after := persistedForm(t, shared); after != before {
			t.Errorf("the shared snapshot changed from %s to %s", before, after)
		}
	}
	var buf statechart.Snapshot
	if err := m.TransitionInto(ctx, &buf, s, tick, epoch); err != nil {
		t.Fatal(err)
	}
	clone := buf.Clone()
	want := persistedForm(t, clone)
	for range 5 {
		if err := m.TransitionInto(ctx, &buf, &buf, tick, epoch); err != nil {
			t.Fatal(err)
		}
	}
	if got := persistedForm(t, clone); got != want {
		t.Errorf("Clone of a buffer changed with the buffer: %s, was %s", got, want)
	}
	if got := clone.Context()["n"]; got != 1.0 {
		t.Errorf("the clone's n is %v, want 1", got)
	}
	if got := buf.Context()["n"]; got != 6.0 {
		t.Errorf("the buffer's n is %v, want 6", got)
	}
	other := compile(t, benchToggle, nil)
	if err := other.TransitionInto(ctx, &buf, s, tick, epoch); err == nil {
		t.Error("TransitionInto took a snapshot of another machine")
	}
}

// TestIntoAllocatesNothingPerEvent steps machines in place, the counter's
// context changing on every event, far past the numbers kept boxed once
// and for all.
func TestIntoAllocatesNothingPerEvent(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ctx := context.Background()
	for _, c := range pureBenches {
		t.Run(c.name, func(t *testing.T) {
			m := compilePure(t, c.src)
			start, err := m.Start(ctx, epoch)
			if err != nil {
				t.Fatal(err)
			}
			ev := statechart.NewEvent(c.event)
			var s statechart.Snapshot
			if err := m.TransitionInto(ctx, &s, start, ev, epoch); err != nil {
				t.Fatal(err)
			}
			send := func() {
				if err := m.TransitionInto(ctx, &s, &s, ev, epoch); err != nil {
					t.Fatal(err)
				}
			}
			for range 600 {
				send() // the counter past 255
			}
			if n := mallocs(1000, send); n != 0 {
				t.Errorf("TransitionInto allocated %d times in 1000 events, want 0", n)
			}
		})
	}
}

// mallocs returns how many allocations n runs of f made in all: unlike
// testing.AllocsPerRun, which rounds the mean down, it sees an allocation
// made once in many runs (a number boxed in a shared chunk).
func mallocs(n int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

func mustImpl(t testing.TB, src string) statechart.Implementations {
	t.Helper()
	impl, err := statechart.ParseImplementations([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return impl
}

// TestIntoFromASnapshotOnItsOwnMap writes a buffer from a snapshot started
// with the buffer's own context map (which Context handed out): the
// context is neither lost nor changed under that snapshot.
func TestIntoFromASnapshotOnItsOwnMap(t *testing.T) {
	ctx := context.Background()
	m := compilePure(t, benchCounter)
	s, err := m.Start(ctx, epoch)
	if err != nil {
		t.Fatal(err)
	}
	tick := statechart.NewEvent("TICK")
	var buf statechart.Snapshot
	for i := range 3 {
		from := &buf
		if i == 0 {
			from = s
		}
		if err := m.TransitionInto(ctx, &buf, from, tick, epoch); err != nil {
			t.Fatal(err)
		}
	}
	again, err := m.StartWithContext(ctx, buf.Context(), epoch)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Transition(ctx, again, tick, epoch)
	if err != nil {
		t.Fatal(err)
	}
	before := persistedForm(t, again)
	if err := m.TransitionInto(ctx, &buf, again, tick, epoch); err != nil {
		t.Fatal(err)
	}
	if got, w := persistedForm(t, &buf), persistedForm(t, want); got != w {
		t.Errorf("TransitionInto gave %s, Transition %s", got, w)
	}
	if after := persistedForm(t, again); after != before {
		t.Errorf("the snapshot it was written from changed from %s to %s", before, after)
	}
}
