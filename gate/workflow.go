// This file defines the names of workflows and what a gate keeps of them:
// Ref, Workflow, Transition and WorkflowInfo.

package gate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chartgate/chartgate/statechart"
)

// Ref names a workflow for a caller outside an MCP request: by the
// workflow id the start tool returned (a handle), or by a name, the one
// [Options.SessionKey] gives a session's workflow.
type Ref struct {
	ID   string
	Name string
}

// ErrWorkflowBusy is matched by the error of [Gate.Send] when another call
// held the workflow for longer than Options.BusyWait.
var ErrWorkflowBusy = errors.New("mcpbind: the workflow is busy")

// WorkflowInfo describes one workflow the store holds, for
// [Gate.Workflows].
type WorkflowInfo struct {
	// Ref names it: by ID (a handle) or Name (a named session's); empty
	// for the workflow of a session without a name, known by Key only.
	Ref     Ref
	Key     string
	State   any               // the state value, in XState's shape
	Status  statechart.Status // active, done, error or stopped
	Pending *PendingApproval  // the transition that waits for approval, if any
	// Updated is the time of the newest entry of its run history (zero
	// if it has none).
	Updated time.Time
	// Version is the Options.WorkflowVersion of the gate that last saved
	// it ("" if none was set).
	Version string
	// Refused, if not nil, is why this gate refuses the workflow: it was
	// saved by another version of the workflow that this one cannot take
	// over. State and Status are then unset.
	Refused *VersionError
}

// ErrNoListing is matched by the error of [Gate.Workflows] when the
// store cannot list its keys (it does not implement [Lister]).
var ErrNoListing = errors.New("mcpbind: the store cannot list its workflows")

// ErrUnknownWorkflow is matched (errors.Is) by the error of [Gate.Workflow]
// for a handle that names no workflow: never started, or expired from the
// store.
var ErrUnknownWorkflow = errors.New("mcpbind: unknown or expired workflow")

// ErrWorkflowExpired is matched (errors.Is) by the error of
// [Gate.SessionWorkflow] and [Gate.State] for a session whose workflow had
// been saved and is no longer in the store (it expired, or was deleted).
// The gate refuses the session's gated calls with CodeWorkflowExpired: the
// workflow is not started again, since what it had allowed once would be
// allowed again.
var ErrWorkflowExpired = errors.New("mcpbind: the session's workflow expired")

// Workflow is what the gate keeps of one workflow, for the server.
type Workflow struct {
	Key   string           // the store key
	State statechart.State // the current state, delayed transitions applied
	// Limits gives the call budget of each active state with
	// meta.mcp.maxCalls.
	Limits []CallLimit
	// History holds the workflow's newest transitions, oldest first, at
	// most [Options.HistoryLimit].
	History []Transition
	// Pending is the approval the workflow waits for, if any.
	Pending *PendingApproval
	// Snapshot is what the gate that read the workflow keeps of it, so
	// that a [Request] naming this Workflow is decided without loading
	// it again; nil in a Workflow made otherwise.
	Snapshot any `json:"-"`
}

// Transition describes a saved transition, for [Options.OnTransition] and
// the run history ([Workflow.History]).
type Transition struct {
	Key  string `json:"-"`            // the store key of the workflow
	Tool string `json:"tool"`         // the tool whose successful call sent the event ("" for Send)
	By   string `json:"by,omitempty"` // who sent the event with Gate.Send (an approver, a hook); "actor:<id>" for a job's result
	// Approval is set on the transition that answered an approval: its
	// id, the answer, who gave it through which channel, and whether who
	// was authenticated.
	Approval *ApprovalGrant `json:"approval,omitempty"`
	// Outcome is set on the history entries that record a call rather
	// than a transition (Options.AuditCalls): "ran", "failed" (the tool
	// reported an error) or the code of its refusal. Event is then empty
	// and To nil; From is the state the call found.
	Outcome string           `json:"outcome,omitempty"`
	Event   statechart.Event `json:"event"` // the event, in the documented shape (its data is the call's arguments and result)
	From    any              `json:"from"`  // state value before
	To      any              `json:"to"`    // state value after
	Time    time.Time        `json:"time"`
}

// Binding binds one tool in Go (tool-centric, like MCP Fusion's
// bindState(states, event)).
type Binding struct {
	// States lists the states in which the tool is visible: "#id" for a
	// state id, otherwise the path of state keys from the root ("payment",
	// "payment.card"), or else a state id. A compound or parallel state
	// counts as active while any of its descendants is.
	//
	// With no States, the tool is visible exactly when the machine would
	// handle Event in the current state (XState's snapshot.can, with guards
	// evaluated on the event without input); Event is then required.
	States []string
	// Event is the event type sent after a successful call; "" sends none.
	Event string
	// Invalidates lists the statesync globs ("cart.*", see
	// [statesync.Glob]) naming the data that the transition the call causes
	// makes stale. After a successful call whose event the machine accepted
	// and whose new state the gate saved, the gate reports them with
	// [statesync.Invalidate] on the request's context, and the statesync
	// layer wrapping the gate adds them to the call's invalidation notice
	// (see the package documentation, "With statesync"). Event is then
	// required.
	Invalidates []string
	// OutputGuards says that the guards of Event read the tool's result
	// (event.output): the call is not refused before it runs when they
	// refuse the event without it. Event is then required.
	OutputGuards bool
}

// VersionError is the error of a workflow whose record was saved by
// another version of the workflow definition, and which this version
// cannot take over: states that were active then are no longer states of
// the workflow (Missing), or the active configuration is no longer legal
// (Reason). The gate refuses the workflow's calls with it until a person
// resets the workflow or brings back the version that saved it.
type VersionError struct {
	Key      string   // the workflow's store key
	Stored   string   // the version that saved the record
	Current  string   // this gate's version
	Missing  []string // active state ids that this version has not
	Reason   error    // why the state could not be restored otherwise
	Workflow string   // the workflow for a command line: an id, or name:NAME
}

func (e *VersionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpbind: workflow %s was saved by workflow version %s", e.Workflow, e.Stored)
	if len(e.Missing) > 0 {
		quoted := make([]string, len(e.Missing))
		for i, id := range e.Missing {
			quoted[i] = strconv.Quote(id)
		}
		fmt.Fprintf(&b, ", and its active states %s are not states of this version (%s)", strings.Join(quoted, ", "), e.Current)
	} else {
		fmt.Fprintf(&b, ", and this version (%s) cannot take its state over: %v", e.Current, e.Reason)
	}
	fmt.Fprintf(&b, "; a person runs chartgate reset %s to start it again from the initial state, or serves version %s again to finish it", e.Workflow, e.Stored)
	return b.String()
}

// Unwrap returns the error of restoring the state.
func (e *VersionError) Unwrap() error { return e.Reason }
