// This file gates a tool that runs in the caller's process, outside an
// MCP request, as a tools/call is gated: Reserve decides the request and
// takes its place in the workflow (the budgets, the lease of a tool that
// may send an event), the caller runs the tool, and the Reservation's
// Commit records what it did and releases the workflow. Unlike Decide and
// Commit, which a hook makes in two processes, nothing runs in between.

package mcpbind

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/chartgate/chartgate/gate"
)

// Reservation is the place an allowed request holds in its workflow until
// its outcome is committed. Commit it exactly once, also when the tool did
// not run (Outcome.Failed): until then no other request of the workflow
// whose tool may send an event runs (it waits up to Options.BusyWait), and
// the lease is renewed; if the process dies, it expires after
// Options.LeaseTTL.
type Reservation struct {
	s    *steps // nil: the workflow does not gate the tool
	done atomic.Bool
}

// errCommitted is Reservation.Commit's error after the first.
var errCommitted = errors.New("mcpbind: the reservation was already committed")

// Reserve is [Gate.Reserve].
func (g *gateCore) Reserve(ctx context.Context, r gate.Request) (gate.Decision, *Reservation, error) {
	c, err := g.externalCall(r)
	if err != nil {
		return gate.Decision{}, nil, err
	}
	s := &steps{g: g, c: c}
	s.v, _ = g.snapshotOf(r.Workflow, c.target)
	ctx, ok := gate.Reserve(ctx, s)
	if !ok && s.unbound {
		return gate.Decision{Allowed: true}, &Reservation{}, nil
	}
	if !ok {
		if s.vd != nil {
			g.auditRefusal(ctx, c, s.before, s.vd)
		}
		if s.err != nil || s.vd == nil {
			return gate.Decision{}, nil, s.err
		}
		return gate.Decision{Refusal: s.vd.ref, Text: s.vd.text}, nil, nil
	}
	if s.h != nil {
		g.keepAlive(ctx, s.h)
	}
	return gate.Decision{Allowed: true}, &Reservation{s: s}, nil
}

// Commit records what the reserved tool did, as a tools/call's result is
// recorded: unless it failed, the tool's event is sent with the request's
// arguments and o.Output, and the new state saved, in the write that
// releases the workflow. It returns the transition, or nil if the workflow
// did not move.
func (rv *Reservation) Commit(ctx context.Context, o gate.Outcome) (*Transition, error) {
	if !rv.done.CompareAndSwap(false, true) {
		return nil, errCommitted
	}
	s := rv.s
	if s == nil {
		return nil, nil
	}
	if s.h != nil {
		s.h.stopRenewals()
	}
	s.c.ran, s.did = true, outcomeOf(o)
	gate.Finish(ctx, s)
	if s.out.err != nil {
		return nil, s.out.err
	}
	return s.out.tr, nil
}
