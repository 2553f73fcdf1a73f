// A driver for @sinonjs/fake-timers: one createClock() per protocol clock (not the global one).
//
//     node peers/sinon.mjs [--node-modules DIR]
//
// The clock's own tick(), setTimeout/setInterval, clearTimeout/clearInterval and
// countTimers(); see timers.mjs for the mapping.

import { serve } from "../src/index.mjs";
import { TimerClock, libraryRequire } from "./timers.mjs";

const require = await libraryRequire();
const FakeTimers = require("@sinonjs/fake-timers");
const { version } = require("@sinonjs/fake-timers/package.json");

function sinonClock(startNs) {
  const clock = FakeTimers.createClock(Number(startNs));
  return new TimerClock({
    now: () => clock.now,
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms),
    clearTimeout: (id) => clock.clearTimeout(id),
    setInterval: (fn, ms) => clock.setInterval(fn, ms),
    clearInterval: (id) => clock.clearInterval(id),
    tick: (ms) => clock.tick(ms),
    count: () => clock.countTimers(),
    dispose: () => clock.reset(),
  });
}

serve({
  name: `@sinonjs/fake-timers ${version} (node ${process.versions.node})`,
  create: () => sinonClock(0n),
  createAt: (seed, startNs) => sinonClock(startNs),
});
