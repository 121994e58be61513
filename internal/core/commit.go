// This file records a call in its workflow once its tool has run: the
// tool's event is sent to the engine and the new state saved, with the
// call's lease released, in one compare-and-swap, retried on conflicts. A
// call whose event could not be saved gets a note.

package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// Committed is what a call left in its workflow.
type Committed struct {
	After *View            // the workflow's newest known state after the call
	From  *View            // the state the event was sent to (commit only)
	Ev    statechart.Event // the event sent, if any
	sent  bool             // an event was sent
	Tr    *gate.Transition // the transition, if the event changed the workflow and it was saved
	Err   error            // the event could not be recorded
	// Checkpoints are the budgets that warn (onMaxCalls "warn") that the
	// call went past.
	Checkpoints []gate.CallLimit
	// Notices are appended to the call's result: the follow-up events
	// that moved the workflow (Options.AfterCall).
	Notices []string
}

// CommitCall records a call that ran: for a call that holds the lease, the
// tool's event (if the tool succeeded) and the release of the lease, in
// one write. v is the workflow as the call's reservation left it.
func (g *Core) CommitCall(ctx context.Context, c *Call, h *holder, v *View, o ToolOutcome) Committed {
	if h == nil {
		return Committed{After: v}
	}
	out := Committed{}
	if o.Ok || c.Kind == CallTransition || c.Kind == CallSend {
		out.Ev, out.sent = g.callEvent(c, o), true
	}
	// The tool has run: its event is recorded even if the client goes
	// away. The time is read once for the first attempt (the clock of the
	// process too, unless Options.Now is set).
	now := g.Now()
	ran := now
	if !g.realClock {
		ran = time.Now()
	}
	ar := &h.afterRun
	ar.start(ctx, ran, g.Timeout)
	defer ar.Stop()
	ctx = ar
	defer g.leases.release(h)
	first := true
	var cur *View // the view the last attempt wrote against
	nv, err := g.update(ctx, c.Target, h.latest(), func(v *View) (statechart.State, Record, bool, error) {
		cur, out.Tr, out.Err = v, nil, nil
		ours := g.leases.holdsLocally(h) || cur.Rec.Lease != nil && cur.Rec.Lease.ID == h.lease.ID
		if !ours && first {
			g.Log.Warn("mcpbind: a call's hold on the workflow expired while its tool ran; its event is applied to the newer state",
				"key", Fingerprint(h.key), "tool", c.Name)
		}
		if !first {
			now = g.Now() // after a conflict
		}
		first = false
		state, changed := cur.State, false
		var entry, snap []byte // snap: the persisted form of state, once known
		if out.sent {
			// An approval's event is checked against the approval the
			// workflow waits for now, in the write that saves it.
			if err := g.checkGrant(cur, out.Ev.Type, c.grant); err != nil {
				out.Err = err
			} else if ns, err := g.eventState(ctx, c, cur.State, out.Ev, o, now); err != nil {
				out.Err = fmt.Errorf("the machine failed on event %q: %w", out.Ev.Type, err)
			} else if nsnap, err := ns.MarshalJSON(); err != nil {
				out.Err = fmt.Errorf("marshaling the new state: %w", err)
			} else if !bytes.Equal(nsnap, cur.Rec.Snap) {
				state, changed, snap = ns, true, nsnap
				h.tr = gate.Transition{Key: cur.Key, Tool: c.Name, By: c.By, Approval: c.grant, Event: out.Ev, From: cur.State.Value(), To: ns.Value(), Time: now}
				out.Tr = &h.tr
				if g.hlimit > 0 {
					buf := g.scratch()
					var d *callData
					if sd, ok := g.sparse(c, out.Ev, o); ok {
						d = &sd
					}
					b := appendTransition((*buf)[:0], *out.Tr, d)
					entry = bytes.Clone(b) // its exact size: records keep it
					g.release(buf, b)
				}
			}
		}
		if !ours && !changed {
			out.Tr = nil
			return nil, Record{}, true, nil // nothing of the call's to write
		}
		rec := Record{Calls: cur.Rec.Calls, History: cur.Rec.History, Jobs: cur.Rec.Jobs, hist: cur.Rec.hist}
		if ours {
			rec.Lease = nil
		} else {
			rec.Lease = cur.Rec.Lease // another call's
		}
		if !changed && ours && g.audit && g.hlimit > 0 {
			// The call moved nothing: its entry records it.
			word := "refused"
			if c.Kind == CallTool {
				word = o.word()
			} else if out.sent && out.Err == nil {
				word = "ran"
			}
			rec.History, rec.hist = appendHistory(cur.Rec.History, cur.Rec.hist, g.callEntry(c, cur, word), g.hlimit, g.hbytes)
		}
		if changed {
			rec.History, rec.hist = appendHistory(cur.Rec.History, cur.Rec.hist, entry, g.hlimit, g.hbytes)
			if g.resetCalls {
				rec.Calls = nil
			} else if len(cur.Rec.Calls) > 0 {
				ids := state.StateIDs()
				rec.Calls = CarryCalls(cur.Rec.Calls, func(id string) bool { return slices.Contains(ids, id) })
			}
		} else {
			out.Tr = nil
		}
		if snap == nil {
			var err error
			if snap, err = cur.snapshot(); err != nil { // with the delayed transitions since it was saved
				out.Tr = nil
				return nil, Record{}, false, fmt.Errorf("marshaling the state: %w", err)
			}
		}
		rec.Snap = snap
		return state, rec, false, nil
	})
	out.From = cur
	switch {
	case err != nil:
		out.Tr, out.Err = nil, err
	case nv == nil:
		out.After = cur // nothing written
	default:
		out.After = nv
	}
	return out
}

// process sends a call's event to the engine, or for a job's report
// (jobs.go), delivers it: a report for a child that no longer runs changes
// nothing.
func (g *Core) process(ctx context.Context, c *Call, s statechart.State, ev statechart.Event, now time.Time) (statechart.State, error) {
	if c.Report == nil {
		return g.engine.Send(ctx, s, ev, now)
	}
	ns, _, err := g.effects.Deliver(ctx, s, *c.Report, now)
	if errors.Is(err, statechart.ErrNoChild) {
		return s, nil
	}
	return ns, err
}

// eventState returns the state a call's event ev leads to from s. A call
// of a tool whose authorization computed it from the same state with the
// same event (the tool gave no structured result, or the engine ignores
// event data) saves that state: the engine runs the event once. Otherwise
// the engine processes ev now, with the result.
func (g *Core) eventState(ctx context.Context, c *Call, s statechart.State, ev statechart.Event, o ToolOutcome, now time.Time) (statechart.State, error) {
	if d := c.decided; d.to != nil && c.Kind == CallTool && c.Report == nil && d.from == s && (g.dataless || o.Output == nil) {
		return d.to, nil
	}
	return g.process(ctx, c, s, ev, now)
}
