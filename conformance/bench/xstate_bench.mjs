#!/usr/bin/env node
// XState side of conformance/bench: runs one benchmark machine through
// xstate@5 and prints one JSON line with the timing and the final snapshot.
//
//   node xstate_bench.mjs [--n N] [--warmup W] [--rounds R] MACHINE.json
//   node xstate_bench.mjs [--n N] [--warmup W] [--rounds R] -   (machine file on stdin)
//
// A machine file is {machine, guards?, actions?, actors?, settle?, events}:
// an XState config, the declarative guards and actions of the conformance
// case format, and the event stream, cycled (event i is
// events[i % events.length]). A file with "actors" (child machines, promises,
// callbacks of the case format, and the declared xstate.* actions they need)
// is built by the oracle's own code (../oracle/actors.mjs), as the
// conformance cases are. With "settle": STATE, an event is over once the
// machine is in STATE again: after each send the script awaits the
// microtasks (a promise's settlement) until it is. The actor is
// created once; W events warm it up, then N events are timed with
// process.hrtime.bigint(), in R consecutive rounds (default 1): the rate
// printed is the fastest round's. The go command `go run ./conformance/bench` runs
// this script for every machine.
//
// xstate is loaded from this directory's node_modules if there is one, or
// else from the pinned copy in ../oracle (cd conformance/oracle && npm ci).

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function loadXState() {
  const tried = [];
  for (const dir of [here, path.join(here, '..', 'oracle')]) {
    const req = createRequire(path.join(dir, 'package.json'));
    try {
      const xstate = req('xstate');
      const version = req('xstate/package.json').version;
      return { xstate, version };
    } catch (err) {
      tried.push(dir);
    }
  }
  process.stderr.write(
    `xstate is not installed (looked in ${tried.join(', ')}).\n` +
      'Install the pinned version with: cd conformance/oracle && npm ci\n'
  );
  process.exit(3);
}

const { xstate, version: xstateVersion } = loadXState();
const { createMachine, createActor, assign, raise } = xstate;

// ---------------------------------------------------------------------------
// Declarative guards and actions (docs/conformance-case-format.md).

const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const ABSENT = Symbol('absent');

// get resolves "context.a.b" / "event.x.0" in {context, event}.
function get(scope, dotted) {
  let v = scope;
  for (const key of dotted.split('.')) {
    if (Array.isArray(v) && /^(0|[1-9][0-9]*)$/.test(key)) {
      v = Number(key) < v.length ? v[Number(key)] : undefined;
    } else if (isObject(v) && own(v, key)) {
      v = v[key];
    } else {
      return ABSENT;
    }
    if (v === undefined) return ABSENT;
  }
  return v;
}

function same(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => own(b, k) && same(a[k], b[k]));
  }
  return false;
}

const isRefExpr = (v) => isObject(v) && Object.keys(v).length === 1 && own(v, '$ref');
const copy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// compileCond turns a condition into a function of the scope.
function compileCond(c, where) {
  if (!isObject(c)) throw new Error(`${where}: a condition must be an object`);
  if (own(c, 'and')) {
    const subs = c.and.map((x, i) => compileCond(x, `${where}.and[${i}]`));
    return (s) => subs.every((f) => f(s));
  }
  if (own(c, 'or')) {
    const subs = c.or.map((x, i) => compileCond(x, `${where}.or[${i}]`));
    return (s) => subs.some((f) => f(s));
  }
  if (own(c, 'not')) {
    const sub = compileCond(c.not, `${where}.not`);
    return (s) => !sub(s);
  }
  if (typeof c.field !== 'string') throw new Error(`${where}: a condition needs a "field"`);
  const field = c.field;
  const want = isRefExpr(c.value) ? (s) => get(s, c.value.$ref) : () => c.value;
  const num = (x) => typeof x === 'number';
  const test = {
    eq: (f, v) => v !== undefined && same(f, v),
    neq: (f, v) => !(v !== undefined && same(f, v)),
    gt: (f, v) => num(f) && num(v) && f > v,
    gte: (f, v) => num(f) && num(v) && f >= v,
    lt: (f, v) => num(f) && num(v) && f < v,
    lte: (f, v) => num(f) && num(v) && f <= v,
    in: (f, v) => Array.isArray(v) && v.some((x) => same(x, f)),
    contains: (f, v) =>
      v !== undefined &&
      (Array.isArray(f) ? f.some((x) => same(x, v)) : typeof f === 'string' && typeof v === 'string' && f.includes(v)),
    exists: (f) => f !== null,
    not_exists: (f) => f === null
  }[c.op];
  if (!test) throw new Error(`${where}: unknown op ${JSON.stringify(c.op)}`);
  return (s) => {
    const f = get(s, field);
    if (f === ABSENT) return c.op === 'neq' || c.op === 'not_exists';
    let v = want(s);
    if (v === ABSENT) v = undefined;
    return test(f, v);
  };
}

// compileExpr turns an assign expression into a function of (scope, key).
function compileExpr(e) {
  if (isObject(e) && Object.keys(e).length === 1) {
    if (own(e, '$ref')) {
      return (s) => {
        const v = get(s, e.$ref);
        return v === ABSENT ? undefined : copy(v);
      };
    }
    if (own(e, '$inc')) {
      const n = e.$inc;
      return (s, key) => (typeof s.context[key] === 'number' ? s.context[key] : 0) + n;
    }
    if (own(e, '$push')) {
      const item = compileExpr(e.$push);
      return (s, key) => [...(Array.isArray(s.context[key]) ? s.context[key] : []), item(s, key)];
    }
  }
  return () => copy(e);
}

function compileAction(a, where) {
  if (isObject(a) && isObject(a.assign)) {
    const entries = Object.entries(a.assign).map(([k, e]) => [k, compileExpr(e)]);
    return assign(({ context, event }) => {
      const s = { context, event };
      const out = {};
      for (const [k, f] of entries) out[k] = f(s, k);
      return out;
    });
  }
  if (isObject(a) && isObject(a.raise) && typeof a.raise.type === 'string') {
    return raise(copy(a.raise));
  }
  throw new Error(`${where}: an action must be {"assign": {...}} or {"raise": {...}}`);
}

function implementations(file) {
  const guards = {};
  for (const [name, c] of Object.entries(file.guards ?? {})) {
    const f = compileCond(c, `guards.${name}`);
    guards[name] = ({ context, event }) => f({ context, event });
  }
  const actions = {};
  for (const [name, a] of Object.entries(file.actions ?? {})) {
    actions[name] = compileAction(a, `actions.${name}`);
  }
  return { guards, actions };
}

// ---------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { n: 200000, warmup: 20000, rounds: 1, file: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--n' || a === '--warmup' || a === '--rounds') {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error(`${a} needs a non-negative integer`);
      opts[a.slice(2)] = v;
    } else if (opts.file === undefined) {
      opts.file = a;
    } else {
      throw new Error(`unexpected argument ${a}`);
    }
  }
  if (opts.file === undefined) {
    throw new Error('usage: node xstate_bench.mjs [--n N] [--warmup W] [--rounds R] MACHINE.json|-');
  }
  return opts;
}

// settleInto awaits microtasks until the actor is in state `value` again (a
// promise child settled and its done event taken); it fails past 1000.
async function settleInto(actor, value) {
  for (let k = 0; !actor.getSnapshot().matches(value); k++) {
    if (k === 1000) throw new Error(`the machine did not return to ${JSON.stringify(value)}`);
    await null;
  }
}

async function buildWithOracle(file) {
  const { buildMachine } = await import('../oracle/actors.mjs');
  return buildMachine(file);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const file = JSON.parse(fs.readFileSync(opts.file === '-' ? 0 : opts.file, 'utf8'));
  const events = file.events;
  if (!Array.isArray(events) || events.length === 0 || !events.every((e) => isObject(e) && typeof e.type === 'string')) {
    throw new Error('"events" must be a non-empty array of events');
  }
  const machine = file.actors ? await buildWithOracle(file) : createMachine(file.machine, implementations(file));
  let failure;
  const actor = createActor(machine);
  actor.subscribe({ error: (err) => (failure ??= err) });
  actor.start();

  const len = events.length;
  let i = 0;
  const settle = file.settle;
  if (settle !== undefined) await settleInto(actor, settle);
  for (; i < opts.warmup; i++) {
    actor.send(events[i % len]);
    if (settle !== undefined) await settleInto(actor, settle);
  }
  // The timed events in consecutive rounds; the rate reported is the
  // fastest round's (with one round, the whole run's), as on the Go side.
  const rounds = Math.max(1, Math.min(opts.rounds, opts.n));
  let ns = 0;
  let eventsPerSec = 0;
  for (let k = 0; k < rounds; k++) {
    const end = opts.warmup + Math.floor((opts.n * (k + 1)) / rounds);
    const count = end - i;
    const t0 = process.hrtime.bigint();
    if (settle === undefined) {
      for (; i < end; i++) actor.send(events[i % len]);
    } else {
      for (; i < end; i++) {
        actor.send(events[i % len]);
        await settleInto(actor, settle);
      }
    }
    const t1 = process.hrtime.bigint();
    const d = Number(t1 - t0);
    ns += d;
    if (d > 0) eventsPerSec = Math.max(eventsPerSec, (count * 1e9) / d);
  }

  const snap = actor.getSnapshot();
  const out = {
    name: file.name,
    events: opts.n,
    warmup: opts.warmup,
    rounds,
    ns,
    eventsPerSec,
    value: snap.value,
    context: snap.context ?? {},
    status: snap.status,
    node: process.version,
    xstate: xstateVersion
  };
  if (failure !== undefined || snap.status === 'error') {
    out.error = String(failure?.message ?? snap.error ?? 'error');
  }
  actor.stop();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(`xstate_bench: ${err?.message ?? err}\n`);
  process.exit(2);
});
