package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// cmdBench sends the events list round and round to one actor, n events in
// all, and reports the rate. +DURATION items move the simulated clock and
// are not counted as events.
func cmdBench(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("bench")
	var steps stepList
	fs.Var(&steps, "events", "events to send")
	n := fs.Int("n", 1_000_000, "number of events to send")
	allowMissingGuards := fs.Bool("allow-missing-guards", false, "run a machine whose guards have no implementation (evaluating one is an error)")
	file, code, ok := oneFile(fs, "bench", args, stdout, stderr)
	if !ok {
		return code
	}
	if *n <= 0 {
		return usageError(stderr, "bench", fmt.Errorf("-n must be positive, not %d", *n))
	}
	hasEvent := false
	for _, st := range steps {
		hasEvent = hasEvent || st.event != nil
	}
	if !hasEvent {
		return usageError(stderr, "bench", errors.New("--events needs at least one event"))
	}
	m, code := load("bench", file, statechart.Options{AllowMissingGuards: *allowMissingGuards}, stdin, stderr)
	if code != exitOK {
		return code
	}

	ctx := context.Background()
	clock := statechart.NewSimulatedClock()
	actor := statechart.NewActor(m, &statechart.ActorOptions{Clock: clock})
	if err := actor.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "chartgate bench: %v\n", err)
		return exitFail
	}
	sent := 0
	start := time.Now()
	for sent < *n {
		for i := range steps {
			st := &steps[i]
			if st.event == nil {
				clock.Advance(st.advance)
				continue
			}
			if err := actor.Send(ctx, *st.event); err != nil {
				fmt.Fprintf(stderr, "chartgate bench: event %d: %v\n", sent+1, err)
				return exitFail
			}
			sent++
			if sent == *n {
				break
			}
		}
	}
	elapsed := max(time.Since(start), time.Nanosecond)

	if s := actor.Snapshot(); s.Status() != statechart.StatusActive {
		fmt.Fprintf(stderr, "chartgate bench: note: the actor ended with status %s; the events sent after that were ignored\n", s.Status())
	}
	shown := elapsed
	if shown >= time.Millisecond {
		shown = shown.Round(time.Microsecond)
	}
	perEvent := float64(elapsed.Nanoseconds()) / float64(sent)
	fmt.Fprintf(stdout, "%d events in %v (%.1f ns/event)\n", sent, shown, perEvent)
	fmt.Fprintf(stdout, "%d events/s\n", int64(float64(sent)/elapsed.Seconds()))
	return exitOK
}
