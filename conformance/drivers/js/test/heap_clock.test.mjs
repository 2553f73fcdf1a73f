// The reference heap clock of examples/, through its own API (SPEC §1).
import assert from "node:assert/strict";
import { test } from "node:test";
import { HeapClock } from "../examples/heap_clock.mjs";
import { Halt, RuntimeError, U64_MAX, ValueError } from "../src/index.mjs";

function recorder(clock) {
  const log = [];
  return [log, (name, extra = () => {}) => () => { log.push([name, clock.now()]); extra(); }];
}

test("C-TIE-1 C-ADV-1 equal times fire in push order, then now is the target", () => {
  const c = new HeapClock(0n);
  const [log, cb] = recorder(c);
  for (const name of ["a", "b", "c"]) c.schedule(5n, cb(name));
  c.schedule(3n, cb("early"));
  c.advance(10n);
  assert.deepEqual(log, [["early", 3n], ["a", 5n], ["b", 5n], ["c", 5n]]);
  assert.equal(c.now(), 10n);
});

test("C-SCH-1 a past time is a ValueError and changes nothing", () => {
  const c = new HeapClock(0n, 10n);
  assert.throws(() => c.schedule(9n, () => {}), { name: "ValueError", message: "at_ns=9 is in the past (now is 10 ns)" });
  assert.equal(c.stored(), 0);
});

test("C-PER-1 C-PER-2 a periodic starts on its grid and is re-pushed after its callback", () => {
  const c = new HeapClock(0n);
  const [log, cb] = recorder(c);
  c.advance(5n);
  c.schedulePeriodic(3n, 1n, cb("p")); // grid 1, 4, 7, ...: first at 7
  c.schedule(10n, cb("x"));
  c.advance(5n);
  assert.deepEqual(log, [["p", 7n], ["x", 10n], ["p", 10n]]);
  assert.throws(() => c.schedulePeriodic(0n, 0n, () => {}), ValueError);
});

test("C-ADV-4 C-ERR-1 C-ERR-2 nested advance refused, errors isolated, Halt let through", () => {
  const c = new HeapClock(0n);
  const [log, cb] = recorder(c);
  let nested = null;
  c.schedule(1n, cb("n", () => { try { c.advance(1n); } catch (err) { nested = err; } }));
  c.schedule(2n, cb("r", () => { throw new Error("isolated"); }));
  c.schedule(3n, cb("h", () => { throw new Halt("stop", "h", "3"); }));
  c.schedule(3n, cb("after"));
  assert.throws(() => c.advance(10n), { name: "Halt", message: "stop" });
  assert.ok(nested instanceof RuntimeError);
  assert.deepEqual(log, [["n", 1n], ["r", 2n], ["h", 3n]]);
  assert.equal(c.now(), 3n); // stopped at the halting entry
  c.advance(0n);
  assert.deepEqual(log.at(-1), ["after", 3n]);
});

test("C-TIME-4 computed times stay exact past 2**64-1; now never goes past it", () => {
  const c = new HeapClock(0n, U64_MAX - 1n);
  const [log, cb] = recorder(c);
  c.schedule(U64_MAX, cb("last", () => c.schedule(U64_MAX + 5n, cb("never"))));
  c.advance(1n);
  assert.deepEqual([log, c.nextEvent()], [[["last", U64_MAX]], U64_MAX + 5n]);
  assert.throws(() => c.advance(1n), ValueError);
  assert.equal(c.now(), U64_MAX);
});

test("C-CAN-1..4 C-X-PEEK cancel is a tombstone, compacted past 2*live + 64", () => {
  const c = new HeapClock(0n);
  const keep = c.schedule(1000n, () => {});
  const handles = [];
  for (let i = 0; i < 200; i++) handles.push(c.schedule(BigInt(i), () => {}));
  for (const h of handles) c.cancel(h);
  c.cancel(handles[0]); // again: nothing
  assert.ok(c.stored() <= 2 * 1 + 64, `stored ${c.stored()}`);
  assert.equal(c.nextEvent(), 1000n); // tombstones at the root leave on the way
  assert.equal(c.stored(), 1);
  c.advance(1000n);
  c.cancel(keep); // already fired: a no-op
  assert.deepEqual([c.stored(), c.nextEvent(), c.stats(keep).fired], [0, null, 1]);
});

test("C-X-RATE C-X-STATS a 30 Hz grid fires at ceil(k * 1e9 / 30) and counts its firings", () => {
  const c = new HeapClock(0n);
  const [log, cb] = recorder(c);
  const cam = c.scheduleRate(30n, 1n, 0n, cb("cam"));
  c.advance(1_000_000_000n);
  assert.equal(log.length, 31);
  assert.deepEqual(log.slice(0, 3).map(([, t]) => t), [0n, 33333334n, 66666667n]);
  assert.deepEqual(log.at(-1), ["cam", 1_000_000_000n]);
  assert.deepEqual(c.stats(cam), { fired: 31, skipped: 0, overruns: 0 });
  assert.throws(() => c.scheduleRate(2_000_000_000n, 1n, 0n, () => {}), ValueError);
});
