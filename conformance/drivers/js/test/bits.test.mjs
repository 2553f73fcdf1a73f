// simclock's random streams against the golden vectors (SPEC C-X-BITS, C-RNG-3).
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Pcg64, RandomStreams, ValueError, blake2b, normalisePath, seedSequenceState, spawnKey } from "../src/index.mjs";

const VECTORS = new URL("../../../simclock_conformance/vectors/v1/", import.meta.url);
export const streamCases = readFileSync(new URL("streams.jsonl", VECTORS), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line));

test("BLAKE2b-512 equals Node's crypto on every block boundary (RFC 7693)", () => {
  for (const n of [0, 1, 3, 127, 128, 129, 255, 256, 257, 1000]) {
    const data = n === 3 ? new TextEncoder().encode("abc") : new Uint8Array(randomBytes(n));
    const want = createHash("blake2b512").update(data).digest("hex");
    assert.equal(Buffer.from(blake2b(data, 64)).toString("hex"), want, `${n} bytes`);
  }
});

test("BLAKE2b-128 is not a prefix of BLAKE2b-512 (the digest size is in the parameter block)", () => {
  const data = new TextEncoder().encode("abc");
  assert.notEqual(Buffer.from(blake2b(data, 16)).toString("hex"), createHash("blake2b512").update(data).digest("hex").slice(0, 32));
  assert.throws(() => blake2b(data, 65), { name: "ValueError", message: "outlen must be an integer in 1..64, got 65" });
});

test("C-X-BITS every stage of every golden stream: spawn key, PCG64 state, outputs", () => {
  assert.equal(streamCases.length, 30);
  for (const { id, stages } of streamCases) {
    const key = spawnKey(stages.path);
    assert.deepEqual(key.map(String), stages.spawn_key, `${id} spawn key`);
    const g = new Pcg64(seedSequenceState(BigInt(stages.seed), key));
    assert.equal(g.state.toString(), stages.pcg64_state.state, `${id} state`);
    assert.equal(g.inc.toString(), stages.pcg64_state.inc, `${id} inc`);
    assert.deepEqual(stages.outputs.map(() => g.next().toString()), stages.outputs, `${id} outputs`);
  }
});

test("C-RNG-3 label paths: one stream per normalised path, continued across draws", () => {
  assert.equal(normalisePath([]), "/");
  for (const labels of [["a", "b"], ["a/b"], ["/a/b"], ["/a", "/b"]]) assert.equal(normalisePath(labels), "/a/b");
  const streams = new RandomStreams(7n);
  const first = streams.stream(["a", "b"]).next();
  const second = streams.stream(["/a/b"]).next();
  const fresh = new RandomStreams(7n).stream(["a/b"]);
  assert.deepEqual([first, second], [fresh.next(), fresh.next()]);
});

test("C-RNG-3 a malformed label is a ValueError naming it; a non-string a TypeError", () => {
  for (const bad of ["", "a//b", "a/", "//a", "a b", "é", "a/*"]) {
    assert.throws(() => normalisePath([bad]), (err) => err instanceof ValueError && err.message.startsWith(`label ${JSON.stringify(bad)} is malformed`));
  }
  assert.throws(() => normalisePath([3]), { name: "TypeError", message: "a label must be a string, got number" });
  assert.throws(() => new RandomStreams(-1n), TypeError);
});
