// A driver for Node's built-in node:test mock timers (MockTimers), no npm package needed.
//
//     node --no-warnings peers/node-mock-timers.mjs
//
// Each protocol clock is the `timers` of its own MockTracker, enabled for setTimeout,
// setInterval and Date (the clock's time is its mocked Date.now()). Enabling replaces the
// globals, so the functions each tracker installed are kept and called; the trackers'
// queues stay separate. MockTimers has no count of its timers: `stored` is the adapter's
// count (see timers.mjs).

import { mock } from "node:test";
import { serve } from "../src/index.mjs";
import { TimerClock } from "./timers.mjs";

const Tracker = mock.constructor;

function mockClock(startNs) {
  const tracker = new Tracker();
  tracker.timers.enable({ apis: ["setTimeout", "setInterval", "Date"], now: Number(startNs) });
  const g = {
    setTimeout: globalThis.setTimeout,
    clearTimeout: globalThis.clearTimeout,
    setInterval: globalThis.setInterval,
    clearInterval: globalThis.clearInterval,
    Date: globalThis.Date,
  };
  return new TimerClock({
    now: () => g.Date.now(),
    setTimeout: (fn, ms) => g.setTimeout(fn, ms),
    clearTimeout: (h) => g.clearTimeout(h),
    setInterval: (fn, ms) => g.setInterval(fn, ms),
    clearInterval: (h) => g.clearInterval(h),
    tick: (ms) => tracker.timers.tick(ms),
    dispose: () => tracker.timers.reset(),
  });
}

serve({
  name: `node:test mock.timers (node ${process.versions.node})`,
  create: () => mockClock(0n),
  createAt: (seed, startNs) => mockClock(startNs),
});
