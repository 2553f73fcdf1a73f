// The scripted careless clock of the kits' shared transcript: it breaks the contract on
// purpose, so that every rule of "What a kit reports" (docs/kits.md) is reached once.
// conformance/transcripts/careless.py is the reference; the replies to
// careless.requests.jsonl must be those of careless.replies.jsonl, byte for byte.
// JavaScript has one thread: the callbacks the other kits run on a thread of their own
// (entries at a multiple of 100 ns) run on this one.
import { Halt, RuntimeError, ValueError, serve } from "simclock-driver";

const HORIZON = 1_000_000n;

/** An error of the adapter's own kind, none of the protocol's: reported as internal. */
class Deadlock extends Error {
  get name() {
    return "Deadlock";
  }
}

class CarelessClock {
  #now = 0n;
  #seq = 0n;
  #depth = 0;
  #pending = [];
  now() { return this.#now; }
  stored() { return BigInt(this.#pending.length); }
  #push(e) {
    e.seq = this.#seq++;
    this.#pending.push(e);
    return e;
  }
  schedule(at, f) {
    if (at < this.#now) throw new ValueError(`at_ns ${at} is before now ${this.#now}`);
    if (at > HORIZON) throw new ValueError(`at_ns ${at} is past the horizon ${HORIZON}`);
    if (at === 4242n) throw new TypeError("at_ns 4242 is unlucky");
    if (at === this.#now && this.#depth === 0) { // careless: fires inside schedule
      this.#depth++;
      try { f(); } finally { this.#depth--; }
      return {};
    }
    return this.#push({ at, period: 0n, f });
  }
  schedulePeriodic(period, phase, f) {
    if (period === 0n) throw new ValueError("period_ns must be > 0");
    let first = phase;
    if (first < this.#now) first += (this.#now - phase + period - 1n) / period * period;
    return this.#push({ at: first, period, f });
  }
  cancel(e) {
    const i = this.#pending.indexOf(e);
    if (i >= 0) this.#pending.splice(i, 1);
  }
  advance(dt) {
    if (this.#depth > 0) {
      if (dt === 13n) throw new Deadlock("a nested advance of 13 ns would deadlock");
      if (dt > 10n) throw new RuntimeError("advance from inside a callback");
      return; // careless: accepted and ignored
    }
    if (dt === 666n) throw new Deadlock("advance of 666 ns would deadlock");
    const target = this.#now + dt;
    for (;;) {
      let next = null;
      for (const e of this.#pending) {
        if (e.at <= target && (next === null || e.at < next.at || (e.at === next.at && e.seq < next.seq))) next = e;
      }
      if (next === null) break;
      this.cancel(next);
      const at = next.at;
      this.#now = at;
      let error = null;
      this.#depth++;
      try { next.f(); } catch (err) { error = err; } finally { this.#depth--; }
      if (next.period > 0n) { // the same entry, so that its handle still cancels it
        next.at += next.period;
        this.#push(next);
      }
      if (error !== null && (error instanceof Halt || at % 2n === 1n)) throw error; // careless: odd times
    }
    this.#now = target;
  }
}

serve({ name: "careless:clock", create: () => new CarelessClock() });
