// simclock wire driver over Node's built-in `node:test` mock timers (MockTimers).
//
//     node node_test_driver.mjs
//
// Each protocol clock is the `timers` of its own MockTracker, enabled for setTimeout,
// setInterval and Date (the clock's `now` is its mocked `Date.now()`). Enabling replaces
// the globals, so the adapter keeps the functions each tracker installed and calls those;
// the trackers' queues stay separate. MockTimers has no count of pending timers, so
// `stored` is the adapter's own count of timers it set and has not seen fire or cleared.
// See wire.mjs for the mapping of the protocol onto JS timers.

import { mock } from "node:test";
import { serve } from "./wire.mjs";

const Tracker = mock.constructor;

serve({
  backend: `node:test mock.timers (node ${process.versions.node})`,
  features: ["start_ns"],
  makeClock(startMs) {
    const tracker = new Tracker();
    tracker.timers.enable({ apis: ["setTimeout", "setInterval", "Date"], now: startMs });
    const g = {
      setTimeout: globalThis.setTimeout,
      clearTimeout: globalThis.clearTimeout,
      setInterval: globalThis.setInterval,
      clearInterval: globalThis.clearInterval,
      Date: globalThis.Date,
    };
    let wire = null;
    return {
      now: () => g.Date.now(),
      setTimeout: (fn, delay) => g.setTimeout(fn, delay),
      clearTimeout: (h) => g.clearTimeout(h),
      setInterval: (fn, period) => g.setInterval(fn, period),
      clearInterval: (h) => g.clearInterval(h),
      tick: (ms) => tracker.timers.tick(ms),
      stored: (clock) => clock.pending(),
      drop: () => tracker.timers.reset(),
    };
  },
});
