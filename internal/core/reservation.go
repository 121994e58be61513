// This file gates a tool that runs in the caller's process, outside an
// MCP request, as a tools/call is gated: Reserve decides the request and
// takes its place in the workflow (the budgets, the lease of a tool that
// may send an event), the caller runs the tool, and the Reservation's
// Commit records what it did and releases the workflow. Unlike Decide and
// Commit, which a hook makes in two processes, nothing runs in between.

package core

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/chartgate/chartgate/gate"
)

// Reservation is the place an allowed request holds in its workflow until
// its outcome is committed (mcpbind.Reservation).
type Reservation struct {
	s    *Steps // nil: the workflow does not gate the tool
	done atomic.Bool
}

// errCommitted is Reservation.Commit's error after the first.
var errCommitted = errors.New("mcpbind: the reservation was already committed")

// Reserve implements mcpbind's Gate.Reserve.
func (g *Core) Reserve(ctx context.Context, r gate.Request) (gate.Decision, *Reservation, error) {
	c, err := g.ExternalCall(r)
	if err != nil {
		return gate.Decision{}, nil, err
	}
	s := &Steps{G: g, C: c}
	s.v, _ = g.snapshotOf(r.Workflow, c.Target)
	ctx, ok := gate.Reserve(ctx, s)
	if !ok && s.unbound {
		return gate.Decision{Allowed: true}, &Reservation{}, nil
	}
	if !ok {
		if s.Vd != nil {
			g.AuditRefusal(ctx, c, s.Before, s.Vd)
		}
		if s.Err != nil || s.Vd == nil {
			return gate.Decision{}, nil, s.Err
		}
		return gate.Decision{Refusal: s.Vd.Ref, Text: s.Vd.Text}, nil, nil
	}
	if s.h != nil {
		g.keepAlive(ctx, s.h)
	}
	return gate.Decision{Allowed: true}, &Reservation{s: s}, nil
}

// Commit records what the reserved tool did (mcpbind.Reservation.Commit).
func (rv *Reservation) Commit(ctx context.Context, o gate.Outcome) (*gate.Transition, error) {
	if !rv.done.CompareAndSwap(false, true) {
		return nil, errCommitted
	}
	s := rv.s
	if s == nil {
		return nil, nil
	}
	if s.h != nil {
		s.G.stopRenewals(s.h)
	}
	s.C.ran, s.did = true, outcomeOf(o)
	gate.Finish(ctx, s)
	if s.Out.Err != nil {
		return nil, s.Out.Err
	}
	return s.Out.Tr, nil
}
