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

// measure sends events warmup .. warmup+n-1 of the stream with send, after
// sending events 0 .. warmup-1 untimed, and returns the time and the heap
// allocations of the timed part.
func measure(n, warmup int, send func(i int) error) (*result, error) {
	for i := 0; i < warmup; i++ {
		if err := send(i); err != nil {
			return nil, fmt.Errorf("warm-up event %d: %w", i, err)
		}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := warmup; i < warmup+n; i++ {
		if err := send(i); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	r := &result{Events: n, NS: elapsed.Nanoseconds()}
	if elapsed > 0 {
		r.EventsPerSec = float64(n) / elapsed.Seconds()
	}
	if n > 0 {
		allocs := float64(after.Mallocs-before.Mallocs) / float64(n)
		bytes := float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
		r.AllocsPerEvent, r.BytesPerEvent = &allocs, &bytes
	}
	return r, nil
}

// runActor runs the stream through a chartgate statechart.Actor, created
// and started once.
func runActor(bm *benchMachine, n, warmup int) (*result, error) {
	m, err := bm.compile()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	a := statechart.NewActor(m, nil)
	if err := a.Start(ctx); err != nil {
		return nil, err
	}
	r, err := measure(n, warmup, func(i int) error { return a.Send(ctx, bm.event(i)) })
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
