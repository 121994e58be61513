// This file holds every write of the gate to its store: save (a
// workflow's next record, by compare-and-swap against the version it was
// loaded at), create (a new workflow), the write both end with, swap
// under it, and update, a save retried on conflicts against the record
// loaded again (a commit's event; rewrite, for a record whose state does
// not change: a count, a history entry, a job's claim, an approval's
// question). The steps (reserve, commit), the audit, the jobs and the
// approvals write through these only.

package core

import (
	"context"
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/histrec"
	"github.com/chartgate/chartgate/statechart"
)

// Save writes rec under the target's key if the key's version is still
// prev's, and returns the saved view; state is rec.snap's decoded form,
// with delayed transitions applied. On a conflict the error matches
// ErrConflict.
//
// The record's job leases are those planJobs gives for state: the jobs
// this save claims start once it succeeded.
func (g *Core) Save(ctx context.Context, t Target, prev *View, state statechart.State, rec Record) (*View, error) {
	return g.saveDurable(ctx, t, prev, state, rec, true)
}

// saveDurable is save; with durable false, a store that implements
// [gate.NoSyncStore] need not wait for the disk (for a write that
// acknowledges nothing: a lease).
func (g *Core) saveDurable(ctx context.Context, t Target, prev *View, state statechart.State, rec Record, durable bool) (*View, error) {
	key, sess := g.keyFor(t)
	var nv *View
	if state == prev.State {
		// The same state (a lease taken or released, a count): what was
		// derived from it still holds.
		nv = &View{gate: g, Key: key, State: state, Rec: rec, Active: prev.Active}
	} else {
		var err error
		if nv, err = g.NewView(key, state, rec, 0); err != nil {
			return nil, err
		}
	}
	// A job's (existing) result tells every session itself.
	if err := g.write(ctx, nv, prev, t.Ss, t.existing, durable); err != nil {
		return nil, err
	}
	switch {
	case g.values != nil:
		// The store holds the view: nothing to cache.
	case sess == nil:
		g.handled.Put(key, nv)
	default:
		g.cacheDecoded(key, nv)
	}
	if sess != nil {
		sess.saved.Store(true)
		if g.isClosed(sess) {
			// The session ended while the call ran.
			g.Forget(t.Ss, sess)
		}
	}
	return nv, nil
}

// Create starts a new workflow under key and saves it, if the key has no
// record; otherwise it returns an error matching ErrConflict.
func (g *Core) Create(ctx context.Context, key string) (*View, error) {
	s, err := g.engine.Start(ctx, g.Now())
	if err != nil {
		return nil, fmt.Errorf("mcpbind: starting the workflow: %w", err)
	}
	v, err := g.NewView(key, s, Record{}, 0)
	if err != nil {
		return nil, err
	}
	// A new workflow is in the initial state every session saw.
	if err := g.write(ctx, v, nil, nil, true, true); err != nil {
		return nil, err
	}
	return v, nil
}

// write is the tail every save and create share: it plans v's jobs and
// stamps its approval (against prev's, the record it replaces; nil for a
// new workflow), swaps it in under v.key if the key's version is still
// prev's, tells the sessions that watch the key (ss: the session that
// wrote; settled: every session tells itself), and starts the jobs the
// write claimed. A conflict's error matches ErrConflict as it is; another
// failure is wrapped.
func (g *Core) write(ctx context.Context, v *View, prev *View, ss Conn, settled, durable bool) error {
	var starts []jobStart
	v.Rec.Jobs, starts = g.planJobs(v.Rec.Jobs, v.State)
	var old uint64
	var prevApproval *ApprovalRecord
	var prevHistory []json.RawMessage
	if prev != nil {
		old, prevApproval, prevHistory = prev.Version, prev.Rec.Approval, prev.Rec.History
	}
	g.stampApproval(&v.Rec, v.Active, prevApproval)
	ww := g.writing(v.Key, ss, settled)
	_, err := g.swap(ctx, v.Key, old, v, prevHistory, durable)
	ww.done(v, err)
	switch {
	case err == nil:
		g.jobsSaved(v.Key, starts)
	case !gate.IsConflict(err):
		if g.localKey(v.Key) {
			// The write may have landed: the record this process keeps of
			// the workflow is no longer known to be the store's (current).
			g.decoded.Delete(v.Key)
		}
		err = fmt.Errorf("saving the workflow state: %w", err)
	}
	return err
}

// swap writes v's record under key if the key's version is old, and sets
// v's version to the record's new one. v is not yet shared. With durable
// false, a [gate.NoSyncStore] need not wait for the disk. A store that
// keeps histories apart (histrec.Store) is given a record past its size
// split, told how v's history differs from prevHistory, the history of
// the record at version old.
func (g *Core) swap(ctx context.Context, key string, old uint64, v *View, prevHistory []json.RawMessage, durable bool) (uint64, error) {
	v.Rec.WorkflowVersion = g.wversion
	if g.splits != nil && v.Rec.Size() >= g.splits.SplitAbove() {
		return g.records.Swap(ctx, key, old, &splitView{View: v, prev: prevHistory}, durable)
	}
	return g.records.Swap(ctx, key, old, v, durable)
}

// splitView is a view to be written to a histrec.Store: its record split
// in head and history, the history as a change of prev's.
type splitView struct {
	*View
	prev []json.RawMessage // the history of the record the write replaces
}

// Split implements histrec.Splitter.
func (s *splitView) Split() *histrec.Write {
	w := &histrec.Write{Head: s.Rec.encodeHead(), History: s.Rec.History}
	w.Dropped, w.Appended, w.Delta = historyDelta(s.prev, s.Rec.History)
	return w
}

// historyDelta reports how next extends prev: next is prev without its
// first dropped entries, followed by appended entries (ok), the entries
// they share being the same ones, by identity (the bytes at the same
// address: a history is only ever extended by slicing and appending, see
// appendHistory). Otherwise ok is false.
func historyDelta(prev, next []json.RawMessage) (dropped, appended int, ok bool) {
	for dropped = 0; dropped < len(prev); dropped++ {
		if len(next) > 0 && sameEntry(prev[dropped], next[0]) {
			break
		}
	}
	kept := len(prev) - dropped
	if kept > len(next) {
		return 0, 0, false
	}
	for i := range kept {
		if !sameEntry(prev[dropped+i], next[i]) {
			return 0, 0, false
		}
	}
	return dropped, len(next) - kept, true
}

// sameEntry reports whether a and b are the same bytes in memory.
func sameEntry(a, b json.RawMessage) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// Stamp sets v's version to ver, the one it is stored under, and returns
// v ([gate.Stamped]).
func (v *View) Stamp(ver uint64) gate.Value {
	v.Version = ver
	return v
}

// backoff sleeps a little, more after each conflict, with jitter.
func backoff(ctx context.Context, attempt int) { gate.Backoff(ctx, attempt) }

// Rewrite saves a new record of the workflow t names, in the same state,
// as update does. change returns the record to save from the current view
// and its persisted state, or stop to end without saving (a nil error:
// nothing to do). It returns the saved view.
func (g *Core) Rewrite(ctx context.Context, t Target, v *View, change func(v *View, snap []byte) (rec Record, stop bool, err error)) (*View, error) {
	return g.update(ctx, t, v, func(v *View) (statechart.State, Record, bool, error) {
		snap, err := v.snapshot() // with the delayed transitions since it was saved
		if err != nil {
			return nil, Record{}, false, fmt.Errorf("marshaling the state: %w", err)
		}
		rec, stop, err := change(v, snap)
		return v.State, rec, stop, err
	})
}

// update saves the next record of the workflow t names, retrying on
// conflicts (up to Options.MaxRetries, with backoff, loading the record
// again each time). change returns the state and record to save from the
// current view (v first), or stop to end without saving (a nil error:
// nothing to do). It returns the saved view; after the last conflict, an
// error that matches ErrConflict.
func (g *Core) update(ctx context.Context, t Target, v *View, change func(v *View) (state statechart.State, rec Record, stop bool, err error)) (*View, error) {
	var nv *View
	err := g.records.Retry(ctx, func() (bool, error) {
		state, rec, stop, err := change(v)
		if stop || err != nil {
			return false, err
		}
		nv, err = g.Save(ctx, t, v, state, rec)
		return gate.IsConflict(err), err
	}, func() (err error) {
		v, err = g.Load(ctx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return nv, nil
}
