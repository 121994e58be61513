// Package statechart loads XState v5 machine configs from JSON and runs
// them with XState's semantics: hierarchical, parallel, final and history
// states; guarded, eventless (always) and delayed (after) transitions;
// entry, exit and transition actions; context; done events; tags and meta.
// XState itself is the judge: conformance/ replays traces recorded from the
// xstate npm package against this package.
//
// # Loading
//
// [Compile] reads the JSON that Stately Studio exports, or a
// createMachine({...}) config written as JSON, validates it and returns an
// immutable [*Machine]. Every problem is reported with its JSON path:
//
//	states.payment.on.PAY[1].target: "#nope" is not a state id
//
// What XState accepts, Compile accepts too, and runs as XState does. What
// is most likely a mistake comes back as a warning, with its path, from
// [Machine.Warnings]: unknown keys (ignored, with a did-you-mean hint, so
// that "intial" stays visible), XState v4 and TypeScript-only keys
// (predictableActionArguments, tsTypes, types; a transition's "cond", which
// v5 ignores, leaving the transition unguarded), negative delays, empty
// action names and empty guards, infix wildcards. [Options.Strict] makes
// every warning an error:
//
//	states.cart.on.ADD.cond: warning: "cond" is ignored: it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)
//
// A state with an id and a "route" is reached from anywhere by the event
// {"type": "xstate.route", "to": "#id"}, as in XState.
//
// Guards and actions are referenced by name, as in XState. Implement them in
// Go ([GuardFunc], [ActionFunc]) or declaratively in JSON with
// [ParseImplementations]; XState's built-ins are written as declared
// objects: {"type": "xstate.and", "params": {"guards": [...]}}, xstate.or,
// xstate.not, xstate.stateIn, xstate.assign, xstate.raise, xstate.cancel
// and xstate.log.
//
// # Running
//
// An [Actor] is one running instance: [Actor.Send] processes an event as a
// macrostep, and delayed events fire from its [Clock] (a [SimulatedClock] in
// tests). The pure functions [Machine.Start], [Machine.Transition],
// [Machine.Advance] and [Machine.Can] do the same on immutable [*Snapshot]
// values, for callers that keep state elsewhere (a database, a shared
// store). A snapshot marshals to JSON and restores with [Machine.Restore]
// on another process, history and pending delayed events included.
// Restore accepts only a state the machine can be in — known states in a
// legal configuration, a value that agrees with it, history values its
// history states can hold, delayed events only while active — and says
// what is wrong otherwise; whatever it accepts, MarshalJSON writes back in
// a form Restore reads as the same snapshot. (A machine with history
// states can reach configurations that are not legal, as XState does, and
// Restore accepts those.)
//
// # Limits
//
// A machine is input: a gate compiles configs it did not write and runs
// them on every request. Compile bounds the document ([Options.MaxBytes],
// [Options.MaxDepth], [Options.MaxStates]), and what it keeps is linear in
// the document, however deep guards nest. Every call that runs the machine
// — [Machine.Start], [Machine.Transition], [Machine.Advance],
// [Actor.Send], and each delayed event an Actor fires — has one step
// budget, [Options.MaxSteps] (default 100,000): every microstep counts,
// and so does every event taken that selects no transition, across all the
// macrosteps of the call (all the delayed events one Advance fires). The
// work of a step is linear in the active configuration and the
// transitions it takes: the internal event queue, conflict resolution,
// exit and entry sets, done events and pending delayed events cost no
// more, whatever the number of parallel regions, raised events or timers.
// A call that runs out of steps returns a [*StepBudgetError] (errors.Is
// [ErrStepBudget]) and changes nothing: Transition and Advance return
// their input snapshot, Actor.Send leaves the actor as it was. A delayed
// event an Actor fires has no caller to tell, so the actor then keeps its
// state with status error. [Options.MaxMicrosteps] is XState's
// maxIterations, a limit per macrostep that ends in status error; by
// default the step budget comes first.
//
// # Algorithm
//
// The interpreter follows the W3C SCXML algorithm as XState v5 implements it
// (packages/core/src/stateUtils.ts); its functions carry the same names
// (macrostep, microstep, selectTransitions, selectEventlessTransitions,
// removeConflictingTransitions, getTransitionDomain, computeExitSet,
// exitStates, computeEntrySet, enterStates). Where XState departs from
// SCXML — transition domains that may be parallel states, reenter instead of
// internal/external, wildcard priority, eventless priority by configuration
// order — this package does what XState does.
//
// # Differences from XState
//
//   - Missing guards are reported by Compile (XState fails only when the
//     guard is evaluated); [Options.AllowMissingGuards] restores XState's
//     behaviour, with a warning.
//   - A transition's "cond" is ignored, as XState's production build does;
//     its development build refuses the machine.
//   - The machine's "options" (XState's maxIterations) are not read:
//     [Options.MaxMicrosteps] bounds a macrostep.
//   - Persisted snapshots keep pending delayed events (XState loses them).
//   - invoke, spawn, sendTo and other actor features are not supported:
//     a machine is one actor.
package statechart
