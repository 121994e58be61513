// This file defines the context of the work that records a call after its
// tool ran: the request's values without its cancellation, and a deadline
// whose timer starts only if something waits for it.

package core

import (
	"context"
	"sync"
	"time"
)

// AfterRun is the context of what records a call whose tool has run (its
// event, the saved state): the tool has had its effect, so the request's
// cancellation does not stop it, but Options.StoreTimeout bounds it. It
// is context.WithTimeout(context.WithoutCancel(parent), timeout), except
// that its timer starts only when Done is first called: a store that
// never blocks ([github.com/chartgate/chartgate/gate.MemoryStore]) and an engine that does not look at the
// context cost no timer. Err reports the deadline once it has passed,
// whether or not Done was called.
type AfterRun struct {
	parent   context.Context // for its values only
	deadline time.Time

	mu     sync.Mutex
	done   chan struct{} // made by Done
	timer  *time.Timer   // closes done at the deadline
	err    error         // set once: the deadline passed, or stop was called
	closed bool          // done is closed
}

// NewAfterRun returns the context of what records a call after its tool
// ran; its stop method releases it (as a cancel function does).
func NewAfterRun(parent context.Context, timeout time.Duration) *AfterRun {
	return newAfterRun(parent, time.Now(), timeout)
}

// newAfterRun is NewAfterRun for a call whose tool ran until now (the
// process' clock).
func newAfterRun(parent context.Context, now time.Time, timeout time.Duration) *AfterRun {
	c := &AfterRun{}
	c.start(parent, now, timeout)
	return c
}

// start makes c, a zero AfterRun, the context of what records a call
// whose tool ran until now.
func (c *AfterRun) start(parent context.Context, now time.Time, timeout time.Duration) {
	c.parent, c.deadline = parent, now.Add(timeout)
}

// Deadline implements context.Context.
func (c *AfterRun) Deadline() (time.Time, bool) { return c.deadline, true }

// Value implements context.Context: the parent's values.
func (c *AfterRun) Value(key any) any { return c.parent.Value(key) }

// Done implements context.Context. The first call starts the timer.
func (c *AfterRun) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.check(); c.err != nil {
			c.end(c.err) // it ended before anything waited for it
		} else {
			c.timer = time.AfterFunc(time.Until(c.deadline), c.expire)
		}
	}
	return c.done
}

// Err implements context.Context.
func (c *AfterRun) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.check()
	return c.err
}

// check ends c if its deadline has passed. c.mu is held.
func (c *AfterRun) check() {
	if c.err == nil && !time.Now().Before(c.deadline) {
		c.end(context.DeadlineExceeded)
	}
}

// end sets c's error and closes done, if it is not ended. c.mu is held.
func (c *AfterRun) end(err error) {
	if c.err == nil {
		c.err = err
	}
	if c.done != nil && !c.closed {
		close(c.done)
		c.closed = true
	}
}

// expire ends c at its deadline (the timer's function).
func (c *AfterRun) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.end(context.DeadlineExceeded)
}

// Stop releases c: its timer, if any, stops, and c is cancelled.
func (c *AfterRun) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.end(context.Canceled)
}

// String names the context, as the context package's do.
func (c *AfterRun) String() string { return "core.AfterRun" }
