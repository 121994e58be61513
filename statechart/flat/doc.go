// Package flat runs flat finite-state machines: the subset of XState v5
// machine configs with one level of states, string targets and final
// states, and nothing else. It is a small, fast fallback for the full
// interpreter in package statechart: a transition is one lookup in a table
// built at compile time. It implements the same [statechart.Engine]
// interface, so the MCP layer can run either.
//
// # The flat form
//
//	{
//	  "id": "checkout",
//	  "initial": "empty",
//	  "states": {
//	    "empty":     {"on": {"ADD_ITEM": "has_items"}},
//	    "has_items": {"on": {"ADD_ITEM": "has_items", "CHECKOUT": "payment"}},
//	    "payment":   {"on": {"PAY": "confirmed"}},
//	    "confirmed": {"type": "final"}
//	  }
//	}
//
// The machine has an optional "id" (default "(machine)"), an "initial"
// state and "states". A state has "on", mapping event types to targets, and
// an optional "type", "atomic" or "final". A target is the key of a state,
// or "#<id>" with the XState default id "<machine id>.<key>"; it may be
// written as an object with only a "target". "description" and "meta" are
// accepted everywhere XState accepts them, "version" and an empty "context"
// on the root. Everything else XState knows (nested states, guards,
// actions, entry and exit, always, after, tags, custom state ids, wildcard
// events, arrays of transitions) is rejected with an error saying that the
// config needs the full interpreter ([statechart.Compile]). [IsFlat] tells
// whether a config is in the flat form, to choose the engine.
//
// [Compile] reports every problem at once, each with its JSON path, as a
// [statechart.ErrorList]:
//
//	states.payment.on.PAY: "confirmd" is not a state (did you mean "confirmed"?)
//
// Input is limited to [MaxBytes], [MaxDepth] levels of nesting and
// [MaxStates] states; the nesting is checked without recursion.
//
// # Semantics
//
// The semantics are XState's, checked by package conformance against
// traces recorded from XState and against the full interpreter:
//
//   - An event the current state has no transition for is ignored: Send
//     returns the same state and no error.
//   - A transition to the current state (a self-loop) stays there.
//   - Entering a "final" state makes the status done, and every later
//     event is ignored, even one the final state has a transition for.
//   - Can reports whether the current state has a transition for the
//     event. Like XState's snapshot.can it ignores the status, so it may be
//     true in a done instance although Send will not take the transition.
//   - The event's other fields are ignored: there are no guards or actions.
//   - Advance does nothing: there are no delayed transitions.
//
// # States
//
// A [*State] is immutable and shared: each machine holds one per state, so
// Send allocates little. It marshals to the same persisted JSON as
// [statechart.Snapshot], so a state saved by either engine restores on
// the other ([Machine.Restore], [statechart.Machine.Restore]).
//
// # The transition table
//
// [Compile] numbers the event types and builds a table, state × event type
// → target state, so Send and Can look the event type up once in a map and
// then read one cell; Send allocates nothing. A machine whose table would
// be large and mostly empty (many states and many event types, each
// handled in few states) keeps only its transitions, in a map by cell, so
// memory stays proportional to the config. The table holds no instance
// state: one Machine serves any number of goroutines and instances.
//
// Earlier versions fired every event through a github.com/qmuntal/stateless
// state machine. Nothing this package exposes depended on it (a flat
// machine has no guards, actions, entry or exit, substates or reentry
// choice, and the package offers no graph export), so the engine no longer
// calls stateless. A program with its own stateless machine runs it as an
// Engine with package statechart/statelessengine; conformance/bench runs
// stateless as the reference for the speed of a flat transition.
package flat
