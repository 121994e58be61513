// This file defines Clock, the source of time for actors, with the real
// clock and a simulated one for tests (like XState's SimulatedClock).

package statechart

import (
	"sort"
	"sync"
	"time"
)

// Clock tells an Actor the time and runs a function after a delay.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (or, for a simulated clock,
	// from Advance) once d has elapsed. stop cancels the call and reports
	// whether it did.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// SimulatedClock is a clock that only moves when told to, for tests and
// for reproducing XState traces recorded with its SimulatedClock, whose
// flush order it mirrors exactly. Its zero time is the Unix epoch. It is
// safe for concurrent use.
type SimulatedClock struct {
	mu          sync.Mutex
	now         time.Time
	seq         uint64
	timers      map[uint64]*simTimer
	flushing    bool
	invalidated bool
	fired       int
}

// maxSimulatedFires bounds the functions one Advance runs, so a delayed
// event that keeps rescheduling itself with no delay cannot hang a test
// (XState's SimulatedClock would loop forever).
const maxSimulatedFires = 1_000_000

type simTimer struct {
	due time.Time
	seq uint64
	f   func()
}

// NewSimulatedClock returns a simulated clock at the Unix epoch.
func NewSimulatedClock() *SimulatedClock {
	return &SimulatedClock{now: time.UnixMilli(0).UTC(), timers: map[uint64]*simTimer{}}
}

// Now returns the simulated time.
func (c *SimulatedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run once the clock has been advanced by d.
func (c *SimulatedClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidated = c.flushing
	id := c.seq
	c.seq++
	c.timers[id] = &simTimer{due: c.now.Add(d), seq: id, f: f}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.invalidated = c.flushing
		_, ok := c.timers[id]
		delete(c.timers, id)
		return ok
	}
}

// Advance moves the clock forward by d and runs the functions that are
// due. Like XState's SimulatedClock it walks the timers sorted by due time
// (equal times in scheduling order) and starts the walk again when a
// function it ran scheduled or cancelled a timer; a timer scheduled by the
// last function of a walk waits for the next Advance.
func (c *SimulatedClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	c.flush()
}

func (c *SimulatedClock) flush() {
	c.mu.Lock()
	if c.flushing {
		c.invalidated = true
		c.mu.Unlock()
		return
	}
	c.flushing = true
	c.fired = 0
restart:
	sorted := make([]*simTimer, 0, len(c.timers))
	for _, t := range c.timers {
		sorted = append(sorted, t)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if !sorted[i].due.Equal(sorted[j].due) {
			return sorted[i].due.Before(sorted[j].due)
		}
		return sorted[i].seq < sorted[j].seq
	})
	for _, t := range sorted {
		if c.fired++; c.fired > maxSimulatedFires {
			break // a timer that keeps rescheduling itself at once
		}
		if c.invalidated {
			c.invalidated = false
			goto restart
		}
		if t.due.After(c.now) {
			continue
		}
		delete(c.timers, t.seq)
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.flushing = false
	c.mu.Unlock()
}
