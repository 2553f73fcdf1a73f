// A driver for Jest's fake timers (@jest/fake-timers), driven as a Jest test drives them.
//
//     node peers/jest.mjs [--legacy] [--node-modules DIR]
//
// Each protocol clock is one fake-timers object on its own global object (the functions a
// test sees as `setTimeout`, `setInterval`, `clearTimeout`, `clearInterval` and `Date`):
// `jest.useFakeTimers({now})` installs it, callbacks read `jest.now()`, an advance is
// `jest.advanceTimersByTime(ms)`, `stored` is `jest.getTimerCount()`.
//
// Default: "modern" timers (ModernFakeTimers, @sinonjs/fake-timers underneath). With
// --legacy: `jest.useFakeTimers({legacyFakeTimers: true})`, Jest's own LegacyFakeTimers,
// which start at 0 and take no start time: a clock created at start_ns is advanced there
// first, as a test would.
// Jest's own default start is the wall clock (Date.now()); a test that needs times from 0
// says `jest.useFakeTimers({now: 0})`, which is what this adapter does.

import { serve } from "../src/index.mjs";
import { TimerClock, libraryRequire } from "./timers.mjs";

const require = await libraryRequire();
const { ModernFakeTimers, LegacyFakeTimers } = require("@jest/fake-timers");
const { ModuleMocker } = require("jest-mock");
const { version } = require("@jest/fake-timers/package.json");
const legacy = process.argv.includes("--legacy");

// Jest's defaults for the project config fields the fake timers read.
const config = { fakeTimers: { enableGlobally: false }, rootDir: process.cwd(), testMatch: [] };

function testGlobal() {
  // The test environment's global: the real functions until the fake timers replace them.
  const { setTimeout, clearTimeout, setInterval, clearInterval } = globalThis;
  return {
    Date, setTimeout, clearTimeout, setInterval, clearInterval, console,
    process: { nextTick: process.nextTick },
  };
}

function jestClock(startNs) {
  const global = testGlobal();
  let jest;
  if (legacy) {
    jest = new LegacyFakeTimers({
      config,
      global,
      moduleMocker: new ModuleMocker(globalThis), // what jest.fn() is made with
      timerConfig: { idToRef: (id) => id, refToId: (ref) => ref },
    });
    jest.useFakeTimers();
    if (startNs > 0n) jest.advanceTimersByTime(Number(startNs));
  } else {
    jest = new ModernFakeTimers({ config, global });
    jest.useFakeTimers({ now: Number(startNs) });
  }
  return new TimerClock({
    now: () => jest.now(),
    setTimeout: (fn, ms) => global.setTimeout(fn, ms),
    clearTimeout: (id) => global.clearTimeout(id),
    setInterval: (fn, ms) => global.setInterval(fn, ms),
    clearInterval: (id) => global.clearInterval(id),
    tick: (ms) => jest.advanceTimersByTime(ms),
    count: () => jest.getTimerCount(),
    dispose: () => jest.dispose(),
  });
}

serve({
  name: `@jest/fake-timers ${version} ${legacy ? "legacy" : "modern"} (node ${process.versions.node})`,
  create: () => jestClock(0n),
  createAt: (seed, startNs) => jestClock(startNs),
});
