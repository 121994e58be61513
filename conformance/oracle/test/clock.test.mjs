// This file tests the two clocks of clock.mjs: the order in which the
// event-loop clock fires timers, that it lets promise callbacks run between
// two timers, and how that differs from XState's SimulatedClock.

import test from 'node:test';
import assert from 'node:assert/strict';
import { EventLoopClock, newClock, settle } from '../clock.mjs';

test('earliest due first, then registration order', async () => {
  const clock = new EventLoopClock();
  const log = [];
  clock.setTimeout(() => log.push('b30'), 30);
  clock.setTimeout(() => log.push('a10'), 10);
  clock.setTimeout(() => log.push('c30'), 30);
  clock.setTimeout(() => log.push('d10'), 10);
  await clock.advance(30);
  assert.deepEqual(log, ['a10', 'd10', 'b30', 'c30']);
  assert.equal(clock.now(), 30);
});

test('a timer due exactly at the end fires, a later one waits; time ends at the end', async () => {
  const clock = new EventLoopClock(5);
  const log = [];
  clock.setTimeout(() => log.push('at 15'), 10);
  clock.setTimeout(() => log.push('at 16'), 11);
  await clock.advance(10);
  assert.deepEqual(log, ['at 15']);
  assert.equal(clock.now(), 15);
  await clock.advance(1);
  assert.deepEqual(log, ['at 15', 'at 16']);
});

test('timers registered while advancing count from the time of the timer that registered them', async () => {
  const clock = new EventLoopClock();
  const log = [];
  clock.setTimeout(() => {
    log.push(`first at ${clock.now()}`);
    clock.setTimeout(() => log.push(`chained at ${clock.now()}`), 5);
  }, 10);
  clock.setTimeout(() => log.push(`other at ${clock.now()}`), 20);
  await clock.advance(30);
  assert.deepEqual(log, ['first at 10', 'chained at 15', 'other at 20']);
});

test('promise callbacks caused by a timer run before the next timer', async () => {
  const clock = new EventLoopClock();
  const log = [];
  const settled = new Promise((resolve) => clock.setTimeout(() => resolve('p'), 10));
  settled.then((v) => {
    log.push(`${v} delivered at ${clock.now()}`);
    clock.setTimeout(() => log.push(`scheduled by p fires at ${clock.now()}`), 0);
  });
  clock.setTimeout(() => log.push(`timer at ${clock.now()}`), 10);
  clock.setTimeout(() => log.push(`timer at ${clock.now()}`), 12);
  await clock.advance(12);
  // The timer p registered is due at 10 like the second timer, but was
  // registered after it; both come before the timer due at 12.
  assert.deepEqual(log, ['p delivered at 10', 'timer at 10', 'scheduled by p fires at 10', 'timer at 12']);
});

test('SimulatedClock runs every due timer before any promise callback', async () => {
  const clock = newClock('simulated');
  const log = [];
  const settled = new Promise((resolve) => clock.setTimeout(() => resolve('p'), 10));
  settled.then((v) => log.push(`${v} delivered at ${clock.now()}`));
  clock.setTimeout(() => log.push(`timer at ${clock.now()}`), 10);
  clock.setTimeout(() => log.push(`timer at ${clock.now()}`), 20);
  await clock.advance(20);
  assert.deepEqual(log, ['timer at 20', 'timer at 20', 'p delivered at 20']);
});

test('clearTimeout removes a timer; a fresh clock starts at the given time', async () => {
  const clock = newClock('eventloop', 100);
  const log = [];
  const id = clock.setTimeout(() => log.push('cleared'), 1);
  clock.setTimeout(() => log.push(`kept at ${clock.now()}`), 1);
  clock.clearTimeout(id);
  await clock.advance(1);
  assert.deepEqual(log, ['kept at 101']);
  const sim = newClock('simulated', 100);
  assert.equal(sim.now(), 100);
});

test('settle waits for chained promise callbacks', async () => {
  const log = [];
  Promise.resolve()
    .then(() => log.push(1))
    .then(() => Promise.resolve())
    .then(() => log.push(2));
  await settle();
  assert.deepEqual(log, [1, 2]);
});
