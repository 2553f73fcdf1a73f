// The wire's integers and action lists (SPEC C-WIRE-2, C-WIRE-3).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Refusal, U64_MAX, checkActions, dec, wireUint } from "../src/wire.mjs";

function refusal(fn) {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof Refusal, `expected a Refusal, got ${err}`);
    return [err.kind, err.message];
  }
  assert.fail("no refusal");
}

test("C-WIRE-2 digit strings become exact BigInts up to 2**64-1", () => {
  assert.equal(wireUint("0", "at_ns"), 0n);
  assert.equal(wireUint("007", "at_ns"), 7n);
  assert.equal(wireUint("18446744073709551615", "at_ns"), U64_MAX);
  assert.equal(wireUint("9007199254740993", "at_ns"), 9007199254740993n); // not a double
});

test("C-WIRE-2 C-TIME-3 anything but a string of [0-9]+ is a TypeError naming the field and value", () => {
  for (const [value, shown] of [
    [5, "the JSON number 5"],
    [1.5, "the JSON number 1.5"],
    ["1.5", 'the string "1.5"'],
    ["1e6", 'the string "1e6"'],
    ["-3", 'the string "-3"'],
    [" 5", 'the string " 5"'],
    ["", 'the string ""'],
    [null, "null"],
    [undefined, "nothing"],
    [["5"], "an array"],
  ]) {
    assert.deepEqual(refusal(() => wireUint(value, "at_ns")), [
      "TypeError",
      `at_ns must be a string of decimal digits [0-9]+, got ${shown}; send integers as strings, e.g. "1000"`,
    ]);
  }
});

test("C-WIRE-2 C-TIME-4 digits beyond 2**64-1 are a ValueError", () => {
  assert.deepEqual(refusal(() => wireUint("18446744073709551616", "dt_ns")), [
    "ValueError",
    "dt_ns = 18446744073709551616 is larger than 18446744073709551615, the largest value this driver carries",
  ]);
  assert.equal(refusal(() => wireUint("9".repeat(100), "dt_ns"))[1].includes("9".repeat(60) + "..."), true);
});

test("C-WIRE-3 on_fire is checked with its request, nested lists included", () => {
  const ok = [{ do: "schedule", delay_ns: "0", on_fire: [{ do: "raise", message: "x" }] }, { do: "halt" }];
  assert.equal(checkActions(ok), ok);
  assert.deepEqual(checkActions(undefined), []);
  assert.equal(refusal(() => checkActions([{ do: "schedule", delay_ns: 1 }]))[0], "TypeError");
  assert.equal(refusal(() => checkActions([{ do: "schedule", delay_ns: "0", on_fire: [{ do: "advance", dt_ns: "-1" }] }]))[0], "TypeError");
  assert.deepEqual(refusal(() => checkActions([{ do: "sleep" }])), [
    "bad_request",
    'unknown action do=the string "sleep"; expected schedule, cancel, advance, raise or halt',
  ]);
  assert.equal(refusal(() => checkActions({ do: "halt" }))[0], "bad_request");
  assert.equal(refusal(() => checkActions([{ do: "cancel" }]))[0], "bad_request");
});

test("dec shows BigInts and integral Numbers as digits, anything else as it is", () => {
  assert.equal(dec(U64_MAX + 1n), "18446744073709551616");
  assert.equal(dec(2 ** 60), "1152921504606846976");
  assert.equal(dec(1.5), "1.5");
});
