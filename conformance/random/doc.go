// Package random is a differential tester for chartgate's statechart
// interpreter: it generates random XState machines in the conformance case
// format, records what real XState does with them through the node oracle
// (conformance/oracle, `node record.mjs --serve`), replays them with
// [conformance.RunStatechart], and shrinks every difference to a small case
// file.
//
// # Generator
//
// [Generate] (or a [Generator]) builds machine n of a seed from
// math/rand/v2's PCG seeded with (seed, n), so a machine is reproducible
// from its name random/<seed>-<n> alone. Every machine nests at least four
// levels deep and mixes compound and parallel states; shallow and deep
// history states, with and without a default target (deep paths, into
// parallel regions, as an initial state); final states with outputs of every
// JSON type, also inside regions so that parallel done events fire; onDone,
// always and after (numeric, named and unknown delays) transitions; guarded
// candidate lists with the declarative conditions of the case format, the
// declared xstate.and/or/not/stateIn extensions and named stateIn guards
// (by id, state value and dotted path; in every handler, favouring states
// a microstep of the source moves, and in always transitions inside
// parallel regions the states of the other regions);
// entry, exit, initial and transition actions that $push labels into the
// context log (so that their order is visible), assign with $inc/$ref/$push,
// raise (immediate and delayed with ids), cancel and log; wildcards ("*",
// "E.*", "E.x.*", "xstate.done.state.*"); targetless transitions in all their
// JSON forms, reenter, and multi-target transitions into parallel regions;
// custom ids, tags, integer-like and dotted keys. Steps mix events of the
// machine's alphabet (with payloads of every JSON type), unknown events,
// external look-alikes of done events, and clock advances.
//
// Half the machines also use actors (case format v2, see actors.go):
// declarative promises (resolving and rejecting, at once or later),
// callbacks (sending at start and later, answering what they receive) and
// child machines (answering with sendParent, with timers, done at start,
// failing, invoking a promise of their own) are invoked — with ids or
// XState's default ones, input, system ids, onDone, onError and onSnapshot
// — and spawned, stopped, sent to (by id and by system id, delayed and
// cancelled), forwarded to; machines emit events and enqueue actions
// (with conditions, and with items checking stateIn guards, XState's check,
// in entry, exit, initial and transition actions, which see the
// configuration from before their microstep), take an input, run on the event-loop clock or XState's SimulatedClock, and
// their steps may persist and restore snapshots and query them. These
// decisions draw from a second random stream, so a machine without actors
// is the one the generator made before it had them.
//
// Generated machines must terminate, because XState loops forever on a
// cycle of eventless or raised transitions. Every transition that can fire
// without an external event (always, onDone, raised and delayed events,
// wildcards that match them, unknown delays) is bounded: its guard requires
// a context counter below a limit and its actions increment it. Counters are
// only reset by transitions on external events, so each macrostep takes
// finitely many microsteps, and delayed raises cannot multiply without end.
// The oracle also bounds a macrostep to 1000 microsteps in --serve mode, and
// a case it does not answer within the timeout counts as invalid.
//
// Config.Disable turns features off (see [Features]) so that a known
// difference does not hide the others.
//
// # Differential run and shrinking
//
// [Run] streams machines to one [Oracle] process, checks each returned case
// with [conformance.Check], and hands differences to [Shrink]. Shrinking
// greedily removes steps (the ones after the first difference at once, then
// halving chunks), states with their subtrees (repairing every reference to
// them), transitions, actions, guards and guard operands, targets of
// multi-target transitions, decorations (ids, tags, outputs, object forms),
// event payloads and context keys, and shortens advances — keeping a change
// only while XState still builds and runs the machine and the difference
// persists with the same kind (compile-time or snapshot). The smallest case
// is recorded by the oracle once more and written to
// OutDir/random/<seed>-<n>.json. The command conformance/cmd/difftest wraps
// [Run].
package random
