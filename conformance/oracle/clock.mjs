// This file defines the two clocks a case can run on and `settle`, which
// lets every settled promise deliver its callbacks.
//
// "simulated" is XState's SimulatedClock: advancing it fires every due timer
// synchronously, so no promise callback runs until the whole advance is over.
//
// "eventloop" is EventLoopClock: advancing it fires one timer at a time, the
// earliest due first and, among timers due at the same time, the one
// registered first; after each timer it waits until every promise callback
// the timer caused has run, as Node's event loop runs microtasks between two
// timer callbacks.

import { SimulatedClock } from 'xstate';

// settle resolves once every pending microtask (promise callback) has run,
// including the ones those callbacks queue: setImmediate runs only when the
// microtask queue is empty. Nothing in a case uses real timers or I/O.
export const settle = () => new Promise((resolve) => setImmediate(resolve));

// EventLoopClock is a virtual-time clock with XState's clock interface
// (setTimeout, clearTimeout) plus now() and advance().
export class EventLoopClock {
  constructor(now = 0) {
    this._now = now;
    this._seq = 0;
    this._timers = new Map(); // id -> {due, fn}, in registration order
  }

  now() {
    return this._now;
  }

  setTimeout(fn, ms) {
    const id = ++this._seq;
    this._timers.set(id, { due: this._now + ms, fn });
    return id;
  }

  clearTimeout(id) {
    this._timers.delete(id);
  }

  // advance moves the time forward by ms. Until no timer is due at or
  // before the end time: take the timer with the smallest due time (the first
  // registered among equals), set the time to its due time, run it, and
  // settle. Timers that the runs register are candidates too. The time is
  // then the end time.
  async advance(ms) {
    const end = this._now + ms;
    for (;;) {
      let nextId;
      let next;
      for (const [id, t] of this._timers) {
        if (t.due <= end && (next === undefined || t.due < next.due)) {
          nextId = id;
          next = t;
        }
      }
      if (next === undefined) break;
      this._timers.delete(nextId);
      if (next.due > this._now) this._now = next.due;
      next.fn.call(null);
      await settle();
    }
    this._now = end;
  }
}

// newClock returns the clock of a case ("simulated" or "eventloop") at the
// given time, with an async advance(ms) that ends once promises settled.
export function newClock(kind, now = 0) {
  if (kind === 'eventloop') return new EventLoopClock(now);
  const clock = new SimulatedClock();
  if (now > 0) clock.set(now);
  clock.advance = async (ms) => {
    clock.increment(ms);
    await settle();
  };
  return clock;
}
