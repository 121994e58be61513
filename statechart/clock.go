// This file defines Clock, the source of time for actors, with the real
// clock and a simulated one for tests (like XState's SimulatedClock).

package statechart

import (
	"container/heap"
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
	timers      simHeap // by due time, then registration order
	flushing    bool
	invalidated bool
	fired       int
	afterFlush  []func() // run once the current walk is over
}

// maxSimulatedFires bounds the functions one Advance runs, so a delayed
// event that keeps rescheduling itself with no delay cannot hang a test
// (XState's SimulatedClock would loop forever).
const maxSimulatedFires = 1_000_000

type simTimer struct {
	due   time.Time
	seq   uint64
	f     func()
	index int // in the heap; -1 once removed
}

// simHeap is a min-heap of timers for container/heap.
type simHeap []*simTimer

func (h simHeap) Len() int { return len(h) }
func (h simHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h simHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *simHeap) Push(x any) {
	t := x.(*simTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *simHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// NewSimulatedClock returns a simulated clock at the Unix epoch.
func NewSimulatedClock() *SimulatedClock {
	return &SimulatedClock{now: time.UnixMilli(0).UTC()}
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
	t := &simTimer{due: c.now.Add(d), seq: c.seq, f: f}
	c.seq++
	heap.Push(&c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.invalidated = c.flushing
		if t.index < 0 {
			return false
		}
		heap.Remove(&c.timers, t.index)
		return true
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

// flush is XState's flushTimeouts. A walk visits the timers present when
// it started, in order; as long as no function schedules or cancels a
// timer, the earliest timer left is the next one of the walk, so the heap
// stands in for XState's sorted copy and a walk costs O(log n) per timer.
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
	for walk := len(c.timers); walk > 0; walk-- {
		if c.fired++; c.fired > maxSimulatedFires {
			break // a timer that keeps rescheduling itself at once
		}
		if c.invalidated {
			c.invalidated = false
			goto restart
		}
		t := c.timers[0]
		if t.due.After(c.now) {
			break // and so are the rest of the walk
		}
		heap.Pop(&c.timers)
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.flushing = false
	after := c.afterFlush
	c.afterFlush = nil
	c.mu.Unlock()
	for _, f := range after {
		f()
	}
}

// deferIfFlushing registers f to run once the current walk of Advance is
// over and reports true, or reports false when no walk is under way. An
// Actor delivers promise settlements this way: like XState's
// SimulatedClock, an Advance fires every due timer before any settlement
// is delivered.
func (c *SimulatedClock) deferIfFlushing(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.flushing {
		return false
	}
	c.afterFlush = append(c.afterFlush, f)
	return true
}

// EventLoopClock is a simulated clock that fires timers the way Node's
// event loop does, and an Actor delivers promise settlements between two
// timers, as Node runs promise callbacks between two timer callbacks.
// Advance fires one timer at a time, the earliest due first and, among
// timers due at the same time, the one registered first; a timer
// registered by a function it ran is a candidate too when it is due within
// the advance. Its zero time is the Unix epoch. It is safe for concurrent
// use. (The conformance cases recorded with the "eventloop" clock use it.)
type EventLoopClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers simHeap
}

// NewEventLoopClock returns an event-loop clock at the Unix epoch.
func NewEventLoopClock() *EventLoopClock {
	return &EventLoopClock{now: time.UnixMilli(0).UTC()}
}

// Now returns the clock's time.
func (c *EventLoopClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run once the clock has been advanced by d.
func (c *EventLoopClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &simTimer{due: c.now.Add(max(0, d)), seq: c.seq, f: f}
	c.seq++
	heap.Push(&c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.index < 0 {
			return false
		}
		heap.Remove(&c.timers, t.index)
		return true
	}
}

// Advance moves the clock forward by d: until no timer is due at or before
// the end time, it takes the earliest one (the first registered among
// equals), sets the time to its due time and runs it; then the time is the
// end time. A function that keeps scheduling itself with no delay stops
// the advance after a million runs.
func (c *EventLoopClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for fired := 0; fired < maxSimulatedFires; fired++ {
		if len(c.timers) == 0 || c.timers[0].due.After(end) {
			break
		}
		t := heap.Pop(&c.timers).(*simTimer)
		if t.due.After(c.now) {
			c.now = t.due
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}
