// This file records a call in its workflow once its tool has run: the
// tool's event is sent to the engine and the new state saved, with the
// call's lease released, in one compare-and-swap, retried on conflicts. A
// call whose event could not be saved gets a note.

package mcpbind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// committed is what a call left in its workflow.
type committed struct {
	after *view            // the workflow's newest known state after the call
	from  *view            // the state the event was sent to (commit only)
	ev    statechart.Event // the event sent, if any
	sent  bool             // an event was sent
	tr    *Transition      // the transition, if the event changed the workflow and it was saved
	err   error            // the event could not be recorded
	// checkpoints are the budgets that warn (onMaxCalls "warn") that the
	// call went past.
	checkpoints []CallLimit
	// notices are appended to the call's result: the follow-up events
	// that moved the workflow (Options.AfterCall).
	notices []string
}

// commit records a call that ran: for a call that holds the lease, the
// tool's event (if the tool succeeded) and the release of the lease, in
// one write. v is the workflow as the call's reservation left it.
func (g *gateCore) commit(ctx context.Context, c *gatedCall, h *holder, v *view, o toolOutcome) committed {
	if h == nil {
		return committed{after: v}
	}
	out := committed{}
	if o.ok || c.kind == callTransition || c.kind == callSend {
		out.ev, out.sent = g.callEvent(c, o), true
	}
	// The tool has run: its event is recorded even if the client goes away.
	ar := core.NewAfterRun(ctx, g.timeout)
	defer ar.Stop()
	ctx = ar
	defer g.leases.released(h.key)
	first := true
	var cur *view // the view the last attempt wrote against
	nv, err := g.update(ctx, c.target, h.latest(), func(v *view) (statechart.State, core.Record, bool, error) {
		cur, out.tr, out.err = v, nil, nil
		ours := cur.rec.Lease != nil && cur.rec.Lease.ID == h.id
		if !ours && first {
			g.log.Warn("mcpbind: a call's hold on the workflow expired while its tool ran; its event is applied to the newer state",
				"key", fingerprint(h.key), "tool", c.name)
		}
		first = false
		state, changed := cur.state, false
		var entry, snap []byte // snap: the persisted form of state, once known
		if out.sent {
			// An approval's event is checked against the approval the
			// workflow waits for now, in the write that saves it.
			if err := g.checkGrant(cur, out.ev.Type, c.grant); err != nil {
				out.err = err
			} else if ns, err := g.eventState(ctx, c, cur.state, out.ev, o); err != nil {
				out.err = fmt.Errorf("the machine failed on event %q: %w", out.ev.Type, err)
			} else if nsnap, err := ns.MarshalJSON(); err != nil {
				out.err = fmt.Errorf("marshaling the new state: %w", err)
			} else if !bytes.Equal(nsnap, cur.rec.Snap) {
				state, changed, snap = ns, true, nsnap
				out.tr = &Transition{Key: cur.key, Tool: c.name, By: c.by, Approval: c.grant, Event: out.ev, From: cur.state.Value(), To: ns.Value(), Time: g.now()}
				if g.hlimit > 0 {
					buf := g.scratch()
					b := core.AppendTransition((*buf)[:0], *out.tr)
					entry = bytes.Clone(b) // its exact size: records keep it
					g.release(buf, b)
				}
			}
		}
		if !ours && !changed {
			out.tr = nil
			return nil, core.Record{}, true, nil // nothing of the call's to write
		}
		rec := core.Record{Calls: cur.rec.Calls, History: cur.rec.History, Jobs: cur.rec.Jobs}
		if ours {
			rec.Lease = nil
		} else {
			rec.Lease = cur.rec.Lease // another call's
		}
		if !changed && ours && g.audit && g.hlimit > 0 {
			// The call moved nothing: its entry records it.
			word := "refused"
			if c.kind == callTool {
				word = o.word()
			} else if out.sent && out.err == nil {
				word = "ran"
			}
			rec.History = core.AppendHistory(cur.rec.History, g.callEntry(c, cur, word), g.hlimit, g.hbytes)
		}
		if changed {
			rec.History = core.AppendHistory(cur.rec.History, entry, g.hlimit, g.hbytes)
			if g.resetCalls {
				rec.Calls = nil
			} else if len(cur.rec.Calls) > 0 {
				ids := state.StateIDs()
				rec.Calls = core.CarryCalls(cur.rec.Calls, func(id string) bool { return slices.Contains(ids, id) })
			}
		} else {
			out.tr = nil
		}
		if snap == nil {
			var err error
			if snap, err = cur.snapshot(); err != nil { // with the delayed transitions since it was saved
				out.tr = nil
				return nil, core.Record{}, false, fmt.Errorf("marshaling the state: %w", err)
			}
		}
		rec.Snap = snap
		return state, rec, false, nil
	})
	out.from = cur
	switch {
	case err != nil:
		out.tr, out.err = nil, err
	case nv == nil:
		out.after = cur // nothing written
	default:
		out.after = nv
	}
	return out
}

// process sends a call's event to the engine, or for a job's report
// (jobs.go), delivers it: a report for a child that no longer runs changes
// nothing.
func (g *gateCore) process(ctx context.Context, c *gatedCall, s statechart.State, ev statechart.Event) (statechart.State, error) {
	if c.report == nil {
		return g.engine.Send(ctx, s, ev, g.now())
	}
	ns, _, err := g.effects.Deliver(ctx, s, *c.report, g.now())
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
func (g *gateCore) eventState(ctx context.Context, c *gatedCall, s statechart.State, ev statechart.Event, o toolOutcome) (statechart.State, error) {
	if d := c.decided; d != nil && c.kind == callTool && c.report == nil && d.from == s && (g.dataless || o.output == nil) {
		return d.to, nil
	}
	return g.process(ctx, c, s, ev)
}
