// This file defines approvals: the pending approval a workflow's record
// keeps while one of its approval states is active (an id, the
// transition, when it was asked and when it expires), and the grants
// that answer it, each through a channel a person uses and the agent's
// tools cannot drive (see the package documentation, "Approvals").

package mcpbind

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// pendingText is p.Text() for the agent, saying so if it expired.
func (g *gateCore) pendingText(p *PendingApproval) string {
	if p.ID != "" && p.Expired(g.now()) {
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
func (g *gateCore) approvalNode(active core.Bitset) int {
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
func (g *gateCore) stampApproval(rec *core.Record, active core.Bitset, prev *core.ApprovalRecord) {
	i := g.approvalNode(active)
	if i < 0 {
		rec.Approval = nil
		return
	}
	cur := rec.Approval
	if cur == nil {
		cur = prev
	}
	if cur != nil && cur.State == g.nodes[i].ID {
		rec.Approval = cur
		return
	}
	now := g.now()
	rec.Approval = &core.ApprovalRecord{ID: core.NewApprovalID(), State: g.nodes[i].ID, Asked: now, Expires: now.Add(g.approvalTTL)}
}

// pendingOf returns the approval a workflow waits for, or nil. A record
// written before approvals had ids has none: the next save gives it one.
func (g *gateCore) pendingOf(v *view) *PendingApproval {
	i := g.approvalNode(v.active)
	if i < 0 {
		return nil
	}
	p := &PendingApproval{Approval: *g.mcp[i].Approval}
	if r := v.rec.Approval; r != nil && r.State == g.nodes[i].ID {
		p.ID, p.Asked, p.Expires = r.ID, r.Asked, r.Expires
	}
	return p
}

// pending returns the approval a workflow waits for, or nil.
func (g *gateCore) pending(v *view) *PendingApproval { return g.pendingOf(v) }

// Pending is [Gate.Pending].
func (g *gateCore) Pending(ctx context.Context, ref Ref) (*PendingApproval, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return nil, err
	}
	v, err := g.load(ctx, t)
	if err != nil {
		return nil, err
	}
	return g.pendingOf(v), nil
}

// Approval is [Gate.Approval].
func (g *gateCore) Approval(ctx context.Context, ref Ref) (*PendingApproval, error) {
	_, v, err := g.existing(ctx, ref)
	if err != nil {
		return nil, err
	}
	p := g.pendingOf(v)
	if p == nil {
		return nil, fmt.Errorf("mcpbind: workflow %s waits for no approval: %w", refString(ref), ErrNoPendingApproval)
	}
	return p, nil
}

// existing returns the workflow a Ref names, which must have a record:
// a name that names none is [ErrUnknownWorkflow], not a workflow in its
// initial state.
func (g *gateCore) existing(ctx context.Context, ref Ref) (target, *view, error) {
	t, err := g.refTarget(ref)
	if err != nil {
		return target{}, nil, err
	}
	t.existing = true
	v, err := g.load(ctx, t)
	if errors.Is(err, ErrUnknownWorkflow) {
		err = fmt.Errorf("mcpbind: workflow %s does not exist: %w", refString(ref), ErrUnknownWorkflow)
	}
	return t, v, err
}

// refString writes a Ref as chartgate's commands take it.
func refString(ref Ref) string {
	if ref.ID != "" {
		return "id:" + ref.ID
	}
	return "name:" + ref.Name
}

// FindApproval is [Gate.FindApproval].
func (g *gateCore) FindApproval(ctx context.Context, id string) (Ref, *PendingApproval, error) {
	if !validApprovalID(id) {
		return Ref{}, nil, fmt.Errorf("mcpbind: %q is not an approval id (40 hex digits): %w", id, ErrUnknownApproval)
	}
	ws, err := g.Workflows(ctx)
	if err != nil {
		return Ref{}, nil, err
	}
	for _, w := range ws {
		if w.Pending != nil && w.Pending.ID == id {
			return w.Ref, w.Pending, nil
		}
	}
	for _, w := range ws {
		if w.Ref == (Ref{}) {
			continue
		}
		if wf, err := g.WorkflowOf(ctx, w.Ref); err == nil {
			if err := g.answered(wf.History, id); err != nil {
				return w.Ref, nil, err
			}
		}
	}
	return Ref{}, nil, fmt.Errorf("mcpbind: no workflow waits for approval %s: %w", id, ErrUnknownApproval)
}

// answered returns ErrApprovalUsed, saying how, if a run history records
// the answer to approval id; else nil.
func (g *gateCore) answered(history []Transition, id string) error {
	for i := len(history) - 1; i >= 0; i-- {
		if a := history[i].Approval; a != nil && a.ID == id {
			verb := "approved"
			if !a.Approved {
				verb = "rejected"
			}
			return fmt.Errorf("mcpbind: approval %s was already %s (by %s through %s, at %s): %w", id, verb, a.By, a.Channel,
				history[i].Time.UTC().Format(time.RFC3339), ErrApprovalUsed)
		}
	}
	return nil
}

// Approve is [Gate.Approve].
func (g *gateCore) Approve(ctx context.Context, ref Ref, gr Grant) (*Transition, error) {
	if len(g.approverKey) == 0 {
		return nil, fmt.Errorf("mcpbind: approval %s: this gate has no approver key, so no grant can be verified: %w", gr.ID, ErrApprovalToken)
	}
	want := ApprovalToken(g.approverKey, gr.ID, gr.Approve, gr.By, gr.Time)
	if !hmac.Equal([]byte(want), []byte(gr.Token)) {
		return nil, fmt.Errorf("mcpbind: approval %s: the token does not verify with the approver key: %w", gr.ID, ErrApprovalToken)
	}
	if d := g.now().Sub(gr.Time); d > grantSkew || d < -grantSkew {
		return nil, fmt.Errorf("mcpbind: approval %s: the grant was made at %s, more than %s from now: %w", gr.ID,
			gr.Time.UTC().Format(time.RFC3339), grantSkew, ErrApprovalToken)
	}
	if ref == (Ref{}) {
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
		channel = ChannelCommand
	case ChannelCommand, ChannelPage:
	default:
		return nil, fmt.Errorf("mcpbind: approval %s: channel %q is not one a grant comes through (%s, %s)", gr.ID, channel, ChannelCommand, ChannelPage)
	}
	return g.grant(ctx, t, v, ApprovalGrant{ID: gr.ID, Approved: gr.Approve, By: gr.By, Channel: channel, Authenticated: gr.Authenticated})
}

// grant applies an answer to the approval of a workflow (v as loaded).
func (g *gateCore) grant(ctx context.Context, t target, v *view, a ApprovalGrant) (*Transition, error) {
	p := g.pendingOf(v)
	if p == nil || p.ID != a.ID {
		if err := g.answered(core.DecodeHistory(v.rec.History, v.key), a.ID); err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("mcpbind: approval %s: %w", a.ID, ErrNoPendingApproval)
		}
		return nil, fmt.Errorf("mcpbind: the workflow waits for approval %s, not %s: %w", p.ID, a.ID, ErrUnknownApproval)
	}
	if a.Approved && p.Expired(g.now()) {
		exp := ApprovalGrant{ID: a.ID, By: "chartgate", Channel: ChannelExpiry, Authenticated: true}
		if _, err := g.sendGrant(ctx, t, v, p, exp); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("mcpbind: approval %s expired at %s: it is rejected, and the workflow is back in %q: %w",
			a.ID, p.Expires.UTC().Format(time.RFC3339), p.From, ErrApprovalExpired)
	}
	return g.sendGrant(ctx, t, v, p, a)
}

// sendGrant sends the event of an answer, as Send does: the workflow's
// lease, then the event, checked again against the pending approval in
// the compare-and-swap that saves it (commit's checkGrant).
func (g *gateCore) sendGrant(ctx context.Context, t target, v *view, p *PendingApproval, a ApprovalGrant) (*Transition, error) {
	ev := EventReject
	if a.Approved {
		ev = EventApprove
	}
	c := &gatedCall{kind: callSend, rules: g.rules.Load(), info: unboundInfo, target: t, by: a.By, grant: &a,
		event: statechart.Event{Type: ev, Data: map[string]any{"by": a.By, "approval": p.Event, "id": a.ID, "channel": a.Channel,
			"authenticated": a.Authenticated}}}
	s := &steps{g: g, c: c, v: v}
	gate.Do(ctx, s)
	if s.err != nil {
		return nil, fmt.Errorf("mcpbind: approval %s: %w", a.ID, s.err)
	}
	out := s.out
	if out.err != nil {
		return nil, out.err
	}
	if out.tr == nil {
		return nil, fmt.Errorf("mcpbind: approval %s: the machine did not take %s in its approval state", a.ID, ev)
	}
	return out.tr, nil
}

// errReservedEvent is the error of an approval's event sent other than
// by a grant (Gate.Send).
var errReservedEvent = errors.New("mcpbind: chartgate.approve and chartgate.reject are sent only by a person's grant (Gate.Approve or the MCP channels), not with Send")

// checkGrant decides, in the compare-and-swap that saves it, whether an
// approval's event may be applied to the workflow as it now is (cur):
// only by a grant of the approval it waits for, and an approval only
// before it expires.
func (g *gateCore) checkGrant(cur *view, ev string, a *ApprovalGrant) error {
	if ev != EventApprove && ev != EventReject {
		return nil
	}
	if a == nil {
		return errReservedEvent
	}
	p := g.pendingOf(cur)
	if p == nil || p.ID != a.ID {
		// Another grant of the same approval may have been saved since
		// this one was loaded: say so rather than that nothing waits.
		if err := g.answered(core.DecodeHistory(cur.rec.History, cur.key), a.ID); err != nil {
			return err
		}
	}
	switch {
	case p == nil:
		return fmt.Errorf("mcpbind: approval %s: %w", a.ID, ErrNoPendingApproval)
	case p.ID != a.ID:
		return fmt.Errorf("mcpbind: the workflow waits for approval %s, not %s: %w", p.ID, a.ID, ErrUnknownApproval)
	case a.Approved && p.Expired(g.now()):
		return fmt.Errorf("mcpbind: approval %s expired at %s: %w", a.ID, p.Expires.UTC().Format(time.RFC3339), ErrApprovalExpired)
	}
	return nil
}
