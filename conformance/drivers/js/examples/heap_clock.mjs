// A reference clock on simclock-driver: a binary heap keyed (at, seq), BigInt times (SPEC §1).
// As a driver: python -m simclock_conformance --driver -- node examples/heap_clock.mjs
// Equal times fire in push order (C-TIE-1); a grid entry is re-pushed after its callback with a
// fresh seq (C-PER-2); a cancelled entry is a tombstone until it reaches the root or tombstones
// pass 2*live + 64 (C-CAN-4). Computed times (now + delay, grid points) stay exact past 2**64-1.
import { pathToFileURL } from "node:url";
import { Halt, RandomStreams, RuntimeError, U64_MAX, ValueError, periodicIndex, rateIndex, rateOffset, serve } from "simclock-driver";

const before = (x, y) => x.at < y.at || (x.at === y.at && x.seq < y.seq);

export class HeapClock {
  #now; #seq = 0; #heap = []; #dead = 0; #running = false; #streams;
  constructor(seed, startNs = 0n) { this.#now = startNs; this.#streams = new RandomStreams(seed); }
  now() { return this.#now; }
  stored() { return this.#heap.length; }
  stream(labels) { return this.#streams.stream(labels); }
  stats(e) { return { fired: e.fired, skipped: 0, overruns: 0 }; }
  nextEvent() {
    while (this.#heap.length > 0 && this.#heap[0].state !== "pending") { this.#pop(); this.#dead--; }
    return this.#heap.length > 0 ? this.#heap[0].at : null;
  }
  schedule(at, cb) {
    if (at < this.#now) throw new ValueError(`at_ns=${at} is in the past (now is ${this.#now} ns)`);
    return this.#push({ cb, state: "pending", fired: 0 }, at);
  }
  schedulePeriodic(period, phase, cb) {
    if (period === 0n) throw new ValueError("period_ns must be > 0, got 0");
    return this.#grid(cb, (k) => phase + k * period, periodicIndex(this.#now, phase, period));
  }
  scheduleRate(num, den, phase, cb) {
    if (num === 0n || num > 1_000_000_000n * den) throw new ValueError(`rate_hz must be in (0, 1e9], got ${num}/${den}`);
    return this.#grid(cb, (k) => phase + rateOffset(k, num, den), rateIndex(this.#now, phase, num, den));
  }
  cancel(e) {
    if (e.state === "pending") { e.state = "cancelled"; this.#dead++; this.#compact(); }
    else if (e.state === "running") e.state = "cancelled"; // from its own callback: not re-armed
  }
  advance(dt) {
    if (this.#running) throw new RuntimeError("advance() from inside a callback (C-ADV-4)");
    const target = this.#now + dt;
    if (target > U64_MAX) throw new ValueError(`advance(${dt}) would take now past 2**64-1 ns`);
    this.#running = true;
    try {
      while (this.#heap.length > 0 && this.#heap[0].at <= target) {
        const e = this.#pop();
        if (e.state !== "pending") { this.#dead--; continue; }
        this.#now = e.at; e.state = "running"; e.fired++;
        try { e.cb(); } catch (err) { if (err instanceof Halt) { this.#rearm(e); throw err; } } // C-ERR-1/2
        this.#rearm(e);
      }
      this.#now = target;
    } finally { this.#running = false; this.#compact(); }
  }
  #grid(cb, timeOf, k) { return this.#push({ cb, state: "pending", fired: 0, timeOf, k }, timeOf(k)); }
  #rearm(e) {
    if (e.state !== "running") return;
    if (e.timeOf === undefined) e.state = "fired";
    else { e.state = "pending"; e.k++; this.#push(e, e.timeOf(e.k)); }
  }
  #compact() {
    if (this.#heap.length <= 2 * (this.#heap.length - this.#dead) + 64) return;
    this.#heap = this.#heap.filter((e) => e.state === "pending").sort((x, y) => (before(x, y) ? -1 : 1)); // sorted is a heap
    this.#dead = 0;
  }
  #push(e, at) {
    const h = this.#heap; let i = h.push(Object.assign(e, { at, seq: this.#seq++ })) - 1;
    for (; i > 0 && before(e, h[(i - 1) >> 1]); i = (i - 1) >> 1) h[i] = h[(i - 1) >> 1];
    h[i] = e;
    return e;
  }
  #pop() {
    const h = this.#heap; const top = h[0]; const last = h.pop();
    let i = 0;
    for (let c = 1; c < h.length; i = c, c = 2 * i + 1) {
      if (c + 1 < h.length && before(h[c + 1], h[c])) c++;
      if (!before(h[c], last)) break;
      h[i] = h[c];
    }
    if (h.length > 0) h[i] = last;
    return top;
  }
}

export const backend = { name: "simclock-js-heap", create: (seed) => new HeapClock(seed), createAt: (seed, start) => new HeapClock(seed, start) };

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) serve(backend);
