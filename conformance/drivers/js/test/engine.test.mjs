// The protocol engine and the request loop (SPEC C-WIRE-1..5): what the kit answers, and
// that it adds nothing the clock does not do.
import assert from "node:assert/strict";
import { PassThrough, Readable } from "node:stream";
import { test } from "node:test";
import { backend as heap } from "../examples/heap_clock.mjs";
import { Engine, Halt, MAX_FIRED, RuntimeError, ValueError, serve } from "../src/index.mjs";
import { streamCases } from "./bits.test.mjs";

/**
 * A small clock for probing the engine: a list kept in (at, seq) order; `isolate` says which
 * callback errors its advance catches ("ordinary", "all" or "none").
 */
class ListClock {
  constructor({ isolate = "ordinary", nested = "refuse", limit = null } = {}) {
    Object.assign(this, { isolate, nested, limit, t: 0n, seq: 0, list: [], running: false });
  }
  now() { return this.t; }
  stored() { return this.list.length; }
  schedule(at, cb) {
    if (this.limit !== null && at > this.limit) throw new ValueError(`at ${at} is past ${this.limit}`);
    const e = { at, seq: this.seq++, cb };
    this.list.push(e);
    this.list.sort((x, y) => (x.at === y.at ? x.seq - y.seq : x.at < y.at ? -1 : 1));
    return e;
  }
  schedulePeriodic() { throw new ValueError("no periodics here"); }
  cancel(e) { this.list = this.list.filter((x) => x !== e); }
  advance(dt) {
    if (this.running && this.nested === "refuse") throw new RuntimeError("nested");
    if (this.running && this.nested === "type") throw new TypeError("nested");
    const target = this.t + dt;
    this.running = true;
    try {
      while (this.list.length > 0 && this.list[0].at <= target) {
        const e = this.list.shift();
        this.t = e.at;
        try { e.cb(); } catch (err) {
          if (this.isolate === "none" || (this.isolate === "ordinary" && err instanceof Halt)) throw err;
        }
      }
      this.t = target;
    } finally { this.running = false; }
  }
}

const listBackend = (options) => ({ name: "list", create: () => new ListClock(options) });
const noMessage = (reply) => {
  const { message, ...rest } = reply;
  return rest;
};
const ask = (engine, requests) => requests.map((r) => noMessage(engine.handle(r)));
const create = { op: "create", clock: "c", seed: "42" };
const sched = (entry, at, on_fire = []) => ({ op: "schedule", clock: "c", entry, at_ns: String(at), on_fire });
const adv = (dt) => ({ op: "advance", clock: "c", dt_ns: String(dt) });

test("C-WIRE-1 C-WIRE-3 the request loop answers the worked transcript, one line each", async () => {
  const lines = [
    '{"op":"hello","protocol":"1"}',
    '{"op":"create","clock":"c","seed":"42"}',
    '{"op":"schedule","clock":"c","entry":"a","at_ns":"5","on_fire":[{"do":"schedule","delay_ns":"0"},{"do":"advance","dt_ns":"1"}]}',
    '{"op":"schedule","clock":"c","entry":"b","at_ns":"5","on_fire":[{"do":"raise","message":"sensor lost"}]}',
    '{"op":"schedule_rate","clock":"c","entry":"cam","rate_hz":["30","1"],"phase_ns":"0","on_fire":[]}',
    '{"op":"advance","clock":"c","dt_ns":"40000000"}',
    '{"op":"cancel","clock":"c","entry":"cam"}',
    '{"op":"stats","clock":"c","entry":"cam"}',
    '{"op":"schedule","clock":"c","entry":"far","at_ns":18446744073709551615}',
    '{"op":"schedule","clock":"c","entry":"far","at_ns":"18446744073709551616"}',
    '{"op":"draw","clock":"c","labels":["sensors","imu0"],"n":"2"}',
    "this is not json",
    '{"op":"quit"}',
    '{"op":"observe","clock":"c"}',
  ];
  const output = new PassThrough();
  const chunks = [];
  output.on("data", (chunk) => chunks.push(chunk));
  await serve(heap, { input: Readable.from(lines.map((l) => l + "\n")), output, exit: false });
  const replies = Buffer.concat(chunks).toString("utf8").split("\n");
  assert.equal(replies.pop(), ""); // every reply ends its line; nothing after quit
  const obs = (now, next, stored) => ({ now_ns: now, next_event_ns: next, stored });
  assert.deepEqual(replies.map((r) => noMessage(JSON.parse(r))), [
    { ok: true, protocol: "1", backend: "simclock-js-heap", features: ["peek", "rate", "stats", "start_ns", "bits"] },
    { ok: true, ...obs("0", null, "0") },
    { ok: true, ...obs("0", "5", "1") },
    { ok: true, ...obs("0", "5", "2") },
    { ok: true, ...obs("0", "0", "3") },
    {
      ok: true,
      fired: [
        { entry: "cam", now_ns: "0" },
        { entry: "a", now_ns: "5", nested: "RuntimeError" },
        { entry: "b", now_ns: "5" },
        { entry: "a.0", now_ns: "5" },
        { entry: "cam", now_ns: "33333334" },
      ],
      failures: [{ entry: "b", at_ns: "5", message: "sensor lost" }],
      ...obs("40000000", "66666667", "1"),
    },
    { ok: true, ...obs("40000000", null, "0") },
    { ok: true, fired: "2", skipped: "0", overruns: "0", ...obs("40000000", null, "0") },
    { ok: false, error: "TypeError", ...obs("40000000", null, "0") },
    { ok: false, error: "ValueError", ...obs("40000000", null, "0") },
    { ok: true, values: ["4798505500344436202", "6344606573098996892"], ...obs("40000000", null, "0") },
    { ok: false, error: "bad_request" },
    { ok: true },
  ]);
});

test("C-X-BITS C-WIRE-3 every golden stream case replays exactly through the engine", () => {
  for (const { id, steps } of streamCases) {
    const engine = new Engine(heap);
    for (const { request, reply } of steps) assert.deepEqual(engine.handle(request), reply, id);
  }
});

test("C-WIRE-3 features follow from the methods a clock implements", () => {
  assert.deepEqual(new Engine(heap).features, ["peek", "rate", "stats", "start_ns", "bits"]);
  const engine = new Engine(listBackend());
  assert.deepEqual(engine.features, []);
  engine.handle(create);
  for (const [request, feature] of [
    [{ op: "create", clock: "d", seed: "0", start_ns: "5" }, "start_ns"],
    [{ op: "draw", clock: "c", labels: [], n: "1" }, "bits"],
    [{ op: "stats", clock: "c", entry: "x" }, "stats"],
    [{ op: "schedule_rate", clock: "c", entry: "r", rate_hz: ["1", "1"], phase_ns: "0" }, "rate"],
  ]) {
    const reply = engine.handle(request);
    assert.equal(reply.error, "unsupported", feature);
    assert.ok(reply.message.endsWith(`feature ${feature}${feature === "start_ns" ? " is not offered" : ""}`), reply.message);
  }
  // No peek: the observation has no next_event_ns at all.
  assert.deepEqual(engine.handle({ op: "observe", clock: "c" }), { ok: true, now_ns: "0", stored: "0" });
});

test("C-WIRE-5 a refused call changes nothing and carries the observation", () => {
  const engine = new Engine(heap);
  const before = ask(engine, [create, sched("a", 5), adv(3)]).at(-1);
  const refusals = ask(engine, [
    sched("a", 9), // reused id
    sched("p", 2), // the clock's own refusal: the past
    { ...sched("q", 9), at_ns: 9 },
    sched("x.y", 9),
    sched("r", 9, [{ do: "schedule", delay_ns: "1.5" }]),
    { op: "cancel", clock: "c", entry: "nobody" },
    { op: "schedule_periodic", clock: "c", entry: "z", period_ns: "0", phase_ns: "0" },
    { op: "schedule_rate", clock: "c", entry: "z", rate_hz: ["30", "0"], phase_ns: "0" },
    { op: "schedule_rate", clock: "c", entry: "z", rate_hz: "30", phase_ns: "0" },
    { op: "draw", clock: "c", labels: ["a//b"], n: "1" },
    { op: "draw", clock: "c", labels: [1], n: "1" },
    { op: "draw", clock: "c", labels: [], n: "1048577" },
    adv("18446744073709551613"), // past 2**64-1: the clock refuses
    { op: "create", clock: "c", seed: "1" },
  ]);
  const obs = { now_ns: "3", next_event_ns: "5", stored: "1" };
  assert.deepEqual(refusals.map((r) => r.error), [
    "bad_request", "ValueError", "TypeError", "bad_request", "TypeError", "bad_request", "ValueError",
    "ValueError", "TypeError", "ValueError", "TypeError", "ValueError", "ValueError", "bad_request",
  ]);
  for (const r of refusals.slice(0, -1)) assert.deepEqual({ ok: r.ok, now_ns: r.now_ns, next_event_ns: r.next_event_ns, stored: r.stored }, { ok: false, ...obs });
  assert.deepEqual(ask(engine, [adv(2)])[0].fired, [{ entry: "a", now_ns: "5" }]);
  assert.deepEqual(ask(new Engine(heap), [{ op: "observe", clock: "nope" }, { op: "jump" }, { op: "hello", protocol: "2" }, []]).map((r) => r.error), [
    "bad_request", "bad_request", "unsupported", "bad_request",
  ]);
});

test("C-WIRE-3 drop answers with the last observation, then the id is free", () => {
  const engine = new Engine(heap);
  ask(engine, [create, sched("a", 5), adv(7)]);
  assert.deepEqual(engine.handle({ op: "drop", clock: "c" }), { ok: true, now_ns: "7", next_event_ns: null, stored: "0" });
  assert.deepEqual(engine.handle(create), { ok: true, now_ns: "0", next_event_ns: null, stored: "0" });
});

test("C-ERR-1 the kit does not isolate what the clock does not: an escaping error ends the advance", () => {
  const engine = new Engine(listBackend({ isolate: "none" }));
  const reply = ask(engine, [create, sched("r", 1, [{ do: "raise", message: "boom" }]), sched("s", 1), adv(5)]).at(-1);
  // The error the clock let out is the reply's, not one of the failures it isolated.
  assert.deepEqual(reply, {
    ok: false,
    error: "RuntimeError",
    fired: [{ entry: "r", now_ns: "1" }],
    failures: [],
    now_ns: "1",
    stored: "1",
  });
});

test("C-ERR-2 halt stops the advance only if the clock lets it through", () => {
  const program = [create, sched("h", 2, [{ do: "halt" }, { do: "schedule", delay_ns: "0" }]), sched("s", 2), adv(5)];
  assert.deepEqual(ask(new Engine(listBackend()), program).at(-1), {
    ok: false, error: "halted", entry: "h", at_ns: "2", fired: [{ entry: "h", now_ns: "2" }], failures: [], now_ns: "2", stored: "1",
  });
  // A clock that swallows everything goes on: the halting invocation is in fired, and no
  // ordinary failure (docs/kits.md, "What a kit reports").
  assert.deepEqual(ask(new Engine(listBackend({ isolate: "all" })), program).at(-1), {
    ok: true,
    fired: [{ entry: "h", now_ns: "2" }, { entry: "s", now_ns: "2" }],
    failures: [],
    now_ns: "5",
    stored: "0",
  });
});

test("C-ADV-4 C-WIRE-4 a nested advance: refused (goes on), accepted (recorded), or failing the callback", () => {
  const nested = [create, sched("n", 1, [{ do: "advance", dt_ns: "1" }, { do: "schedule", delay_ns: "0" }]), adv(3)];
  assert.deepEqual(ask(new Engine(listBackend()), nested).at(-1).fired, [
    { entry: "n", now_ns: "1", nested: "RuntimeError" },
    { entry: "n.0", now_ns: "1" },
  ]);
  assert.deepEqual(ask(new Engine(listBackend({ nested: "run" })), nested).at(-1).fired, [
    { entry: "n", now_ns: "1", nested: "accepted" },
    { entry: "n.0", now_ns: "1" }, // at the time the callback read, fired after the clock moved
  ]);
  const typed = ask(new Engine(listBackend({ nested: "type" })), nested).at(-1);
  assert.deepEqual([typed.fired, typed.failures], [[{ entry: "n", now_ns: "1", nested: "TypeError" }], [{ entry: "n", at_ns: "1", message: "nested" }]]);
});

test("C-WIRE-4 children are <entry>.<n> over all firings; a refused child takes no number", () => {
  const engine = new Engine(listBackend({ limit: 10n }));
  const kids = [{ do: "schedule", delay_ns: "100" }, { do: "schedule", delay_ns: "1" }, { do: "cancel", entry: "p.9" }];
  const reply = ask(engine, [create, sched("p", 1, kids), sched("q", 2, [{ do: "cancel", entry: "p.0" }]), adv(5)]).at(-1);
  assert.deepEqual(reply.fired, [{ entry: "p", now_ns: "1", refused: "ValueError" }, { entry: "q", now_ns: "2" }]);
  assert.equal(reply.stored, "0"); // p.0 (the second action's child) was cancelled by q
  assert.equal(engine.handle({ op: "cancel", clock: "c", entry: "p.1" }).error, "bad_request"); // never existed
});

test("C-WIRE-5 an advance that never ends is stopped past MAX_FIRED firings: internal", () => {
  const engine = new Engine({
    name: "stuck",
    create: () => Object.assign(new ListClock(), {
      advance() {
        for (;;) this.list[0].cb(); // fires the same entry for ever
      },
    }),
  });
  const reply = ask(engine, [create, sched("p", 0), adv(1)]).at(-1);
  assert.deepEqual(reply, { ok: false, error: "internal", now_ns: "0", stored: "1" });
  assert.equal(MAX_FIRED, 38836);
});

test("C-WIRE-5 the clock's failures outside a refusal are internal, with evidence", () => {
  const engine = new Engine({ name: "broken", create: () => Object.assign(new ListClock(), { stored: () => { throw new Error("no count"); } }) });
  const reply = engine.handle(create);
  assert.deepEqual([reply.ok, reply.error], [false, "internal"]);
  assert.ok(reply.message.startsWith("the driver failed: Error: no count\n    at ListClock.stored"), reply.message);
  assert.throws(() => new Engine({ name: "x" }), { name: "TypeError", message: "backend.create must be a function (seed) => clock, got undefined" });
  const partial = new Engine({ name: "partial", create: () => ({ now: () => 0n }) });
  assert.equal(partial.handle({ op: "hello", protocol: "1" }).error, "internal");
});
