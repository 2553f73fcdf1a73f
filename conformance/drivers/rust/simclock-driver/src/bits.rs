//! simclock's random streams, bit for bit (C-X-BITS, C-RNG-1..3).
//!
//! A stream is named by its normalised label path (`/`, `/sensors/imu0`, ...). Its raw
//! 64-bit outputs are those of numpy's `PCG64(SeedSequence(seed, spawn_key=K))`, where
//! `K` is the four big-endian 32-bit words of
//! `blake2b(b"simclock.random_source.v1\0" + path, digest_size=16)`. The three pieces
//! (BLAKE2b of RFC 7693, numpy's `SeedSequence` entropy pool, PCG64 with the XSL-RR
//! output) are written here from their published descriptions; no dependency.

use std::collections::HashMap;

use crate::ClockError;

/// A clock's seed: any non-negative integer, as little-endian 32-bit words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    words: Vec<u32>,
}

impl Seed {
    /// The seed whose decimal digits are `digits` (`[0-9]+`; the wire checks them).
    pub fn from_decimal(digits: &str) -> Option<Seed> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut words = vec![0u32];
        for b in digits.bytes() {
            let mut carry = u64::from(b - b'0');
            for w in words.iter_mut() {
                let t = u64::from(*w) * 10 + carry;
                *w = t as u32;
                carry = t >> 32;
            }
            if carry != 0 {
                words.push(carry as u32);
            }
        }
        Some(Seed { words })
    }

    /// The seed `value`.
    pub fn from_u64(value: u64) -> Seed {
        let mut words = vec![value as u32];
        if value >> 32 != 0 {
            words.push((value >> 32) as u32);
        }
        Seed { words }
    }

    /// Little-endian 32-bit words, no trailing zero words except for the seed 0.
    pub fn words(&self) -> &[u32] {
        &self.words
    }
}

const IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

const SIGMA: [[usize; 16]; 10] = [
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

fn compress(h: &mut [u64; 8], block: &[u8; 128], counter: u128, last: bool) {
    let mut m = [0u64; 16];
    for (i, word) in m.iter_mut().enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&block[8 * i..8 * i + 8]);
        *word = u64::from_le_bytes(bytes);
    }
    let mut v = [0u64; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= counter as u64;
    v[13] ^= (counter >> 64) as u64;
    if last {
        v[14] = !v[14];
    }
    fn g(v: &mut [u64; 16], a: usize, b: usize, c: usize, d: usize, x: u64, y: u64) {
        v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
        v[d] = (v[d] ^ v[a]).rotate_right(32);
        v[c] = v[c].wrapping_add(v[d]);
        v[b] = (v[b] ^ v[c]).rotate_right(24);
        v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
        v[d] = (v[d] ^ v[a]).rotate_right(16);
        v[c] = v[c].wrapping_add(v[d]);
        v[b] = (v[b] ^ v[c]).rotate_right(63);
    }
    for round in 0..12 {
        let s = &SIGMA[round % 10];
        g(&mut v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(&mut v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(&mut v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(&mut v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(&mut v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(&mut v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(&mut v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(&mut v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

/// Unkeyed BLAKE2b of `data` with an `OUT`-byte digest (RFC 7693), `1 <= OUT <= 64`.
pub fn blake2b<const OUT: usize>(data: &[u8]) -> [u8; OUT] {
    assert!((1..=64).contains(&OUT), "BLAKE2b digests are 1 to 64 bytes");
    let mut h = IV;
    h[0] ^= 0x0101_0000 ^ OUT as u64;
    let mut counter = 0u128;
    let mut rest = data;
    // Every full block but the last is compressed as not-last; the final block (possibly
    // empty, zero-padded) carries the last-block flag.
    while rest.len() > 128 {
        let mut block = [0u8; 128];
        block.copy_from_slice(&rest[..128]);
        counter += 128;
        compress(&mut h, &block, counter, false);
        rest = &rest[128..];
    }
    let mut block = [0u8; 128];
    block[..rest.len()].copy_from_slice(rest);
    counter += rest.len() as u128;
    compress(&mut h, &block, counter, true);
    let mut out = [0u8; OUT];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = (h[i / 8] >> (8 * (i % 8))) as u8;
    }
    out
}

const DOMAIN: &[u8] = b"simclock.random_source.v1\0";

/// The spawn key of the stream at the normalised `path`: four big-endian words of its hash.
pub fn spawn_key(path: &str) -> [u32; 4] {
    let mut data = DOMAIN.to_vec();
    data.extend_from_slice(path.as_bytes());
    let digest = blake2b::<16>(&data);
    let mut key = [0u32; 4];
    for (i, word) in key.iter_mut().enumerate() {
        *word = u32::from_be_bytes([digest[4 * i], digest[4 * i + 1], digest[4 * i + 2], digest[4 * i + 3]]);
    }
    key
}

const POOL: usize = 4;
const INIT_A: u32 = 0x43b0d7e5;
const MULT_A: u32 = 0x931e8875;
const INIT_B: u32 = 0x8b51f9dd;
const MULT_B: u32 = 0x58f38ded;
const MIX_MULT_L: u32 = 0xca01f9dd;
const MIX_MULT_R: u32 = 0x4973f715;
const XSHIFT: u32 = 16;

/// numpy's `SeedSequence(entropy, spawn_key=key).generate_state(4, uint64)`.
pub fn seed_sequence_state(entropy: &[u32], key: &[u32]) -> [u64; 4] {
    let mut words = entropy.to_vec();
    // With a spawn key, the entropy is zero-padded up to the pool size first.
    if !key.is_empty() && words.len() < POOL {
        words.resize(POOL, 0);
    }
    words.extend_from_slice(key);
    let mut hash_const = INIT_A;
    let mut hashmix = |value: u32| {
        let mut v = value ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_A);
        v = v.wrapping_mul(hash_const);
        v ^ (v >> XSHIFT)
    };
    let mix = |x: u32, y: u32| {
        let r = MIX_MULT_L.wrapping_mul(x).wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        r ^ (r >> XSHIFT)
    };
    let mut pool = [0u32; POOL];
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(words.get(i).copied().unwrap_or(0));
    }
    for src in 0..POOL {
        for dst in 0..POOL {
            if src != dst {
                let h = hashmix(pool[src]);
                pool[dst] = mix(pool[dst], h);
            }
        }
    }
    for &word in words.iter().skip(POOL) {
        for slot in pool.iter_mut() {
            let h = hashmix(word);
            *slot = mix(*slot, h);
        }
    }
    let mut hc = INIT_B;
    let mut state = [0u32; 8];
    for (i, slot) in state.iter_mut().enumerate() {
        let mut v = pool[i % POOL] ^ hc;
        hc = hc.wrapping_mul(MULT_B);
        v = v.wrapping_mul(hc);
        *slot = v ^ (v >> XSHIFT);
    }
    // The 32-bit words pair up little-endian into 64-bit words.
    let mut out = [0u64; 4];
    for (i, word) in out.iter_mut().enumerate() {
        *word = u64::from(state[2 * i]) | (u64::from(state[2 * i + 1]) << 32);
    }
    out
}

const PCG_MULT: u128 = (0x2360_ED05_1FC6_5DA4 << 64) | 0x4385_DF64_9FCC_F645;

/// numpy's PCG64: a 128-bit LCG with the XSL-RR output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pcg64 {
    /// The LCG state.
    pub state: u128,
    /// The LCG increment (always odd).
    pub inc: u128,
}

impl Pcg64 {
    /// Seeded as numpy seeds it from `SeedSequence.generate_state(4, uint64)`.
    pub fn from_state_words(w: [u64; 4]) -> Pcg64 {
        let initstate = (u128::from(w[0]) << 64) | u128::from(w[1]);
        let initseq = (u128::from(w[2]) << 64) | u128::from(w[3]);
        let mut g = Pcg64 { state: 0, inc: (initseq << 1) | 1 };
        g.step();
        g.state = g.state.wrapping_add(initstate);
        g.step();
        g
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// The next raw 64-bit output.
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let x = ((self.state >> 64) as u64) ^ (self.state as u64);
        x.rotate_right((self.state >> 122) as u32)
    }
}

/// Join `label` onto the normalised path `parent` (C-RNG-3).
///
/// A leading `/` is optional (the label is relative to the parent either way); every
/// segment is non-empty and uses only `[A-Za-z0-9_.-]`, else `ValueError`.
pub fn join_label(parent: &str, label: &str) -> Result<String, ClockError> {
    let body = label.strip_prefix('/').unwrap_or(label);
    let mut path = if parent == "/" { String::new() } else { parent.to_owned() };
    for segment in body.split('/') {
        let good =
            !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !good {
            let shown: String = label.chars().take(60).collect();
            return Err(ClockError::value(format!(
                "label {shown:?} is malformed: segments must be non-empty and use only \
                 [A-Za-z0-9_.-], e.g. \"/sensors/imu0/noise\""
            )));
        }
        path.push('/');
        path.push_str(segment);
    }
    Ok(path)
}

/// The normalised path of a list of labels (`[]` is the root `/`).
pub fn label_path<S: AsRef<str>>(labels: &[S]) -> Result<String, ClockError> {
    labels.iter().try_fold(String::from("/"), |path, l| join_label(&path, l.as_ref()))
}

/// The streams of one clock: each path's generator, continuing where its last draw stopped.
#[derive(Clone, Debug)]
pub struct RandomStreams {
    seed: Seed,
    streams: HashMap<String, Pcg64>,
}

impl RandomStreams {
    /// The root of the stream tree for `seed` (C-RNG-1).
    pub fn new(seed: &Seed) -> RandomStreams {
        RandomStreams { seed: seed.clone(), streams: HashMap::new() }
    }

    /// The stream at the normalised `path`, created on its first use.
    pub fn stream(&mut self, path: &str) -> &mut Pcg64 {
        let seed = &self.seed;
        self.streams
            .entry(path.to_owned())
            .or_insert_with(|| Pcg64::from_state_words(seed_sequence_state(seed.words(), &spawn_key(path))))
    }

    /// The next `n` raw outputs of the stream at `path`.
    pub fn draw(&mut self, path: &str, n: usize) -> Vec<u64> {
        let g = self.stream(path);
        (0..n).map(|_| g.next_u64()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn c_x_bits_blake2b_matches_rfc_7693_appendix_a() {
        // RFC 7693 Appendix A: BLAKE2b-512("abc").
        assert_eq!(
            hex(&blake2b::<64>(b"abc")),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1\
             7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
        );
    }

    #[test]
    fn c_x_bits_blake2b_spans_blocks() {
        // BLAKE2b-512 of the empty input: one all-zero block, flagged last.
        assert_eq!(
            hex(&blake2b::<64>(b"")),
            "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419\
             d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce"
        );
        // Exactly one full block (compressed last), and one byte more (two blocks);
        // the digests are hashlib.blake2b(bytes(range(n)), digest_size=16).
        let data: Vec<u8> = (0..=255u8).collect();
        assert_eq!(hex(&blake2b::<16>(&data[..128])), "a74787004ef589e31149183900d0294a");
        assert_eq!(hex(&blake2b::<16>(&data[..129])), "aaf1b0371f6d4ee49ee4fb5ddd9c49ef");
    }

    #[test]
    fn c_rng_3_label_paths_normalise() {
        assert_eq!(label_path::<&str>(&[]).unwrap(), "/");
        assert_eq!(label_path(&["a", "b"]).unwrap(), "/a/b");
        assert_eq!(label_path(&["a/b"]).unwrap(), "/a/b");
        assert_eq!(label_path(&["/a/b"]).unwrap(), "/a/b");
        assert_eq!(label_path(&["a", "/b"]).unwrap(), "/a/b");
        for bad in ["", "/", "a//b", "a/", "a b", "é", "a/b\n"] {
            let err = label_path(&["ok", bad]).unwrap_err();
            assert_eq!(err.kind, crate::ErrorKind::ValueError, "{bad:?}");
        }
    }

    #[test]
    fn c_x_bits_seed_words_are_little_endian() {
        assert_eq!(Seed::from_decimal("0").unwrap().words(), &[0]);
        assert_eq!(Seed::from_decimal("4294967296").unwrap().words(), &[0, 1]);
        assert_eq!(Seed::from_decimal("18446744073709551616").unwrap().words(), &[0, 0, 1]);
        assert_eq!(Seed::from_u64(u64::MAX), Seed::from_decimal("18446744073709551615").unwrap());
        assert_eq!(Seed::from_decimal("1e3"), None);
        assert_eq!(Seed::from_decimal(""), None);
    }
}
