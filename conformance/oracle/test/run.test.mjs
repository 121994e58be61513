// This file tests runCase on small cases: which cases are v2, what
// `received` and `emitted` hold, and that bad v2 forms are errors that say
// where they are.

import test from 'node:test';
import assert from 'node:assert/strict';
import { runCase, isV2 } from '../run.mjs';

const loading = {
  id: 'm',
  initial: 'loading',
  states: { loading: { invoke: { src: 'p', id: 'p', onDone: 'ready' } }, ready: {} }
};

test('isV2: a v2 top-level key or a v2 step', () => {
  const m = { initial: 'a', states: { a: {} } };
  assert.equal(isV2({ machine: m, steps: [{ event: { type: 'E' } }, { advance: 1 }] }), false);
  for (const extra of [{ input: null }, { actors: {} }, { clock: 'simulated' }, { snapshot: {} }]) {
    assert.equal(isV2({ machine: m, steps: [], ...extra }), true, JSON.stringify(extra));
  }
  for (const step of [{ persist: 'x' }, { query: { hasTag: 't' } }]) {
    assert.equal(isV2({ machine: m, steps: [step] }), true, JSON.stringify(step));
  }
});

test('a v1 case records v1 snapshots only', async () => {
  const { expected } = await runCase({
    machine: { initial: 'a', states: { a: { after: { 10: 'b' } }, b: {} } },
    steps: [{ advance: 10 }]
  });
  assert.deepEqual(expected, [
    { value: 'a', status: 'active', context: {} },
    { value: 'b', status: 'active', context: {} }
  ]);
});

test('received lists the events the root processed, step by step', async () => {
  const { expected } = await runCase({
    clock: 'eventloop',
    machine: { ...loading, states: { ...loading.states, loading: { ...loading.states.loading, on: { POKE: {} } } } },
    actors: { p: { promise: { resolve: 1, after: 10 } } },
    steps: [{ event: { type: 'POKE' } }, { advance: 10 }, { event: { type: 'LATE' } }]
  });
  assert.deepEqual(expected.map((s) => s.received), [[], ['POKE'], ['xstate.done.actor.p'], ['LATE']]);
  assert.deepEqual(expected[0].children, { p: { src: 'p', status: 'active' } });
  assert.equal(expected[2].children, undefined);
});

test('emitted holds whole events, only when there are some', async () => {
  const { expected } = await runCase({
    machine: { initial: 'a', states: { a: { on: { GO: { actions: { type: 'xstate.emit', params: { event: { type: 'out', v: { $ref: 'event.v' } } } } } } } } },
    steps: [{ event: { type: 'GO', v: 3 } }, { event: { type: 'OTHER' } }],
    actors: {}
  });
  assert.deepEqual(expected[1].emitted, [{ type: 'out', v: 3 }]);
  assert.equal(expected[2].emitted, undefined);
});

test('a step that never settles fails the case', async () => {
  await assert.rejects(
    runCase({
      machine: {
        initial: 'a',
        states: { a: { invoke: { src: 'c', id: 'c' }, on: { PING: { actions: { type: 'xstate.sendTo', params: { to: 'c', event: { type: 'PING' } } } } } } }
      },
      actors: { c: { callback: { onReceive: { PING: [{ type: 'PING' }] } } } },
      steps: [{ event: { type: 'PING' } }]
    }),
    /steps\[0\]: the root processed more than 10000 events/
  );
});

test('bad v2 forms name where they are', async () => {
  const m = { initial: 'a', states: { a: {} } };
  const cases = [
    [{ machine: m, steps: [{ restore: 'x' }] }, /steps\[0\]: no earlier persist step named "x"/],
    [{ machine: m, steps: [{ query: { hasState: 'a' } }] }, /steps\[0\]\.query: a query is one of/],
    [{ machine: m, clock: 'wall', steps: [] }, /clock: must be "simulated" or "eventloop"/],
    [{ machine: loading, actors: { p: { promise: { resolve: 1, reject: 2 } } }, steps: [] }, /actors\.p\.promise: needs exactly one of resolve or reject/],
    [{ machine: loading, actors: { p: { thread: {} } }, steps: [] }, /actors\.p: must be \{"promise"/],
    [{ machine: loading, actors: { p: { callback: { send: [{ at: -1, event: { type: 'E' } }] } } }, steps: [] }, /actors\.p\.callback\.send\[0\]\.at: must be a non-negative number/],
    [
      { machine: { initial: 'a', states: { a: { entry: { type: 'xstate.sendTo', params: { to: 'x', event: { type: 'E' }, dealy: 5 } } } } }, steps: [] },
      /machine\.states\.a\.entry\(xstate\.sendTo\)\.params: unknown key "dealy"/
    ],
    [
      { machine: loading, actors: { p: { machine: { machine: { initial: 'a', states: { a: { entry: { type: 'xstate.emit', params: {} } } } } } } }, steps: [] },
      /actors\.p\.machine\.machine\.states\.a\.entry\(xstate\.emit\)\.params: needs "event"/
    ],
    [{ machine: m, actions: { boom: { throw: 3 } }, steps: [] }, /actions\.boom: throw needs a message string/]
  ];
  for (const [kase, want] of cases) await assert.rejects(runCase(kase), want);
});

test('snapshot: the actor starts from a persisted snapshot, children restarted', async () => {
  const kase = {
    clock: 'eventloop',
    machine: { ...loading, context: { n: 0 } },
    actors: { p: { promise: { resolve: { $ref: 'input.x' }, after: 10 } } },
    snapshot: {
      status: 'active',
      value: 'loading',
      context: { n: 5 },
      historyValue: {},
      children: { p: { snapshot: { status: 'active', input: { x: 'again' } }, src: 'p', syncSnapshot: false } },
      nodes: ['m', 'm.loading'],
      seq: 3
    },
    steps: [{ advance: 10 }]
  };
  const { expected } = await runCase(kase);
  assert.deepEqual(expected[0], { value: 'loading', status: 'active', context: { n: 5 }, children: { p: { src: 'p', status: 'active' } }, received: [] });
  assert.deepEqual(expected[1].value, 'ready');
  assert.deepEqual(expected[1].received, ['xstate.done.actor.p']);
  await assert.rejects(runCase({ ...kase, snapshot: 3 }), /snapshot: must be a persisted snapshot object/);
});
