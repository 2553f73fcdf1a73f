// The README's complete minimal backend is examples/minimal_clock.mjs, and it behaves.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const file = new URL("../examples/minimal_clock.mjs", import.meta.url);

test("the README shows examples/minimal_clock.mjs verbatim", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block = readme.split("## A complete minimal backend")[1].split("```js\n")[1].split("```")[0];
  assert.equal(block, readFileSync(file, "utf8"));
});

test("C-TIE-1 C-PER-2 C-ADV-4 C-ERR-2 the minimal clock as a driver process", () => {
  const requests = [
    { op: "hello", protocol: "1" },
    { op: "create", clock: "c", seed: "0" },
    { op: "schedule_periodic", clock: "c", entry: "p", period_ns: "2", phase_ns: "0", on_fire: [] },
    { op: "schedule", clock: "c", entry: "a", at_ns: "2", on_fire: [{ do: "advance", dt_ns: "1" }] },
    { op: "schedule", clock: "c", entry: "h", at_ns: "4", on_fire: [{ do: "halt" }] },
    { op: "schedule", clock: "c", entry: "z", at_ns: "4", on_fire: [] },
    { op: "advance", clock: "c", dt_ns: "9" },
    { op: "draw", clock: "c", labels: ["sensors", "imu0"], n: "1" },
    { op: "quit" },
  ];
  const done = spawnSync(process.execPath, [fileURLToPath(file)], {
    input: requests.map((r) => JSON.stringify(r)).join("\n") + "\n",
    encoding: "utf8",
  });
  assert.equal(done.status, 0, done.stderr);
  const replies = done.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(replies[0].features, ["bits"]);
  const { message, ...halted } = replies[6];
  assert.deepEqual(halted, {
    ok: false,
    error: "halted",
    entry: "h",
    at_ns: "4",
    fired: [
      { entry: "p", now_ns: "0" },
      { entry: "a", now_ns: "2", nested: "RuntimeError" },
      { entry: "p", now_ns: "2" }, // re-pushed to 4 behind h and z, already due there
      { entry: "h", now_ns: "4" },
    ],
    failures: [],
    now_ns: "4",
    stored: "2",
  });
  assert.equal(replies[7].values.length, 1);
  assert.deepEqual(replies.at(-1), { ok: true });
});
