package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// result is one engine's run of one machine's stream.
type result struct {
	Engine         string         `json:"engine"`
	Events         int            `json:"events"`
	NS             int64          `json:"ns"`
	EventsPerSec   float64        `json:"eventsPerSec"`
	AllocsPerEvent *float64       `json:"allocsPerEvent,omitempty"` // Go engines only
	BytesPerEvent  *float64       `json:"bytesPerEvent,omitempty"`  // Go engines only
	Value          any            `json:"value"`
	Context        map[string]any `json:"context"`
	Status         string         `json:"status"`
}

// stream says which events of a machine's stream an engine gets: W
// warm-up events, untimed, then n timed events in rounds consecutive
// rounds (the last takes what does not divide evenly).
type stream struct {
	n, warmup, rounds int
}

// roundEnds returns the index after the last event of each round.
func (st stream) roundEnds() []int {
	rounds := max(1, min(st.rounds, st.n))
	ends := make([]int, rounds)
	for k := range rounds {
		ends[k] = st.warmup + st.n*(k+1)/rounds
	}
	return ends
}

// measure sends events warmup .. warmup+n-1 of the stream with send, after
// sending events 0 .. warmup-1 untimed, in st.rounds rounds, and returns
// the rate of the fastest round (the one least disturbed by other work on
// the machine; with one round, the whole run), the total time and the heap
// allocations of the timed part.
func measure(st stream, send func(i int) error) (*result, error) {
	for i := 0; i < st.warmup; i++ {
		if err := send(i); err != nil {
			return nil, fmt.Errorf("warm-up event %d: %w", i, err)
		}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := &result{Events: st.n}
	i := st.warmup
	for _, end := range st.roundEnds() {
		events := end - i
		start := time.Now()
		for ; i < end; i++ {
			if err := send(i); err != nil {
				return nil, fmt.Errorf("event %d: %w", i, err)
			}
		}
		elapsed := time.Since(start)
		r.NS += elapsed.Nanoseconds()
		if elapsed > 0 {
			r.EventsPerSec = max(r.EventsPerSec, float64(events)/elapsed.Seconds())
		}
	}
	runtime.ReadMemStats(&after)
	if st.n > 0 {
		allocs := float64(after.Mallocs-before.Mallocs) / float64(st.n)
		bytes := float64(after.TotalAlloc-before.TotalAlloc) / float64(st.n)
		r.AllocsPerEvent, r.BytesPerEvent = &allocs, &bytes
	}
	return r, nil
}

// runActor runs the stream through a chartgate statechart.Actor, created
// and started once.
func runActor(bm *benchMachine, st stream) (*result, error) {
	m, err := bm.compile()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		return nil, err
	}
	r, err := measure(st, func(i int) error { return a.Send(ctx, bm.event(i)) })
	if err != nil {
		return nil, fmt.Errorf("chartgate: %w", err)
	}
	s := a.Snapshot()
	r.Engine = "chartgate"
	r.Value, r.Context, r.Status = s.Value(), s.Context(), string(s.Status())
	return r, nil
}

// runPure sends events 0 .. total-1 through the immutable API
// (Machine.Transition) and returns the last snapshot. It is the reference
// the Actor's final state is checked against in the test.
func runPure(bm *benchMachine, total int) (*statechart.Snapshot, error) {
	m, err := bm.compile()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	var now time.Time
	s, err := m.Start(ctx, now)
	if err != nil {
		return nil, err
	}
	for i := 0; i < total; i++ {
		if s, err = m.Transition(ctx, s, bm.event(i), now); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
	}
	return s, nil
}
