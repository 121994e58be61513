// This file defines a call as the core takes it through the steps, and
// the front door it came through (Door).

package core

import (
	"context"
	"time"

	"github.com/chartgate/chartgate/gate"
	"github.com/chartgate/chartgate/statechart"
)

// callKind says what a gated call is.
type callKind uint8

const (
	CallTool       callKind = iota // a tool of the server (or, in a gateway, of an upstream server)
	CallStatus                     // workflow_status
	CallTransition                 // workflow_transition
	CallSend                       // Send: an event from outside an MCP request
)

// Call is one gated call on its way through the steps.
type Call struct {
	// Door is the front door the call came through, for what only it
	// knows; nil for a caller outside any transport (a hook's Decide and
	// Commit, Send, a job's report).
	Door    Door
	Name    string
	Kind    callKind
	Rules   *Rules
	Info    *ToolInfo      // how the tool is gated; unboundInfo for the workflow tools
	Wf      *WorkflowTools // the attachment's workflow tools, if any
	Target  Target
	Handles bool // the workflow is named by a handle
	// ListsVary: the session's tool list follows its workflow, and it gets
	// list_changed (sessions of protocols before 2026-07-28, unless
	// Options.ListAllTools).
	ListsVary bool
	ran       bool      // the tool already ran (Record): nothing to authorize
	Args      arguments // the call's arguments, checked and decoded
	// Event is the event workflow_transition or Send sends.
	Event statechart.Event
	By    string // who sent it, for Send
	// Report is what a job reports (jobs.go): the event is its done or
	// error event, processed with the engine's Deliver.
	Report *statechart.Report
	// grant is the answer an approval's event carries (approval.go); nil
	// for every other call, which cannot send an approval's event.
	grant *gate.ApprovalGrant

	// decided is what the call's authorization computed of its event, for
	// the commit to save instead of running the event again (to is nil
	// if it computed nothing).
	decided decidedEvent

	// tools are the names of the tools the caller may call; nil until
	// asked (toolNames), or given by a caller outside MCP.
	tools []string

	// now is the time of the call's steps before its tool runs (load,
	// authorize, reserve), read once when the load step loads its
	// workflow; zero until then, and again after the call waited (for a
	// lease, after a conflict).
	now time.Time
}

// callTime returns the time of a call's steps before its tool runs:
// c.now, or Core.Now if it is not set.
func (g *Core) callTime(c *Call) time.Time {
	if !c.now.IsZero() {
		return c.now
	}
	return g.Now()
}

// processTime returns the process' clock for a call's own timers (its
// lease's renewals, its wait for a lease): the call's time if Core.Now is
// the process' clock, else time.Now.
func (g *Core) processTime(c *Call) time.Time {
	if g.realClock && !c.now.IsZero() {
		return c.now
	}
	return time.Now()
}

// Door is what the steps of a call ask of the front door it came
// through. Its answers (any) are the door's own; the steps hand them back
// to it.
type Door interface {
	// Resolve translates the door's request into a call, and the context
	// the call runs under. It returns a nil call and the answer for a
	// request that is not a gated call, or that it answers itself.
	Resolve(ctx context.Context) (context.Context, *Call, any, error)
	// ToolNames lists the tools of the server the call is for.
	ToolNames(ctx context.Context) ([]string, error)
	// UnknownTool answers a call of a tool the server does not have, as
	// the server itself does.
	UnknownTool(ctx context.Context) (answer any, err error)
	// LoadFailed answers a call whose workflow could not be loaded.
	LoadFailed(ctx context.Context, c *Call, err error) (answer any, rerr error)
	// Status answers the workflow_status tool in the state v.
	Status(ctx context.Context, c *Call, v *View) (answer any, err error)
	// StoreFailed is the error of a call the store failed before the
	// tool ran.
	StoreFailed(err error) error
	// Run runs the call's tool and returns its answer and what it did.
	Run(ctx context.Context, c *Call) (answer any, did ToolOutcome, err error)
	// FollowUps adds to a committed call what the door does after it (the
	// budgets that warn, a server's follow-up events), in the state v.
	FollowUps(ctx context.Context, c *Call, v *View, out Committed, answer any, err error) Committed
	// Notify tells the door's client what the call did and returns the
	// answer.
	Notify(ctx context.Context, c *Call, before *View, out Committed, answer any, err error) (any, error)
}

// ToolNames returns the names of the tools of the call's server (asked of
// its front door, once per call), or those a caller outside MCP gave.
func (g *Core) ToolNames(ctx context.Context, c *Call) ([]string, error) {
	if c.tools != nil || c.Door == nil {
		return c.tools, nil
	}
	tools, err := c.Door.ToolNames(ctx)
	if err == nil {
		c.tools = tools
	}
	return tools, err
}

// serialised reports whether the call takes the workflow's lease: it may
// send an event, so no other such call of the workflow may run between
// its authorisation and the saving of its event.
func (c *Call) serialised() bool {
	return c.Kind == CallTransition || c.Kind == CallSend || (c.Kind == CallTool && c.Info.Event != "")
}

// LoadFailed answers a call whose workflow could not be loaded: a caller
// outside any transport, and Send, get the error itself.
func (g *Core) LoadFailed(ctx context.Context, c *Call, err error) (any, error) {
	if c.Kind == CallSend || c.Door == nil {
		return nil, err
	}
	return c.Door.LoadFailed(ctx, c, err)
}
