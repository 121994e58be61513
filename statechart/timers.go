// This file defines timerQueue, the pending delayed events of a snapshot
// (`after` transitions and delayed raises): a min-heap by due time, ties
// in scheduling order, with the send ids that a cancel can stop. Firing,
// scheduling and cancelling are O(log n); nothing rescans the queue.

package statechart

import (
	"cmp"
	"container/heap"
	"slices"
	"time"
)

// timer is a pending delayed event.
type timer struct {
	id    string // the send id; "" for none
	event Event
	due   time.Time
	seq   uint64 // scheduling order
	to    string // the session of the actor it is for, in an actor system; "" for the one that scheduled it
}

// timerQueue holds the pending delayed events of a snapshot. A queue is
// immutable once a snapshot that holds it is shared: the runner copies it
// before its first change unless it owns it (see runner.mutableTimers).
type timerQueue struct {
	heap []timer
	pos  map[uint64]int // seq -> index in heap
	// keyed maps a send id to the seq of the timer that a cancel of the id
	// stops. Like XState's scheduler, it names the latest timer scheduled
	// with the id, and firing a timer forgets its id.
	keyed map[string]uint64
}

func (q *timerQueue) len() int {
	if q == nil {
		return 0
	}
	return len(q.heap)
}

func (q *timerQueue) clone() *timerQueue {
	if q == nil {
		return &timerQueue{pos: map[uint64]int{}, keyed: map[string]uint64{}}
	}
	c := &timerQueue{heap: slices.Clone(q.heap), pos: make(map[uint64]int, len(q.pos)), keyed: make(map[string]uint64, len(q.keyed))}
	for k, v := range q.pos {
		c.pos[k] = v
	}
	for k, v := range q.keyed {
		c.keyed[k] = v
	}
	return c
}

// isKeyed reports whether a cancel of t's id stops t.
func (q *timerQueue) isKeyed(t timer) bool {
	seq, ok := q.keyed[t.id]
	return ok && t.id != "" && seq == t.seq
}

// keyedSeq returns the seq of the timer a cancel of id would stop.
func (q *timerQueue) keyedSeq(id string) (uint64, bool) {
	if q == nil {
		return 0, false
	}
	seq, ok := q.keyed[id]
	return seq, ok
}

// has reports whether the timer with the given seq is pending.
func (q *timerQueue) has(seq uint64) bool {
	if q == nil {
		return false
	}
	_, ok := q.pos[seq]
	return ok
}

// push schedules t; when keyed, it becomes the timer its id names.
func (q *timerQueue) push(t timer, keyed bool) {
	heap.Push((*timerHeap)(q), t)
	if keyed && t.id != "" {
		q.keyed[t.id] = t.seq
	}
}

// cancel removes the timer the id names, if any, and returns its seq.
func (q *timerQueue) cancel(id string) (uint64, bool) {
	seq, ok := q.keyed[id]
	if !ok {
		return 0, false
	}
	delete(q.keyed, id)
	q.remove(q.pos[seq])
	return seq, true
}

// next returns the earliest timer.
func (q *timerQueue) next() (timer, bool) {
	if q.len() == 0 {
		return timer{}, false
	}
	return q.heap[0], true
}

// take removes the timer with the given seq, which must be pending. Like
// XState's scheduler, firing a timer forgets its id: a later cancel of the
// id stops nothing, even a newer timer with the same id.
func (q *timerQueue) take(seq uint64) timer {
	t := q.remove(q.pos[seq])
	if t.id != "" {
		delete(q.keyed, t.id)
	}
	return t
}

// bySeq returns the timers in scheduling order.
func (q *timerQueue) bySeq() []timer {
	if q.len() == 0 {
		return nil
	}
	ts := slices.Clone(q.heap)
	slices.SortFunc(ts, func(a, b timer) int { return cmp.Compare(a.seq, b.seq) })
	return ts
}

// byDue returns the timers in the order they fire.
func (q *timerQueue) byDue() []timer {
	if q.len() == 0 {
		return nil
	}
	ts := slices.Clone(q.heap)
	slices.SortFunc(ts, compareTimers)
	return ts
}

// compareTimers orders timers by due time, then scheduling order.
func compareTimers(a, b timer) int {
	if c := a.due.Compare(b.due); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// timerHeap is the heap of a timerQueue, for container/heap; it keeps pos
// up to date as timers move.
type timerHeap timerQueue

func (h *timerHeap) Len() int           { return len(h.heap) }
func (h *timerHeap) Less(i, j int) bool { return compareTimers(h.heap[i], h.heap[j]) < 0 }
func (h *timerHeap) Swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.pos[h.heap[i].seq] = i
	h.pos[h.heap[j].seq] = j
}
func (h *timerHeap) Push(x any) {
	t := x.(timer)
	h.pos[t.seq] = len(h.heap)
	h.heap = append(h.heap, t)
}
func (h *timerHeap) Pop() any {
	t := h.heap[len(h.heap)-1]
	h.heap[len(h.heap)-1] = timer{}
	h.heap = h.heap[:len(h.heap)-1]
	delete(h.pos, t.seq)
	return t
}

func (q *timerQueue) remove(i int) timer { return heap.Remove((*timerHeap)(q), i).(timer) }

// timerChange is one change to the timers of an Actor's snapshot during a
// macrostep, so the actor can keep its clock registrations in step
// without comparing whole queues.
type timerChange struct {
	seq   uint64
	added bool // scheduled; otherwise cancelled or fired
}

// mutableTimers returns the working snapshot's timer queue, ready to be
// changed: a copy, the first time in a call, unless the runner owns it.
func (r *runner) mutableTimers() *timerQueue {
	if r.s.timers == nil || !r.ownsTimers {
		r.s.timers = r.s.timers.clone()
		r.ownsTimers, r.copiedTimers = true, true
	}
	return r.s.timers
}

// logTimer records a change for the Actor, if the runner works for one,
// or as a deferred effect in an actor system.
func (r *runner) logTimer(seq uint64, added bool) {
	switch {
	case r.sys != nil:
		kind := fxDisarm
		if added {
			kind = fxArm
		}
		r.fx = append(r.fx, effect{kind: kind, seq: seq})
	case r.logTimers:
		r.timerLog = append(r.timerLog, timerChange{seq, added})
	}
}

// takeTimer removes the pending timer seq from the working snapshot and
// returns its event.
func (r *runner) takeTimer(seq uint64) Event {
	t := r.mutableTimers().take(seq)
	r.logTimer(seq, false)
	return t.event
}
