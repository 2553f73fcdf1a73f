// The simclock wire protocol (SPEC §18) over a JavaScript fake clock: shared by the adapters.
//
// An adapter gives `serve()` a backend name, its features and `makeClock(startMs)`, which
// returns the clock's own API wrapped in a few plain functions:
//     now() -> Number, setTimeout(fn, delay) -> handle, clearTimeout(handle),
//     setInterval(fn, period) -> handle, clearInterval(handle), tick(ms),
//     stored() -> Number (timers the clock holds), drop().
//
// Time mapping: one protocol nanosecond is one unit of the JS clock (a "millisecond").
// The wire's decimal strings are checked exactly (BigInt): TypeError for anything but
// [0-9]+, ValueError above 2**64-1; the value is then handed to the clock as a JS Number,
// as a JS user would, so values above 2**53 are rounded by the clock's own arithmetic.
// Everything about time semantics (past times, ties, nesting, errors, periodic re-arming)
// is the clock's: the adapter only translates and records what happened.
//
// schedule(at)           -> setTimeout(cb, at - now)  (a past `at` is a negative delay)
// schedule_periodic(p,f) -> setTimeout to the first grid point f + k*p >= now, and from
//                           inside that first firing setInterval(cb, p) (after the actions,
//                           even when they throw): JS timers have no phase.
// cancel                 -> clearTimeout / clearInterval
// advance(dt)            -> tick(dt); a nested advance calls tick() from inside a callback
// raise                  -> the callback throws an Error(message)
// halt                   -> the callback throws a distinct Error: JS has no exception that
//                           a timer loop lets through but an ordinary one catches, so the
//                           clock treats it as it treats any error
// rate, stats, draw      -> refused as `unsupported` (JS fake timers have none of them)

import { createInterface } from "node:readline";

const U64_MAX = (1n << 64n) - 1n;
const DIGITS = /^[0-9]+$/;

class Refusal extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

class RaiseMarker extends Error {}
class HaltMarker extends Error {
  constructor(entry, atNs) {
    super(`entry ${entry} halted`);
    this.entry = entry;
    this.atNs = atNs;
  }
}

function show(v) {
  if (v === undefined) return "nothing";
  return JSON.stringify(v).slice(0, 60);
}

function wireUint(req, name) {
  if (!(name in req)) throw new Refusal("bad_request", `missing field ${name}`);
  const v = req[name];
  if (typeof v !== "string" || !DIGITS.test(v)) {
    throw new Refusal("TypeError", `${name} must be a string of decimal digits [0-9]+, got ${show(v)}`);
  }
  const big = BigInt(v);
  if (big > U64_MAX) throw new Refusal("ValueError", `${name} = ${v.slice(0, 60)} is larger than 2**64-1`);
  return big;
}

function wireString(req, name) {
  const v = req[name];
  if (typeof v !== "string") throw new Refusal("bad_request", `${name} must be a string, got ${show(v)}`);
  return v;
}

function checkActions(list) {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Refusal("bad_request", `on_fire must be a list, got ${show(list)}`);
  for (const a of list) {
    if (a === null || typeof a !== "object") throw new Refusal("bad_request", `bad action ${show(a)}`);
    const what = wireString(a, "do");
    if (what === "schedule") {
      wireUint(a, "delay_ns");
      checkActions(a.on_fire);
    } else if (what === "advance") {
      wireUint(a, "dt_ns");
    } else if (what === "cancel") {
      wireString(a, "entry");
    } else if (what !== "raise" && what !== "halt") {
      throw new Refusal("bad_request", `unknown action do=${show(what)}`);
    }
  }
  return list;
}

function nsOf(number) {
  // The clock's Number back to a decimal string; a non-integer is shown as it is.
  return Number.isInteger(number) ? BigInt(number).toString() : String(number);
}

function kindOf(err) {
  if (err instanceof TypeError) return "TypeError";
  if (err instanceof RangeError) return "ValueError";
  return "RuntimeError";
}

class WireClock {
  constructor(adapter, startMs) {
    this.c = adapter.makeClock(startMs);
    this.entries = new Map(); // id -> {handles:[], interval:bool, cancelled:bool, children:n}
    this.fired = [];
    this.failures = [];
  }

  observe(reply) {
    reply.now_ns = nsOf(this.c.now());
    reply.stored = String(this.c.stored(this));
    return reply;
  }

  run(id, actions) {
    const entry = this.entries.get(id);
    const atNs = nsOf(this.c.now());
    const record = { entry: id, now_ns: atNs };
    this.fired.push(record);
    for (const a of actions) {
      if (a.do === "schedule") {
        const child = `${id}.${entry.children++}`;
        this.oneShot(child, Number(BigInt(a.delay_ns)), a.on_fire ?? []);
      } else if (a.do === "cancel") {
        if (this.entries.has(a.entry)) this.cancel(a.entry);
      } else if (a.do === "advance") {
        try {
          this.c.tick(Number(BigInt(a.dt_ns)));
        } catch (err) {
          if (err instanceof RaiseMarker || err instanceof HaltMarker) throw err;
          record.nested = kindOf(err);
        }
      } else if (a.do === "raise") {
        this.failures.push({ entry: id, at_ns: atNs, message: a.message ?? "raised" });
        throw new RaiseMarker(a.message ?? "raised");
      } else if (a.do === "halt") {
        throw new HaltMarker(id, atNs);
      }
    }
  }

  oneShot(id, delay, actions) {
    const entry = { handles: [], interval: false, cancelled: false, children: 0, pending: true };
    this.entries.set(id, entry);
    entry.handles.push(
      this.c.setTimeout(() => {
        entry.pending = false;
        this.run(id, actions);
      }, delay),
    );
  }

  periodic(id, period, first, actions) {
    const entry = { handles: [], interval: true, cancelled: false, children: 0, pending: true };
    this.entries.set(id, entry);
    const c = this.c;
    entry.handles.push(
      c.setTimeout(() => {
        try {
          this.run(id, actions);
        } finally {
          if (!entry.cancelled) entry.handles.push(c.setInterval(() => this.run(id, actions), period));
        }
      }, first),
    );
  }

  cancel(id) {
    const entry = this.entries.get(id);
    entry.cancelled = true;
    entry.pending = false;
    for (const h of entry.handles) {
      this.c.clearTimeout(h);
      this.c.clearInterval(h);
    }
  }

  pending() {
    let n = 0;
    for (const e of this.entries.values()) if (e.pending) n++;
    return n;
  }
}

export function serve(adapter) {
  const clocks = new Map();

  function handle(req) {
    if (req === null || typeof req !== "object" || Array.isArray(req)) {
      throw new Refusal("bad_request", "the request must be a JSON object");
    }
    const op = req.op;
    if (op === "hello") {
      if (req.protocol !== "1") throw new Refusal("unsupported", `protocol ${show(req.protocol)}; this driver speaks "1"`);
      return { ok: true, protocol: "1", backend: adapter.backend, features: adapter.features };
    }
    if (op === "quit") return { ok: true };
    const known = ["create", "drop", "schedule", "schedule_periodic", "schedule_rate", "cancel",
      "advance", "observe", "stats", "step_ns", "draw"];
    if (!known.includes(op)) throw new Refusal("bad_request", `unknown op ${show(op)}`);
    const id = wireString(req, "clock");
    if (op === "create") {
      if (clocks.has(id)) throw new Refusal("bad_request", `clock ${show(id)} is in use`);
      wireUint(req, "seed");
      const start = "start_ns" in req ? Number(wireUint(req, "start_ns")) : 0;
      const clock = new WireClock(adapter, start);
      clocks.set(id, clock);
      return clock.observe({ ok: true });
    }
    const clock = clocks.get(id);
    if (!clock) throw new Refusal("bad_request", `unknown clock ${show(id)}`);
    try {
      return perform(clock, id, op, req);
    } catch (err) {
      if (err instanceof Refusal) {
        err.clock = clock;
      }
      throw err;
    }
  }

  function newEntry(clock, req) {
    const entry = wireString(req, "entry");
    if (entry === "" || entry.includes(".")) throw new Refusal("bad_request", `entry id ${show(entry)} must be non-empty without '.'`);
    if (clock.entries.has(entry)) throw new Refusal("bad_request", `entry id ${show(entry)} is already used`);
    return entry;
  }

  function perform(clock, id, op, req) {
    const c = clock.c;
    if (op === "drop") {
      const reply = clock.observe({ ok: true });
      c.drop();
      clocks.delete(id);
      return reply;
    }
    if (op === "schedule") {
      const entry = newEntry(clock, req);
      const at = wireUint(req, "at_ns");
      const actions = checkActions(req.on_fire);
      clock.oneShot(entry, Number(at) - c.now(), actions);
    } else if (op === "schedule_periodic") {
      const entry = newEntry(clock, req);
      const period = wireUint(req, "period_ns");
      const phase = "phase_ns" in req ? wireUint(req, "phase_ns") : 0n;
      const actions = checkActions(req.on_fire);
      if (period === 0n) throw new Refusal("ValueError", "period_ns must be > 0");
      // The protocol's first grid point (C-PER-1), computed exactly; the clock gets Numbers.
      const now = BigInt(Math.trunc(c.now()));
      const k = phase >= now ? 0n : (now - phase + period - 1n) / period;
      const first = phase + k * period;
      clock.periodic(entry, Number(period), Number(first) - c.now(), actions);
    } else if (op === "cancel") {
      const entry = wireString(req, "entry");
      if (!clock.entries.has(entry)) throw new Refusal("bad_request", `unknown entry ${show(entry)}`);
      clock.cancel(entry);
    } else if (op === "advance") {
      const dt = wireUint(req, "dt_ns");
      clock.fired = [];
      clock.failures = [];
      let reply = { ok: true };
      try {
        c.tick(Number(dt));
      } catch (err) {
        if (err instanceof HaltMarker) {
          reply = { ok: false, error: "halted", message: err.message, entry: err.entry, at_ns: err.atNs };
        } else if (err instanceof RaiseMarker) {
          reply = { ok: false, error: "RuntimeError", message: `the clock's tick() threw the error of a callback: ${err.message}` };
        } else {
          reply = { ok: false, error: kindOf(err), message: `tick(${dt}) threw ${err && err.name}: ${err && err.message}` };
        }
      }
      reply.fired = clock.fired;
      reply.failures = clock.failures;
      return clock.observe(reply);
    } else if (op === "step_ns") {
      return clock.observe({ ok: true, step_ns: "1" });
    } else if (op === "schedule_rate" || op === "stats" || op === "draw") {
      throw new Refusal("unsupported", `${op}: ${adapter.backend} has no ${op === "draw" ? "random streams" : op === "stats" ? "timer statistics" : "rate timers"}`);
    }
    return clock.observe({ ok: true });
  }

  const rl = createInterface({ input: process.stdin, terminal: false });
  rl.on("line", (line) => {
    let reply;
    let req;
    try {
      req = JSON.parse(line);
      reply = handle(req);
    } catch (err) {
      if (err instanceof Refusal) {
        reply = { ok: false, error: err.kind, message: err.message };
        if (err.clock) err.clock.observe(reply);
      } else if (err instanceof SyntaxError && req === undefined) {
        reply = { ok: false, error: "bad_request", message: `not one JSON object: ${err.message}` };
      } else {
        reply = { ok: false, error: "internal", message: String(err && err.stack ? err.stack : err) };
      }
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
    if (req && req.op === "quit") {
      rl.close();
      process.exit(0);
    }
  });
  rl.on("close", () => process.exit(0));
}
