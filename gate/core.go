// This file composes the steps of a request to act on a workflow, in the
// order the README lists them. Every front door goes through it: the MCP
// middleware (a tools/call, workflow_transition), the hooks (Decide and
// Commit of a host's own tool), Send, the follow-up events of a call, an
// approval's grant (chartgate approve and the MCP channels) and a job's
// result. Each door differs only in what its request carries (a tool to
// run, one that already ran, an event) and in how it translates the answer.

package gate

import "context"

// Steps is a request on its way through the steps, as the gate that
// implements them (package mcpbind) makes it for a front door. A step
// that stops the request returns false and keeps its answer (a refusal,
// an error, the status asked for) for the front door to translate.
type Steps interface {
	// Resolve decides whether the request is gated and which workflow it
	// acts on; the context it returns carries what later steps and the
	// tool's handler read of that (the workflow's handle).
	Resolve(ctx context.Context) (context.Context, bool)
	// Load reads the workflow's state, delayed transitions applied.
	Load(ctx context.Context) bool
	// Authorize decides whether the tool may run now: visible, within its
	// budget, its arguments and event acceptable. A tool that already ran
	// and an event sent from outside the agent are not refused.
	Authorize(ctx context.Context) bool
	// Reserve saves the request's place: counted against the budgets and,
	// for a request that may send an event, the workflow's lease.
	Reserve(ctx context.Context) bool
	// Run runs the tool (nothing for an event, or a tool that ran).
	Run(ctx context.Context)
	// Commit sends the request's event to the workflow, saves the new
	// state and releases the lease, then sends the events that follow
	// the call.
	Commit(ctx context.Context)
	// Notify tells the caller, the sessions, the log and the
	// transition's observers what the request did.
	Notify(ctx context.Context)
}

// Do takes a request through every step, in order, until one stops it:
//
//	resolve    which workflow the request acts on
//	load       the workflow's state, delayed transitions applied
//	authorize  whether the tool may run now
//	reserve    the request's place: budgets and the workflow's lease
//	run        the tool
//	commit     the event sent, the new state saved, the lease released
//	notify     list_changed, invalidations, the log and OnTransition
func Do(ctx context.Context, s Steps) {
	ctx, ok := Reserve(ctx, s)
	if !ok {
		return
	}
	Finish(ctx, s)
}

// Reserve takes a request through the steps before its tool runs
// (resolve, load, authorize, reserve) and reports whether the tool may
// run; the context it returns is the one the tool and Finish get. A tool
// that runs in the caller's process (mcpbind's Reservation) runs between
// Reserve and Finish.
func Reserve(ctx context.Context, s Steps) (context.Context, bool) {
	ctx, ok := s.Resolve(ctx)
	return ctx, ok && s.Load(ctx) && s.Authorize(ctx) && s.Reserve(ctx)
}

// Finish takes a reserved request through the rest of the steps: run
// (nothing for a tool that already ran), commit and notify.
func Finish(ctx context.Context, s Steps) {
	s.Run(ctx)
	s.Commit(ctx)
	s.Notify(ctx)
}

// Decide takes a request through the steps that decide it (resolve,
// load, authorize) and reports whether its tool may run now. It holds
// nothing: a hook's tool runs in another process, and Do with a request
// for the tool that ran records it.
func Decide(ctx context.Context, s Steps) bool {
	ctx, ok := s.Resolve(ctx)
	return ok && s.Load(ctx) && s.Authorize(ctx)
}
