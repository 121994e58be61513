// This file builds XState machines and the declarative actor logic of a
// case's `actors` map: `promise` (fromPromise), `callback` (fromCallback)
// and `machine` (createMachine, with its own implementations, recursively).
//
// Promise and callback actors keep their timers on the clock of the actor
// system they run in (`self.clock`), so their settlements and sends are
// ordered with the machine's own `after` timers by the case's clock.

import { createMachine, fromPromise, fromCallback } from 'xstate';
import { hasOwn, isPlainObject } from './json.mjs';
import { buildGuards, buildActions, convertNode, validateTemplate, resolveTemplate } from './declarative.mjs';

const KINDS = ['promise', 'callback', 'machine'];

function onlyKeys(obj, allowed, where) {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw new Error(`${where}: unknown key ${JSON.stringify(k)} (allowed: ${allowed.join(', ')})`);
  }
}

function checkDelay(ms, where) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new Error(`${where}: must be a non-negative number of ms`);
}

// promise: {resolve: VALUE} or {reject: VALUE}, settling `after` ms from the
// actor's start (0 or absent: at once). VALUE may hold {"$ref": "input.x"}.
function promiseLogic(spec, where) {
  onlyKeys(spec, ['resolve', 'reject', 'after'], where);
  if (hasOwn(spec, 'resolve') === hasOwn(spec, 'reject')) throw new Error(`${where}: needs exactly one of resolve or reject`);
  const rejects = hasOwn(spec, 'reject');
  const value = rejects ? spec.reject : spec.resolve;
  validateTemplate(value, `${where}.${rejects ? 'reject' : 'resolve'}`);
  const after = spec.after ?? 0;
  checkDelay(after, `${where}.after`);
  return fromPromise(({ input, self, signal }) => {
    const settle = (resolve, reject) => {
      const v = resolveTemplate(value, { input });
      if (rejects) reject(v);
      else resolve(v);
    };
    if (after === 0) return new Promise(settle);
    return new Promise((resolve, reject) => {
      const clock = self.clock;
      const id = clock.setTimeout(() => settle(resolve, reject), after);
      signal.addEventListener('abort', () => clock.clearTimeout(id));
    });
  });
}

// callback: sends each `send` entry to its parent `at` ms from its start (0:
// synchronously while it starts), and answers each received event whose type
// is a key of `onReceive` with the listed events, in order. Events may hold
// {"$ref": "input.x"}; answers also {"$ref": "event.x"} (the received event).
function callbackLogic(spec, where) {
  onlyKeys(spec, ['send', 'onReceive'], where);
  const sends = spec.send ?? [];
  if (!Array.isArray(sends)) throw new Error(`${where}.send: must be an array of {at, event}`);
  sends.forEach((s, i) => {
    const w = `${where}.send[${i}]`;
    if (!isPlainObject(s)) throw new Error(`${w}: must be {at, event}`);
    onlyKeys(s, ['at', 'event'], w);
    checkDelay(s.at, `${w}.at`);
    if (!isPlainObject(s.event) || typeof s.event.type !== 'string') throw new Error(`${w}.event: needs an event object with a string type`);
    validateTemplate(s.event, `${w}.event`);
  });
  const answers = spec.onReceive ?? {};
  if (!isPlainObject(answers)) throw new Error(`${where}.onReceive: must be an object of event type -> [events]`);
  for (const [type, list] of Object.entries(answers)) {
    const w = `${where}.onReceive.${type}`;
    if (!Array.isArray(list)) throw new Error(`${w}: must be an array of events`);
    list.forEach((e, i) => {
      if (!isPlainObject(e) || typeof e.type !== 'string') throw new Error(`${w}[${i}]: needs an event object with a string type`);
      validateTemplate(e, `${w}[${i}]`);
    });
  }
  return fromCallback(({ input, self, sendBack, receive }) => {
    const clock = self.clock;
    const timers = [];
    for (const { at, event } of sends) {
      const send = () => sendBack(resolveTemplate(event, { input }));
      if (at === 0) send();
      else timers.push(clock.setTimeout(send, at));
    }
    receive((received) => {
      for (const e of answers[received.type] ?? []) sendBack(resolveTemplate(e, { input, event: received }));
    });
    return () => timers.forEach((id) => clock.clearTimeout(id));
  });
}

// buildActors maps each name of a case's (or a child machine's) `actors` to
// XState actor logic.
export function buildActors(actors = {}, where = 'actors', opts = {}) {
  if (!isPlainObject(actors)) throw new Error(`${where}: must be an object of name -> actor`);
  const impl = {};
  for (const [name, spec] of Object.entries(actors)) {
    const w = `${where}.${name}`;
    if (!isPlainObject(spec) || Object.keys(spec).length !== 1 || !KINDS.includes(Object.keys(spec)[0])) {
      throw new Error(`${w}: must be {"promise": {...}}, {"callback": {...}} or {"machine": {...}}`);
    }
    const kind = Object.keys(spec)[0];
    const body = spec[kind];
    if (!isPlainObject(body)) throw new Error(`${w}.${kind}: must be an object`);
    if (kind === 'promise') impl[name] = promiseLogic(body, `${w}.promise`);
    else if (kind === 'callback') impl[name] = callbackLogic(body, `${w}.callback`);
    else {
      onlyKeys(body, ['machine', 'guards', 'actions', 'delays', 'actors'], `${w}.machine`);
      impl[name] = buildMachine(body, opts, `${w}.machine`);
    }
  }
  return impl;
}

// buildMachine creates the XState machine of {machine, guards, actions,
// delays, actors}: a case, or the `machine` of a child actor. maxIterations,
// when given, bounds the microsteps of one macrostep (XState's machine option).
export function buildMachine(spec, { maxIterations } = {}, where = '') {
  const at = (k) => (where ? `${where}.${k}` : k);
  if (!isPlainObject(spec.machine)) throw new Error(where ? `${at('machine')}: must be a machine config object` : 'case has no machine object');
  const config = convertNode(JSON.parse(JSON.stringify(spec.machine)), at('machine'));
  if (maxIterations !== undefined) config.options = { ...config.options, maxIterations };
  return createMachine(config, {
    guards: buildGuards(spec.guards, at('guards')),
    actions: buildActions(spec.actions, at('actions')),
    delays: { ...(spec.delays ?? {}) },
    actors: buildActors(spec.actors, at('actors'), { maxIterations })
  });
}
