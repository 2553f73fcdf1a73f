// simclock's random streams, bit for bit (SPEC C-X-BITS, C-RNG-1..4).
//
// A stream is named by its normalised label path (C-RNG-3). Its 64-bit outputs are numpy's
// PCG64(SeedSequence(seed, spawn_key=K)).random_raw(), K the four big-endian 32-bit words of
// BLAKE2b-128(b"simclock.random_source.v1\0" + path). Node's crypto offers only
// BLAKE2b-512, whose parameter block names a 64-byte digest (a 16-byte digest is not its
// prefix), so BLAKE2b is written out here from RFC 7693. All arithmetic is BigInt.

import { ValueError } from "./errors.mjs";

const M64 = (1n << 64n) - 1n;
const M128 = (1n << 128n) - 1n;
const M32 = 0xffffffff;

const IV = [
  0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n,
];
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const rotr = (x, r) => ((x >> BigInt(r)) | (x << BigInt(64 - r))) & M64;

function compress(h, block, counter, last) {
  const m = [];
  for (let i = 0; i < 16; i++) {
    let w = 0n;
    for (let b = 7; b >= 0; b--) w = (w << 8n) | BigInt(block[i * 8 + b]);
    m.push(w);
  }
  const v = [...h, ...IV];
  v[12] ^= counter & M64;
  v[13] ^= counter >> 64n;
  if (last) v[14] ^= M64;
  const g = (a, b, c, d, x, y) => {
    v[a] = (v[a] + v[b] + x) & M64;
    v[d] = rotr(v[d] ^ v[a], 32);
    v[c] = (v[c] + v[d]) & M64;
    v[b] = rotr(v[b] ^ v[c], 24);
    v[a] = (v[a] + v[b] + y) & M64;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] = (v[c] + v[d]) & M64;
    v[b] = rotr(v[b] ^ v[c], 63);
  };
  for (let r = 0; r < 12; r++) {
    const s = SIGMA[r % 10];
    g(0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/** Unkeyed BLAKE2b of `data` (a Uint8Array) with an `outlen`-byte digest (RFC 7693). */
export function blake2b(data, outlen = 64) {
  if (!Number.isInteger(outlen) || outlen < 1 || outlen > 64) {
    throw new ValueError(`outlen must be an integer in 1..64, got ${outlen}`);
  }
  const h = [...IV];
  h[0] ^= 0x01010000n ^ BigInt(outlen);
  let off = 0;
  let counter = 0n;
  // Every full block but the last is not-last; the final one (maybe empty) is flagged.
  while (data.length - off > 128) {
    counter += 128n;
    compress(h, data.subarray(off, off + 128), counter, false);
    off += 128;
  }
  const block = new Uint8Array(128);
  block.set(data.subarray(off));
  counter += BigInt(data.length - off);
  compress(h, block, counter, true);
  const out = new Uint8Array(outlen);
  for (let i = 0; i < outlen; i++) out[i] = Number((h[i >> 3] >> BigInt(8 * (i & 7))) & 0xffn);
  return out;
}

const DOMAIN = new TextEncoder().encode("simclock.random_source.v1\0");
const SEGMENT = /^[A-Za-z0-9_.-]+$/;

/**
 * The stream path of a label list (C-RNG-3): ["a","b"], ["a/b"] and ["/a/b"] are "/a/b", [] is "/".
 * A label that is not a string is a TypeError; an empty segment or a character outside
 * [A-Za-z0-9_.-] a ValueError.
 */
export function normalisePath(labels) {
  if (!Array.isArray(labels)) throw new TypeError(`labels must be an array of strings, got ${typeof labels}`);
  const segments = [];
  for (const label of labels) {
    if (typeof label !== "string") throw new TypeError(`a label must be a string, got ${typeof label}`);
    const body = label.startsWith("/") ? label.slice(1) : label;
    for (const segment of body.split("/")) {
      if (!SEGMENT.test(segment)) {
        throw new ValueError(
          `label ${JSON.stringify(label).slice(0, 60)} is malformed: segments must be non-empty ` +
            `and use only [A-Za-z0-9_.-], e.g. "/sensors/imu0/noise"`,
        );
      }
      segments.push(segment);
    }
  }
  return "/" + segments.join("/");
}

/** The four big-endian 32-bit words of BLAKE2b-128(DOMAIN + path) (C-X-BITS), as Numbers. */
export function spawnKey(path) {
  const text = new TextEncoder().encode(path);
  const data = new Uint8Array(DOMAIN.length + text.length);
  data.set(DOMAIN);
  data.set(text, DOMAIN.length);
  const d = blake2b(data, 16);
  const key = [];
  for (let i = 0; i < 16; i += 4) key.push(((d[i] << 24) | (d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3]) >>> 0);
  return key;
}

// numpy's SeedSequence constants (a pool of four 32-bit words).
const INIT_A = 0x43b0d7e5;
const MULT_A = 0x931e8875;
const INIT_B = 0x8b51f9dd;
const MULT_B = 0x58f38ded;
const MIX_MULT_L = 0xca01f9dd;
const MIX_MULT_R = 0x4973f715;
const POOL = 4;

/**
 * numpy's SeedSequence(seed, spawn_key).generate_state(4, uint64) as four BigInts.
 * `seed` is any non-negative BigInt (taken as little-endian 32-bit words), `key` 32-bit words.
 */
export function seedSequenceState(seed, key) {
  if (typeof seed !== "bigint" || seed < 0n) throw new TypeError(`seed must be a non-negative BigInt, got ${seed}`);
  const entropy = [];
  for (let s = seed; s > 0n || entropy.length === 0; s >>= 32n) entropy.push(Number(s & 0xffffffffn));
  // With a spawn key, the entropy is zero-padded up to the pool size first.
  while (key.length > 0 && entropy.length < POOL) entropy.push(0);
  const words = [...entropy, ...key];
  let hashConst = INIT_A;
  const hashmix = (value) => {
    value = (value ^ hashConst) >>> 0;
    hashConst = Math.imul(hashConst, MULT_A) >>> 0;
    value = Math.imul(value, hashConst) >>> 0;
    return (value ^ (value >>> 16)) >>> 0;
  };
  const mix = (x, y) => {
    const r = (Math.imul(MIX_MULT_L, x) - Math.imul(MIX_MULT_R, y)) >>> 0;
    return (r ^ (r >>> 16)) >>> 0;
  };
  const pool = [];
  for (let i = 0; i < POOL; i++) pool.push(hashmix(i < words.length ? words[i] : 0));
  for (let src = 0; src < POOL; src++) {
    for (let dst = 0; dst < POOL; dst++) if (src !== dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
  }
  for (let src = POOL; src < words.length; src++) {
    for (let dst = 0; dst < POOL; dst++) pool[dst] = mix(pool[dst], hashmix(words[src]));
  }
  const state = [];
  let hc = INIT_B;
  for (let i = 0; i < 8; i++) {
    let v = (pool[i % POOL] ^ hc) >>> 0;
    hc = Math.imul(hc, MULT_B) >>> 0;
    v = Math.imul(v, hc) >>> 0;
    state.push((v ^ (v >>> 16)) >>> 0);
  }
  const out = [];
  for (let i = 0; i < 4; i++) out.push(BigInt(state[2 * i]) | (BigInt(state[2 * i + 1]) << 32n));
  return out;
}

const PCG_MULT = (0x2360ed051fc65da4n << 64n) | 0x4385df649fccf645n;

/** numpy's PCG64: a 128-bit LCG with the XSL-RR output of the state after each step. */
export class Pcg64 {
  /** Seeded from four 64-bit words w as numpy does: initstate = w0:w1, initseq = w2:w3. */
  constructor(words) {
    const initstate = (words[0] << 64n) | words[1];
    const initseq = (words[2] << 64n) | words[3];
    this.inc = ((initseq << 1n) | 1n) & M128;
    this.state = 0n;
    this.#step();
    this.state = (this.state + initstate) & M128;
    this.#step();
  }

  #step() {
    this.state = (this.state * PCG_MULT + this.inc) & M128;
  }

  /** The next raw 64-bit output, a BigInt in [0, 2**64). */
  next() {
    this.#step();
    const x = ((this.state >> 64n) ^ this.state) & M64;
    const rot = this.state >> 122n;
    return ((x >> rot) | (x << ((64n - rot) & 63n))) & M64;
  }
}

/** PCG64(SeedSequence(seed, spawn_key=spawnKey(path))): the stream `path` of root `seed`. */
export function streamOf(seed, path) {
  return new Pcg64(seedSequenceState(seed, spawnKey(path)));
}

/**
 * The seeded tree of streams of one clock: `stream(labels)` normalises the labels (C-RNG-3)
 * and returns the one generator of that path, which continues where its last draw stopped.
 */
export class RandomStreams {
  #seed;
  #streams = new Map();

  constructor(seed) {
    if (typeof seed !== "bigint" || seed < 0n) throw new TypeError(`seed must be a non-negative BigInt, got ${seed}`);
    this.#seed = seed;
  }

  stream(labels) {
    const path = normalisePath(labels);
    let s = this.#streams.get(path);
    if (s === undefined) {
      s = streamOf(this.#seed, path);
      this.#streams.set(path, s);
    }
    return s;
  }
}
