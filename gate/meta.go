// This file defines the rules of meta.mcp as callers read them.

package gate

// StateMCP is the parsed "mcp" object of one state node's meta:
//
//	"meta": {
//	  "mcp": {
//	    "tools":        ["cart_pay", "cart_*"],
//	    "events":       {"cart_pay": "PAY"},
//	    "invalidates":  {"cart_pay": ["cart.*", "orders.*"]},
//	    "instructions": "Ask for the payment method, then call cart_pay.",
//	    "maxCalls":     10,
//	    "ungated":      ["help", "search_*"]   // the root state only
//	  }
//	}
//
// Every key is optional; no other key is allowed.
type StateMCP struct {
	// StateID is the id of the state node.
	StateID string
	// Tools lists the tools visible while this state is active: tool names,
	// or patterns where "*" matches any run of characters ("cart_*").
	Tools []string
	// Events maps tool names (exact, no patterns) to the event a successful
	// call of the tool sends. The map is machine-wide: it may be written on
	// any state, and two states may not give one tool different events.
	Events map[string]string
	// Invalidates maps tool names (exact, no patterns) to the statesync
	// globs ("cart.*", see [statesync.Glob]) that the transition a call of
	// the tool causes makes stale (see [Binding.Invalidates]). Like Events
	// it is machine-wide: it may be written on any state, the lists given
	// to one tool on several states add up, and the tool must send an event
	// (meta.mcp.events).
	Invalidates map[string][]string
	// Instructions tell the model what to do in this state. They are
	// returned, for the active states, with every refused call.
	Instructions string
	// MaxCalls bounds the calls of the workflow's tools that may run while
	// this state is active; 0 means no limit. Once they are used up, only
	// tools that take the workflow out of the state may run (see the
	// package documentation, "Call limits").
	MaxCalls int
	// OnMaxCalls says what happens to a call once MaxCalls is used up:
	// "refuse" (the default: only calls that leave the state run) or
	// "warn" (every call runs, and its result ends with a checkpoint notice
	// telling the agent to move the workflow on: Statewright's soft
	// max_iterations).
	OnMaxCalls string
	// Approval marks a state in which a transition waits for a person's
	// approval (see the package documentation, "Approvals").
	Approval *Approval
	// Deny lists tools (names or patterns) hidden while this state is
	// active, whatever the Tools of any state say (Statewright's
	// disallowed_tools).
	Deny []string
	// OutputGuards lists tools (exact names) whose event is decided after
	// the tool ran, with its result: the guards of their event read
	// event.output. Like Events it is machine-wide. Every other tool whose
	// event the active states handle, but whose guards all refuse it with
	// the call's arguments, is refused before it runs (see the package
	// documentation of mcpbind, "The event").
	OutputGuards []string
	// Ungated lists tools (names or patterns) that are not part of the
	// workflow: with [Options.DefaultDeny], the tools the machine does not
	// name are refused, except these. It applies to the whole machine and
	// is allowed on the root state only.
	Ungated []string
}
