package statechart_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chartgate/chartgate/internal/benchgen"
	"github.com/chartgate/chartgate/statechart"
)

// Benchmark machines. The same JSON is used by conformance/bench to compare
// with XState, so keep them plain XState configs.
const (
	benchToggle = `{"id":"t","initial":"off","states":{"off":{"on":{"TOGGLE":"on"}},"on":{"on":{"TOGGLE":"off"}}}}`

	benchHierarchy = `{"id":"h","initial":"a","states":{
	  "a":{"initial":"a1","states":{"a1":{"initial":"a11","states":{"a11":{"initial":"a111","states":{"a111":{"on":{"GO":"#h.b.b1.b11.b111"}}}}}}}},
	  "b":{"initial":"b1","states":{"b1":{"initial":"b11","states":{"b11":{"initial":"b111","states":{"b111":{"on":{"GO":"#h.a.a1.a11.a111"}}}}}}}}}}`

	benchParallel = `{"id":"p","type":"parallel","states":{
	  "r1":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}},
	  "r2":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}},
	  "r3":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}},
	  "r4":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}}}}`

	// benchCounter changes its context on every event: TICK counts, and
	// every other TICK moves between two states (benchCounterImpl).
	benchCounter = `{"id":"n","initial":"a","context":{"n":0,"flips":0},"states":{
	  "a":{"on":{"TICK":[{"target":"b","guard":"odd","actions":["count","flip"]},{"actions":"count"}]}},
	  "b":{"on":{"TICK":[{"target":"a","guard":"odd","actions":["count","flip"]},{"actions":"count"}]}}}}`
	benchCounterImpl = `{"guards":{"odd":{"field":"context.flips","op":"lt","value":{"$ref":"context.n"}}},
	  "actions":{"count":{"assign":{"n":{"$inc":1}}},"flip":{"assign":{"flips":{"$inc":2}}}}}`

	benchAlways = `{"id":"c","initial":"idle","states":{
	  "idle":{"on":{"GO":"s1"}},
	  "s1":{"always":"s2"},"s2":{"always":"s3"},"s3":{"always":"s4"},"s4":{"always":"s5"},
	  "s5":{"on":{"GO":"idle"}}}}`
)

func benchActor(b *testing.B, src string, events ...string) {
	ctx := context.Background()
	m, err := statechart.Compile([]byte(src), nil)
	if err != nil {
		b.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		b.Fatal(err)
	}
	evs := make([]statechart.Event, len(events))
	for i, e := range events {
		evs[i] = statechart.Event{Type: e}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Send(ctx, evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFlatToggle(b *testing.B)     { benchActor(b, benchToggle, "TOGGLE") }
func BenchmarkHierarchy4(b *testing.B)     { benchActor(b, benchHierarchy, "GO") }
func BenchmarkParallel4(b *testing.B)      { benchActor(b, benchParallel, "GO") }
func BenchmarkAlwaysChain(b *testing.B)    { benchActor(b, benchAlways, "GO") }
func BenchmarkUnhandledEvent(b *testing.B) { benchActor(b, benchToggle, "NOPE") }

// BenchmarkPureTransition measures the immutable API, which copies the
// snapshot on every event.
func BenchmarkPureTransition(b *testing.B) {
	ctx := context.Background()
	m, err := statechart.Compile([]byte(benchToggle), nil)
	if err != nil {
		b.Fatal(err)
	}
	s, _ := m.Start(ctx, epoch)
	e := statechart.Event{Type: "TOGGLE"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _ = m.Transition(ctx, s, e, epoch)
	}
}

// bigMachine returns a machine of n states: 10 compound groups of atomic
// states, each with a transition and a guardless always-free path.
func bigMachine(n int) []byte {
	var b strings.Builder
	groups := 10
	per := n/groups - 1
	b.WriteString(`{"id":"big","initial":"g0","states":{`)
	for g := 0; g < groups; g++ {
		if g > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"g%d":{"initial":"s0","on":{"JUMP":"g%d"},"states":{`, g, (g+1)%groups)
		for s := 0; s < per; s++ {
			if s > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"s%d":{"tags":["t%d"],"on":{"NEXT":"s%d","BACK":"#big.g%d.s0"}}`, s, s%7, (s+1)%per, g)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

func BenchmarkCompile1000States(b *testing.B) {
	data := bigMachine(1000)
	m, err := statechart.Compile(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	if got := len(m.StateIDs()); got < 1000 {
		b.Fatalf("machine has %d states", got)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := statechart.Compile(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPingPong: each PING goes to a child machine, which answers PONG.
const benchPingPong = `{"id":"m","initial":"a","states":{"a":{
	"invoke":{"src":"echo","id":"e"},
	"on":{"PING":{"actions":{"type":"xstate.sendTo","params":{"to":"e","event":{"type":"PING"}}}},"PONG":{}}}}}`

func BenchmarkActorChildRoundTrip(b *testing.B) {
	ctx := context.Background()
	echo, err := statechart.Compile([]byte(`{"id":"e","initial":"on","states":{"on":{"on":{"PING":{"actions":{"type":"xstate.sendParent","params":{"event":{"type":"PONG"}}}}}}}}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := statechart.Compile([]byte(benchPingPong), &statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"echo": echo}}})
	if err != nil {
		b.Fatal(err)
	}
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		b.Fatal(err)
	}
	ping := statechart.NewEvent("PING")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := a.Send(ctx, ping); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile compiles flat and nested machines of 100, 1,000 and
// 10,000 states (the growth from one size to the next should stay near
// 10×: compile is linear).
func BenchmarkCompile(b *testing.B) {
	for _, shape := range []struct {
		name string
		gen  func(int) []byte
	}{{"flat", benchgen.Flat}, {"nested", benchgen.Nested}} {
		for _, n := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				data := shape.gen(n)
				m, err := statechart.Compile(data, nil)
				if err != nil {
					b.Fatal(err)
				}
				if got := len(m.StateIDs()); got < n*9/10 {
					b.Fatalf("machine has %d states, want about %d", got, n)
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := statechart.Compile(data, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSpawnStop: START enters a state that invokes a child machine, STOP
// leaves it; two events start and stop one child.
const benchSpawnStop = `{"id":"parent","initial":"idle","states":{
	"idle":{"on":{"START":"running"}},
	"running":{"invoke":{"src":"worker","id":"worker"},"on":{"STOP":"idle"}}}}`

func BenchmarkActorSpawnStop(b *testing.B) {
	worker, err := statechart.Compile([]byte(`{"id":"worker","initial":"a","states":{"a":{"on":{"NEXT":"b"}},"b":{"on":{"NEXT":"a"}}}}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	m, err := statechart.Compile([]byte(benchSpawnStop), &statechart.Options{Implementations: statechart.Implementations{Actors: map[string]statechart.ActorLogic{"worker": worker}}})
	if err != nil {
		b.Fatal(err)
	}
	benchActorCompiled(b, m, "START", "STOP")
}

// benchPromise: FETCH invokes a promise that resolves at once; its done
// event returns to idle. One event is one promise invoked and resolved.
const benchPromise = `{"id":"parent","context":{"fetched":0},"initial":"idle","states":{
	"idle":{"on":{"FETCH":"loading"}},
	"loading":{"invoke":{"src":"fetch","id":"fetch","onDone":{"target":"idle",
		"actions":{"type":"xstate.assign","params":{"fetched":{"$inc":1},"last":{"$ref":"event.output"}}}}}}}}`

// BenchmarkActorPromise runs the declarative promise (which an Actor
// settles before Send returns, as a JavaScript promise settles once the
// synchronous work is over).
func BenchmarkActorPromise(b *testing.B) {
	impl, err := statechart.ParseImplementations([]byte(`{"actors":{"fetch":{"promise":{"resolve":{"ok":true}}}}}`))
	if err != nil {
		b.Fatal(err)
	}
	m, err := statechart.Compile([]byte(benchPromise), &statechart.Options{Implementations: impl})
	if err != nil {
		b.Fatal(err)
	}
	benchActorCompiled(b, m, "FETCH")
}

func benchActorCompiled(b *testing.B, m *statechart.Machine, events ...string) {
	ctx := context.Background()
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		b.Fatal(err)
	}
	evs := make([]statechart.Event, len(events))
	for i, e := range events {
		evs[i] = statechart.Event{Type: e}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := a.Send(ctx, evs[i%len(evs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if s := a.Snapshot(); s.Status() != statechart.StatusActive {
		b.Fatalf("status %s", s.Status())
	}
}

// pureBench is a machine the pure API's benchmarks run, and its event.
type pureBench struct{ name, src, event string }

var pureBenches = []pureBench{
	{"toggle", benchToggle, "TOGGLE"}, {"hierarchy", benchHierarchy, "GO"}, {"parallel", benchParallel, "GO"}, {"counter", benchCounter, "TICK"},
}

// compilePure compiles a machine of pureBenches, with the counter's
// implementations.
func compilePure(tb testing.TB, src string) *statechart.Machine {
	tb.Helper()
	return compile(tb, src, &statechart.Options{Implementations: mustImpl(tb, benchCounterImpl)})
}

// BenchmarkEngineSend runs the pure API through the Engine interface, as
// the MCP layer does: every event returns a new immutable State.
func BenchmarkEngineSend(b *testing.B) {
	for _, bm := range pureBenches {
		b.Run(bm.name, func(b *testing.B) {
			ctx := context.Background()
			e := compilePure(b, bm.src).Engine()
			s, err := e.Start(ctx, epoch)
			if err != nil {
				b.Fatal(err)
			}
			ev := statechart.Event{Type: bm.event}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if s, err = e.Send(ctx, s, ev, epoch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTransitionInto steps one snapshot in place with
// Machine.TransitionInto, the form of the pure API that reuses the
// caller's storage: no allocation per event, the counter's context
// included.
func BenchmarkTransitionInto(b *testing.B) {
	for _, bm := range pureBenches {
		b.Run(bm.name, func(b *testing.B) {
			ctx := context.Background()
			m := compilePure(b, bm.src)
			start, err := m.Start(ctx, epoch)
			if err != nil {
				b.Fatal(err)
			}
			var s statechart.Snapshot
			ev := statechart.Event{Type: bm.event}
			if err := m.TransitionInto(ctx, &s, start, ev, epoch); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := m.TransitionInto(ctx, &s, &s, ev, epoch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
