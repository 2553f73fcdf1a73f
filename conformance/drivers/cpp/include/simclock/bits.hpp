// simclock driver kit: simclock's random streams, bit for bit (C-X-BITS, C-RNG-1..4).
//
// A stream is PCG64(SeedSequence(seed, spawn_key=K)) as numpy builds it, K the four
// big-endian 32-bit words of blake2b(b"simclock.random_source.v1\0" + path,
// digest_size=16), `path` the normalised label path. Written from the published
// algorithms: BLAKE2b (RFC 7693), numpy's SeedSequence entropy pool, PCG64 (a 128-bit
// LCG with the XSL-RR output).
#ifndef SIMCLOCK_BITS_HPP
#define SIMCLOCK_BITS_HPP

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "errors.hpp"
#include "json.hpp"

namespace simclock {

/// A clock's seed: any non-negative integer, as little-endian 32-bit words (numpy's
/// SeedSequence entropy; a seed above 2**64 is simply more words).
struct Seed {
    std::vector<std::uint32_t> words{0};

    /// The seed written in decimal; `digits` must be [0-9]+ (the wire checks it).
    static Seed from_decimal(const std::string& digits) {
        Seed s;
        for (char c : digits) {
            std::uint64_t carry = static_cast<std::uint64_t>(c - '0');
            for (auto& w : s.words) {
                std::uint64_t t = static_cast<std::uint64_t>(w) * 10 + carry;
                w = static_cast<std::uint32_t>(t);
                carry = t >> 32;
            }
            if (carry) s.words.push_back(static_cast<std::uint32_t>(carry));
        }
        return s;
    }
};

namespace bits {

using u64 = std::uint64_t;
using u32 = std::uint32_t;
using u128 = unsigned __int128;

inline constexpr u64 B2_IV[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull,
                                 0xa54ff53a5f1d36f1ull, 0x510e527fade682d1ull, 0x9b05688c2b3e6c1full,
                                 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};
inline constexpr unsigned char B2_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

inline u64 rotr64(u64 x, unsigned r) { return (x >> r) | (x << ((64 - r) & 63)); }

inline void b2_compress(u64 h[8], const unsigned char block[128], u128 counter, bool last) {
    u64 m[16], v[16];
    for (int i = 0; i < 16; ++i) {
        u64 w = 0;
        for (int b = 7; b >= 0; --b) w = (w << 8) | block[i * 8 + b];
        m[i] = w;
    }
    for (int i = 0; i < 8; ++i) {
        v[i] = h[i];
        v[i + 8] = B2_IV[i];
    }
    v[12] ^= static_cast<u64>(counter);
    v[13] ^= static_cast<u64>(counter >> 64);
    if (last) v[14] = ~v[14];
    auto g = [&v](int a, int b, int c, int d, u64 x, u64 y) {
        v[a] = v[a] + v[b] + x;
        v[d] = rotr64(v[d] ^ v[a], 32);
        v[c] = v[c] + v[d];
        v[b] = rotr64(v[b] ^ v[c], 24);
        v[a] = v[a] + v[b] + y;
        v[d] = rotr64(v[d] ^ v[a], 16);
        v[c] = v[c] + v[d];
        v[b] = rotr64(v[b] ^ v[c], 63);
    };
    for (const auto& s : B2_SIGMA) {
        g(0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; ++i) h[i] ^= v[i] ^ v[i + 8];
}

/// Unkeyed BLAKE2b with an `outlen`-byte digest, 1 <= outlen <= 64 (RFC 7693).
inline std::vector<unsigned char> blake2b(const std::string& data, std::size_t outlen) {
    u64 h[8];
    for (int i = 0; i < 8; ++i) h[i] = B2_IV[i];
    h[0] ^= 0x01010000ull ^ static_cast<u64>(outlen);
    unsigned char block[128];
    std::size_t n = data.size(), off = 0;
    u128 counter = 0;
    // Every full block but the last is compressed as not-last; the final one (possibly
    // empty, zero-padded) carries the last-block flag.
    while (n - off > 128) {
        std::memcpy(block, data.data() + off, 128);
        off += 128;
        counter += 128;
        b2_compress(h, block, counter, false);
    }
    std::memset(block, 0, 128);
    std::memcpy(block, data.data() + off, n - off);
    counter += static_cast<u128>(n - off);
    b2_compress(h, block, counter, true);
    std::vector<unsigned char> out(outlen);
    for (std::size_t i = 0; i < outlen; ++i) out[i] = static_cast<unsigned char>(h[i / 8] >> (8 * (i % 8)));
    return out;
}

// numpy's SeedSequence constants (a pool of four 32-bit words).
inline constexpr u32 INIT_A = 0x43b0d7e5u, MULT_A = 0x931e8875u, INIT_B = 0x8b51f9ddu, MULT_B = 0x58f38dedu,
                     MIX_MULT_L = 0xca01f9ddu, MIX_MULT_R = 0x4973f715u;
inline constexpr unsigned XSHIFT = 16;
inline constexpr std::size_t POOL = 4;

/// SeedSequence(entropy, spawn_key).generate_state(8, uint32): the first four words are
/// generate_state(4, uint32), all eight read as little-endian pairs generate_state(4, uint64).
inline std::array<u32, 8> seed_sequence_words(const std::vector<u32>& entropy, const std::vector<u32>& spawn_key) {
    std::vector<u32> words = entropy;
    // With a spawn key, the run entropy is zero-padded up to the pool size first.
    if (!spawn_key.empty() && words.size() < POOL) words.resize(POOL, 0);
    words.insert(words.end(), spawn_key.begin(), spawn_key.end());

    u32 hash_const = INIT_A;
    auto hashmix = [&hash_const](u32 value) {
        value ^= hash_const;
        hash_const *= MULT_A;
        value *= hash_const;
        value ^= value >> XSHIFT;
        return value;
    };
    auto mix = [](u32 x, u32 y) {
        u32 result = MIX_MULT_L * x - MIX_MULT_R * y;
        result ^= result >> XSHIFT;
        return result;
    };
    u32 pool[POOL];
    for (std::size_t i = 0; i < POOL; ++i) pool[i] = hashmix(i < words.size() ? words[i] : 0u);
    for (std::size_t src = 0; src < POOL; ++src)
        for (std::size_t dst = 0; dst < POOL; ++dst)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    for (std::size_t src = POOL; src < words.size(); ++src)
        for (std::size_t dst = 0; dst < POOL; ++dst) pool[dst] = mix(pool[dst], hashmix(words[src]));

    std::array<u32, 8> state{};
    u32 hc = INIT_B;
    for (std::size_t i = 0; i < 8; ++i) {
        u32 v = pool[i % POOL];
        v ^= hc;
        hc *= MULT_B;
        v *= hc;
        v ^= v >> XSHIFT;
        state[i] = v;
    }
    return state;
}

/// PCG64: a 128-bit LCG with the XSL-RR output, seeded as numpy seeds it.
struct Pcg64 {
    u128 state = 0, inc = 0;

    static constexpr u128 MULT = (static_cast<u128>(0x2360ED051FC65DA4ull) << 64) | 0x4385DF649FCCF645ull;

    /// Seeded from SeedSequence words: initstate = w0:w1, initseq = w2:w3 (64-bit words).
    static Pcg64 from_words(const std::array<u32, 8>& w32) {
        u64 w[4];
        for (std::size_t i = 0; i < 4; ++i) w[i] = static_cast<u64>(w32[2 * i]) | (static_cast<u64>(w32[2 * i + 1]) << 32);
        Pcg64 g;
        g.inc = ((((static_cast<u128>(w[2]) << 64) | w[3])) << 1) | 1;
        g.step();
        g.state += (static_cast<u128>(w[0]) << 64) | w[1];
        g.step();
        return g;
    }
    void step() { state = state * MULT + inc; }
    /// The next raw 64-bit output: the XSL-RR of the state after the step.
    u64 next() {
        step();
        u64 x = static_cast<u64>(state >> 64) ^ static_cast<u64>(state);
        return rotr64(x, static_cast<unsigned>(state >> 122));
    }
};

inline constexpr char DOMAIN[] = "simclock.random_source.v1";  // followed by one NUL byte

/// The spawn key of a normalised path: four big-endian words of its BLAKE2b-128.
inline std::vector<u32> spawn_key(const std::string& path) {
    std::string data(DOMAIN, sizeof(DOMAIN));  // sizeof counts the terminating NUL
    data += path;
    std::vector<unsigned char> d = blake2b(data, 16);
    std::vector<u32> key(4);
    for (std::size_t i = 0; i < 4; ++i) {
        const unsigned char* b = &d[4 * i];
#ifdef SIMCLOCK_KIT_BROKEN_BITS
        // Broken on purpose (a test of the suite): the words read little-endian.
        key[i] = static_cast<u32>(b[0]) | (static_cast<u32>(b[1]) << 8) | (static_cast<u32>(b[2]) << 16) |
                 (static_cast<u32>(b[3]) << 24);
#else
        key[i] = (static_cast<u32>(b[0]) << 24) | (static_cast<u32>(b[1]) << 16) | (static_cast<u32>(b[2]) << 8) | b[3];
#endif
    }
    return key;
}

}  // namespace bits

/// `label` joined onto the normalised path `parent` (C-RNG-3): a leading '/' is optional
/// and relative to the parent; every segment is non-empty and uses only [A-Za-z0-9_.-].
/// A malformed label is a ValueError.
inline std::string join_label(const std::string& parent, const std::string& label) {
    std::string body = (!label.empty() && label[0] == '/') ? label.substr(1) : label;
    std::string joined;
    std::size_t start = 0;
    while (true) {
        std::size_t slash = body.find('/', start);
        std::string seg = body.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        bool good = !seg.empty();
        for (char c : seg) {
            auto u = static_cast<unsigned char>(c);
            if (u >= 0x80 || !(std::isalnum(u) || c == '_' || c == '.' || c == '-')) good = false;
        }
        if (!good)
            throw ValueError("label " + json::quote(label.substr(0, 60)) +
                             " is malformed: segments must be non-empty and use only "
                             "[A-Za-z0-9_.-], e.g. \"/sensors/imu0/noise\"");
        joined += "/" + seg;
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return (parent == "/" ? "" : parent) + joined;
}

/// A clock's random streams: one PCG64 per normalised path, each continuing where its
/// last draw stopped (C-RNG-1..4), bit for bit simclock's (C-X-BITS).
class Streams {
   public:
    explicit Streams(Seed seed) : seed_(std::move(seed)) {}

    /// The next raw 64-bit output of the stream at `path` ("/" is the root stream).
    std::uint64_t next(const std::string& path) {
        auto it = streams_.find(path);
        if (it == streams_.end())
            it = streams_.emplace(path, bits::Pcg64::from_words(bits::seed_sequence_words(seed_.words, bits::spawn_key(path))))
                     .first;
        return it->second.next();
    }

   private:
    Seed seed_;
    std::map<std::string, bits::Pcg64> streams_;
};

}  // namespace simclock

#endif
