// The error classes of the protocol (SPEC C-WIRE-5) as JavaScript classes.
//
// A clock refuses a call by throwing: a TypeError is answered "TypeError", a RangeError
// (ValueError below is one) "ValueError", any other Error "RuntimeError".

/** Python's ValueError: a value of the right type out of range (a past time, a zero period). */
export class ValueError extends RangeError {
  get name() {
    return "ValueError";
  }
}

/** Python's RuntimeError: a call at the wrong moment (an advance from inside a callback). */
export class RuntimeError extends Error {
  get name() {
    return "RuntimeError";
  }
}

/**
 * An error a clock must let through instead of isolating it, the equivalent of Python's
 * BaseException (C-ERR-2): the `halt` action throws one. A clock that isolates callback
 * errors rethrows these: `catch (err) { if (err instanceof Halt) throw err; ... }`.
 */
export class Halt extends Error {
  constructor(message, entry, atNs) {
    super(message);
    this.entry = entry;
    this.atNs = atNs;
  }

  get name() {
    return "Halt";
  }
}

/**
 * The protocol's name for what a clock threw (docs/kits.md, "What a kit reports"): a
 * TypeError is "TypeError", a RangeError (ValueError is one) "ValueError", a RuntimeError
 * or a plain Error "RuntimeError"; an error class of the adapter's own (any other `name`,
 * say "Deadlock") is "internal", its name leading the message ("Deadlock: ...").
 */
export function errorKind(err) {
  if (err instanceof TypeError) return "TypeError";
  if (err instanceof RangeError) return "ValueError";
  if (err instanceof RuntimeError || (err instanceof Error && err.name === "Error")) return "RuntimeError";
  return "internal";
}
