// This file holds every write of the gate to its store: save (a
// workflow's next record, by compare-and-swap against the version it was
// loaded at), create (a new workflow), the write both end with, swap
// under it, and update, a save retried on conflicts against the record
// loaded again (a commit's event; rewrite, for a record whose state does
// not change: a count, a history entry, a job's claim, an approval's
// question). The steps (reserve, commit), the audit, the jobs and the
// approvals write through these only.

package mcpbind

import (
	"context"
	"fmt"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// save writes rec under the target's key if the key's version is still
// prev's, and returns the saved view; state is rec.snap's decoded form,
// with delayed transitions applied. On a conflict the error matches
// ErrConflict.
//
// The record's job leases are those planJobs gives for state: the jobs
// this save claims start once it succeeded.
func (g *gateCore) save(ctx context.Context, t target, prev *view, state statechart.State, rec core.Record) (*view, error) {
	return g.saveDurable(ctx, t, prev, state, rec, true)
}

// saveDurable is save; with durable false, a store that implements
// [gate.NoSyncStore] need not wait for the disk (for a write that
// acknowledges nothing: a lease).
func (g *gateCore) saveDurable(ctx context.Context, t target, prev *view, state statechart.State, rec core.Record, durable bool) (*view, error) {
	key, sess := g.keyFor(t)
	var nv *view
	if state == prev.state {
		// The same state (a lease taken or released, a count): what was
		// derived from it still holds.
		nv = &view{gate: g, key: key, state: state, rec: rec, active: prev.active}
	} else {
		var err error
		if nv, err = g.newView(key, state, rec, 0); err != nil {
			return nil, err
		}
	}
	// A job's (existing) result tells every session itself.
	if err := g.write(ctx, nv, prev.version, prev.rec.Approval, t.ss, t.existing, durable); err != nil {
		return nil, err
	}
	switch {
	case g.values != nil:
		// The store holds the view: nothing to cache.
	case sess == nil:
		g.handled.put(key, nv)
	default:
		g.decoded.Store(key, nv)
	}
	if sess != nil {
		sess.saved.Store(true)
		if g.isClosed(sess) {
			// The session ended while the call ran.
			g.forget(t.ss, sess)
		}
	}
	return nv, nil
}

// create starts a new workflow under key and saves it, if the key has no
// record; otherwise it returns an error matching ErrConflict.
func (g *gateCore) create(ctx context.Context, key string) (*view, error) {
	s, err := g.engine.Start(ctx, g.now())
	if err != nil {
		return nil, fmt.Errorf("mcpbind: starting the workflow: %w", err)
	}
	v, err := g.newView(key, s, core.Record{}, 0)
	if err != nil {
		return nil, err
	}
	// A new workflow is in the initial state every session saw.
	if err := g.write(ctx, v, 0, nil, nil, true, true); err != nil {
		return nil, err
	}
	return v, nil
}

// write is the tail every save and create share: it plans v's jobs and
// stamps its approval (against prev, the approval of the record it
// replaces), swaps it in under v.key if the key's version is still old,
// tells the sessions that watch the key (ss: the session that wrote;
// settled: every session tells itself), and starts the jobs the write
// claimed. A conflict's error matches ErrConflict as it is; another
// failure is wrapped.
func (g *gateCore) write(ctx context.Context, v *view, old uint64, prev *core.ApprovalRecord, ss conn, settled, durable bool) error {
	var starts []jobStart
	v.rec.Jobs, starts = g.planJobs(v.rec.Jobs, v.state)
	g.stampApproval(&v.rec, v.active, prev)
	ww := g.writing(v.key, ss, settled)
	_, err := g.swap(ctx, v.key, old, v, durable)
	ww.done(v, err)
	switch {
	case err == nil:
		g.jobsSaved(v.key, starts)
	case !isConflict(err):
		err = fmt.Errorf("saving the workflow state: %w", err)
	}
	return err
}

// swap writes v's record under key if the key's version is old, and sets
// v's version to the record's new one. v is not yet shared. With durable
// false, a [gate.NoSyncStore] need not wait for the disk.
func (g *gateCore) swap(ctx context.Context, key string, old uint64, v *view, durable bool) (uint64, error) {
	v.rec.WorkflowVersion = g.wversion
	return g.records.Swap(ctx, key, old, v, func(ver uint64) { v.version = ver }, durable)
}

func isConflict(err error) bool { return gate.IsConflict(err) }

// backoff sleeps a little, more after each conflict, with jitter.
func backoff(ctx context.Context, attempt int) { gate.Backoff(ctx, attempt) }

// rewrite saves a new record of the workflow t names, in the same state,
// as update does. change returns the record to save from the current view
// and its persisted state, or stop to end without saving (a nil error:
// nothing to do). It returns the saved view.
func (g *gateCore) rewrite(ctx context.Context, t target, v *view, change func(v *view, snap []byte) (rec core.Record, stop bool, err error)) (*view, error) {
	return g.update(ctx, t, v, func(v *view) (statechart.State, core.Record, bool, error) {
		snap, err := v.snapshot() // with the delayed transitions since it was saved
		if err != nil {
			return nil, core.Record{}, false, fmt.Errorf("marshaling the state: %w", err)
		}
		rec, stop, err := change(v, snap)
		return v.state, rec, stop, err
	})
}

// update saves the next record of the workflow t names, retrying on
// conflicts (up to Options.MaxRetries, with backoff, loading the record
// again each time). change returns the state and record to save from the
// current view (v first), or stop to end without saving (a nil error:
// nothing to do). It returns the saved view; after the last conflict, an
// error that matches ErrConflict.
func (g *gateCore) update(ctx context.Context, t target, v *view, change func(v *view) (state statechart.State, rec core.Record, stop bool, err error)) (*view, error) {
	var nv *view
	err := g.records.Retry(ctx, func() (bool, error) {
		state, rec, stop, err := change(v)
		if stop || err != nil {
			return false, err
		}
		nv, err = g.save(ctx, t, v, state, rec)
		return isConflict(err), err
	}, func() (err error) {
		v, err = g.load(ctx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	return nv, nil
}
