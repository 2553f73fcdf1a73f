// The wire's integers and the driver's own refusals (SPEC C-WIRE-2, C-WIRE-5).

/** The largest time, duration or rate part the wire carries: 2**64 - 1. */
export const U64_MAX = (1n << 64n) - 1n;

const DIGITS = /^[0-9]+$/;

/** A refusal of the driver itself: kind is bad_request, unsupported, TypeError or ValueError. */
export class Refusal extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

/** A short, readable rendering of a JSON value for an error message. */
export function show(value) {
  if (value === undefined) return "nothing";
  if (typeof value === "number") return `the JSON number ${value}`;
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 60))}`;
  if (Array.isArray(value)) return "an array";
  return value === null ? "null" : typeof value === "object" ? "an object" : String(value);
}

/**
 * A protocol integer (C-WIRE-2): a JSON string of [0-9]+, as a BigInt at most `max`.
 * Anything else (a JSON number, "1.5", "-3", " 5", "", nothing) is a TypeError (the wire
 * form of C-TIME-3); more than `max` a ValueError (C-TIME-4).
 */
export function wireUint(value, name, max = U64_MAX) {
  if (typeof value !== "string" || !DIGITS.test(value)) {
    throw new Refusal(
      "TypeError",
      `${name} must be a string of decimal digits [0-9]+, got ${show(value)}; send integers as strings, e.g. "1000"`,
    );
  }
  const big = BigInt(value);
  if (big > max) {
    const text = value.length > 60 ? `${value.slice(0, 60)}...` : value;
    throw new Refusal("ValueError", `${name} = ${text} is larger than ${max}, the largest value this driver carries`);
  }
  return big;
}

/** An integer of the clock (BigInt, or an integral Number from a JS library) as wire digits. */
export function dec(value) {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value).toString();
  // Not an integer: shown as it is, so the suite reports what the clock really said.
  return String(value);
}

/**
 * Check an `on_fire` list with its request (C-WIRE-3): a bad time anywhere in it refuses
 * the whole request. Returns the list ([] when absent).
 */
export function checkActions(list, where = "on_fire", depth = 0) {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new Refusal("bad_request", `${where} must be a list of actions, got ${show(list)}`);
  if (depth > 200) throw new Refusal("bad_request", `${where} is nested deeper than 200 levels`);
  for (const action of list) {
    if (action === null || typeof action !== "object" || Array.isArray(action)) {
      throw new Refusal("bad_request", `${where} must hold action objects, got ${show(action)}`);
    }
    const what = action.do;
    if (what === "schedule") {
      wireUint(action.delay_ns, "delay_ns");
      checkActions(action.on_fire, "on_fire", depth + 1);
    } else if (what === "advance") {
      wireUint(action.dt_ns, "dt_ns");
    } else if (what === "cancel") {
      if (typeof action.entry !== "string") {
        throw new Refusal("bad_request", `a cancel action needs an entry id (a string), got ${show(action.entry)}`);
      }
    } else if (what !== "raise" && what !== "halt") {
      throw new Refusal("bad_request", `unknown action do=${show(what)}; expected schedule, cancel, advance, raise or halt`);
    }
  }
  return list;
}
