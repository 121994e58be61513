// This file defines the scratch structures of a runner: the internal event
// queue and the sets of nodes and transitions it reuses between microsteps.
// Each is cleared in time proportional to what it held, not to the size of
// the machine, so that the cost of a microstep follows the work it does.

package statechart

// eventQueue is XState's internal event queue: raised events and done
// events, first in, first out. Taking an event is O(1); the buffer is kept
// for reuse.
type eventQueue struct {
	buf  []Event
	head int
}

func (q *eventQueue) len() int { return len(q.buf) - q.head }

func (q *eventQueue) push(ev Event) { q.buf = append(q.buf, ev) }

func (q *eventQueue) pop() Event {
	ev := q.buf[q.head]
	q.buf[q.head] = Event{}
	q.head++
	switch {
	case q.head == len(q.buf):
		q.buf, q.head = q.buf[:0], 0
	case q.head >= 1024 && q.head*2 >= len(q.buf):
		// A queue that keeps growing while it is read: move the unread
		// events down, at most once per event read.
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	return ev
}

func (q *eventQueue) reset() {
	clear(q.buf[q.head:])
	q.buf, q.head = q.buf[:0], 0
}

// nodeSet is a set of node indexes with insertion order and O(1) membership.
type nodeSet struct {
	has  []bool
	list []int
}

func (ns *nodeSet) reset(n int) {
	if len(ns.has) != n {
		ns.has = make([]bool, n)
		ns.list = ns.list[:0]
		return
	}
	for _, i := range ns.list {
		ns.has[i] = false
	}
	ns.list = ns.list[:0]
}

func (ns *nodeSet) add(i int) {
	if !ns.has[i] {
		ns.has[i] = true
		ns.list = append(ns.list, i)
	}
}

// entrySet is the set of states a microstep enters. It also marks every
// proper ancestor of its members, so hasDescendant is O(1); a member adds
// marks only up to the first ancestor already marked.
type entrySet struct {
	nodeSet
	below  []bool // a member is a proper descendant of the node
	marked []int  // the nodes marked in below
	m      *Machine
}

func (es *entrySet) reset(m *Machine) {
	es.m = m
	if len(es.below) != len(m.nodes) {
		es.below = make([]bool, len(m.nodes))
	} else {
		for _, i := range es.marked {
			es.below[i] = false
		}
	}
	es.marked = es.marked[:0]
	es.nodeSet.reset(len(m.nodes))
}

func (es *entrySet) add(i int) {
	if es.has[i] {
		return
	}
	es.nodeSet.add(i)
	for p := es.m.nodes[i].parent; p >= 0 && !es.below[p]; p = es.m.nodes[p].parent {
		es.below[p] = true
		es.marked = append(es.marked, p)
	}
}

// hasDescendant reports whether a proper descendant of c is in the set.
func (es *entrySet) hasDescendant(c int) bool { return es.below[c] }

// stampSet is a set of small integers (node or transition indexes) that
// is emptied in O(1) by moving to a new stamp.
type stampSet struct {
	mark  []uint32
	stamp uint32
}

// clear empties the set and sizes it for n members.
func (ss *stampSet) clear(n int) {
	if len(ss.mark) != n {
		ss.mark = make([]uint32, n)
		ss.stamp = 0
	}
	ss.stamp++
	if ss.stamp == 0 { // wrapped around: forget every old stamp
		clear(ss.mark)
		ss.stamp = 1
	}
}

func (ss *stampSet) has(i int) bool { return ss.mark[i] == ss.stamp }

// add adds i and reports whether it was new.
func (ss *stampSet) add(i int) bool {
	if ss.mark[i] == ss.stamp {
		return false
	}
	ss.mark[i] = ss.stamp
	return true
}

// nodeMarks is a set of node indexes for one computation over a
// configuration, outside a runner (the state value of a snapshot): a slice
// when the machine is not much larger than the configuration (hint), a map
// otherwise, so that its cost follows the configuration, not the machine.
type nodeMarks struct {
	small []bool
	large map[int]struct{}
}

func newNodeMarks(m *Machine, hint int) nodeMarks {
	if len(m.nodes) <= 4*hint+64 {
		return nodeMarks{small: make([]bool, len(m.nodes))}
	}
	return nodeMarks{large: make(map[int]struct{}, hint)}
}

func (s nodeMarks) has(i int) bool {
	if s.small != nil {
		return s.small[i]
	}
	_, ok := s.large[i]
	return ok
}

func (s nodeMarks) add(i int) {
	if s.small != nil {
		s.small[i] = true
		return
	}
	s.large[i] = struct{}{}
}
