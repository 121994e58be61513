// This file holds the methods of Gate that its core answers: reading
// workflows and approvals, the machine, jobs.

package mcpbind

import (
	"context"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/internal/core"
	"github.com/chartgate/chartgate/statechart"
)

// Engine returns the engine the gate runs.
func (g *Gate) Engine() statechart.Engine { return g.core.Engine() }

// States returns the parsed meta.mcp of the state nodes that have one, in
// document order.
func (g *Gate) States() []StateMCP { return g.core.States() }

// Approval returns the approval the workflow ref names waits for. Unlike
// [Gate.Pending], a workflow without a record (a name no session used) is
// [ErrUnknownWorkflow]; one that waits for none is [ErrNoPendingApproval].
func (g *Gate) Approval(ctx context.Context, ref Ref) (*PendingApproval, error) {
	return g.core.Approval(ctx, ref)
}

// FindApproval returns the workflow that waits for the approval id, and
// the approval. It searches the store (which must implement [Lister]);
// an id that no workflow waits for is [ErrUnknownApproval], or
// [ErrApprovalUsed] if a workflow's run history records its answer.
func (g *Gate) FindApproval(ctx context.Context, id string) (Ref, *PendingApproval, error) {
	return g.core.FindApproval(ctx, id)
}

// Pending returns the approval a workflow waits for, or nil.
func (g *Gate) Pending(ctx context.Context, ref Ref) (*PendingApproval, error) {
	return g.core.Pending(ctx, ref)
}

// Close stops the gate's jobs: their contexts are cancelled, their
// results dropped, and Close returns once every job's function and the
// gate's own goroutines for them have returned (a [statechart.Promise]
// must return when its ctx is cancelled). Their leases stay in the store
// and expire after Options.LeaseTTL; another instance then resumes the
// jobs ([Gate.ResumeJobs]). After Close the gate claims no job; it
// otherwise goes on serving calls. Close also stops following the store's
// changes (see [Watcher]). Close is safe to call more than once.
func (g *Gate) Close() error { return g.core.Close() }

// ResumeJobs starts, in this gate, the jobs of the workflows in the store
// that no instance runs: the promise children of their active states
// whose lease expired (the instance that ran them died, or was closed) or
// that were never claimed. A job is run again from the start with its
// persisted input, as XState restarts a promise child of a restored
// snapshot. It returns the number of jobs started. The store must
// implement [Lister]; without actors in the machine there is nothing to
// do. See [Options.ResumeJobsEvery] to call it periodically.
func (g *Gate) ResumeJobs(ctx context.Context) (int, error) { return g.core.ResumeJobs(ctx) }

// Workflow returns the workflow a handle names (the id the start tool
// returned). For an id that names none (never started, or expired from the
// store) the error matches [ErrUnknownWorkflow].
func (g *Gate) Workflow(ctx context.Context, id string) (*Workflow, error) {
	return g.core.Workflow(ctx, id)
}

// WorkflowOf returns the workflow a Ref names. A named workflow that has
// no record is in its initial state; a handle that names none is
// [ErrUnknownWorkflow].
func (g *Gate) WorkflowOf(ctx context.Context, ref Ref) (*Workflow, error) {
	return g.core.WorkflowOf(ctx, ref)
}

// Workflows lists the workflows of this gate's machine that the store
// holds (those under Options.KeyPrefix), sorted by key. The store must
// implement [Lister].
func (g *Gate) Workflows(ctx context.Context) ([]WorkflowInfo, error) { return g.core.Workflows(ctx) }

// Sessions returns the number of sessions whose workflow state the gate
// holds a key for (sessions that saved a transition and have not ended).
func (g *Gate) Sessions() int { return g.core.Sessions() }

// Decide implements [gate.Decider]: it decides whether a tool may run now
// in the workflow r.Ref names, as a tools/call of it would be decided:
// visible in the current state, within the budgets, its arguments
// acceptable. A tool the workflow does not gate is allowed (unless
// Options.DefaultDeny).
func (g *Gate) Decide(ctx context.Context, r gate.Request) (gate.Decision, error) {
	return g.core.Decide(ctx, r)
}

// Commit implements [gate.Decider]: it records a call of a tool that ran
// outside an MCP request (a host's own tool, reported after it ran): it is
// counted against the budgets of the active states, and unless it failed
// the tool's event is sent, with the arguments and o.Output, and saved, as
// after a tools/call. It returns the transition, or nil if the workflow
// did not move. The tool ran whatever the workflow says now: Commit does
// not refuse it (Decide did, or did not, before).
func (g *Gate) Commit(ctx context.Context, r gate.Request, o gate.Outcome) (*Transition, error) {
	return g.core.Commit(ctx, r, o)
}

// Send sends an event to a workflow from outside an MCP request, as
// workflow_transition would, but any event, the reserved ones (chartgate.*)
// included: it waits for a call of the workflow that holds it, and the
// transition is saved, kept in the run history with By as who sent it,
// logged and passed to Options.OnTransition. It returns the transition,
// or nil if the event changed nothing.
func (g *Gate) Send(ctx context.Context, ref Ref, ev statechart.Event, by string) (*Transition, error) {
	return g.core.Send(ctx, ref, ev, by)
}

// Approve answers the approval a workflow waits for, from a command a
// person ran (chartgate approve): the grant's token must verify with
// Options.ApproverKey ([ApprovalToken]) and be made within minutes of the
// gate's clock, and the workflow must wait for the approval gr.ID. ref
// may be empty: the approval is then found by its id ([Gate.FindApproval]).
// The transition is recorded with an [ApprovalGrant] (channel "command").
//
// An approval is answered once: a second grant of the same id fails with
// [ErrApprovalUsed]. An expired one is rejected instead of approved
// (recorded with channel "expiry") and the error matches
// [ErrApprovalExpired].
func (g *Gate) Approve(ctx context.Context, ref Ref, gr Grant) (*Transition, error) {
	return g.core.Approve(ctx, ref, gr)
}

// Reserve decides a request as a tools/call of its tool would be decided
// (visible in the current state, within the budgets, its arguments and
// event acceptable) and, if the tool may run, reserves its place as the
// call would before its handler runs: it is counted against the budgets of
// the active states and, if it may send an event, holds the workflow's
// lease. It returns the decision and, when allowed, the Reservation to
// commit once the tool ran. A tool the workflow does not gate is allowed
// and holds nothing. A refusal is kept in the run history under
// Options.AuditCalls, as a tools/call's is.
func (g *Gate) Reserve(ctx context.Context, r gate.Request) (gate.Decision, *Reservation, error) {
	d, rv, err := g.core.Reserve(ctx, r)
	if rv == nil {
		return d, nil, err
	}
	return d, &Reservation{rv}, err
}

// Reservation is the place an allowed request holds in its workflow until
// its outcome is committed. Commit it exactly once, also when the tool did
// not run (Outcome.Failed): until then no other request of the workflow
// whose tool may send an event runs (it waits up to Options.BusyWait), and
// the lease is renewed; if the process dies, it expires after
// Options.LeaseTTL.
type Reservation struct{ r *core.Reservation }

// Commit records what the reserved tool did, as a tools/call's result is
// recorded: unless it failed, the tool's event is sent with the request's
// arguments and o.Output, and the new state saved, in the write that
// releases the workflow. It returns the transition, or nil if the workflow
// did not move.
func (rv *Reservation) Commit(ctx context.Context, o gate.Outcome) (*Transition, error) {
	return rv.r.Commit(ctx, o)
}
