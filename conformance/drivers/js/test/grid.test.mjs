// Exact grid helpers (SPEC C-PER-1, C-X-RATE).
import assert from "node:assert/strict";
import { test } from "node:test";
import { periodicIndex, rateIndex, rateOffset } from "../src/grid.mjs";

test("C-PER-1 the first periodic grid point at or after now", () => {
  assert.equal(periodicIndex(0n, 5n, 3n), 0n);
  assert.equal(periodicIndex(10n, 1n, 3n), 3n); // 1, 4, 7, 10
  assert.equal(periodicIndex(11n, 1n, 3n), 4n);
  assert.equal(periodicIndex((1n << 64n) - 1n, 0n, 1n << 62n), 4n); // past 2**64-1, exact
});

test("C-X-RATE 30 Hz and NTSC grids are ceil(k * 1e9 * den / num), exactly", () => {
  assert.deepEqual([0n, 1n, 2n, 30n].map((k) => rateOffset(k, 30n, 1n)), [0n, 33333334n, 66666667n, 1000000000n]);
  assert.equal(rateOffset(30000n, 30000n, 1001n), 1001000000000n);
  assert.equal(rateOffset(1n, 30000n, 1001n), 33366667n);
  const big = (1n << 64n) - 1n;
  assert.equal(rateOffset(big, 7n, 3n), (big * 3000000000n + 6n) / 7n);
});

test("C-X-RATE the first rate grid index at or after now", () => {
  for (const now of [0n, 1n, 33333333n, 33333334n, 33333335n, 10n ** 9n, 10n ** 18n + 7n]) {
    const k = rateIndex(now, 0n, 30n, 1n);
    assert.ok(rateOffset(k, 30n, 1n) >= now);
    assert.ok(k === 0n || rateOffset(k - 1n, 30n, 1n) < now);
  }
  assert.equal(rateIndex(5n, 9n, 30n, 1n), 0n);
  assert.equal(rateIndex(10n, 0n, 2000000000n, 1n), 19n); // 2 GHz: offsets 10 at k = 19 and 20, the first
});
