// simclock wire driver over @sinonjs/fake-timers (its own clock, not the global one).
//
//     node sinon_driver.mjs [--node-modules DIR]
//
// `createClock(start)` gives an independent clock per protocol clock; `stored` is the
// clock's own `countTimers()`. See wire.mjs for the mapping of the protocol onto JS
// timers (one protocol ns is one clock unit). DIR is where `npm ci` put node_modules
// (default: next to this file).

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "./wire.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const flag = process.argv.indexOf("--node-modules");
const modules = flag >= 0 ? process.argv[flag + 1] : path.join(here, "node_modules");
const require = createRequire(path.join(modules, "..", "package.json"));
const FakeTimers = require("@sinonjs/fake-timers");
const version = require("@sinonjs/fake-timers/package.json").version;

serve({
  backend: `@sinonjs/fake-timers ${version} (node ${process.versions.node})`,
  features: ["start_ns"],
  makeClock(startMs) {
    const clock = FakeTimers.createClock(startMs);
    return {
      now: () => clock.now,
      setTimeout: (fn, delay) => clock.setTimeout(fn, delay),
      clearTimeout: (h) => clock.clearTimeout(h),
      setInterval: (fn, period) => clock.setInterval(fn, period),
      clearInterval: (h) => clock.clearInterval(h),
      tick: (ms) => clock.tick(ms),
      stored: () => clock.countTimers(),
      drop: () => clock.reset(),
    };
  },
});
