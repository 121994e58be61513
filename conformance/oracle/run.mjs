// This file runs one case through XState and returns what it recorded: the
// expected snapshots (v1 and v2 keys) and the error message, if any.

import { createActor } from 'xstate';
import { hasOwn, isPlainObject, clone } from './json.mjs';
import { buildMachine } from './actors.mjs';
import { newClock, settle } from './clock.mjs';

// A case is v2 when it uses a v2 key: `input`, `actors`, `clock` or
// `snapshot` at the top level, or a persist, restore or query step. Only v2 cases record
// `received`, so v1 cases keep their v1 snapshots exactly.
export function isV2(kase) {
  if (['input', 'actors', 'clock', 'snapshot'].some((k) => hasOwn(kase, k))) return true;
  const steps = Array.isArray(kase.steps) ? kase.steps : [];
  return steps.some((s) => isPlainObject(s) && ['persist', 'restore', 'query'].some((k) => hasOwn(s, k)));
}

// More events than this processed by the root in one step means the case
// never settles (for example a child and its parent answering each other
// forever): the case fails instead of hanging the recorder.
const MAX_EVENTS_PER_STEP = 10000;

const QUERIES = ['can', 'matches', 'hasTag', 'getMeta'];

export function errorMessage(err) {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

// A child's entry in `children`: src and status; output when done, error
// when errored (both through JSON, so an Error object becomes {}); value and
// context for a machine child.
function childOf(actorRef) {
  const snap = actorRef.getSnapshot();
  const c = {};
  if (typeof actorRef.src === 'string') c.src = actorRef.src;
  c.status = snap.status;
  if (snap.status === 'done' && snap.output !== undefined) c.output = clone(snap.output);
  if (snap.status === 'error' && snap.error !== undefined) c.error = clone(snap.error);
  if (isPlainObject(snap) && hasOwn(snap, 'machine') && hasOwn(snap, 'value')) {
    c.value = clone(snap.value);
    c.context = clone(snap.context);
  }
  return c;
}

function snapshotOf(snap, v2, extra) {
  const s = { value: clone(snap.value), status: snap.status };
  if (snap.context !== undefined) s.context = clone(snap.context);
  const tags = [...(snap.tags ?? [])].sort();
  if (tags.length > 0) s.tags = tags;
  if (snap.status === 'done' && snap.output !== undefined) s.output = clone(snap.output);
  const children = {};
  for (const [id, ref] of Object.entries(snap.children ?? {})) {
    if (ref) children[id] = childOf(ref); // an invoke of an unknown src leaves an undefined entry
  }
  if (Object.keys(children).length > 0) s.children = children;
  if (v2) s.received = extra.received;
  if (extra.emitted.length > 0) s.emitted = extra.emitted;
  if (hasOwn(extra, 'persisted')) s.persisted = extra.persisted;
  if (hasOwn(extra, 'answer')) s.answer = extra.answer;
  return s;
}

function checkQuery(q, where) {
  if (!isPlainObject(q) || Object.keys(q).length !== 1 || !QUERIES.includes(Object.keys(q)[0])) {
    throw new Error(`${where}: a query is one of {"can": event}, {"matches": stateValue}, {"hasTag": tag}, {"getMeta": {}}`);
  }
  const [kind] = Object.keys(q);
  if (kind === 'can' && (!isPlainObject(q.can) || typeof q.can.type !== 'string')) throw new Error(`${where}.can: needs an event with a string type`);
  if (kind === 'hasTag' && typeof q.hasTag !== 'string') throw new Error(`${where}.hasTag: needs a tag string`);
  if (kind === 'matches' && typeof q.matches !== 'string' && !isPlainObject(q.matches)) throw new Error(`${where}.matches: needs a state value`);
}

function answerQuery(snap, q) {
  if (hasOwn(q, 'can')) return snap.can(clone(q.can));
  if (hasOwn(q, 'matches')) return snap.matches(clone(q.matches));
  if (hasOwn(q, 'hasTag')) return snap.hasTag(q.hasTag);
  return clone(snap.getMeta());
}

function checkStep(step, i, names) {
  const where = `steps[${i}]`;
  const kinds = ['event', 'advance', 'persist', 'restore', 'query'];
  const present = isPlainObject(step) ? kinds.filter((k) => hasOwn(step, k)) : [];
  if (present.length !== 1) throw new Error(`${where}: unknown step ${JSON.stringify(step)}`);
  const [kind] = present;
  if (kind === 'event' && (!isPlainObject(step.event) || typeof step.event.type !== 'string')) {
    throw new Error(`${where}: event needs a string type`);
  }
  if (kind === 'advance' && (typeof step.advance !== 'number' || step.advance < 0)) {
    throw new Error(`${where}: advance needs a non-negative number of ms`);
  }
  if ((kind === 'persist' || kind === 'restore') && (typeof step[kind] !== 'string' || step[kind] === '')) {
    throw new Error(`${where}: ${kind} needs a snapshot name`);
  }
  if (kind === 'persist') names.add(step.persist);
  if (kind === 'restore' && !names.has(step.restore)) throw new Error(`${where}: no earlier persist step named ${JSON.stringify(step.restore)}`);
  if (kind === 'query') checkQuery(step.query, `${where}.query`);
  return kind;
}

// Runs one case through XState. Resolves to {expected, expectedError?}.
// Rejects when the case cannot be built or run (a bad form, createMachine
// throws, a step never settles).
//
// maxIterations, when given, bounds the microsteps of one macrostep (XState's
// machine option of that name, Infinity by default): a machine that loops
// forever then ends in an "Infinite loop detected" error instead of hanging.
export async function runCase(kase, { maxIterations } = {}) {
  const steps = kase.steps ?? [];
  if (!Array.isArray(steps)) throw new Error('steps must be an array');
  const machine = buildMachine(kase, { maxIterations });
  const v2 = isV2(kase);
  const clockKind = kase.clock ?? 'simulated';
  if (clockKind !== 'simulated' && clockKind !== 'eventloop') {
    throw new Error(`clock: must be "simulated" or "eventloop", not ${JSON.stringify(clockKind)}`);
  }
  const names = new Set();
  const kinds = steps.map((step, i) => checkStep(step, i, names));

  // `received` lists the type of every event the root actor took a macrostep
  // on: each call of the root machine's transition function, which XState's
  // actor makes once per event it takes from its mailbox (xstate.init is not
  // one: the initial snapshot is computed, not transitioned to).
  let root;
  let received = [];
  let runaway = false;
  const transition = machine.transition;
  machine.transition = (snapshot, event, actorScope) => {
    if (actorScope.self === root && event.type !== 'xstate.stop') {
      received.push(event.type);
      if (received.length > MAX_EVENTS_PER_STEP) {
        runaway = true;
        throw new Error('runaway');
      }
    }
    return transition(snapshot, event, actorScope);
  };

  let emitted = [];
  let firstError; // {err} of the first error any root actor reported
  let clock = newClock(clockKind);
  const start = async (options) => {
    const actor = createActor(machine, { clock, logger: () => {}, ...options });
    root = actor;
    actor.subscribe({
      next: () => {},
      error: (err) => {
        firstError ??= { err };
      }
    });
    actor.on('*', (ev) => emitted.push(clone(ev)));
    actor.start();
    await settle();
    return actor;
  };
  const take = (where, extra = {}) => {
    if (runaway) throw new Error(`${where}: the root processed more than ${MAX_EVENTS_PER_STEP} events; the case never settles`);
    const s = snapshotOf(root.getSnapshot(), v2, { received, emitted, ...extra });
    received = [];
    emitted = [];
    return s;
  };

  const persisted = new Map();
  // `snapshot`: the actor starts from that persisted snapshot (for example
  // one chartgate persisted) instead of the machine's initial state.
  if (hasOwn(kase, 'snapshot') && !isPlainObject(kase.snapshot)) throw new Error('snapshot: must be a persisted snapshot object');
  const startOptions = hasOwn(kase, 'snapshot')
    ? { snapshot: clone(kase.snapshot) }
    : hasOwn(kase, 'input')
      ? { input: clone(kase.input) }
      : {};
  let actor = await start(startOptions);
  const expected = [take('the initial snapshot')];
  for (const [i, step] of steps.entries()) {
    const extra = {};
    switch (kinds[i]) {
      case 'event':
        actor.send(clone(step.event));
        await settle();
        break;
      case 'advance':
        await clock.advance(step.advance);
        break;
      case 'persist':
        extra.persisted = clone(actor.getPersistedSnapshot());
        persisted.set(step.persist, extra.persisted);
        break;
      case 'restore': {
        const now = clock.now();
        actor.stop();
        await settle();
        received = [];
        emitted = [];
        clock = newClock(clockKind, now);
        actor = await start({ snapshot: clone(persisted.get(step.restore)) });
        break;
      }
      case 'query':
        extra.answer = answerQuery(actor.getSnapshot(), step.query);
        break;
    }
    expected.push(take(`steps[${i}]`, extra));
  }

  const result = { expected };
  const snapErr = actor.getSnapshot().error;
  if (firstError !== undefined || actor.getSnapshot().status === 'error') {
    result.expectedError = errorMessage(firstError !== undefined ? firstError.err : snapErr);
  }
  actor.stop();
  await settle();
  return result;
}
