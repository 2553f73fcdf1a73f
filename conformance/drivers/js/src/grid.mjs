// Exact grid arithmetic for periodic and rate entries (SPEC C-PER-1, C-PER-3, C-X-RATE).
//
// Helpers for a clock author; the kit itself never computes a clock's firing times.

const NS_PER_S = 1_000_000_000n;

/** The first index k with phase + k*period >= now (C-PER-1). */
export function periodicIndex(nowNs, phaseNs, periodNs) {
  if (phaseNs >= nowNs) return 0n;
  return (nowNs - phaseNs + periodNs - 1n) / periodNs;
}

/** ceil(k * 10**9 * den / num): the offset of firing k of a num/den Hz grid (C-X-RATE). */
export function rateOffset(k, num, den) {
  const p = k * NS_PER_S * den;
  return (p + num - 1n) / num;
}

/** The first index k with phase + rateOffset(k) >= now (C-X-RATE). */
export function rateIndex(nowNs, phaseNs, num, den) {
  if (phaseNs >= nowNs) return 0n;
  const elapsed = nowNs - phaseNs;
  // floor(elapsed * num / (1e9 * den)) is at most one below the answer.
  let k = (elapsed * num) / (NS_PER_S * den);
  while (rateOffset(k, num, den) < elapsed) k += 1n;
  while (k > 0n && rateOffset(k - 1n, num, den) >= elapsed) k -= 1n;
  return k;
}
