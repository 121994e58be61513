// This file defines approvals as callers see them: the pending approval,
// the grants that answer it, and their errors.

package gate

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PendingApproval is a transition that waits for a person: the approval
// state's description (its [Approval]) and the object the gate made when
// the workflow entered that state. The ID names it in every message about
// it; it is answered once, and not after Expires.
type PendingApproval struct {
	Approval
	ID      string    `json:"id"`      // random, 40 hex digits (160 bits)
	Asked   time.Time `json:"asked"`   // when the workflow entered the approval state
	Expires time.Time `json:"expires"` // it cannot be approved from then on
}

// Expired reports whether the approval can no longer be approved at now.
func (p *PendingApproval) Expired(now time.Time) bool { return !now.Before(p.Expires) }

// Text describes the approval for people and agents, naming its id,
// the transition and its expiry.
func (p *PendingApproval) Text() string {
	return fmt.Sprintf("approval %s: %s to %s on %s%s (expires %s)", p.ID, strconv.Quote(p.From), strconv.Quote(p.To), p.Event,
		messageText(p.Message), p.Expires.UTC().Format(time.RFC3339))
}

// The channels through which a person answers an approval, as the run
// history records them ([ApprovalGrant].Channel).
const (
	// ChannelCommand: chartgate approve (Gate.Approve), with a token made
	// with the approver key.
	ChannelCommand = "command"
	// ChannelElicitation: the client's user, asked by MCP elicitation
	// (protocol versions before 2026-07-28).
	ChannelElicitation = "elicitation"
	// ChannelInputRequired: the client's user, asked by an input-required
	// result the client answered on retry (SEP-2322, protocol 2026-07-28).
	ChannelInputRequired = "input-required"
	// ChannelPage: the page of chartgate ui, with a token made with the
	// approver key by the person who started it.
	ChannelPage = "page"
	// ChannelExpiry: the gate, rejecting an approval that expired when
	// someone tried to approve it.
	ChannelExpiry = "expiry"
)

// ApprovalGrant is the answer to an approval, as a transition's entry in
// the run history keeps it ([Transition].Approval).
type ApprovalGrant struct {
	ID       string `json:"id"`       // the approval's id
	Approved bool   `json:"approved"` // false: rejected
	By       string `json:"by"`       // who answered
	Channel  string `json:"channel"`  // how (Channel*)
	// Authenticated reports whether By was proven, not only claimed: the
	// OS user running chartgate approve, or the user an MCP request's
	// authorization names.
	Authenticated bool `json:"authenticated"`
}

// Grant is a person's answer to a pending approval, given to
// [Gate.Approve] by an out-of-band command (chartgate approve).
type Grant struct {
	ID            string    // the approval's id
	Approve       bool      // false rejects it
	By            string    // who answers
	Authenticated bool      // By is the OS user who ran the command, not only a claim
	Time          time.Time // when the person answered; the token covers it
	Token         string    // ApprovalToken(key, ID, Approve, By, Time), with Options.ApproverKey
	// Channel is how the person answered, for the run history:
	// ChannelCommand (the default) or ChannelPage.
	Channel string
}

// ApprovalToken returns the token that proves a [Grant] was made by the
// holder of the approver key: hex(HMAC-SHA256(key, id|decision|by|time)),
// decision "approve" or "reject", time in Unix nanoseconds.
func ApprovalToken(key []byte, id string, approve bool, by string, t time.Time) string {
	m := hmac.New(sha256.New, key)
	decision := "reject"
	if approve {
		decision = "approve"
	}
	m.Write([]byte(id + "|" + decision + "|" + by + "|" + strconv.FormatInt(t.UnixNano(), 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// Errors of [Gate.Approve] and [Gate.FindApproval], matched with
// errors.Is; their messages name the approval.
var (
	// ErrNoPendingApproval: the workflow waits for no approval.
	ErrNoPendingApproval = errors.New("mcpbind: no transition of the workflow waits for approval")
	// ErrUnknownApproval: no workflow waits for an approval of that id.
	ErrUnknownApproval = errors.New("mcpbind: no pending approval has this id")
	// ErrApprovalUsed: the approval was already approved or rejected;
	// each is answered once.
	ErrApprovalUsed = errors.New("mcpbind: the approval was already answered")
	// ErrApprovalExpired: the approval expired; trying to approve it
	// rejects it.
	ErrApprovalExpired = errors.New("mcpbind: the approval expired")
	// ErrApprovalToken: the grant's token is missing or does not verify
	// with Options.ApproverKey (or the gate has no key).
	ErrApprovalToken = errors.New("mcpbind: the grant is not signed with the approver key")
)

// IsApprovalID reports whether s has the form of an approval id (40
// lower-case hex digits), as opposed to a workflow id (32).
func IsApprovalID(s string) bool {
	return len(s) == 40 && strings.Trim(s, "0123456789abcdef") == ""
}

// Approval describes a transition that waits, in a state of its own, for a
// person to approve or reject it: the machine leaves that state on
// [EventApprove] (to To) or [EventReject] (back to From). Events whose type
// starts with "chartgate." are reserved: no tool sends them, and
// workflow_transition refuses them; only [Gate.Approve] does.
type Approval struct {
	Event   string `json:"event"`             // the event that asked for the transition
	From    string `json:"from"`              // the state it left
	To      string `json:"to"`                // the state it goes to once approved
	Message string `json:"message,omitempty"` // what the approver is asked
}

// The events of an approval.
const (
	EventApprove = "chartgate.approve"
	EventReject  = "chartgate.reject"
)

// messageText is an approval's message for prose: ": message" or "".
func messageText(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}
