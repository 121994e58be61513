// This file holds the hostile machines of the engine: small, accepted
// machines whose naive processing costs minutes or gigabytes. Each shape has
// a test that asserts the outcome and a benchmark that reports time and
// memory.

package statechart_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/chartgate/chartgate/statechart"
)

// hostileRaiseTwice handles E by raising E twice: every microstep adds one
// more event to the internal queue than it takes.
const hostileRaiseTwice = `{"id":"m","initial":"a","states":{"a":{"on":{"E":{"actions":[` +
	`{"type":"xstate.raise","params":{"event":{"type":"E"}}},` +
	`{"type":"xstate.raise","params":{"event":{"type":"E"}}}]}}}}}`

// hostileAfterZeroAlways re-enters a after 0 ms; on every entry an always
// loop counts n from 0 up to the limit of its guard "more" (see
// hostileAfterZeroAlwaysImpl), one microstep per count. Each delayed event
// costs that many microsteps, and each one schedules the next at once.
func hostileAfterZeroAlways() string {
	return `{"id":"m","context":{"n":0},"initial":"a","states":{"a":{
	  "entry":{"type":"xstate.assign","params":{"n":0}},
	  "after":{"0":{"target":"a","reenter":true}},
	  "always":{"guard":"more","actions":{"type":"xstate.assign","params":{"n":{"$inc":1}}}}}}}`
}

// hostileAfterZeroAlwaysImpl implements the guard of hostileAfterZeroAlways.
func hostileAfterZeroAlwaysImpl(t testing.TB, limit int) statechart.Implementations {
	impl, err := statechart.ParseImplementations([]byte(fmt.Sprintf(`{"guards":{"more":{"field":"context.n","op":"lt","value":%d}}}`, limit)))
	if err != nil {
		t.Fatal(err)
	}
	return impl
}

// hostileParallel returns a parallel machine of n regions that all take a
// transition on GO.
func hostileParallel(n int) string {
	var b strings.Builder
	b.WriteString(`{"id":"p","type":"parallel","states":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"r%d":{"initial":"x","states":{"x":{"on":{"GO":"y"}},"y":{"on":{"GO":"x"}}}}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// hostileParallelFinal returns a machine whose parallel state p has n
// regions that all reach a final state on GO, so p is done and the
// machine reaches its own final state.
func hostileParallelFinal(n int) string {
	var b strings.Builder
	b.WriteString(`{"id":"m","initial":"p","states":{"end":{"type":"final"},"p":{"type":"parallel","onDone":"end","states":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"r%d":{"initial":"x","states":{"x":{"on":{"GO":"f"}},"f":{"type":"final"}}}`, i)
	}
	b.WriteString(`}}}}`)
	return b.String()
}

// hostileTimers returns a machine whose state a schedules n delayed
// events, 1 ms apart; each one counts in context.n, and with reschedule
// also schedules a LATER event an hour on (so every one changes the
// clock's timers). STOP leaves a, which cancels the ones still pending.
func hostileTimers(n int, reschedule bool) string {
	action := `{"type":"xstate.assign","params":{"n":{"$inc":1}}}`
	if reschedule {
		action = `[` + action + `,{"type":"xstate.raise","params":{"event":{"type":"LATER"},"delay":3600000}}]`
	}
	var b strings.Builder
	b.WriteString(`{"id":"t","context":{"n":0},"initial":"a","states":{"b":{},"a":{"on":{"STOP":"b"},"after":{`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":{"actions":%s}`, i, action)
	}
	b.WriteString(`}}}}`)
	return b.String()
}

// hostileCounter is the guard "more" (context.n below limit) and the
// action "inc" (n + 1) of the counting machines below.
func hostileCounter(t testing.TB, limit int) statechart.Implementations {
	impl, err := statechart.ParseImplementations([]byte(fmt.Sprintf(`{
	  "guards": {"more": {"field": "context.n", "op": "lt", "value": %d}},
	  "actions": {"inc": {"assign": {"n": {"$inc": 1}}}}}`, limit)))
	if err != nil {
		t.Fatal(err)
	}
	return impl
}

// hostileStateInValue counts in an always loop whose guard also tests the
// state value (xstate.stateIn with a value, not an id), in a machine of n
// more states: the value is computed for every guard evaluation.
func hostileStateInValue(n int) string {
	var b strings.Builder
	b.WriteString(`{"id":"m","context":{"n":0},"initial":"a","states":{"a":{"always":{"guard":{"type":"xstate.and","params":{"guards":[` +
		`{"type":"xstate.stateIn","params":{"stateValue":"a"}},"more"]}},"actions":"inc"}}`)
	for i := range n {
		fmt.Fprintf(&b, `,"s%d":{}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// hostileWildcards gives one state n wildcard descriptors that the event
// E.y does not match, and E.*, which counts and raises E.y again.
func hostileWildcards(n int) string {
	var b strings.Builder
	b.WriteString(`{"id":"m","context":{"n":0},"initial":"a","states":{"a":{"on":{` +
		`"E.*":{"guard":"more","actions":["inc",{"type":"xstate.raise","params":{"event":{"type":"E.y"}}}]}`)
	for i := range n {
		fmt.Fprintf(&b, `,"wildcard%d.*":{}`, i)
	}
	b.WriteString(`}}}}`)
	return b.String()
}

// hostileNestedGuard nests xstate.and depth levels deep; every level also
// lists width references to the guard g.
func hostileNestedGuard(depth, width int) string {
	g := `"g"`
	leaves := strings.Repeat(`,"g"`, width)
	for range depth {
		g = `{"type":"xstate.and","params":{"guards":[` + g + leaves + `]}}`
	}
	return `{"id":"m","initial":"a","states":{"a":{"on":{"E":{"target":"b","guard":` + g + `}}},"b":{}}}`
}

func hostileGuardImpl() statechart.Implementations {
	return statechart.Implementations{Guards: map[string]statechart.GuardFunc{
		"g": func(context.Context, statechart.GuardArgs) (bool, error) { return true, nil },
	}}
}

func hostileCompile(tb testing.TB, src string, opts *statechart.Options) *statechart.Machine {
	tb.Helper()
	m, err := statechart.Compile([]byte(src), opts)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// countedGuard returns a guard that counts its calls and returns pass.
func countedGuard(calls *int, pass func(statechart.GuardArgs) bool) statechart.GuardFunc {
	return func(_ context.Context, args statechart.GuardArgs) (bool, error) {
		*calls++
		return pass(args), nil
	}
}

// requireOutOfSteps checks that err is the step budget error of event ev.
func requireOutOfSteps(t *testing.T, err error, ev string, limit int) {
	t.Helper()
	require.ErrorIs(t, err, statechart.ErrStepBudget)
	var sb *statechart.StepBudgetError
	require.ErrorAs(t, err, &sb)
	require.Equal(t, ev, sb.Event)
	require.Equal(t, limit, sb.Limit)
	var re *statechart.RuntimeError
	require.False(t, errors.As(err, &re), "running out of steps is not a runtime error")
}

func TestHostileRaiseTwiceStopsAtTheStepBudget(t *testing.T) {
	ctx := context.Background()
	m := hostileCompile(t, hostileRaiseTwice, nil)
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	next, err := m.Transition(ctx, s, statechart.NewEvent("E"), epoch)
	requireOutOfSteps(t, err, "E", 100_000)
	require.Same(t, s, next, "the caller's snapshot is returned unchanged")
	require.Equal(t, statechart.StatusActive, next.Status())

	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	requireOutOfSteps(t, a.Send(ctx, statechart.NewEvent("E")), "E", 100_000)
	require.Equal(t, statechart.StatusActive, a.Snapshot().Status(), "the actor keeps its state")
	require.NoError(t, a.Snapshot().Err())
	require.NoError(t, a.Send(ctx, statechart.NewEvent("OTHER")), "and goes on taking events")

	// A delayed event that an actor fires has no caller to return the
	// error to: the actor keeps its state, with status error.
	delayed := hostileCompile(t, strings.Replace(hostileRaiseTwice, `"on":`, `"after":{"10":{"actions":{"type":"xstate.raise","params":{"event":{"type":"E"}}}}},"on":`, 1), nil)
	clock := statechart.NewSimulatedClock()
	a = statechart.NewActor(delayed, &statechart.ActorOptions{Clock: clock})
	require.NoError(t, a.Start(ctx))
	clock.Advance(10 * time.Millisecond)
	snap := a.Snapshot()
	require.Equal(t, statechart.StatusError, snap.Status())
	requireOutOfSteps(t, snap.Err(), "xstate.after.10.m.a", 100_000)
	require.Equal(t, "a", snap.Value())
	require.Empty(t, snap.Pending())

	// Every step selects one event; the call stops after MaxSteps of them.
	calls := 0
	counted := hostileCompile(t, strings.Replace(hostileRaiseTwice, `"E":{"actions"`, `"E":{"guard":"counted","actions"`, 1), &statechart.Options{
		MaxSteps:        1000,
		Implementations: statechart.Implementations{Guards: map[string]statechart.GuardFunc{"counted": countedGuard(&calls, func(statechart.GuardArgs) bool { return true })}},
	})
	s, err = counted.Start(ctx, epoch)
	require.NoError(t, err)
	_, err = counted.Transition(ctx, s, statechart.NewEvent("E"), epoch)
	requireOutOfSteps(t, err, "E", 1000)
	require.Equal(t, 1001, calls, "guard evaluations: one per step, and the one that found the budget spent")
}

func TestHostileAfterZeroAlwaysStopsAtTheStepBudget(t *testing.T) {
	ctx := context.Background()
	m := hostileCompile(t, hostileAfterZeroAlways(), &statechart.Options{Implementations: hostileAfterZeroAlwaysImpl(t, 99_990)})
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	require.Equal(t, 99_990.0, s.Context()["n"])
	next, err := m.Advance(ctx, s, epoch)
	requireOutOfSteps(t, err, "xstate.after.0.m.a", 100_000)
	require.Same(t, s, next)
	require.Len(t, next.Pending(), 1, "the delayed event is still pending")

	// One budget for the whole Advance: the always loop of every delayed
	// event counts against it, so the guard runs about MaxSteps times
	// (it ran limit² times before).
	calls := 0
	more := hostileAfterZeroAlwaysImpl(t, 1990).Guards["more"]
	m = hostileCompile(t, hostileAfterZeroAlways(), &statechart.Options{
		MaxSteps: 2000, MaxMicrosteps: 2000,
		Implementations: statechart.Implementations{Guards: map[string]statechart.GuardFunc{"more": func(ctx context.Context, args statechart.GuardArgs) (bool, error) {
			calls++
			return more(ctx, args)
		}}},
	})
	s, err = m.Start(ctx, epoch)
	require.NoError(t, err)
	calls = 0
	_, err = m.Advance(ctx, s, epoch)
	requireOutOfSteps(t, err, "xstate.after.0.m.a", 2000)
	require.LessOrEqual(t, calls, 2002)

	// On an actor, each delayed event is a call of its own.
	m = hostileCompile(t, hostileAfterZeroAlways(), &statechart.Options{MaxSteps: 1000, Implementations: hostileAfterZeroAlwaysImpl(t, 500)})
	clock := statechart.NewSimulatedClock()
	a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	require.NoError(t, a.Start(ctx))
	for range 3 {
		clock.Advance(0)
		snap := a.Snapshot()
		require.Equal(t, statechart.StatusActive, snap.Status())
		require.Equal(t, 500.0, snap.Context()["n"])
		require.Len(t, snap.Pending(), 1)
	}
}

func TestHostileParallelRegions(t *testing.T) {
	ctx := context.Background()
	const n = 1000
	m := hostileCompile(t, hostileParallel(n), nil)
	values := func(v any) map[string]any {
		t.Helper()
		out := map[string]any{}
		for k, x := range v.(map[string]any) {
			out[k] = x
		}
		return out
	}
	all := func(state string) map[string]any {
		out := map[string]any{}
		for i := range n {
			out[fmt.Sprintf("r%d", i)] = state
		}
		return out
	}
	a := statechart.NewActor(m, nil)
	require.NoError(t, a.Start(ctx))
	require.Equal(t, all("x"), values(a.Snapshot().Value()))
	require.NoError(t, a.Send(ctx, statechart.NewEvent("GO")))
	require.Equal(t, all("y"), values(a.Snapshot().Value()), "every region took its transition")
	s, err := m.Transition(ctx, a.Snapshot(), statechart.NewEvent("GO"), epoch)
	require.NoError(t, err)
	require.Equal(t, all("x"), values(s.Value()))

	// Every region reaches a final state: the parallel state is done once,
	// after the last region, and the machine with it.
	m = hostileCompile(t, hostileParallelFinal(n), nil)
	s, err = m.Start(ctx, epoch)
	require.NoError(t, err)
	s, err = m.Transition(ctx, s, statechart.NewEvent("GO"), epoch)
	require.NoError(t, err)
	require.Equal(t, statechart.StatusDone, s.Status())
	require.Equal(t, "end", s.Value())
}

func TestHostileTimers(t *testing.T) {
	ctx := context.Background()
	const n = 10_000
	m := hostileCompile(t, hostileTimers(n, false), nil)
	s, err := m.Start(ctx, epoch)
	require.NoError(t, err)
	require.Len(t, s.Pending(), n)
	half, err := m.Advance(ctx, s, epoch.Add(n/2*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, float64(n/2), half.Context()["n"])
	require.Len(t, half.Pending(), n/2)
	require.Equal(t, epoch.Add((n/2+1)*time.Millisecond), half.Pending()[0].Due)
	all, err := m.Advance(ctx, half, epoch.Add(n*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, float64(n), all.Context()["n"])
	require.Empty(t, all.Pending())
	stopped, err := m.Transition(ctx, s, statechart.NewEvent("STOP"), epoch)
	require.NoError(t, err)
	require.Equal(t, "b", stopped.Value())
	require.Empty(t, stopped.Pending(), "leaving a cancels its delayed events")
	require.Len(t, s.Pending(), n, "the input snapshot keeps them")

	// The same on an actor, where each delayed event is registered with
	// the clock, and (with reschedule) each one schedules another.
	for _, reschedule := range []bool{false, true} {
		m := hostileCompile(t, hostileTimers(n, reschedule), nil)
		clock := statechart.NewSimulatedClock()
		a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
		require.NoError(t, a.Start(ctx))
		clock.Advance(n * time.Millisecond)
		snap := a.Snapshot()
		require.Equal(t, float64(n), snap.Context()["n"], "reschedule %v", reschedule)
		if reschedule {
			require.Len(t, snap.Pending(), n)
			require.Equal(t, "LATER", snap.Pending()[0].Event.Type)
		} else {
			require.Empty(t, snap.Pending())
		}
	}
}

func TestHostileNestedGuard(t *testing.T) {
	ctx := context.Background()
	src := hostileNestedGuard(40, 1000)
	for _, pass := range []bool{true, false} {
		impl := statechart.Implementations{Guards: map[string]statechart.GuardFunc{
			"g": func(context.Context, statechart.GuardArgs) (bool, error) { return pass, nil },
		}}
		m := hostileCompile(t, src, &statechart.Options{Implementations: impl})
		s, err := m.Start(ctx, epoch)
		require.NoError(t, err)
		s, err = m.Transition(ctx, s, statechart.NewEvent("E"), epoch)
		require.NoError(t, err)
		want := "a"
		if pass {
			want = "b"
		}
		require.Equal(t, want, s.Value())
	}

	// What Compile allocates grows with the size of the guard, not with
	// its size times its depth: doubling the width doubles it, and so
	// does doubling the depth (each level used to copy every level below).
	allocated := func(depth, width int) float64 {
		data := []byte(hostileNestedGuard(depth, width))
		opts := &statechart.Options{Implementations: hostileGuardImpl()}
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := statechart.Compile(data, opts)
			runtime.ReadMemStats(&after)
			require.NoError(t, err)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return float64(least)
	}
	require.Less(t, allocated(40, 4000)/allocated(40, 2000), 2.5)
	require.Less(t, allocated(40, 2000)/allocated(20, 2000), 2.5)
}

func TestHostileStateInValueAndWildcards(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{10, 20_000} {
		m := hostileCompile(t, hostileStateInValue(n), &statechart.Options{Implementations: hostileCounter(t, 1000)})
		s, err := m.Start(ctx, epoch)
		require.NoError(t, err)
		require.Equal(t, 1000.0, s.Context()["n"], "states: %d", n)

		m = hostileCompile(t, hostileWildcards(n), &statechart.Options{Implementations: hostileCounter(t, 1000)})
		s, err = m.Start(ctx, epoch)
		require.NoError(t, err)
		s, err = m.Transition(ctx, s, statechart.NewEvent("E.go"), epoch)
		require.NoError(t, err)
		require.Equal(t, 1000.0, s.Context()["n"], "wildcards: %d", n)
	}
}

func BenchmarkHostileStateInValue(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1000, 50_000} {
		b.Run(fmt.Sprintf("states=%d", n), func(b *testing.B) {
			m := hostileCompile(b, hostileStateInValue(n), &statechart.Options{Implementations: hostileCounter(b, 1000)})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Start(ctx, epoch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHostileWildcards(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{10, 1000, 20_000} {
		b.Run(fmt.Sprintf("descriptors=%d", n), func(b *testing.B) {
			m := hostileCompile(b, hostileWildcards(n), &statechart.Options{Implementations: hostileCounter(b, 1000)})
			s, err := m.Start(ctx, epoch)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Transition(ctx, s, statechart.NewEvent("E.go"), epoch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHostileRaiseTwice(b *testing.B) {
	ctx := context.Background()
	m := hostileCompile(b, hostileRaiseTwice, nil)
	s, err := m.Start(ctx, epoch)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = m.Transition(ctx, s, statechart.NewEvent("E"), epoch)
	}
}

// BenchmarkHostileAfterZeroAlways runs Advance on the zero-delay loop
// with limits of 2,000 (MaxMicrosteps and MaxSteps) and with the defaults.
func BenchmarkHostileAfterZeroAlways(b *testing.B) {
	ctx := context.Background()
	for _, limit := range []int{2000, 100_000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			m := hostileCompile(b, hostileAfterZeroAlways(), &statechart.Options{
				Implementations: hostileAfterZeroAlwaysImpl(b, limit-10), MaxMicrosteps: limit, MaxSteps: limit})
			s, err := m.Start(ctx, epoch)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = m.Advance(ctx, s, epoch)
			}
		})
	}
}

func BenchmarkHostileParallelRegions(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{100, 1000, 10_000} {
		b.Run(fmt.Sprintf("regions=%d", n), func(b *testing.B) {
			m := hostileCompile(b, hostileParallel(n), nil)
			a := statechart.NewActor(m, nil)
			if err := a.Start(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Send(ctx, statechart.NewEvent("GO")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkHostileParallelFinal(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{100, 1000, 10_000} {
		b.Run(fmt.Sprintf("regions=%d", n), func(b *testing.B) {
			m := hostileCompile(b, hostileParallelFinal(n), nil)
			s, err := m.Start(ctx, epoch)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Transition(ctx, s, statechart.NewEvent("GO"), epoch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHostileTimers fires n delayed events with Advance, and on an
// actor with a simulated clock (what `chartgate run` does); "reschedule"
// machines schedule another delayed event from each one.
func BenchmarkHostileTimers(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 2000, 10000} {
		m := hostileCompile(b, hostileTimers(n, false), nil)
		due := epoch.Add(time.Duration(n) * time.Millisecond)
		b.Run(fmt.Sprintf("advance/timers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, _ := m.Start(ctx, epoch)
				if _, err := m.Advance(ctx, s, due); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("actor/timers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				clock := statechart.NewSimulatedClock()
				a := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
				if err := a.Start(ctx); err != nil {
					b.Fatal(err)
				}
				clock.Advance(due.Sub(epoch))
			}
		})
		r := hostileCompile(b, hostileTimers(n, true), nil)
		b.Run(fmt.Sprintf("actor-reschedule/timers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				clock := statechart.NewSimulatedClock()
				a := statechart.NewActor(r, &statechart.ActorOptions{Clock: clock})
				if err := a.Start(ctx); err != nil {
					b.Fatal(err)
				}
				clock.Advance(due.Sub(epoch))
			}
		})
	}
}

func BenchmarkHostileNestedGuard(b *testing.B) {
	for _, width := range []int{1000, 10000} {
		src := []byte(hostileNestedGuard(40, width))
		b.Run(fmt.Sprintf("depth=40/width=%d", width), func(b *testing.B) {
			opts := &statechart.Options{Implementations: hostileGuardImpl()}
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			var kept uint64
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				m, err := statechart.Compile(src, opts)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(m)
				kept = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
			}
			b.ReportMetric(float64(kept), "B-kept")
		})
	}
}
