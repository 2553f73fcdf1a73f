// The smallest complete backend: a sorted list, no optional feature but the random streams.
import { Halt, RandomStreams, RuntimeError, U64_MAX, ValueError, periodicIndex, serve } from "simclock-driver";

class ListClock {
  #now = 0n;
  #due = []; // (at, push order): each entry goes after every entry due at or before its time
  #running = false;
  #streams;
  constructor(seed) { this.#streams = new RandomStreams(seed); }
  now() { return this.#now; }
  stored() { return this.#due.length; }
  stream(labels) { return this.#streams.stream(labels); }
  schedule(at, cb) {
    if (at < this.#now) throw new ValueError(`at_ns=${at} is before now (${this.#now} ns)`);
    return this.#insert({ at, cb });
  }
  schedulePeriodic(period, phase, cb) {
    if (period === 0n) throw new ValueError("period_ns must be > 0, got 0");
    return this.#insert({ at: phase + periodicIndex(this.#now, phase, period) * period, period, cb });
  }
  cancel(e) {
    e.cancelled = true;
    const i = this.#due.indexOf(e);
    if (i >= 0) this.#due.splice(i, 1);
  }
  advance(dt) {
    if (this.#running) throw new RuntimeError("advance() from inside a callback");
    const target = this.#now + dt;
    if (target > U64_MAX) throw new ValueError(`advance(${dt}) would take now past 2**64-1 ns`);
    this.#running = true;
    try {
      while (this.#due.length > 0 && this.#due[0].at <= target) {
        const e = this.#due.shift();
        this.#now = e.at;
        try { e.cb(); } catch (err) { if (err instanceof Halt) { this.#rearm(e); throw err; } }
        this.#rearm(e);
      }
      this.#now = target;
    } finally { this.#running = false; }
  }
  #rearm(e) {
    if (e.period !== undefined && !e.cancelled) { e.at += e.period; this.#insert(e); }
  }
  #insert(e) {
    let i = this.#due.length;
    while (i > 0 && this.#due[i - 1].at > e.at) i--;
    this.#due.splice(i, 0, e);
    return e;
  }
}

serve({ name: "minimal-list-clock", create: (seed) => new ListClock(seed) });
