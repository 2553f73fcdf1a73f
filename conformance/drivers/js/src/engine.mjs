// The wire protocol (SPEC §18) over one clock interface: one request in, one reply out.
//
// The engine owns everything the protocol says and nothing the clock decides: it checks
// and converts the wire's fields, keeps entry ids, child counters and the records of the
// current advance, runs the `on_fire` actions inside the callbacks it hands the clock, and
// builds the replies. Times, order, isolation of errors, refusals, tombstones and random
// streams are the clock's: the engine calls it and reports what it did.

import { Halt, RuntimeError, errorKind } from "./errors.mjs";
import { Refusal, U64_MAX, checkActions, dec, show, wireUint } from "./wire.mjs";

export const PROTOCOL = "1";
export const FEATURES = ["peek", "rate", "stats", "start_ns", "bits"];

/** The most firings one advance records: more could not fit in one reply line (1 MiB). */
export const MAX_FIRED = Math.floor((1 << 20) / '{"entry":"a","now_ns":"0"},'.length);

const MAX_DRAW = 1 << 20;
const MAX_SEED_DIGITS = 4000;
/** The ops whose reply carries the firings not yet reported, if there are any. */
const CARRIERS = new Set(["schedule", "schedule_periodic", "schedule_rate", "cancel"]);
const CLOCK_OPS = new Set([
  "create", "drop", "schedule", "schedule_periodic", "schedule_rate", "cancel",
  "advance", "observe", "stats", "step_ns", "draw",
]);

/** What a `raise` action throws (C-ERR-1): an ordinary error, a RuntimeError, which the clock isolates. */
export class CallbackError extends RuntimeError {}

/** Thrown by a callback past MAX_FIRED firings in one advance; like Halt, not to be isolated. */
export class TooManyFirings extends Halt {
  get name() {
    return "TooManyFirings";
  }
}

/** An error the clock threw from a call the engine made: the clock's refusal (C-WIRE-5). */
class ClockError extends Error {
  constructor(cause) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.cause = cause;
  }
}

function refusalOf(err) {
  if (!(err instanceof Error) || err instanceof Halt) {
    return { ok: false, error: "internal", message: `the clock threw ${describe(err)}` };
  }
  return { ok: false, error: errorKind(err), message: `${err.name}: ${err.message}` };
}

function describe(err) {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return `the non-Error value ${String(err).slice(0, 200)}`;
}

/**
 * The features a backend offers, from what it implements (C-WIRE-3 `hello`): `peek` for
 * nextEvent(), `rate` for scheduleRate(), `stats` for stats(), `start_ns` for the backend's
 * createAt(), `bits` for stream().
 */
export function featuresOf(backend, clock) {
  const has = (name) => typeof clock[name] === "function";
  const found = {
    peek: has("nextEvent"),
    rate: has("scheduleRate"),
    stats: has("stats"),
    start_ns: typeof backend.createAt === "function",
    bits: has("stream"),
  };
  return FEATURES.filter((f) => found[f]);
}

const REQUIRED = ["now", "schedule", "schedulePeriodic", "cancel", "advance", "stored"];

function checkBackend(backend) {
  if (backend === null || typeof backend !== "object") {
    throw new TypeError(`backend must be an object {name, create(seed)}, got ${typeof backend}`);
  }
  if (typeof backend.name !== "string" || backend.name === "") {
    throw new TypeError(`backend.name must be a non-empty string, got ${show(backend.name)}`);
  }
  if (typeof backend.create !== "function") {
    throw new TypeError(`backend.create must be a function (seed) => clock, got ${typeof backend.create}`);
  }
}

function checkClock(backend, clock) {
  const missing = REQUIRED.filter((m) => clock === null || typeof clock !== "object" || typeof clock[m] !== "function");
  if (missing.length > 0) {
    throw new TypeError(`${backend.name}: the clock made by create() lacks the method(s) ${missing.join(", ")}`);
  }
}

/** The protocol engine of one driver process: holds clocks by id. */
export class Engine {
  #features = null;

  constructor(backend) {
    checkBackend(backend);
    this.backend = backend;
    this.clocks = new Map();
    this.quit = false;
  }

  /** The declared features, found on a probe clock made once. */
  get features() {
    if (this.#features === null) {
      const probe = this.backend.create(0n);
      checkClock(this.backend, probe);
      this.#features = featuresOf(this.backend, probe);
      probe.dispose?.();
    }
    return this.#features;
  }

  /** The reply to one parsed request; never throws. */
  handle(request) {
    let st = null;
    let reply;
    try {
      if (request === null || typeof request !== "object" || Array.isArray(request)) {
        throw new Refusal("bad_request", "a request is one JSON object");
      }
      const op = request.op;
      if (op === "hello") {
        if (request.protocol !== PROTOCOL) {
          throw new Refusal("unsupported", `protocol ${show(request.protocol)}; this driver speaks "1"`);
        }
        return { ok: true, protocol: PROTOCOL, backend: this.backend.name, features: [...this.features] };
      }
      if (op === "quit") return { ok: true };
      if (!CLOCK_OPS.has(op)) throw new Refusal("bad_request", `unknown op ${show(op)}`);
      const id = request.clock;
      if (typeof id !== "string") throw new Refusal("bad_request", `${op} needs a clock id (a string), got ${show(id)}`);
      if (op === "create") return this.#create(id, request);
      st = this.clocks.get(id) ?? null;
      if (st === null) throw new Refusal("bad_request", `unknown clock ${show(id)}`);
      reply = this.#perform(st, id, op, request);
    } catch (err) {
      if (err instanceof Refusal) reply = { ok: false, error: err.kind, message: err.message };
      else if (err instanceof ClockError) {
        if (st !== null) this.#escaped(st, err.cause);
        reply = refusalOf(err.cause);
      }
      else reply = { ok: false, error: "internal", message: `the driver failed: ${err && err.stack ? err.stack : err}` };
    }
    if (st !== null) {
      if (CARRIERS.has(request.op)) this.#carry(st, reply);
      try {
        this.#observe(st, reply);
      } catch (err) {
        return { ok: false, error: "internal", message: `observing the clock failed: ${describe(err)}` };
      }
      if (request.op === "drop" && reply.ok) {
        // drop replies with the clock's last observation (C-WIRE-3), then lets it go.
        this.clocks.delete(request.clock);
        try {
          st.clock.dispose?.();
        } catch (err) {
          return { ok: false, error: "internal", message: `dispose() failed after the drop: ${describe(err)}` };
        }
      }
    }
    return reply;
  }

  /** The reply line (JSON, no newline) to one request line; `quit` is set once one was answered. */
  handleLine(line) {
    let request;
    try {
      request = JSON.parse(line);
    } catch (err) {
      return JSON.stringify({ ok: false, error: "bad_request", message: `not one JSON object: ${err.message}` });
    }
    const reply = JSON.stringify(this.handle(request));
    if (request !== null && typeof request === "object" && request.op === "quit") this.quit = true;
    return reply;
  }

  // -- the clock's calls: whatever they throw is the clock's refusal -----------------------

  /**
   * Put the firings and failures not yet reported into `reply` (a schedule* or cancel
   * reply), if there are any: a callback the clock ran inside that call shows where the
   * suite sees it (docs/kits.md, "What a kit reports").
   */
  #carry(st, reply) {
    if (st.fired.length === 0 && st.failures.length === 0) return;
    reply.fired = st.fired;
    reply.failures = st.failures;
    st.fired = [];
    st.failures = [];
    st.errors = [];
  }

  /** An error the clock let out of one of its calls: if a callback threw it, it is no failure the clock isolated. */
  #escaped(st, err) {
    const i = st.errors.lastIndexOf(err);
    if (i >= 0) {
      st.failures.splice(i, 1);
      st.errors.splice(i, 1);
    }
  }

  #call(fn) {
    try {
      return fn();
    } catch (err) {
      throw new ClockError(err);
    }
  }

  #observe(st, reply) {
    const c = st.clock;
    reply.now_ns = dec(c.now());
    if (st.peek) {
      const next = c.nextEvent();
      reply.next_event_ns = next === null || next === undefined ? null : dec(next);
    }
    reply.stored = dec(c.stored());
    return reply;
  }

  #create(id, request) {
    if (this.clocks.has(id)) throw new Refusal("bad_request", `clock ${show(id)} is in use; drop it first`);
    const seed = wireUint(request.seed, "seed", 10n ** BigInt(MAX_SEED_DIGITS) - 1n);
    let clock;
    if ("start_ns" in request) {
      if (!this.features.includes("start_ns")) throw new Refusal("unsupported", "feature start_ns is not offered");
      const start = wireUint(request.start_ns, "start_ns");
      clock = this.#call(() => this.backend.createAt(seed, start));
    } else {
      clock = this.#call(() => this.backend.create(seed));
    }
    checkClock(this.backend, clock);
    const st = {
      clock,
      peek: this.features.includes("peek"),
      handles: new Map(), // every entry id that came to exist -> the clock's handle
      children: new Map(), // entry id -> the next child number (C-WIRE-4)
      fired: [],
      failures: [],
      errors: [],
      count: 0,
      halted: null,
    };
    this.clocks.set(id, st);
    return this.#observe(st, { ok: true });
  }

  #newEntry(st, request) {
    const entry = request.entry;
    if (typeof entry !== "string" || entry === "" || entry.includes(".")) {
      throw new Refusal("bad_request", `entry id must be a non-empty string without '.', got ${show(entry)}`);
    }
    if (st.handles.has(entry)) throw new Refusal("bad_request", `entry id ${show(entry)} was used before on this clock`);
    return [entry, checkActions(request.on_fire)];
  }

  #knownEntry(st, request) {
    const entry = request.entry;
    if (typeof entry !== "string" || !st.handles.has(entry)) throw new Refusal("bad_request", `unknown entry ${show(entry)}`);
    return st.handles.get(entry);
  }

  #need(feature, op) {
    if (!this.features.includes(feature)) {
      throw new Refusal("unsupported", `${op}: ${this.backend.name} does not offer feature ${feature}`);
    }
  }

  #perform(st, id, op, request) {
    const c = st.clock;
    switch (op) {
      case "drop":
        return { ok: true }; // handle() observes the clock, then forgets it
      case "schedule": {
        const [entry, actions] = this.#newEntry(st, request);
        const at = wireUint(request.at_ns, "at_ns");
        const cb = this.#callback(st, entry, actions);
        st.handles.set(entry, this.#call(() => c.schedule(at, cb)));
        return { ok: true };
      }
      case "schedule_periodic": {
        const [entry, actions] = this.#newEntry(st, request);
        const period = wireUint(request.period_ns, "period_ns");
        const phase = "phase_ns" in request ? wireUint(request.phase_ns, "phase_ns") : 0n;
        const cb = this.#callback(st, entry, actions);
        st.handles.set(entry, this.#call(() => c.schedulePeriodic(period, phase, cb)));
        return { ok: true };
      }
      case "schedule_rate": {
        this.#need("rate", op);
        const [entry, actions] = this.#newEntry(st, request);
        const parts = request.rate_hz;
        if (!Array.isArray(parts) || parts.length !== 2) {
          throw new Refusal("TypeError", `rate_hz must be [NUM, DEN], two strings of digits, got ${show(parts)}`);
        }
        let num = wireUint(parts[0], "rate_hz numerator");
        let den = wireUint(parts[1], "rate_hz denominator");
        if (den === 0n) throw new Refusal("ValueError", "rate_hz denominator must be > 0, got 0");
        const phase = "phase_ns" in request ? wireUint(request.phase_ns, "phase_ns") : 0n;
        // The rate as a reduced fraction: 60/2 Hz reaches the clock as 30/1.
        let [a, b] = [num, den];
        while (b !== 0n) [a, b] = [b, a % b];
        if (a > 1n) [num, den] = [num / a, den / a];
        const cb = this.#callback(st, entry, actions);
        st.handles.set(entry, this.#call(() => c.scheduleRate(num, den, phase, cb)));
        return { ok: true };
      }
      case "cancel": {
        const handle = this.#knownEntry(st, request);
        this.#call(() => c.cancel(handle));
        return { ok: true };
      }
      case "advance":
        return this.#advance(st, wireUint(request.dt_ns, "dt_ns"));
      case "observe":
        return { ok: true };
      case "stats": {
        this.#need("stats", op);
        const handle = this.#knownEntry(st, request);
        const s = this.#call(() => c.stats(handle));
        return { ok: true, fired: dec(s.fired), skipped: dec(s.skipped ?? 0), overruns: dec(s.overruns ?? 0) };
      }
      case "step_ns": {
        const step = typeof c.stepNs === "function" ? this.#call(() => c.stepNs()) : 1n;
        return { ok: true, step_ns: dec(step) };
      }
      case "draw": {
        this.#need("bits", op);
        const labels = request.labels;
        if (!Array.isArray(labels) || !labels.every((l) => typeof l === "string")) {
          throw new Refusal("TypeError", `labels must be a list of strings, got ${show(labels)}`);
        }
        const n = wireUint(request.n, "n");
        if (n > BigInt(MAX_DRAW)) throw new Refusal("ValueError", `n = ${n} is more than ${MAX_DRAW} values in one draw`);
        // Normalising the labels and refusing a malformed one is the clock's (C-RNG-3).
        const stream = this.#call(() => c.stream([...labels]));
        const values = [];
        for (let i = 0n; i < n; i++) values.push(dec(this.#call(() => stream.next())));
        return { ok: true, values };
      }
      default:
        throw new Refusal("bad_request", `unknown op ${show(op)}`);
    }
  }

  // Every firing not yet reported (see #carry).
  #advance(st, dt) {
    st.halted = null;
    st.tooMany = null;
    const fired = st.fired;
    const failures = st.failures;
    const errors = st.errors;
    const taken = () => {
      st.fired = [];
      st.failures = [];
      st.errors = [];
    };
    st.count = 0;
    try {
      st.clock.advance(dt);
    } catch (err) {
      if (err instanceof TooManyFirings) {
        taken();
        return {
          ok: false,
          error: "internal",
          message: `the advance fired more than ${MAX_FIRED} callbacks, more than one reply can carry; it was stopped`,
        };
      }
      if (err instanceof Halt && st.halted !== null) {
        // C-ERR-2: the advance stopped at the halting callback.
        const { entry, at_ns } = st.halted;
        taken();
        return { ok: false, error: "halted", entry, at_ns, fired, failures };
      }
      if (fired.length === 0 && failures.length === 0) throw new ClockError(err); // a refused call
      // An error the clock let out: the reply's error, not one of the failures it isolated.
      this.#escaped(st, err);
      taken();
      return { ...refusalOf(err), fired, failures };
    }
    taken();
    return { ok: true, fired, failures };
  }

  /**
   * The callback of one entry (C-WIRE-4): records its firing with the time the clock
   * reports, then performs its actions. A failing invocation is listed in `failures`
   * (C-ERR-1) and its error rethrown for the clock to isolate, or not.
   */
  #callback(st, entry, actions) {
    const c = st.clock;
    return () => {
      if (++st.count > MAX_FIRED) {
        // One error for the whole advance: a clock that swallows it may call back millions
        // of times before its advance ends, and a stack trace each time would cost seconds.
        st.tooMany ??= new TooManyFirings(`more than ${MAX_FIRED} firings in one advance`, entry, null);
        throw st.tooMany;
      }
      const now = c.now();
      const record = { entry, now_ns: dec(now) };
      st.fired.push(record);
      try {
        for (const action of actions) this.#act(st, entry, now, record, action);
      } catch (err) {
        if (err instanceof TooManyFirings) throw err;
        if (err instanceof Halt) {
          // Not an ordinary failure: a halt the clock swallows is in `fired` only (docs/kits.md).
          if (st.halted === null) st.halted = { entry, at_ns: dec(now) };
          throw err;
        }
        st.failures.push({ entry, at_ns: dec(now), message: err instanceof Error ? err.message : String(err) });
        st.errors.push(err);
        throw err;
      }
    };
  }

  #act(st, entry, now, record, action) {
    const c = st.clock;
    switch (action.do) {
      case "schedule": {
        const n = st.children.get(entry) ?? 0;
        const child = `${entry}.${n}`;
        // Exact beyond 2**64 - 1: a clock keeping BigInts holds such a child, never due.
        const at = BigInt(now) + BigInt(action.delay_ns);
        let handle;
        try {
          handle = c.schedule(at, this.#callback(st, child, action.on_fire ?? []));
        } catch (err) {
          if (errorKind(err) === "ValueError") {
            record.refused = "ValueError"; // the callback goes on; the child takes no number (C-WIRE-4)
            return;
          }
          throw err; // another kind fails the callback
        }
        st.children.set(entry, n + 1);
        st.handles.set(child, handle);
        return;
      }
      case "cancel":
        if (st.handles.has(action.entry)) c.cancel(st.handles.get(action.entry));
        return;
      case "advance":
        try {
          c.advance(BigInt(action.dt_ns));
        } catch (err) {
          if (err instanceof Halt) throw err;
          this.#escaped(st, err);
          record.nested = err instanceof Error ? errorKind(err) : "internal";
          if (record.nested !== "RuntimeError") throw err;
          return; // C-ADV-4: refused; the callback goes on
        }
        record.nested = "accepted";
        return;
      case "raise":
        throw new CallbackError(String(action.message ?? ""));
      case "halt":
        throw new Halt(`entry ${entry} halts`, entry, dec(now));
    }
  }
}

export { U64_MAX };
