// This file maps the declarative forms of a case onto XState: conditions,
// assign expressions, `$ref` templates, the top-level guards/actions maps,
// and the declared `xstate.*` extensions inside a machine config.

import {
  assign,
  raise,
  cancel,
  log,
  and,
  or,
  not,
  stateIn,
  sendTo,
  sendParent,
  forwardTo,
  spawnChild,
  stopChild,
  emit,
  enqueueActions
} from 'xstate';
import { hasOwn, isPlainObject, deepEqual, lookup, MISSING, clone } from './json.mjs';

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
// Templates: JSON values in which every {"$ref": path} object, at any depth,
// is replaced by a copy of the value at that path of the scope. A path that
// is missing gives undefined, so the key is absent from the JSON.

function hasRef(v) {
  if (isRef(v)) return true;
  if (Array.isArray(v)) return v.some(hasRef);
  if (isPlainObject(v)) return Object.values(v).some(hasRef);
  return false;
}

export function validateTemplate(v, where) {
  if (isRef(v)) {
    if (typeof v.$ref !== 'string' || v.$ref === '') throw new Error(`${where}: $ref needs a dotted path string`);
    return;
  }
  if (Array.isArray(v)) v.forEach((x, i) => validateTemplate(x, `${where}[${i}]`));
  else if (isPlainObject(v)) for (const [k, x] of Object.entries(v)) validateTemplate(x, `${where}.${k}`);
}

export function resolveTemplate(v, scope) {
  if (isRef(v)) {
    const x = lookup(scope, v.$ref);
    return x === MISSING ? undefined : clone(x);
  }
  if (Array.isArray(v)) return v.map((x) => resolveTemplate(x, scope));
  if (isPlainObject(v)) {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = resolveTemplate(x, scope);
    return out;
  }
  return v;
}

// An event template: an object with a string type, resolved when the action runs.
function eventTemplate(ev, where) {
  if (!isPlainObject(ev) || typeof ev.type !== 'string') throw new Error(`${where}: needs an event object with a string type`);
  validateTemplate(ev, where);
  return ({ context, event }) => resolveTemplate(ev, { context, event });
}

// ---------------------------------------------------------------------------
// Top-level implementations (guards / actions / delays maps)

export function buildGuards(guards = {}, where = 'guards') {
  const impl = {};
  for (const [name, cond] of Object.entries(guards)) {
    if (isPlainObject(cond) && hasOwn(cond, 'stateIn')) {
      impl[name] = stateIn(cond.stateIn);
      continue;
    }
    validateCond(cond, `${where}.${name}`);
    impl[name] = ({ context, event }) => evalCond(cond, { context, event });
  }
  return impl;
}

export function buildActions(actions = {}, where = 'actions') {
  const impl = {};
  for (const [name, act] of Object.entries(actions)) {
    if (isPlainObject(act) && hasOwn(act, 'assign')) {
      impl[name] = makeAssign(act.assign, `${where}.${name}`);
    } else if (isPlainObject(act) && hasOwn(act, 'raise')) {
      if (!isPlainObject(act.raise) || typeof act.raise.type !== 'string') {
        throw new Error(`${where}.${name}: raise needs an event object with a type`);
      }
      impl[name] = raise(clone(act.raise));
    } else if (isPlainObject(act) && hasOwn(act, 'throw')) {
      // A custom action that fails when it runs, like a user's action that
      // throws: XState runs custom actions after it has computed the
      // macrostep's snapshot.
      if (typeof act.throw !== 'string') throw new Error(`${where}.${name}: throw needs a message string`);
      const message = act.throw;
      impl[name] = () => {
        throw new Error(message);
      };
    } else {
      throw new Error(`${where}.${name}: unknown action form ${JSON.stringify(act)}`);
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

// checkParams rejects unknown and missing params of a v2 declared action, so
// that a typo in a hand-written case is an error, not a silent no-op.
function checkParams(params, where, required, optional = []) {
  if (!isPlainObject(params)) throw new Error(`${where}.params: must be an object`);
  for (const k of Object.keys(params)) {
    if (!required.includes(k) && !optional.includes(k)) {
      throw new Error(`${where}.params: unknown key ${JSON.stringify(k)} (allowed: ${[...required, ...optional].join(', ')})`);
    }
  }
  for (const k of required) {
    if (!hasOwn(params, k)) throw new Error(`${where}.params: needs ${JSON.stringify(k)}`);
  }
}

// A sendTo/forwardTo target: a child id, or "#<systemId>" for the actor
// registered under that system id (XState's `({system}) => system.get(id)`).
function actorTarget(to, where) {
  if (typeof to !== 'string' || to === '') throw new Error(`${where}: "to" must be a child id or "#systemId"`);
  if (to.startsWith('#')) {
    const systemId = to.slice(1);
    return ({ system }) => system.get(systemId);
  }
  return to;
}

function delayOptions(params, where) {
  const opts = {};
  if (hasOwn(params, 'delay')) {
    if (typeof params.delay !== 'number' && typeof params.delay !== 'string') {
      throw new Error(`${where}.params.delay: must be milliseconds or a delay name`);
    }
    opts.delay = params.delay;
  }
  if (hasOwn(params, 'id')) {
    if (typeof params.id !== 'string') throw new Error(`${where}.params.id: must be a string`);
    opts.id = params.id;
  }
  return opts;
}

// One item of xstate.enqueueActions: {if, then?, else?} or an action.
function convertEnqueueItem(item, where) {
  if (!isPlainObject(item) || !hasOwn(item, 'if')) {
    const action = convertAction(item, where);
    return () => [action];
  }
  for (const k of Object.keys(item)) {
    if (!['if', 'then', 'else'].includes(k)) throw new Error(`${where}: unknown key ${JSON.stringify(k)} (allowed: if, then, else)`);
  }
  const branch = (key) => {
    const list = item[key] ?? [];
    if (!Array.isArray(list)) throw new Error(`${where}.${key}: must be an array of actions`);
    return list.map((a, i) => convertAction(a, `${where}.${key}[${i}]`));
  };
  const thenActions = branch('then');
  const elseActions = branch('else');
  let test;
  if (typeof item.if === 'string') {
    const name = item.if;
    test = ({ check }) => check(name);
  } else {
    validateCond(item.if, `${where}.if`);
    const cond = item.if;
    test = ({ context, event }) => evalCond(cond, { context, event });
  }
  return (args) => (test(args) ? thenActions : elseActions);
}

function convertAction(a, where) {
  if (Array.isArray(a)) return a.map((x, i) => convertAction(x, `${where}[${i}]`));
  if (!isPlainObject(a)) return a;
  const params = a.params ?? {};
  const at = `${where}(${a.type})`;
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
    case 'xstate.sendTo':
      checkParams(params, at, ['to', 'event'], ['delay', 'id']);
      return sendTo(actorTarget(params.to, `${at}.params.to`), eventTemplate(params.event, `${at}.params.event`), delayOptions(params, at));
    case 'xstate.sendParent':
      checkParams(params, at, ['event'], ['delay', 'id']);
      return sendParent(eventTemplate(params.event, `${at}.params.event`), delayOptions(params, at));
    case 'xstate.forwardTo':
      checkParams(params, at, ['to']);
      return forwardTo(actorTarget(params.to, `${at}.params.to`));
    case 'xstate.spawnChild': {
      checkParams(params, at, ['src', 'id'], ['input', 'systemId', 'syncSnapshot']);
      if (typeof params.src !== 'string') throw new Error(`${at}.params.src: must be an actor name`);
      if (typeof params.id !== 'string') throw new Error(`${at}.params.id: must be a string`);
      const opts = { id: params.id, syncSnapshot: params.syncSnapshot === true };
      if (hasOwn(params, 'systemId')) opts.systemId = params.systemId;
      if (hasOwn(params, 'input')) opts.input = inputFunction(params.input, `${at}.params.input`);
      return spawnChild(params.src, opts);
    }
    case 'xstate.stopChild':
      checkParams(params, at, ['id']);
      if (typeof params.id !== 'string') throw new Error(`${at}.params.id: must be a string`);
      return stopChild(params.id);
    case 'xstate.emit':
      checkParams(params, at, ['event']);
      return emit(eventTemplate(params.event, `${at}.params.event`));
    case 'xstate.enqueueActions': {
      checkParams(params, at, ['actions']);
      if (!Array.isArray(params.actions)) throw new Error(`${at}.params.actions: must be an array`);
      const items = params.actions.map((item, i) => convertEnqueueItem(item, `${at}.params.actions[${i}]`));
      return enqueueActions((args) => {
        for (const item of items) {
          for (const action of item(args)) {
            for (const one of Array.isArray(action) ? action : [action]) args.enqueue(one);
          }
        }
      });
    }
    default:
      return a;
  }
}

// An invoke or spawn input: XState calls it with the context and the event
// of the microstep that starts the child.
function inputFunction(input, where) {
  validateTemplate(input, where);
  return ({ context, event }) => resolveTemplate(input, { context, event });
}

// A final state's or the machine's output: literal unless it holds a $ref,
// then resolved from {context, event} when XState computes it.
function convertOutput(output, where) {
  if (!hasRef(output)) return output;
  validateTemplate(output, where);
  return ({ context, event }) => resolveTemplate(output, { context, event });
}

function convertTransition(t, where) {
  if (Array.isArray(t)) return t.map((x, i) => convertTransition(x, `${where}[${i}]`));
  if (!isPlainObject(t)) return t;
  const out = { ...t };
  if (hasOwn(out, 'guard')) out.guard = convertGuard(out.guard);
  if (hasOwn(out, 'actions')) out.actions = convertAction(out.actions, `${where}.actions`);
  return out;
}

const mapEntries = (obj, where, fn) =>
  Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fn(v, `${where}.${k}`)]));

function convertInvoke(inv, where) {
  if (!isPlainObject(inv)) return inv;
  const o = { ...inv };
  for (const k of ['onDone', 'onError', 'onSnapshot']) {
    if (hasOwn(o, k)) o[k] = convertTransition(o[k], `${where}.${k}`);
  }
  if (hasOwn(o, 'input')) o.input = inputFunction(o.input, `${where}.input`);
  return o;
}

// convertNode replaces the declared extensions of a state node config, and
// of its descendants, by XState's own functions.
export function convertNode(node, where = 'machine') {
  if (!isPlainObject(node)) return node;
  const out = { ...node };
  if (hasOwn(out, 'entry')) out.entry = convertAction(out.entry, `${where}.entry`);
  if (hasOwn(out, 'exit')) out.exit = convertAction(out.exit, `${where}.exit`);
  if (isPlainObject(out.initial) && hasOwn(out.initial, 'actions')) {
    out.initial = { ...out.initial, actions: convertAction(out.initial.actions, `${where}.initial.actions`) };
  }
  if (isPlainObject(out.on)) out.on = mapEntries(out.on, `${where}.on`, convertTransition);
  if (isPlainObject(out.after)) out.after = mapEntries(out.after, `${where}.after`, convertTransition);
  if (hasOwn(out, 'always')) out.always = convertTransition(out.always, `${where}.always`);
  if (hasOwn(out, 'onDone')) out.onDone = convertTransition(out.onDone, `${where}.onDone`);
  if (hasOwn(out, 'invoke')) {
    out.invoke = Array.isArray(out.invoke)
      ? out.invoke.map((inv, i) => convertInvoke(inv, `${where}.invoke[${i}]`))
      : convertInvoke(out.invoke, `${where}.invoke`);
  }
  if (hasOwn(out, 'output')) out.output = convertOutput(out.output, `${where}.output`);
  if (isPlainObject(out.route)) out.route = convertTransition(out.route, `${where}.route`);
  if (isPlainObject(out.states)) out.states = mapEntries(out.states, `${where}.states`, convertNode);
  return out;
}
