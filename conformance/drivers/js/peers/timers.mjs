// A simclock-driver clock over a JavaScript timer API (setTimeout/setInterval and a tick),
// shared by the peer drivers. It maps the protocol the way a JS user would write it and
// leaves every time semantic to the library:
//
// - one protocol nanosecond is one unit of the JS clock (what JS calls a millisecond);
//   the kit's BigInts become JS Numbers here, as a JS user's times are, so times above
//   2**53 are rounded by the library's own arithmetic;
// - schedule(at)           -> setTimeout(cb, at - now), a past `at` a negative delay;
// - schedulePeriodic(p, f) -> setTimeout to the first grid point f + k*p >= now, then
//   setInterval(cb, p) started from inside that first firing (after its callback, even a
//   throwing one): JS intervals have no phase;
// - cancel -> clearTimeout and clearInterval; advance(dt) -> the library's tick(dt);
// - stored() -> the library's count of timers, or, for a library without one, the timers
//   this adapter set and has seen neither fire (a one-shot) nor cleared.

import { periodicIndex } from "../src/index.mjs";

const big = (n) => (Number.isInteger(n) ? BigInt(n) : n);

export class TimerClock {
  #live = new Set();

  /**
   * `api`: now() -> Number, setTimeout(fn, ms), clearTimeout(h), setInterval(fn, ms),
   * clearInterval(h), tick(ms), count() -> Number (optional), dispose() (optional).
   */
  constructor(api) {
    this.api = api;
  }

  now() {
    return big(this.api.now());
  }

  stored() {
    return this.api.count ? this.api.count() : this.#live.size;
  }

  schedule(at, cb) {
    const h = { timers: [] };
    this.#live.add(h);
    h.timers.push(this.api.setTimeout(() => {
      this.#live.delete(h);
      cb();
    }, Number(at) - this.api.now()));
    return h;
  }

  schedulePeriodic(period, phase, cb) {
    // A grid needs a positive period; JS would take an interval of 0 as "as soon as possible".
    if (period === 0n) throw new RangeError("period_ns must be > 0, got 0");
    const now = BigInt(Math.trunc(this.api.now()));
    const first = phase + periodicIndex(now, phase, period) * period;
    const h = { timers: [], cancelled: false };
    this.#live.add(h);
    h.timers.push(this.api.setTimeout(() => {
      try {
        cb();
      } finally {
        if (!h.cancelled) h.timers.push(this.api.setInterval(cb, Number(period)));
      }
    }, Number(first) - this.api.now()));
    return h;
  }

  cancel(h) {
    h.cancelled = true;
    this.#live.delete(h);
    for (const t of h.timers) {
      this.api.clearTimeout(t);
      this.api.clearInterval(t);
    }
  }

  advance(dt) {
    this.api.tick(Number(dt));
  }

  dispose() {
    this.api.dispose?.();
  }
}

/**
 * `require` for the libraries: from `--node-modules DIR` (where `npm ci` put them, as the
 * tests do), else from the node_modules next to package.json.
 */
export async function libraryRequire() {
  const { createRequire } = await import("node:module");
  const path = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const here = path.dirname(fileURLToPath(import.meta.url));
  const flag = process.argv.indexOf("--node-modules");
  const modules = flag >= 0 ? process.argv[flag + 1] : path.join(here, "..", "node_modules");
  return createRequire(path.join(path.resolve(modules), "..", "package.json"));
}
