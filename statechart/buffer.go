// This file defines TransitionInto, the form of the pure API that writes
// the next snapshot into storage the caller hands back, as math/big's
// methods write into their receiver: a machine without actors then
// processes events without allocating, even when every event changes its
// context.

package statechart

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"
)

// snapshotBuffer is the storage of a snapshot that [Machine.TransitionInto]
// writes: a runner of its own, kept between calls as an Actor keeps its
// runner, whose slots may hold the newest values of the context's keys
// (see slots.go: numbers stay out of interfaces until the map is read);
// and work, the snapshot a call computes the next one in before it swaps
// it with the buffer's.
type snapshotBuffer struct {
	r    *runner
	work Snapshot
	// contextShared: the context map may be referenced outside the buffer
	// (it came from another snapshot, or an implementation was handed it),
	// so the next change copies it first; otherwise a call changes it in
	// place.
	contextShared bool
}

// ErrSharedSnapshot is returned by [Machine.TransitionInto] and
// [Machine.AdvanceInto] when dst is a snapshot that another function
// returned (Start, Transition, Restore, an Actor's): such a snapshot may be
// held elsewhere, and is never changed.
var ErrSharedSnapshot = errors.New("statechart: the snapshot to write into must be a zero Snapshot or one TransitionInto or AdvanceInto wrote")

// TransitionInto is [Machine.Transition] writing the next snapshot into
// dst instead of returning a new one: afterwards dst is equal to the
// snapshot Transition(ctx, s, ev, now) returns (its persisted form is the
// same), and the error is the same. dst may be s: the snapshot then steps
// in place, which is the use that allocates nothing for a machine without
// actors once its storage is warm. With dst different from s, s is read
// and not changed.
//
// dst is storage the caller owns and hands back: the zero Snapshot (its
// first call takes the storage, about an Actor's), or a snapshot
// TransitionInto wrote before. Its previous state is overwritten, so it must be a snapshot the
// caller no longer needs, and that nothing else holds. A snapshot that any
// other function returned (Start, Transition, Restore, an Actor's) may be
// shared, and is never changed: as dst it is refused with
// [ErrSharedSnapshot].
//
// A snapshot that TransitionInto wrote is the caller's buffer, in the way
// of a bytes.Buffer: it is not safe for concurrent use, not even for
// reading, and what its methods hand out (the map Context returns, and
// the values in it) belongs to it and changes at its next call; copy
// what must outlive that, or take an immutable snapshot with
// [Snapshot.Clone]. Copy it only with Clone: a copy of the struct would
// share its storage. It may be given to every function of the immutable
// API, whose results never share its storage.
//
// A machine with actors takes the immutable path and copies its result
// into dst, with the allocations of [Machine.TransitionEffects].
func (m *Machine) TransitionInto(ctx context.Context, dst, s *Snapshot, ev Event, now time.Time) error {
	b, err := m.bufferFor(dst, s)
	if err != nil {
		return err
	}
	if dst.status != StatusActive {
		return nil
	}
	if m.usesActors {
		next, _, err := m.TransitionEffects(ctx, dst.Clone(), ev, now)
		b.load(dst, next)
		return err
	}
	if b.r.fastStep(dst, ev, !b.contextShared && dst.context != nil, false, false) {
		return nil
	}
	return b.macrostep(ctx, dst, now, ev, false)
}

// AdvanceInto is [Machine.Advance] writing the resulting snapshot into
// dst, as [Machine.TransitionInto] writes the next one: afterwards dst is
// equal to the snapshot Advance(ctx, s, now) returns, and the error is the
// same. dst is storage the caller hands back, under the same rules.
func (m *Machine) AdvanceInto(ctx context.Context, dst, s *Snapshot, now time.Time) error {
	b, err := m.bufferFor(dst, s)
	if err != nil {
		return err
	}
	if m.usesActors {
		next, _, err := m.AdvanceEffects(ctx, dst.Clone(), now)
		b.load(dst, next)
		return err
	}
	if t, ok := dst.timers.next(); dst.status != StatusActive || !ok || t.due.After(now) {
		return nil
	}
	return b.macrostep(ctx, dst, now, Event{}, true)
}

// macrostep runs, on the general path, the macrostep of event ev, or,
// with due, those of the delayed events due at now, on a copy of dst (its
// context map changed in place with an undo log, unless it is shared),
// and makes the copy dst's state when nothing failed. Otherwise dst keeps
// its state, with status error unless the call ran out of steps.
func (b *snapshotBuffer) macrostep(ctx context.Context, dst *Snapshot, now time.Time, ev Event, due bool) error {
	r := b.r
	work := &b.work
	nodes := work.nodes[:0]
	*work = *dst
	work.own, work.nodes = nil, append(nodes, dst.nodes...)
	r.begin(ctx, work, now)
	if !b.contextShared {
		r.grantContext()
	}
	if due {
		ev, _ = r.advance()
	} else {
		r.macrostep(ev)
	}
	r.ctx = nil // the buffer keeps its runner, not the caller's context
	if r.err != nil {
		// What the call changed in dst's context map is undone.
		r.rollbackContext()
		b.contextShared = b.contextShared || r.contextSeen
		err := r.runtimeError(ev)
		if r.outOfSteps == nil {
			dst.status, dst.err, dst.timers = StatusError, err, nil
		}
		return err
	}
	if r.replacedContext {
		b.contextShared = r.contextSeen
	} else {
		b.contextShared = b.contextShared || r.contextSeen
	}
	*dst, *work = *work, *dst
	dst.own, work.own = b, nil
	// The runner goes on with dst, whose nodes its active states mark.
	r.s, r.synced = dst, true
	if dst.status == StatusError {
		return dst.err // an unhandled xstate.error.actor.* event
	}
	return nil
}

// bufferFor returns the storage of dst, for a call of machine m from
// snapshot s, with dst equal to s.
func (m *Machine) bufferFor(dst, s *Snapshot) (*snapshotBuffer, error) {
	if dst == nil || s == nil {
		return nil, errors.New("statechart: nil snapshot")
	}
	if s.machine != m {
		return nil, fmt.Errorf("statechart: the snapshot does not belong to machine %q", m.id)
	}
	b, err := m.bufferOf(dst)
	if err != nil {
		return nil, err
	}
	if dst != s {
		b.load(dst, s)
	}
	return b, nil
}

// bufferOf returns the storage of dst, a snapshot TransitionInto may write
// for m: the zero Snapshot is given storage, and a snapshot it wrote for
// another machine new storage.
func (m *Machine) bufferOf(dst *Snapshot) (*snapshotBuffer, error) {
	if b := dst.own; b != nil && dst.machine == m {
		return b, nil
	} else if b == nil && dst.machine != nil {
		return nil, ErrSharedSnapshot
	}
	b := &snapshotBuffer{r: newRunner(m), contextShared: true}
	*dst = Snapshot{machine: m, status: StatusActive, own: b}
	return b, nil
}

// load makes dst, a buffer, equal to s, another snapshot. A context map
// dst owns takes a copy of s's entries; otherwise dst shares s's map
// until it changes it.
func (b *snapshotBuffer) load(dst, s *Snapshot) {
	if o := s.own; o != nil {
		o.r.leaveSlots()
	}
	r := b.r
	r.leaveSlots()
	r.synced, r.s = false, nil
	ctx := dst.context
	own := !b.contextShared && ctx != nil && s.context != nil && !sameMap(ctx, s.context)
	nodes := dst.nodes[:0]
	*dst = *s
	dst.own, dst.nodes = b, append(nodes, s.nodes...)
	if own {
		clear(ctx)
		maps.Copy(ctx, s.context)
		dst.context = ctx
		return
	}
	b.contextShared = true
	if o := s.own; o != nil {
		o.contextShared = true // both buffers hold the map now
	}
}

// Clone returns an immutable copy of the snapshot. A snapshot of the
// immutable API is returned as it is; one that [Machine.TransitionInto]
// wrote is copied, with its context map (its values are immutable).
func (s *Snapshot) Clone() *Snapshot {
	if s.own == nil {
		return s
	}
	return s.clone()
}

// detach makes c, a copy of buffer s, independent of s's storage: its
// context is brought up to date and copied.
func (s *Snapshot) detach(c *Snapshot) {
	s.own.r.leaveSlots()
	c.own = nil
	c.context = maps.Clone(s.context)
}

// flush brings a buffer's context map up to date before it is read.
func (s *Snapshot) flush() {
	if s.own != nil {
		s.own.r.leaveSlots()
	}
}
