// Package histrec describes the write of a workflow record split in two:
// its head (the record without its run history) and the entries of its
// history, with what changed since the record the write replaces. A store
// that keeps the history apart from the head (sqlitestore) then adds the
// new entries and removes the dropped ones, instead of writing the whole
// history again on every write: a workflow keeps hundreds of entries (the
// chartgate command keeps 500), tens of kilobytes rewritten by every call
// otherwise. Loaded, the record is the head with its history added back
// ([Join]).
package histrec

import (
	"context"
	"encoding/json"
)

// Write is a record to be written split.
type Write struct {
	// Head is the record's encoding without its "history" member: a JSON
	// object.
	Head []byte
	// History is the record's history, oldest entry first.
	History []json.RawMessage
	// Delta reports that History is the history of the record the write
	// replaces (the version it compares against) without that history's
	// first Dropped entries, followed by Appended new entries. Without
	// Delta the store replaces the history whole; the write of a new
	// record (old 0) ignores it.
	Delta             bool
	Dropped, Appended int
}

// Whole returns the record's encoding, its head and history joined, if
// it takes fewer than limit bytes: a store writes a record that small
// whole (split, its head and its history would take more room than they
// save).
func (w *Write) Whole(limit int) ([]byte, bool) {
	size := Size(len(w.Head), w.History)
	if size >= limit {
		return nil, false
	}
	return Join(w.Head, AppendEntries(make([]byte, 0, size), w.History)), true
}

// Change returns the write as a change of the stored history: how many
// of its first entries to drop, and the entries to append after those
// kept. ok is false without Delta, or if the counts do not fit History:
// the store then replaces the history whole.
func (w *Write) Change() (dropped int, appended []json.RawMessage, ok bool) {
	if !w.Delta || w.Dropped < 0 || w.Appended < 0 || w.Appended > len(w.History) {
		return 0, nil, false
	}
	return w.Dropped, w.History[len(w.History)-w.Appended:], true
}

// Store is implemented by a store (a gate.Store) that can keep a record's
// history apart from its head.
type Store interface {
	// CompareAndSwapSplit is gate.Store's CompareAndSwap for a record
	// given split; with durable false, the write need not wait for the
	// disk (gate.NoSyncStore). Load returns the record joined ([Join]).
	CompareAndSwapSplit(ctx context.Context, key string, old uint64, w *Write, durable bool) (uint64, error)
	// SplitAbove returns the size of a record's encoding from which the
	// store keeps its history apart: a smaller record is written whole
	// (CompareAndSwapSplit writes it so too).
	SplitAbove() int
}

// Splitter is implemented by a record value that can be written split.
type Splitter interface {
	Split() *Write
}

// Join returns the encoding of a record kept as head and history: head
// with a "history" member holding the entries, which history holds
// already joined by commas (what SQL's group_concat(entry, ',') gives);
// head as it is if history is empty.
func Join(head, history []byte) []byte {
	if len(history) == 0 || len(head) < 2 || head[len(head)-1] != '}' {
		return head
	}
	out := make([]byte, 0, len(head)+len(`,"history":[]`)+len(history))
	out = append(out, head[:len(head)-1]...)
	if len(head) > 2 { // a member before it
		out = append(out, ',')
	}
	out = append(out, `"history":[`...)
	out = append(out, history...)
	return append(out, "]}"...)
}

// EntriesLen returns the length of entries joined by commas.
func EntriesLen(entries []json.RawMessage) int {
	if len(entries) == 0 {
		return 0
	}
	n := len(entries) - 1
	for _, e := range entries {
		n += len(e)
	}
	return n
}

// AppendEntries appends entries joined by commas to b.
func AppendEntries(b []byte, entries []json.RawMessage) []byte {
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return b
}

// Size returns the size of the encoding of a record whose head takes
// headLen bytes and whose history is entries: the length of Join's
// result, for a head with a member (a record's has its state).
func Size(headLen int, entries []json.RawMessage) int {
	if len(entries) == 0 {
		return headLen
	}
	return headLen + len(`,"history":[]`) + EntriesLen(entries)
}
