// The shared careless-clock transcript (docs/kits.md, "What a kit reports"): every reply
// of examples/careless.mjs byte for byte as the Python reference gives it.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const here = (path) => new URL(path, import.meta.url);

test("C-WIRE-4 C-WIRE-5 the careless transcript, byte for byte", () => {
  const requests = readFileSync(here("../../../transcripts/careless.requests.jsonl"));
  const replies = readFileSync(here("../../../transcripts/careless.replies.jsonl"), "utf8");
  const run = spawnSync(process.execPath, [here("../examples/careless.mjs").pathname], { input: requests });
  assert.equal(run.status, 0, run.stderr.toString());
  assert.deepEqual(run.stdout.toString().split("\n"), replies.split("\n"));
});
