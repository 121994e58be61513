// Package statechart loads XState v5 machine configs from JSON and runs
// them with XState's semantics: hierarchical, parallel, final and history
// states; guarded, eventless (always) and delayed (after) transitions;
// entry, exit and transition actions; context; done events; tags and meta;
// machine input and output; and actors: invoked and spawned children
// (promises, callbacks, child machines), sendTo, sendParent, forwardTo,
// emit and enqueueActions. XState itself is the judge: conformance/ replays
// traces recorded from the xstate npm package against this package.
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
// action names and empty guards, infix wildcards, an invoke or spawn of a
// src that names no actor logic. [Options.Strict] makes every warning an
// error:
//
//	states.cart.on.ADD.cond: warning: "cond" is ignored: it is XState v4's name of "guard", so the transition is unguarded (XState's development build refuses it)
//
// A state with an id and a "route" is reached from anywhere by the event
// {"type": "xstate.route", "to": "#id"}, as in XState.
//
// Guards, actions, delays and actor logic are referenced by name, as in
// XState. Implement them in Go ([GuardFunc], [ActionFunc], [ActorLogic]) or
// declaratively in JSON with [ParseImplementations]; XState's built-ins
// are written as declared objects: {"type": "xstate.and", "params":
// {"guards": [...]}}, xstate.or, xstate.not, xstate.stateIn,
// xstate.assign, xstate.raise, xstate.cancel, xstate.log, and for actors
// xstate.sendTo, xstate.sendParent, xstate.forwardTo, xstate.spawnChild,
// xstate.stopChild, xstate.emit and xstate.enqueueActions. Where XState
// takes a function of the context and the event (an invoke's input, the
// event of a sendTo, a final state's output), a value may hold
// {"$ref": "context.path"} or {"$ref": "event.path"} objects, replaced by
// a copy of that value when it is needed.
//
// # Running
//
// An [Actor] is one running instance: [Actor.Send] processes an event as a
// macrostep, and delayed events fire from its [Clock] (a [SimulatedClock]
// or an [EventLoopClock] in tests). The pure functions [Machine.Start],
// [Machine.Transition], [Machine.Advance] and [Machine.Can] do the same on
// immutable [*Snapshot] values, for callers that keep state elsewhere (a
// database, a shared store); [Machine.TransitionInto] and
// [Machine.AdvanceInto] write the result into a snapshot the caller hands
// back instead, so that a machine without actors steps without
// allocating, its context included. A snapshot marshals to JSON and restores with
// [Machine.Restore] on another process, history and pending delayed events
// included. Restore accepts only a state the machine can be in — known
// states in a legal configuration, a value that agrees with it, history
// values its history states can hold, delayed events only while active —
// and says what is wrong otherwise; whatever it accepts, MarshalJSON
// writes back in a form Restore reads as the same snapshot. (A machine
// with history states can reach configurations that are not legal, as
// XState does, and Restore accepts those.)
//
// # Actors
//
// A state's invoke starts children when the state is entered and stops
// them when it is exited; xstate.spawnChild starts one that lives until it
// is stopped (xstate.stopChild) or the machine ends. Each child is named by
// its id — an invoke without one gets XState's "<index>.<state id>" — and
// runs the logic its src names in [Implementations.Actors]:
//
//   - a [Promise]: a Go function run once in its own goroutine, its context
//     cancelled when the child stops;
//   - a [Callback]: a Go function run when the child starts, which sends
//     events to its parent (SendBack, from any goroutine) and receives the
//     events sent to the child (Receive), and returns a cleanup;
//   - a child [*Machine], with its own implementations: it starts with the
//     invoke's input as event.input of its xstate.init, and its output
//     becomes the parent's done event;
//   - the declarative forms of the case format ({"promise": ...},
//     {"callback": ...}, {"machine": ...}), which [ParseImplementations]
//     reads, so that workflows and case files need no Go; a declarative
//     promise settles, and a callback sends, on the actor's clock.
//
// A child that finishes sends xstate.done.actor.<id> to its parent, with
// its output (event.output); one that fails sends xstate.error.actor.<id>
// with what it failed with (event.error: a promise's rejection value, or a
// Go error wrapped as an [ErrorObject], which reads {} through JSON like
// XState's Error objects). An error event that no transition takes puts
// the machine in status error, as in XState. An invoke with onSnapshot (or
// a spawn with syncSnapshot) sends xstate.snapshot.<id> on every change of
// the child. [Snapshot.Children] lists the children with their status,
// output or error, and a child machine's own snapshot. [Actor.On] receives
// the events the machine emits (xstate.emit). A src that names no logic
// starts nothing, as in XState (which, when it is invoked by an initial
// state, fails to start: so does chartgate).
//
// The order of everything matters, and is XState's, which the case corpus
// pins down: an actor's built-in actions take effect, in order, once the
// macrostep's snapshot is in place; an event sent to an actor that is
// processing one waits in its mailbox, while one sent to an idle actor is
// processed at once; at start, the children of the initial state start
// before its delayed events are scheduled, while for a state entered by an
// event the delayed events come first. An Actor delivers a promise's result
// as its own macrotask; a declarative promise settles after the
// synchronous work in progress, like a JavaScript promise: with an
// [EventLoopClock] between two timers, with a [SimulatedClock] once the
// whole advance is over (what XState's SimulatedClock does).
//
// # Persistence
//
// [Snapshot.MarshalJSON] writes XState's persisted shape — status, value,
// context, historyValue, output or error, and children as {id: {snapshot,
// src, systemId, syncSnapshot}}, a child machine with its own persisted
// snapshot — which XState's createActor(machine, {snapshot}) restores,
// plus keys XState ignores: the pending delayed events, the order of the
// active configuration, the message of a Go error and the children's
// sessions. [Machine.Restore] reads both, and restores the snapshot exactly
// as it was, configuration and pending delayed events included;
// [Machine.RestoreLikeXState] restores it as XState does, rebuilding the
// configuration from the state value and dropping the delayed events.
// An Actor started from a restored
// snapshot ([ActorOptions.Snapshot]) resumes child machines in their
// state and, as XState does, starts every active promise and callback
// child again from scratch with its input; [ActorOptions.Resume] lets the
// caller re-attach to work already in flight instead.
//
// # The pure API with effects
//
// [Machine.StartEffects], [Machine.TransitionEffects] and
// [Machine.AdvanceEffects] compute the next snapshot of the whole actor
// system — the root and its child machines, which run inside the call —
// and return the effects decided, in order ([Effect]): [StartChild],
// [StopChild] and [SendToChild] for promise and callback children, which
// are external in the pure API; [Emitted] events; [Scheduled] and
// [Cancelled] delayed events. A stateless server runs an external child as
// a job (named by the child's session, unique in the system and kept in
// the snapshot), stores the snapshot, and when the job is over calls
// [Machine.Deliver] with its [Report] on the stored snapshot, in this
// process or another: the parent then processes the child's done or error
// event. A report for a child that was stopped meanwhile changes nothing
// ([ErrNoChild]). Delayed events stay in the snapshot: call
// AdvanceEffects at [Snapshot.NextDue]. [Machine.Engine] implements
// [EffectEngine] for callers that work through [Engine].
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
// macrosteps of the call (all the delayed events one Advance fires, and
// every event the actors of a system process: two children answering each
// other forever stop there). The work of a step is linear in the active
// configuration and the transitions it takes: the internal event queue,
// conflict resolution, exit and entry sets, done events, pending delayed
// events and children cost no more, whatever the number of parallel
// regions, raised events, timers or children. A call that runs out of steps
// returns a [*StepBudgetError] (errors.Is [ErrStepBudget]) and changes
// nothing: Transition and Advance return their input snapshot, Actor.Send
// leaves the actor as it was. A delayed event an Actor fires has no caller
// to tell, so the actor then keeps its state with status error; so does an
// Actor of a machine with actors, whose children may already have acted.
// [Options.MaxMicrosteps] is XState's maxIterations, a limit per macrostep
// that ends in status error; by default the step budget comes first.
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
// order — this package does what XState does. The actor system follows
// XState's createActor.ts and system.ts (mailboxes, deferred effects, the
// two rounds of effects of an initial macrostep).
//
// What a microstep does to the configuration — the states it exits, the
// transitions whose actions run, the states it enters, in order — depends
// only on the configuration and the transitions taken, so each runner (an
// Actor's, or one of a Machine's for the pure functions) records it the
// first time and replays it after, from a small bounded cache. Guards are
// still evaluated and actions still run on every event, and the children
// a state invokes start and stop on replay as on the general path; steps
// that depend on more than the configuration (history states), or that
// enter a final state, always take the general algorithm. The guards and assigns [ParseImplementations] makes are
// compiled, not interpreted: operators resolved once, literal numbers and
// strings compared as such, "in" over a literal list as a set. An Actor
// whose context no one else holds (no snapshot handed out, no Go
// implementation given it) assigns in place and undoes the assigns if the
// macrostep fails; otherwise a call copies the context once, on its first
// assign. Such an Actor keeps the top-level keys its declarative guards
// and assigns name (numbered when the machine is compiled) in a slice,
// numbers unboxed, and writes them back to the context map only when
// something else is to read it: [Actor.Snapshot], a subscriber, an
// inspection, a Go guard or action, a state's output (a machine whose
// guards or assigns read the whole context keeps the map alone). When the cache knows the whole of an Actor's macrostep (the
// transitions of every region of a parallel state included) and nothing
// in it can fail — declarative guards and assigns only, no raise, timer
// or child, no state with an eventless transition in the configuration it
// ends in — the Actor
// changes its snapshot in place, without the working copy a failure would
// need to be rolled back; subscribers are notified as after any event.
// The pure API works on a buffer of its runner, and returns, for a step
// that ends in a plain state (active, no delayed event, history or child,
// the context unchanged), the snapshot it returned last for that
// configuration: an event then allocates nothing. The machines of an
// actor system take the step cache too, each with a runner of its own
// (kept until it stops) on a spare snapshot buffer, and assign in place
// (undone if the macrostep fails) while their context map is their own:
// made by one of their macrosteps and not handed out since in a
// snapshot. A macrostep of theirs that the cache knows wholly and that
// cannot fail — declarative guards and assigns, undelayed sends (sendTo,
// sendParent, forwardTo) to actors that exist, and, in a step that sends
// nothing, the start of invoked children without a system id (a child
// machine's without input, once its initial snapshot is known) and the
// stop of invoked children that have none of their own — skips the
// general algorithm as an Actor's does, in place when the cell's snapshot
// is its own (not handed out); the sends, starts and stops take effect
// after the snapshot is committed, as always. A new child
// machine's snapshot comes with the spare buffer of its first macrostep in
// the allocation of its cell, and, when its machine has no Go guard or
// action, shares its initial context with the other children of its
// machine until its first assign copies it (a snapshot handed out gets a
// copy). A child machine without children stops without a runner. The
// done events of children share one data map, one event at a time, when
// nothing can keep the event after its macrostep: no inspection, no Go
// guard or action of the parent, no forwardTo of it; and the cell of a
// declarative promise that settled at once, or of a child machine that
// stopped without ever having had a child or a delayed event, is used
// again for a later child of its kind once its parent no longer lists it.
// A child's session id is written only when something reads it. The output of a declarative promise is a copy made when it settles; a
// $ref to event.output of its done event keeps that copy rather than
// copying it again, unless an inspection or a Go guard or action of the
// machine could see the event (and change the value) after the assign.
// `go run ./conformance/bench` compares the result with XState.
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
//   - Persisted snapshots keep pending delayed events, the root's and its
//     child machines' (XState loses them): a durable workflow's timeouts
//     survive a restart. Restore also keeps the configuration exactly
//     (the order of the active states, which decides the order of
//     eventless transitions, and what XState's history quirks made of it),
//     where XState rebuilds it from the value; [Machine.RestoreLikeXState]
//     does what XState does.
//   - Every call has a step budget (see Limits), where XState would loop
//     forever.
//   - In the pure API, a child that is no longer listed — replaced by a
//     spawn under the same id, or left running when the machine failed —
//     is forgotten, while XState (and an Actor) keeps it running and its
//     events arriving.
//   - A Callback's events sent from another goroutine once it has
//     returned are delivered asynchronously, each as its own macrotask.
//   - The snapshot of a child copied from an xstate.snapshot.<id> event
//     names the states of its history value by id, where XState's JSON
//     holds whole state node definitions.
package statechart
