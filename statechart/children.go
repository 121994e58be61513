// This file defines the children of a snapshot: an ordered, copy-on-write
// list of child actors in XState's key order (array-index ids first, in
// ascending order, then the others in the order they were added), each
// with its state frozen into a record, or, inside a running actor system,
// the live actor it refers to. Children returns them to callers.

package statechart

import (
	"errors"
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
	cell *cell // the live child, inside a running system
}

// ghost reports whether the entry has no actor.
func (e childEntry) ghost() bool { return e.rec == nil && e.cell == nil }

// childList is the children of a snapshot, immutable once built.
type childList struct {
	entries []childEntry
}

func (l *childList) len() int {
	if l == nil {
		return 0
	}
	return len(l.entries)
}

func (l *childList) find(id string) int {
	if l == nil {
		return -1
	}
	for i, e := range l.entries {
		if e.id == id {
			return i
		}
	}
	return -1
}

func (l *childList) get(id string) (childEntry, bool) {
	if i := l.find(id); i >= 0 {
		return l.entries[i], true
	}
	return childEntry{}, false
}

// with returns a copy of l in which id is e: replaced where it is, or added
// where JavaScript puts a new key (an array index among the array indexes,
// in ascending order, any other key last).
func (l *childList) with(e childEntry) *childList {
	out := &childList{}
	if l != nil {
		out.entries = slices.Clone(l.entries)
	}
	if i := out.find(e.id); i >= 0 {
		out.entries[i] = e
		return out
	}
	pos := len(out.entries)
	if n, ok := jsonx.ArrayIndex(e.id); ok {
		pos = 0
		for pos < len(out.entries) {
			m, isIndex := jsonx.ArrayIndex(out.entries[pos].id)
			if !isIndex || m > n {
				break
			}
			pos++
		}
	}
	out.entries = slices.Insert(out.entries, pos, e)
	return out
}

// without returns a copy of l without id.
func (l *childList) without(id string) *childList {
	i := l.find(id)
	if i < 0 {
		return l
	}
	out := &childList{entries: slices.Delete(slices.Clone(l.entries), i, i+1)}
	if len(out.entries) == 0 {
		return nil
	}
	return out
}

// Children returns the child actors of the snapshot, in XState's order
// (the order of the keys of snapshot.children). Children that were invoked
// or spawned with a src that names no logic are not listed, as in XState.
func (s *Snapshot) Children() []Child {
	var out []Child
	for _, e := range s.children.all() {
		if e.rec == nil {
			continue
		}
		out = append(out, e.rec.public(e.id))
	}
	return out
}

// Child returns the child with the given id.
func (s *Snapshot) Child(id string) (Child, bool) {
	e, ok := s.children.get(id)
	if !ok || e.rec == nil {
		return Child{}, false
	}
	return e.rec.public(id), true
}

func (l *childList) all() []childEntry {
	if l == nil {
		return nil
	}
	return l.entries
}

func (r *childRecord) public(id string) Child {
	return Child{
		ID: id, Src: r.src, SystemID: r.systemID, Session: r.session, SyncSnapshot: r.sync,
		Status: r.status, Input: r.input, HasInput: r.hasInput, Output: r.output, HasOutput: r.hasOutput,
		Error: r.errValue, Snapshot: r.snap,
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

// valueOfError is the reverse of errorOf: the value XState would hold.
func valueOfError(err error) any {
	var re *RejectionError
	if errors.As(err, &re) {
		return re.Value
	}
	return err
}
