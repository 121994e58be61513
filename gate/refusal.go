// This file defines the answers of a gate: refusals with their codes and
// guidance, call budgets, and the status of a workflow.

package gate

import (
	"github.com/chartgate/chartgate/statechart"
)

// Codes of refused calls ([Refusal.Code]).
const (
	// CodeForbidden: the tool is not available in the workflow's current
	// state (MCP Fusion's FORBIDDEN).
	CodeForbidden = "FORBIDDEN"
	// CodeCallLimit: an active state's meta.mcp.maxCalls is used up; only
	// tools that move the workflow out of that state may run.
	CodeCallLimit = "CALL_LIMIT"
	// CodeWorkflowRequired: with handles, the call has no workflow id
	// argument; the start tool returns one.
	CodeWorkflowRequired = "WORKFLOW_REQUIRED"
	// CodeUnknownWorkflow: with handles, the workflow id names no workflow
	// (never started, or expired).
	CodeUnknownWorkflow = "UNKNOWN_WORKFLOW"
	// CodeWorkflowExpired: the session's workflow is no longer in the
	// store (it was not used for longer than the store keeps records, or
	// was deleted). It is not started again; a new session starts a new
	// workflow.
	CodeWorkflowExpired = "WORKFLOW_EXPIRED"
	// CodeRateLimited: the client called the start tool more often than
	// Options.StartLimit allows.
	CodeRateLimited = "RATE_LIMITED"
	// CodeWorkflowBusy: another call of the workflow that may send an
	// event was in progress for longer than Options.BusyWait.
	CodeWorkflowBusy = "WORKFLOW_BUSY"
	// CodeTooLarge: the call's arguments are larger than
	// Options.MaxArgumentBytes or nested deeper than 64 levels.
	CodeTooLarge = "TOO_LARGE"
	// CodeEventRefused: the tool is available, but the workflow would not
	// accept its event with the call's arguments now: the active states
	// handle the event, and every transition for it has a guard that
	// refuses it ([Refusal].Guards names them). The tool is not run.
	CodeEventRefused = "EVENT_REFUSED"
	// CodeWorkflowError: the machine fails on the event the call would
	// send (an action or guard returned an error), so the call is not
	// run: its event could not be recorded.
	CodeWorkflowError = "WORKFLOW_ERROR"
)

// CodeStateNotSaved is the code, under [MetaKey] in the result's _meta, of
// a call that ran but whose event could not be recorded.
const CodeStateNotSaved = "STATE_NOT_SAVED"

// Refusal describes a refused call (IsError true) under [MetaKey] in the
// result's _meta; the text content says the same in prose. It is not the
// result's structuredContent, which clients check against the tool's
// output schema.
type Refusal struct {
	Code string `json:"code"` // one of the Code constants
	Tool string `json:"tool"` // the tool that was called
	// Workflow is the workflow id the call named (with handles).
	Workflow string `json:"workflow,omitempty"`
	// State is the current state value, in XState's shape (null when the
	// call names no workflow).
	State any `json:"state"`
	// Available lists the tools that may be called now, in the server's
	// order.
	Available []string `json:"available"`
	// Path is the shortest sequence of tool calls after which Tool is
	// visible; empty when Reachable is false, or when Tool is bound to an
	// event that a guard refuses now. For the codes other than
	// CodeForbidden it is empty and Reachable false, except that
	// CodeWorkflowRequired and CodeUnknownWorkflow give the start tool as
	// the one step.
	Path      []Step `json:"path"`
	Reachable bool   `json:"reachable"`
	// Event and Guards are the event the call would send and the guards
	// that refuse it (CodeEventRefused).
	Event  string   `json:"event,omitempty"`
	Guards []string `json:"guards,omitempty"`
	// Limits lists the used-up call limits (CodeCallLimit).
	Limits []CallLimit `json:"limits,omitempty"`
	// Instructions are those of the active states (meta.mcp.instructions).
	Instructions []string `json:"instructions,omitempty"`
}

// Step is one tool call of a suggested path, or a wait for an actor that
// an active state invokes (a job, see the package documentation): then
// Tool is empty, Actor is the invoke's id, and Event is
// xstate.done.actor.<id> or xstate.error.actor.<id>.
type Step struct {
	Tool   string   `json:"tool"`
	Event  string   `json:"event"`
	Actor  string   `json:"actor,omitempty"`
	Guards []string `json:"guards,omitempty"` // guards the step relies on
}

// CallLimit is the call budget of one active state with
// meta.mcp.maxCalls.
type CallLimit struct {
	State string `json:"state"` // the state's path of keys ("payment.card"), or the machine id for the root
	Calls int    `json:"calls"` // calls that ran since the state became active
	Max   int    `json:"max"`   // its maxCalls
	// Warn: the state's meta.mcp.onMaxCalls is "warn": calls past Max run,
	// with a checkpoint notice.
	Warn bool `json:"warn,omitempty"`

	// StateID is the state's id, which the record counts calls by.
	StateID string `json:"-"`
}

// WorkflowStatus is the structured result of workflow_status.
type WorkflowStatus struct {
	// Workflow is the workflow id (with handles).
	Workflow string            `json:"workflow,omitempty"`
	State    any               `json:"state"`  // the state value, in XState's shape
	Status   statechart.Status `json:"status"` // active, done, error or stopped
	// Tools lists the tools the session may call now.
	Tools []string `json:"tools"`
	// Events lists the events workflow_transition would send now with
	// effect (empty without workflow_transition).
	Events []string `json:"events"`
	// Limits gives the call budget of each active state with
	// meta.mcp.maxCalls: calls used of the maximum.
	Limits []CallLimit `json:"limits,omitempty"`
	// Instructions are those of the active states.
	Instructions []string `json:"instructions,omitempty"`
	// Pending is the transition that waits for a person's approval, if
	// any, with the approval's id and expiry: until it is approved or
	// rejected, no transition can be made.
	Pending *PendingApproval `json:"pending,omitempty"`
}

// TransitionResult is the structured result of workflow_transition.
type TransitionResult struct {
	Transitioned bool   `json:"transitioned"`
	Event        string `json:"event"`
	From         any    `json:"from"`
	To           any    `json:"to"`
	// ToolsChanged reports that the session's visible tools changed (a
	// notifications/tools/list_changed was sent).
	ToolsChanged bool `json:"toolsChanged"`
}
