// This file defines approvals: the pending approval a workflow's record
// keeps while one of its approval states is active (an id, the
// transition, when it was asked and when it expires), and the grants
// that answer it, each through a channel a person uses and the agent's
// tools cannot drive (see the package documentation, "Approvals").

package core

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// PendingText is p.Text() for the agent, saying so if it expired.
func (g *Core) PendingText(p *gate.PendingApproval) string {
	if p.ID != "" && p.Expired(g.Now()) {
		return p.Text() + ", which has expired: it can no longer be approved, and a person's attempt to approve it rejects it"
	}
	return p.Text()
}

// grantSkew bounds how far a grant's time may be from the gate's clock:
// a token is used at once, by the command that made it.
const grantSkew = 5 * time.Minute

// validApprovalID reports whether s has the form of an approval id.
func validApprovalID(s string) bool { return gate.IsApprovalID(s) }

// approvalNode returns the index of the active approval state of a
// workflow whose active nodes are active, or -1.
func (g *Core) approvalNode(active Bitset) int {
	for i, sm := range g.mcp {
		if sm != nil && sm.Approval != nil && active.Has(i) {
			return i
		}
	}
	return -1
}

// stampApproval sets the pending approval of a record about to be saved
// with active nodes active: the one it carries (or prev, the one the
// workflow had) while its approval state stays active, a new one when an
// approval state was entered, none otherwise.
func (g *Core) stampApproval(rec *Record, active Bitset, prev *ApprovalRecord) {
	i := g.approvalNode(active)
	if i < 0 {
		rec.Approval = nil
		return
	}
	cur := rec.Approval
	if cur == nil {
		cur = prev
	}
	if cur != nil && cur.State == g.Nodes[i].ID {
		rec.Approval = cur
		return
	}
	now := g.Now()
	rec.Approval = &ApprovalRecord{ID: NewApprovalID(), State: g.Nodes[i].ID, Asked: now, Expires: now.Add(g.approvalTTL)}
}

// PendingOf returns the approval a workflow waits for, or nil. A record
// written before approvals had ids has none: the next save gives it one.
func (g *Core) PendingOf(v *View) *gate.PendingApproval {
	i := g.approvalNode(v.Active)
	if i < 0 {
		return nil
	}
	p := &gate.PendingApproval{Approval: *g.mcp[i].Approval}
	if r := v.Rec.Approval; r != nil && r.State == g.Nodes[i].ID {
		p.ID, p.Asked, p.Expires = r.ID, r.Asked, r.Expires
	}
	return p
}

// WaitingFor returns the approval a workflow waits for, or nil.
func (g *Core) WaitingFor(v *View) *gate.PendingApproval { return g.PendingOf(v) }

// Pending implements mcpbind's Gate.Pending.
func (g *Core) Pending(ctx context.Context, ref gate.Ref) (*gate.PendingApproval, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	v, err := g.Load(ctx, t)
	if err != nil {
		return nil, err
	}
	return g.PendingOf(v), nil
}

// Approval implements mcpbind's Gate.Approval.
func (g *Core) Approval(ctx context.Context, ref gate.Ref) (*gate.PendingApproval, error) {
	_, v, err := g.existing(ctx, ref)
	if err != nil {
		return nil, err
	}
	p := g.PendingOf(v)
	if p == nil {
		return nil, fmt.Errorf("mcpbind: workflow %s waits for no approval: %w", refString(ref), gate.ErrNoPendingApproval)
	}
	return p, nil
}

// existing returns the workflow a Ref names, which must have a record:
// a name that names none is [ErrUnknownWorkflow], not a workflow in its
// initial state.
func (g *Core) existing(ctx context.Context, ref gate.Ref) (Target, *View, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return Target{}, nil, err
	}
	t.existing = true
	v, err := g.Load(ctx, t)
	if errors.Is(err, gate.ErrUnknownWorkflow) {
		err = fmt.Errorf("mcpbind: workflow %s does not exist: %w", refString(ref), gate.ErrUnknownWorkflow)
	}
	return t, v, err
}

// refString writes a Ref as chartgate's commands take it.
func refString(ref gate.Ref) string {
	if ref.ID != "" {
		return "id:" + ref.ID
	}
	return "name:" + ref.Name
}

// FindApproval implements mcpbind's Gate.FindApproval.
func (g *Core) FindApproval(ctx context.Context, id string) (gate.Ref, *gate.PendingApproval, error) {
	if !validApprovalID(id) {
		return gate.Ref{}, nil, fmt.Errorf("mcpbind: %q is not an approval id (40 hex digits): %w", id, gate.ErrUnknownApproval)
	}
	ws, err := g.Workflows(ctx)
	if err != nil {
		return gate.Ref{}, nil, err
	}
	for _, w := range ws {
		if w.Pending != nil && w.Pending.ID == id {
			return w.Ref, w.Pending, nil
		}
	}
	for _, w := range ws {
		if w.Ref == (gate.Ref{}) {
			continue
		}
		if wf, err := g.WorkflowOf(ctx, w.Ref); err == nil {
			if err := g.Answered(wf.History, id); err != nil {
				return w.Ref, nil, err
			}
		}
	}
	return gate.Ref{}, nil, fmt.Errorf("mcpbind: no workflow waits for approval %s: %w", id, gate.ErrUnknownApproval)
}

// Answered returns ErrApprovalUsed, saying how, if a run history records
// the answer to approval id; else nil.
func (g *Core) Answered(history []gate.Transition, id string) error {
	for i := len(history) - 1; i >= 0; i-- {
		if a := history[i].Approval; a != nil && a.ID == id {
			verb := "approved"
			if !a.Approved {
				verb = "rejected"
			}
			return fmt.Errorf("mcpbind: approval %s was already %s (by %s through %s, at %s): %w", id, verb, a.By, a.Channel,
				history[i].Time.UTC().Format(time.RFC3339), gate.ErrApprovalUsed)
		}
	}
	return nil
}

// Approve implements mcpbind's Gate.Approve.
func (g *Core) Approve(ctx context.Context, ref gate.Ref, gr gate.Grant) (*gate.Transition, error) {
	if len(g.approverKey) == 0 {
		return nil, fmt.Errorf("mcpbind: approval %s: this gate has no approver key, so no grant can be verified: %w", gr.ID, gate.ErrApprovalToken)
	}
	want := gate.ApprovalToken(g.approverKey, gr.ID, gr.Approve, gr.By, gr.Time)
	if !hmac.Equal([]byte(want), []byte(gr.Token)) {
		return nil, fmt.Errorf("mcpbind: approval %s: the token does not verify with the approver key: %w", gr.ID, gate.ErrApprovalToken)
	}
	if d := g.Now().Sub(gr.Time); d > grantSkew || d < -grantSkew {
		return nil, fmt.Errorf("mcpbind: approval %s: the grant was made at %s, more than %s from now: %w", gr.ID,
			gr.Time.UTC().Format(time.RFC3339), grantSkew, gate.ErrApprovalToken)
	}
	if ref == (gate.Ref{}) {
		var err error
		if ref, _, err = g.FindApproval(ctx, gr.ID); err != nil {
			return nil, err
		}
	}
	t, v, err := g.existing(ctx, ref)
	if err != nil {
		return nil, err
	}
	channel := gr.Channel
	switch channel {
	case "":
		channel = gate.ChannelCommand
	case gate.ChannelCommand, gate.ChannelPage:
	default:
		return nil, fmt.Errorf("mcpbind: approval %s: channel %q is not one a grant comes through (%s, %s)", gr.ID, channel, gate.ChannelCommand, gate.ChannelPage)
	}
	return g.Grant(ctx, t, v, gate.ApprovalGrant{ID: gr.ID, Approved: gr.Approve, By: gr.By, Channel: channel, Authenticated: gr.Authenticated})
}

// Grant applies an answer to the approval of a workflow (v as loaded).
func (g *Core) Grant(ctx context.Context, t Target, v *View, a gate.ApprovalGrant) (*gate.Transition, error) {
	p := g.PendingOf(v)
	if p == nil || p.ID != a.ID {
		if err := g.Answered(DecodeHistory(v.Rec.History, v.Key), a.ID); err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("mcpbind: approval %s: %w", a.ID, gate.ErrNoPendingApproval)
		}
		return nil, fmt.Errorf("mcpbind: the workflow waits for approval %s, not %s: %w", p.ID, a.ID, gate.ErrUnknownApproval)
	}
	if a.Approved && p.Expired(g.Now()) {
		exp := gate.ApprovalGrant{ID: a.ID, By: "chartgate", Channel: gate.ChannelExpiry, Authenticated: true}
		if _, err := g.sendGrant(ctx, t, v, p, exp); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("mcpbind: approval %s expired at %s: it is rejected, and the workflow is back in %q: %w",
			a.ID, p.Expires.UTC().Format(time.RFC3339), p.From, gate.ErrApprovalExpired)
	}
	return g.sendGrant(ctx, t, v, p, a)
}

// sendGrant sends the event of an answer, as Send does: the workflow's
// lease, then the event, checked again against the pending approval in
// the compare-and-swap that saves it (commit's checkGrant).
func (g *Core) sendGrant(ctx context.Context, t Target, v *View, p *gate.PendingApproval, a gate.ApprovalGrant) (*gate.Transition, error) {
	ev := gate.EventReject
	if a.Approved {
		ev = gate.EventApprove
	}
	c := &Call{Kind: CallSend, Rules: g.Rules.Load(), Info: UnboundInfo, Target: t, By: a.By, grant: &a,
		Event: statechart.Event{Type: ev, Data: map[string]any{"by": a.By, "approval": p.Event, "id": a.ID, "channel": a.Channel,
			"authenticated": a.Authenticated}}}
	s := &Steps{G: g, C: c, v: v}
	gate.Do(ctx, s)
	if s.Err != nil {
		return nil, fmt.Errorf("mcpbind: approval %s: %w", a.ID, s.Err)
	}
	out := s.Out
	if out.Err != nil {
		return nil, out.Err
	}
	if out.Tr == nil {
		return nil, fmt.Errorf("mcpbind: approval %s: the machine did not take %s in its approval state", a.ID, ev)
	}
	return out.Tr, nil
}

// errReservedEvent is the error of an approval's event sent other than
// by a grant (Send).
var errReservedEvent = errors.New("mcpbind: chartgate.approve and chartgate.reject are sent only by a person's grant (Gate.Approve or the MCP channels), not with Send")

// checkGrant decides, in the compare-and-swap that saves it, whether an
// approval's event may be applied to the workflow as it now is (cur):
// only by a grant of the approval it waits for, and an approval only
// before it expires.
func (g *Core) checkGrant(cur *View, ev string, a *gate.ApprovalGrant) error {
	if ev != gate.EventApprove && ev != gate.EventReject {
		return nil
	}
	if a == nil {
		return errReservedEvent
	}
	p := g.PendingOf(cur)
	if p == nil || p.ID != a.ID {
		// Another grant of the same approval may have been saved since
		// this one was loaded: say so rather than that nothing waits.
		if err := g.Answered(DecodeHistory(cur.Rec.History, cur.Key), a.ID); err != nil {
			return err
		}
	}
	switch {
	case p == nil:
		return fmt.Errorf("mcpbind: approval %s: %w", a.ID, gate.ErrNoPendingApproval)
	case p.ID != a.ID:
		return fmt.Errorf("mcpbind: the workflow waits for approval %s, not %s: %w", p.ID, a.ID, gate.ErrUnknownApproval)
	case a.Approved && p.Expired(g.Now()):
		return fmt.Errorf("mcpbind: approval %s expired at %s: %w", a.ID, p.Expires.UTC().Format(time.RFC3339), gate.ErrApprovalExpired)
	}
	return nil
}
