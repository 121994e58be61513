// This file asks the client's user to answer an approval that a
// workflow_transition call just parked (Options.ElicitApprovals): by MCP
// elicitation under protocol versions before 2026-07-28, and by an
// input-required result that the client answers when it retries the call
// under 2026-07-28 (SEP-2322), where a server may no longer send requests
// of its own. Either way the question goes to the client, which shows it
// to its user; the agent sees neither the question nor the answer.

package mcpbind

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chartgate/chartgate/internal/core"
)

// approvalInput is the key of the input request that asks for an
// approval, in the input-required result and in the retry's answers.
const approvalInput = "approval"

// approvalQuestion is the elicitation that asks the user about p.
func (g *Gate) approvalQuestion(p *PendingApproval) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Message: fmt.Sprintf("The agent asks to move the %q workflow from %q to %q (event %s)%s\n\nApprove this transition? (approval %s, expires %s)",
			g.core.Engine().ID(), p.From, p.To, p.Event, messageText(p.Message), p.ID, p.Expires.UTC().Format("2006-01-02 15:04 MST")),
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"approve": map[string]any{"type": "boolean", "description": "approve the transition"}},
			"required":   []string{"approve"},
		},
	}
}

// askApproval asks the client's user about the approval a
// workflow_transition call parked, if the client can be asked. Under
// protocol 2026-07-28 it returns the input-required result that asks;
// before, it elicits and applies the answer, returning the call's
// outcome updated. Anything but an answer leaves the approval pending.
func (g *Gate) askApproval(ctx context.Context, c *core.Call, out core.Committed) (core.Committed, *mcp.CallToolResult) {
	p := g.core.WaitingFor(out.After)
	if p == nil || p.ID == "" {
		return out, nil
	}
	req := mcpOf(c).req
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return out, nil
	}
	if newProtocol(req) {
		return out, g.inputRequired(ctx, c, out.After, p)
	}
	ss := req.Session
	if c.Handles || ss == nil {
		return out, nil
	}
	res, err := ss.Elicit(ctx, g.approvalQuestion(p))
	if err != nil {
		g.core.Log.Warn("mcpbind: asking the user to approve a transition", "key", core.Fingerprint(out.After.Key), "approval", p.ID, "error", err)
		return out, nil
	}
	approve, answered := res.Content["approve"].(bool)
	if res.Action != "accept" || !answered {
		return out, nil // declined or dismissed: still pending
	}
	by, authd := requestAuthor(c)
	tr, err := g.core.Grant(ctx, c.Target, out.After, ApprovalGrant{ID: p.ID, Approved: approve, By: by, Channel: ChannelElicitation, Authenticated: authd})
	if err != nil {
		g.core.Log.Warn("mcpbind: applying the user's answer to an approval", "key", core.Fingerprint(out.After.Key), "approval", p.ID, "error", err)
		return out, nil
	}
	// The call's answer reports where the workflow is now.
	if v, err := g.core.Load(ctx, c.Target); err == nil {
		out.After = v
	}
	moved := *out.Tr
	moved.To, moved.Approval = tr.To, tr.Approval
	out.Tr = &moved
	return out, nil
}

// inputRequired returns the input-required result that asks the client's
// user about p, and records in the approval the digest of the request
// state the client will echo, so that only an answer to this question
// grants it. It returns nil (the call is answered as parked) if the
// workflow could not be updated.
func (g *Gate) inputRequired(ctx context.Context, c *core.Call, v *core.View, p *PendingApproval) *mcp.CallToolResult {
	var b [16]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	if err := g.markAsked(ctx, c.Target, v, p.ID, core.AskDigest(nonce)); err != nil {
		g.core.Log.Warn("mcpbind: asking the user to approve a transition", "key", core.Fingerprint(v.Key), "approval", p.ID, "error", err)
		return nil
	}
	// The result type is not exported: a result decoded from the wire
	// carries it, as the server's own tool path would set it.
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"input_required"}`), &res); err != nil || !res.NeedsInput() {
		g.core.Log.Error("mcpbind: cannot make an input-required result", "error", err)
		return nil
	}
	res.InputRequests = mcp.InputRequestMap{approvalInput: g.approvalQuestion(p)}
	res.RequestState = p.ID + "." + nonce
	return &res
}

// markAsked records in the workflow's pending approval id the digest of
// the request state of the question asked.
func (g *Gate) markAsked(ctx context.Context, t core.Target, v *core.View, id, ask string) error {
	_, err := g.core.Rewrite(ctx, t, v, func(v *core.View, snap []byte) (core.Record, bool, error) {
		if p := g.core.PendingOf(v); p == nil || p.ID != id || v.Rec.Approval == nil {
			return core.Record{}, false, fmt.Errorf("mcpbind: approval %s is no longer pending: %w", id, ErrUnknownApproval)
		}
		rec := v.Rec
		rec.Snap = snap
		a := *v.Rec.Approval
		a.Ask = ask
		rec.Approval = &a
		return rec, false, nil
	})
	return err
}

// inputAnswered answers the retry of a workflow_transition call that
// carries the client's answer to an input-required question
// (params.requestState): it grants or rejects the approval the request
// state names, if that is the question the workflow's approval was asked
// with and it still waits.
func (g *Gate) inputAnswered(ctx context.Context, c *core.Call) (mcp.Result, error) {
	v, err := g.core.Load(ctx, c.Target)
	if err != nil {
		return mcpAnswer(g.core.LoadFailed(ctx, c, err))
	}
	req := mcpOf(c).req
	id, nonce, _ := strings.Cut(req.Params.RequestState, ".")
	p := g.core.WaitingFor(v)
	if p == nil || p.ID != id || v.Rec.Approval == nil || v.Rec.Approval.Ask == "" ||
		!hmac.Equal([]byte(core.AskDigest(nonce)), []byte(v.Rec.Approval.Ask)) {
		if err := g.core.Answered(core.DecodeHistory(v.Rec.History, v.Key), id); err != nil {
			return toolError(fmt.Sprintf("This answer was not applied: %v.", strings.TrimPrefix(err.Error(), "mcpbind: "))), nil
		}
		return toolError("This answer was not applied: it answers no question the workflow's pending approval was asked with (the request state is unknown, or was replaced by a newer question)."), nil
	}
	resp, _ := req.Params.InputResponses[approvalInput].(*mcp.ElicitResult)
	approve, answered := false, false
	if resp != nil && resp.Action == "accept" {
		approve, answered = resp.Content["approve"].(bool)
	}
	if !answered {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "The user did not answer; the transition is still pending " + g.core.PendingText(p) + ". " + core.PendingHelp}}}, nil
	}
	by, authd := requestAuthor(c)
	tr, err := g.core.Grant(ctx, c.Target, v, ApprovalGrant{ID: id, Approved: approve, By: by, Channel: ChannelInputRequired, Authenticated: authd})
	if err != nil {
		return toolError(fmt.Sprintf("This answer was not applied: %s.", strings.TrimPrefix(err.Error(), "mcpbind: "))), nil
	}
	after, err := g.core.Load(ctx, c.Target)
	if err != nil {
		after = v
	}
	c.Event = tr.Event
	return g.transitionAnswer(ctx, c, core.Committed{From: v, After: after, Tr: tr}, false), nil
}

// requestAuthor returns who answered an MCP channel: the user the
// request's authorization names (authenticated), else "user".
func requestAuthor(c *core.Call) (string, bool) {
	if d := mcpOf(c); d != nil && d.req.Extra != nil && d.req.Extra.TokenInfo != nil && d.req.Extra.TokenInfo.UserID != "" {
		return d.req.Extra.TokenInfo.UserID, true
	}
	return "user", false
}
