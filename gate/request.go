// This file defines a request to act on a workflow, the decision on it,
// the outcome a caller commits, and Decider, the interface a front door
// that is not an MCP server (an agent host's hooks) uses.

package gate

import (
	"context"
	"encoding/json"

	"github.com/chartgate/chartgate/statechart"
)

// Request is a request to act on a workflow: a call of a tool the
// workflow may gate, with its arguments, from a caller that runs the
// tool itself (an agent host's own tool, a tool of an MCP server).
type Request struct {
	// Ref names the workflow.
	Ref Ref
	// Tool is the tool's name as the workflow's rules name it.
	Tool string
	// Args are the call's arguments, a JSON object (nil for none). A
	// guard reads them as event.input.
	Args json.RawMessage
	// Tools lists the names of the tools the caller may call, for the
	// refusal's guidance (the tools available now, the path to the tool).
	// Nil lists none.
	Tools []string
	// Workflow, if set, is the workflow Ref names as the caller read it
	// (with [Decider.WorkflowOf]) for the same event: Decide decides on it
	// instead of loading it again. A hook reads its workflow once per
	// event so.
	Workflow *Workflow
	// TransitionTool names the tool through which the caller sends events
	// (a gateway's workflow_transition), if it has one: a refusal's path
	// may then go through it.
	TransitionTool string
}

// Decision is the answer to a [Request]: whether the tool may run now,
// and if not why, with guidance.
type Decision struct {
	Allowed bool
	// Refusal says why not, in a structure callers branch on (its Code)
	// and show (the tools available now, the path, the instructions).
	Refusal *Refusal
	// Text is the refusal in prose, for the model.
	Text string
}

// Outcome is what a tool did, as [Decider.Commit] records it.
type Outcome struct {
	// Failed reports that the tool failed: the call is counted, and its
	// event is not sent.
	Failed bool
	// Output is the tool's structured result, a JSON value (nil for
	// none); a guard reads it as event.output.
	Output json.RawMessage
}

// Decider is a gate as a caller outside MCP uses it: decide whether a
// tool may run, commit what it did, send an event, read a workflow. It is
// implemented by mcpbind.Gate; package hook takes one.
type Decider interface {
	// States returns the meta.mcp rules of the machine's states.
	States() []StateMCP
	// Decide decides whether the request's tool may run now, as a call of
	// it through the gate's MCP server would be decided: visible in the
	// current state, within the budgets, its arguments acceptable. A tool
	// the workflow does not gate is allowed (unless the gate denies by
	// default). Decide holds nothing: the tool may run once allowed.
	Decide(ctx context.Context, r Request) (Decision, error)
	// Commit records a call of the request's tool that ran: it is counted
	// against the budgets of the active states, and unless it failed the
	// tool's event is sent and the new state saved. It returns the
	// transition, or nil if the workflow did not move. The tool ran
	// whatever the workflow says now: Commit does not refuse it.
	Commit(ctx context.Context, r Request, o Outcome) (*Transition, error)
	// Send sends an event to a workflow, by the sender by: it waits for a
	// call that holds the workflow. It returns the transition, or nil if
	// the event changed nothing.
	Send(ctx context.Context, ref Ref, ev statechart.Event, by string) (*Transition, error)
	// WorkflowOf returns the workflow ref names.
	WorkflowOf(ctx context.Context, ref Ref) (*Workflow, error)
	// Pending returns the approval the workflow waits for, or nil.
	Pending(ctx context.Context, ref Ref) (*PendingApproval, error)
}
