#!/usr/bin/env node
// Conformance oracle: runs chartgate case files through real XState v5 and
// records the snapshots it produces.
//
//   node record.mjs [--check] PATH...   PATH = a case file or a directory (recursive, *.json)
//   node record.mjs --serve             one case JSON per stdin line -> one filled case per stdout line
//
// The case format, declared JSON extensions (xstate.and, xstate.raise, ...)
// included, is documented in docs/conformance-case-format.md.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import {
  createMachine,
  createActor,
  SimulatedClock,
  assign,
  raise,
  cancel,
  log,
  and,
  or,
  not,
  stateIn
} from 'xstate';

// ---------------------------------------------------------------------------
// JSON helpers

const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// Deep JSON equality; object key order is ignored.
function deepEqual(a, b) {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const MISSING = Symbol('missing');

// Looks up a dotted path ("context.a.b", "event.items.0") in the scope.
// Returns MISSING when some segment is absent.
function lookup(scope, dotted) {
  if (typeof dotted !== 'string' || dotted === '') {
    throw new Error(`invalid path ${JSON.stringify(dotted)}`);
  }
  let cur = scope;
  for (const seg of dotted.split('.')) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(seg) || Number(seg) >= cur.length) return MISSING;
      cur = cur[Number(seg)];
    } else if (isPlainObject(cur)) {
      if (!hasOwn(cur, seg)) return MISSING;
      cur = cur[seg];
    } else {
      return MISSING;
    }
    if (cur === undefined) return MISSING;
  }
  return cur;
}

const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// ---------------------------------------------------------------------------
// Order-preserving JSON text handling.
//
// JSON.parse puts integer-like keys ("1", "10") before the others, so a file
// rewritten from a parsed object would lose its authored key order -- and key
// order is document order for `states`. Case files are therefore re-written
// from an ordered tree: objects become {[ORDERED]: [[key, value], ...]}.

const ORDERED = Symbol('ordered');

function parseOrdered(text) {
  let i = 0;
  const fail = (msg) => {
    throw new SyntaxError(`${msg} at offset ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { [ORDERED]: entries };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const key = str();
        ws();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        const v = value();
        const at = entries.findIndex(([k]) => k === key);
        if (at >= 0) entries.splice(at, 1); // later duplicate wins, like JSON.parse
        entries.push([key, v]);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return { [ORDERED]: entries };
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      const items = [];
      ws();
      if (text[i] === ']') {
        i++;
        return items;
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return items;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail('unexpected character');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const str = () => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(text.slice(i));
    if (!m) fail('bad string');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) fail('trailing characters');
  return v;
}

// Plain JS value -> ordered tree (JS key order).
function toOrdered(v) {
  if (Array.isArray(v)) return v.map(toOrdered);
  if (isPlainObject(v)) {
    return { [ORDERED]: Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [k, toOrdered(x)]) };
  }
  return v;
}

// Ordered tree -> JSON text, formatted like JSON.stringify(v, null, indent).
function stringifyOrdered(v, indent = 2, depth = 0) {
  const pad = (d) => (indent ? '\n' + ' '.repeat(indent * d) : '');
  const sep = indent ? ': ' : ':';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[' + v.map((x) => pad(depth + 1) + stringifyOrdered(x, indent, depth + 1)).join(',') + pad(depth) + ']';
  }
  if (v !== null && typeof v === 'object' && v[ORDERED]) {
    const entries = v[ORDERED];
    if (entries.length === 0) return '{}';
    return (
      '{' +
      entries.map(([k, x]) => pad(depth + 1) + JSON.stringify(k) + sep + stringifyOrdered(x, indent, depth + 1)).join(',') +
      pad(depth) +
      '}'
    );
  }
  return JSON.stringify(v);
}

// ---------------------------------------------------------------------------
// Conditions

const OPS = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'contains', 'exists', 'not_exists']);

function isRef(v) {
  return isPlainObject(v) && Object.keys(v).length === 1 && hasOwn(v, '$ref');
}

function validateCond(cond, where) {
  if (!isPlainObject(cond)) throw new Error(`${where}: condition must be an object`);
  if (hasOwn(cond, 'and') || hasOwn(cond, 'or')) {
    const list = cond.and ?? cond.or;
    if (!Array.isArray(list)) throw new Error(`${where}: and/or needs an array`);
    list.forEach((c, i) => validateCond(c, `${where}[${i}]`));
    return;
  }
  if (hasOwn(cond, 'not')) return validateCond(cond.not, `${where}.not`);
  if (typeof cond.field !== 'string') throw new Error(`${where}: condition needs a string field`);
  if (!OPS.has(cond.op)) throw new Error(`${where}: unknown op ${JSON.stringify(cond.op)}`);
}

function evalCond(cond, scope) {
  if (hasOwn(cond, 'and')) return cond.and.every((c) => evalCond(c, scope));
  if (hasOwn(cond, 'or')) return cond.or.some((c) => evalCond(c, scope));
  if (hasOwn(cond, 'not')) return !evalCond(cond.not, scope);

  const field = lookup(scope, cond.field);
  const value = isRef(cond.value) ? lookup(scope, cond.value.$ref) : cond.value;
  const present = field !== MISSING;
  const valuePresent = value !== MISSING && value !== undefined;
  const num = (x) => typeof x === 'number';

  switch (cond.op) {
    case 'eq':
      return present && valuePresent && deepEqual(field, value);
    case 'neq':
      return !(present && valuePresent && deepEqual(field, value));
    case 'gt':
      return present && num(field) && num(value) && field > value;
    case 'gte':
      return present && num(field) && num(value) && field >= value;
    case 'lt':
      return present && num(field) && num(value) && field < value;
    case 'lte':
      return present && num(field) && num(value) && field <= value;
    case 'in':
      return present && Array.isArray(value) && value.some((x) => deepEqual(x, field));
    case 'contains':
      if (!present || !valuePresent) return false;
      if (Array.isArray(field)) return field.some((x) => deepEqual(x, value));
      if (typeof field === 'string' && typeof value === 'string') return field.includes(value);
      return false;
    case 'exists':
      return present && field !== null;
    case 'not_exists':
      return !present || field === null;
    default:
      throw new Error(`unknown op ${cond.op}`);
  }
}

// ---------------------------------------------------------------------------
// Assign expressions

function evalExpr(expr, key, context, scope) {
  if (isPlainObject(expr) && Object.keys(expr).length === 1) {
    if (hasOwn(expr, '$ref')) {
      const v = lookup(scope, expr.$ref);
      return v === MISSING ? undefined : clone(v);
    }
    if (hasOwn(expr, '$inc')) {
      const cur = context?.[key];
      return (typeof cur === 'number' ? cur : 0) + expr.$inc;
    }
    if (hasOwn(expr, '$push')) {
      const cur = context?.[key];
      const base = Array.isArray(cur) ? cur : [];
      return [...base, evalExpr(expr.$push, key, context, scope)];
    }
  }
  return clone(expr);
}

// XState assign whose new values are all computed from the pre-assign context.
function makeAssign(spec, where) {
  if (!isPlainObject(spec)) throw new Error(`${where}: assign needs an object of key: EXPR`);
  return assign(({ context, event }) => {
    const scope = { context, event };
    const out = {};
    for (const [key, expr] of Object.entries(spec)) {
      out[key] = evalExpr(expr, key, context, scope);
    }
    return out;
  });
}

// ---------------------------------------------------------------------------
// Top-level implementations (guards / actions / delays maps)

function buildGuards(guards = {}) {
  const impl = {};
  for (const [name, cond] of Object.entries(guards)) {
    if (isPlainObject(cond) && hasOwn(cond, 'stateIn')) {
      impl[name] = stateIn(cond.stateIn);
      continue;
    }
    validateCond(cond, `guards.${name}`);
    impl[name] = ({ context, event }) => evalCond(cond, { context, event });
  }
  return impl;
}

function buildActions(actions = {}) {
  const impl = {};
  for (const [name, act] of Object.entries(actions)) {
    if (isPlainObject(act) && hasOwn(act, 'assign')) {
      impl[name] = makeAssign(act.assign, `actions.${name}`);
    } else if (isPlainObject(act) && hasOwn(act, 'raise')) {
      if (!isPlainObject(act.raise) || typeof act.raise.type !== 'string') {
        throw new Error(`actions.${name}: raise needs an event object with a type`);
      }
      impl[name] = raise(clone(act.raise));
    } else {
      throw new Error(`actions.${name}: unknown action form ${JSON.stringify(act)}`);
    }
  }
  return impl;
}

// ---------------------------------------------------------------------------
// Declared JSON extensions inside the machine config

function convertGuard(g) {
  if (!isPlainObject(g)) return g;
  const params = g.params ?? {};
  switch (g.type) {
    case 'xstate.and':
      return and(params.guards.map(convertGuard));
    case 'xstate.or':
      return or(params.guards.map(convertGuard));
    case 'xstate.not':
      return not(convertGuard(params.guard));
    case 'xstate.stateIn':
      return stateIn(params.stateValue);
    default:
      return g;
  }
}

function convertAction(a) {
  if (Array.isArray(a)) return a.map(convertAction);
  if (!isPlainObject(a)) return a;
  const params = a.params ?? {};
  switch (a.type) {
    case 'xstate.raise': {
      const opts = {};
      if (params.delay !== undefined) opts.delay = params.delay;
      if (params.id !== undefined) opts.id = params.id;
      return raise(clone(params.event), opts);
    }
    case 'xstate.assign':
      return makeAssign(params, 'xstate.assign');
    case 'xstate.cancel':
      return cancel(params.sendId);
    case 'xstate.log':
      return log();
    default:
      return a;
  }
}

function convertTransition(t) {
  if (Array.isArray(t)) return t.map(convertTransition);
  if (!isPlainObject(t)) return t;
  const out = { ...t };
  if (hasOwn(out, 'guard')) out.guard = convertGuard(out.guard);
  if (hasOwn(out, 'actions')) out.actions = convertAction(out.actions);
  return out;
}

const mapValues = (obj, fn) =>
  Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fn(v)]));

function convertNode(node) {
  if (!isPlainObject(node)) return node;
  const out = { ...node };
  if (hasOwn(out, 'entry')) out.entry = convertAction(out.entry);
  if (hasOwn(out, 'exit')) out.exit = convertAction(out.exit);
  if (isPlainObject(out.initial) && hasOwn(out.initial, 'actions')) {
    out.initial = { ...out.initial, actions: convertAction(out.initial.actions) };
  }
  if (isPlainObject(out.on)) out.on = mapValues(out.on, convertTransition);
  if (isPlainObject(out.after)) out.after = mapValues(out.after, convertTransition);
  if (hasOwn(out, 'always')) out.always = convertTransition(out.always);
  if (hasOwn(out, 'onDone')) out.onDone = convertTransition(out.onDone);
  if (hasOwn(out, 'invoke')) {
    const conv = (inv) => {
      if (!isPlainObject(inv)) return inv;
      const o = { ...inv };
      for (const k of ['onDone', 'onError', 'onSnapshot']) {
        if (hasOwn(o, k)) o[k] = convertTransition(o[k]);
      }
      return o;
    };
    out.invoke = Array.isArray(out.invoke) ? out.invoke.map(conv) : conv(out.invoke);
  }
  if (isPlainObject(out.route)) out.route = convertTransition(out.route);
  if (isPlainObject(out.states)) out.states = mapValues(out.states, convertNode);
  return out;
}

// ---------------------------------------------------------------------------
// Running a case

function snapshotOf(snap) {
  const s = { value: clone(snap.value), status: snap.status };
  if (snap.context !== undefined) s.context = clone(snap.context);
  const tags = [...(snap.tags ?? [])].sort();
  if (tags.length > 0) s.tags = tags;
  if (snap.status === 'done' && snap.output !== undefined) s.output = clone(snap.output);
  return s;
}

function errorMessage(err) {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

// Runs one case through XState. Returns {expected, expectedError?}.
// Throws when the case cannot be built (createMachine / implementation errors).
//
// maxIterations, when given, bounds the microsteps of one macrostep (XState's
// machine option of that name, Infinity by default): a machine that loops
// forever then ends in an "Infinite loop detected" error instead of hanging.
function runCase(kase, { maxIterations } = {}) {
  if (!isPlainObject(kase.machine)) throw new Error('case has no machine object');
  const steps = kase.steps ?? [];
  if (!Array.isArray(steps)) throw new Error('steps must be an array');

  const config = convertNode(JSON.parse(JSON.stringify(kase.machine)));
  if (maxIterations !== undefined) config.options = { ...config.options, maxIterations };
  const machine = createMachine(config, {
    guards: buildGuards(kase.guards),
    actions: buildActions(kase.actions),
    delays: { ...(kase.delays ?? {}) }
  });

  const clock = new SimulatedClock();
  const actor = createActor(machine, { clock, logger: () => {} });
  let actorError;
  let errored = false;
  actor.subscribe({
    next: () => {},
    error: (err) => {
      if (!errored) {
        errored = true;
        actorError = err;
      }
    }
  });

  const expected = [];
  actor.start();
  expected.push(snapshotOf(actor.getSnapshot()));
  steps.forEach((step, i) => {
    if (isPlainObject(step) && hasOwn(step, 'event')) {
      if (!isPlainObject(step.event) || typeof step.event.type !== 'string') {
        throw new Error(`steps[${i}]: event needs a string type`);
      }
      actor.send(clone(step.event));
    } else if (isPlainObject(step) && hasOwn(step, 'advance')) {
      if (typeof step.advance !== 'number' || step.advance < 0) {
        throw new Error(`steps[${i}]: advance needs a non-negative number of ms`);
      }
      clock.increment(step.advance);
    } else {
      throw new Error(`steps[${i}]: unknown step ${JSON.stringify(step)}`);
    }
    expected.push(snapshotOf(actor.getSnapshot()));
  });

  const snapErr = actor.getSnapshot().error;
  const result = { expected };
  if (errored || actor.getSnapshot().status === 'error') {
    result.expectedError = errorMessage(errored ? actorError : snapErr);
  }
  actor.stop();
  return result;
}

const KEY_ORDER = ['name', 'description', 'machine', 'guards', 'actions', 'delays', 'steps', 'expected', 'expectedError'];

// Builds the ordered tree of the filled case: the case's own keys keep their
// authored order inside, top-level keys follow KEY_ORDER, unknown keys go last.
function fillCase(orderedCase, result, name) {
  const top = new Map(orderedCase[ORDERED]);
  top.delete('expectedError');
  top.set('expected', toOrdered(result.expected));
  if (result.expectedError !== undefined) top.set('expectedError', result.expectedError);
  if (name !== undefined) top.set('name', name);
  const entries = [];
  for (const k of KEY_ORDER) if (top.has(k)) entries.push([k, top.get(k)]);
  for (const [k, v] of top) if (!KEY_ORDER.includes(k)) entries.push([k, v]);
  return { [ORDERED]: entries };
}

// The case name is the file's path under the last `cases/` directory, without `.json`.
function nameFromPath(file) {
  const parts = path.resolve(file).split(path.sep);
  const i = parts.lastIndexOf('cases');
  if (i < 0 || i === parts.length - 1) return undefined;
  return parts.slice(i + 1).join('/').replace(/\.json$/, '');
}

function listCaseFiles(p) {
  const st = fs.statSync(p);
  if (st.isFile()) return [p];
  const out = [];
  for (const ent of fs.readdirSync(p, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const full = path.join(p, ent.name);
    if (ent.isDirectory()) out.push(...listCaseFiles(full));
    else if (ent.isFile() && ent.name.endsWith('.json')) out.push(full);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Modes

function recordFiles(paths, check) {
  const files = paths.flatMap(listCaseFiles);
  let failed = 0;
  let changed = 0;
  for (const file of files) {
    let kase;
    let ordered;
    try {
      const text = fs.readFileSync(file, 'utf8');
      kase = JSON.parse(text);
      ordered = parseOrdered(text);
      if (!isPlainObject(kase)) throw new Error('a case must be a JSON object');
    } catch (err) {
      console.error(`${file}: cannot read case: ${errorMessage(err)}`);
      failed++;
      continue;
    }
    let result;
    try {
      result = runCase(kase);
    } catch (err) {
      console.error(`${file}: cannot run case: ${errorMessage(err)}`);
      failed++;
      continue;
    }
    const name = nameFromPath(file) ?? kase.name;
    if (check) {
      const problems = [];
      if (!deepEqual(kase.expected, result.expected)) problems.push('expected');
      if ((kase.expectedError ?? null) !== (result.expectedError ?? null)) problems.push('expectedError');
      if (name !== undefined && kase.name !== name) problems.push(`name (want ${JSON.stringify(name)})`);
      if (problems.length > 0) {
        console.log(`${file}: differs from XState: ${problems.join(', ')}`);
        changed++;
      }
    } else {
      const text = stringifyOrdered(fillCase(ordered, result, name)) + '\n';
      if (fs.readFileSync(file, 'utf8') !== text) {
        fs.writeFileSync(file, text);
        changed++;
      }
    }
  }
  if (check) {
    console.log(`checked ${files.length} case(s): ${changed} differ, ${failed} failed to run`);
    return changed > 0 || failed > 0 ? 1 : 0;
  }
  console.log(`recorded ${files.length} case(s): ${changed} rewritten, ${failed} failed to run`);
  return failed > 0 ? 1 : 0;
}

// In --serve mode machines come from a random generator, so a machine that
// loops forever must not hang the server: past this many microsteps in one
// macrostep the case records XState's "Infinite loop detected" error.
const SERVE_MAX_ITERATIONS = 1000;

async function serve() {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    let out;
    try {
      const kase = JSON.parse(line);
      const ordered = parseOrdered(line);
      if (!isPlainObject(kase)) throw new Error('a case must be a JSON object');
      try {
        out = stringifyOrdered(fillCase(ordered, runCase(kase, { maxIterations: SERVE_MAX_ITERATIONS })), 0);
      } catch (err) {
        // The case could not be built or run (e.g. createMachine threw).
        const entries = ordered[ORDERED].filter(([k]) => k !== 'oracleError');
        entries.push(['oracleError', errorMessage(err)]);
        out = stringifyOrdered({ [ORDERED]: entries }, 0);
      }
    } catch (err) {
      out = JSON.stringify({ oracleError: `invalid case JSON: ${errorMessage(err)}` });
    }
    process.stdout.write(out + '\n');
  }
}

function usage() {
  console.error('usage: node record.mjs [--check] PATH...\n       node record.mjs --serve');
  return 2;
}

async function main(argv) {
  if (argv.includes('--serve')) {
    if (argv.length !== 1) return usage();
    await serve();
    return 0;
  }
  const check = argv.includes('--check');
  const paths = argv.filter((a) => a !== '--check');
  if (paths.length === 0 || paths.some((p) => p.startsWith('--'))) return usage();
  for (const p of paths) {
    if (!fs.existsSync(p)) {
      console.error(`${p}: no such file or directory`);
      return 2;
    }
  }
  return recordFiles(paths, check);
}

process.exitCode = await main(process.argv.slice(2));
