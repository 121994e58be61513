// This file defines the children of a snapshot: an ordered, copy-on-write
// list of child actors in XState's key order (array-index ids first, in
// ascending order, then the others in the order they were added), each
// with its state frozen into a record, or, inside a running actor system,
// the live actor it refers to. Children returns them to callers.

package statechart

import (
	"cmp"
	"slices"

	"github.com/chartgate/chartgate/internal/jsonx"
)

// Child describes one child actor of a snapshot: a child invoked by an
// active state or spawned by an action.
type Child struct {
	// ID is the child's id: the invoke's id (by default
	// "<index>.<state id>") or the id given to xstate.spawnChild.
	ID string
	// Src is the name of its logic in the implementations.
	Src string
	// SystemID is the id it is registered under in the actor system ("#id"
	// in xstate.sendTo), if any.
	SystemID string
	// Session names the child uniquely in its actor system, across restores
	// of the snapshot; effects and reports use it (see [StartChild] and
	// [Report]).
	Session string
	// SyncSnapshot: the parent receives xstate.snapshot.<id> events when
	// the child changes (an invoke with onSnapshot).
	SyncSnapshot bool
	// Status is active, done, error or stopped.
	Status Status
	// Input is the child's input; HasInput says it has one (it may be nil:
	// JSON null).
	Input    any
	HasInput bool
	// Output is the output of a done child, when HasOutput.
	Output    any
	HasOutput bool
	// Error is what a child in status error failed with: the rejection
	// value of a promise, or a Go error.
	Error any
	// Snapshot is a child machine's own snapshot; nil for other logic.
	Snapshot *Snapshot
	// Logic is the logic Src names in the implementations of the machine
	// that invoked or spawned the child: what a caller of the pure API
	// runs for an active promise child (see [StartChild]).
	Logic ActorLogic
}

// childRecord is the frozen state of a child.
type childRecord struct {
	src, systemID, session string
	sync                   bool
	logic                  ActorLogic
	status                 Status
	input                  any
	hasInput               bool
	output                 any
	hasOutput              bool
	errValue               any       // a JSON value (a rejection) or a Go error
	snap                   *Snapshot // a child machine's snapshot
}

// childEntry is one child of a snapshot. rec is nil (and cell too) for
// the entry an invoke or spawn of an unknown src leaves: XState keeps the
// key with no actor, which nobody lists.
type childEntry struct {
	id   string
	rec  *childRecord
	cell *cell  // the live child, inside a running system
	dead bool   // removed (see childList.remove)
	src  string // a ghost's src, when it was spawned here (not restored)
}

// ghost reports whether the entry has no actor.
func (e childEntry) ghost() bool { return e.rec == nil && e.cell == nil }

// childList is the children of a snapshot, in JavaScript's key order: the
// ids that are array indexes, ascending, then the others in the order they
// were added. A list shared by snapshots is never changed: the runner
// clones it once per call before changing it (see runner.ownChildren), and
// then sets and removes in place, each in constant time (amortized);
// removed entries stay as tombstones until compact. A short list finds an
// id by scanning; pos indexes the ids once it is longer.
type childList struct {
	index []childEntry // array-index ids, ascending
	named []childEntry // other ids, in insertion order
	pos   map[string]int
	live  int // the entries that are not tombstones
	dead  int
}

// scanChildren is the length up to which a list has no pos index.
const scanChildren = 8

// position encodes where an entry is: i >= 0 in index, -1-i in named.
func (l *childList) at(p int) *childEntry {
	if p >= 0 {
		return &l.index[p]
	}
	return &l.named[-1-p]
}

// find returns the position of the live entry id.
func (l *childList) find(id string) (int, bool) {
	if l.pos != nil {
		p, ok := l.pos[id]
		return p, ok
	}
	for i := range l.index {
		if e := &l.index[i]; !e.dead && e.id == id {
			return i, true
		}
	}
	for i := range l.named {
		if e := &l.named[i]; !e.dead && e.id == id {
			return -1 - i, true
		}
	}
	return 0, false
}

func (l *childList) len() int {
	if l == nil {
		return 0
	}
	return l.live
}

func (l *childList) get(id string) (childEntry, bool) {
	if l == nil {
		return childEntry{}, false
	}
	if p, ok := l.find(id); ok {
		return *l.at(p), true
	}
	return childEntry{}, false
}

// clone returns a copy that can be changed.
func (l *childList) clone() *childList {
	out := &childList{}
	if l == nil {
		return out
	}
	out.index = slices.Clone(l.index)
	out.named = slices.Clone(l.named)
	out.live, out.dead = l.live, l.dead
	if l.pos != nil {
		out.pos = make(map[string]int, len(l.pos))
		for k, v := range l.pos {
			out.pos[k] = v
		}
	}
	return out
}

// copyFrom makes l a copy of src (nil: empty), in l's own arrays.
func (l *childList) copyFrom(src *childList) {
	l.reset()
	if src == nil {
		return
	}
	l.index = append(l.index, src.index...)
	l.named = append(l.named, src.named...)
	l.live, l.dead = src.live, src.dead
	if src.pos != nil {
		l.pos = make(map[string]int, len(src.pos))
		for k, v := range src.pos {
			l.pos[k] = v
		}
	}
}

// reset empties l, keeping its arrays for the next entries.
func (l *childList) reset() {
	clear(l.index)
	clear(l.named)
	l.index, l.named = l.index[:0], l.named[:0]
	l.pos, l.live, l.dead = nil, 0, 0
}

// compactInPlace drops the tombstones as compact does, in l's arrays; it
// reports whether l is empty, and then resets it.
func (l *childList) compactInPlace() (empty bool) {
	if l.live == 0 {
		l.reset()
		return true
	}
	if l.dead == 0 {
		return false
	}
	keep := func(seg []childEntry) []childEntry {
		out := seg[:0]
		for _, e := range seg {
			if !e.dead {
				out = append(out, e)
			}
		}
		clear(seg[len(out):])
		return out
	}
	l.index, l.named = keep(l.index), keep(l.named)
	l.dead = 0
	if l.live <= scanChildren {
		l.pos = nil
		return false
	}
	if l.pos == nil {
		l.pos = make(map[string]int, l.live)
	}
	clear(l.pos)
	for i, x := range l.index {
		l.pos[x.id] = i
	}
	for i, x := range l.named {
		l.pos[x.id] = -1 - i
	}
	return false
}

// set makes id e, in place: replaced where it is, or added where
// JavaScript puts a new key.
func (l *childList) set(e childEntry) {
	if p, ok := l.find(e.id); ok {
		*l.at(p) = e
		return
	}
	l.live++
	if l.pos == nil && l.live > scanChildren {
		l.pos = make(map[string]int, l.live)
		for i, x := range l.index {
			if !x.dead {
				l.pos[x.id] = i
			}
		}
		for i, x := range l.named {
			if !x.dead {
				l.pos[x.id] = -1 - i
			}
		}
	}
	n, isIndex := jsonx.ArrayIndex(e.id)
	if !isIndex {
		l.named = append(l.named, e)
		if l.pos != nil {
			l.pos[e.id] = -len(l.named)
		}
		return
	}
	i := len(l.index)
	if i > 0 {
		if last, _ := jsonx.ArrayIndex(l.index[i-1].id); last > n {
			i, _ = slices.BinarySearchFunc(l.index, n, func(x childEntry, n uint64) int {
				m, _ := jsonx.ArrayIndex(x.id)
				return cmp.Compare(m, n)
			})
		}
	}
	l.index = slices.Insert(l.index, i, e)
	if l.pos != nil {
		for j := i; j < len(l.index); j++ {
			if !l.index[j].dead {
				l.pos[l.index[j].id] = j
			}
		}
	}
}

// remove takes id out, in place.
func (l *childList) remove(id string) {
	p, ok := l.find(id)
	if !ok {
		return
	}
	e := l.at(p)
	*e = childEntry{id: e.id, dead: true}
	if l.pos != nil {
		delete(l.pos, id)
	}
	l.live--
	l.dead++
}

// compact drops the tombstones; it returns nil for an empty list.
func (l *childList) compact() *childList {
	if l == nil || l.live == 0 {
		return nil
	}
	if l.dead == 0 {
		return l
	}
	out := &childList{}
	for _, e := range l.all() {
		out.set(e)
	}
	return out
}

// all returns the live entries in order.
func (l *childList) all() []childEntry {
	if l.len() == 0 {
		return nil
	}
	out := make([]childEntry, 0, l.live)
	for _, seg := range [][]childEntry{l.index, l.named} {
		for _, e := range seg {
			if !e.dead {
				out = append(out, e)
			}
		}
	}
	return out
}

// mapEntries returns a new list of the entries f returns.
func (l *childList) mapEntries(f func(childEntry) childEntry) *childList {
	if l.len() == 0 {
		return nil
	}
	out := &childList{}
	for _, e := range l.all() {
		out.set(f(e))
	}
	return out
}

// Children returns the child actors of the snapshot, in XState's order
// (the order of the keys of snapshot.children). Children that were invoked
// or spawned with a src that names no logic are not listed, as in XState.
func (s *Snapshot) Children() []Child {
	var out []Child
	for _, e := range s.x().children.all() {
		if e.rec == nil {
			continue
		}
		out = append(out, e.rec.public(e.id))
	}
	return out
}

// Child returns the child with the given id.
func (s *Snapshot) Child(id string) (Child, bool) {
	e, ok := s.x().children.get(id)
	if !ok || e.rec == nil {
		return Child{}, false
	}
	return e.rec.public(id), true
}

func (r *childRecord) public(id string) Child {
	return Child{
		ID: id, Src: r.src, SystemID: r.systemID, Session: r.session, SyncSnapshot: r.sync,
		Status: r.status, Input: r.input, HasInput: r.hasInput, Output: r.output, HasOutput: r.hasOutput,
		Error: r.errValue, Snapshot: r.snap, Logic: r.logic,
	}
}

// errorOf turns what an actor failed with (XState's snapshot.error) into a
// Go error.
func errorOf(v any) error {
	if err, ok := v.(error); ok {
		return err
	}
	return &RejectionError{Value: v}
}
