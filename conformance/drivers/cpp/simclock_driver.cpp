// simclock wire-protocol driver: a deterministic heap clock in C++17 (SPEC §1, §18).
//
// One file, standard library only. Build:
//     g++ -std=c++17 -O2 -o simclock_driver simclock_driver.cpp
// Run it under the conformance suite:
//     python -m simclock_conformance --driver -- ./simclock_driver
//
// The driver reads one JSON request per line on stdin and writes one JSON reply per
// line on stdout, flushed after every reply (C-WIRE-1); nothing else goes to stdout.
// Every integer of the protocol is a decimal string (C-WIRE-2).
//
// The clock (SPEC §1) is a binary heap of entries keyed (at_ns, seq), seq a per-clock
// counter taken at every push: equal times fire in push order (C-TIE-1) and a periodic,
// re-pushed after its callback with a fresh seq (C-PER-2), fires after entries already
// waiting at its next time. Cancellation is lazy (C-CAN-4): a cancelled entry stays as a
// tombstone until it reaches the root or until the heap holds more than
// 2*live + 64 items, when it is rebuilt with the live entries only. `stored` in every
// observation is the number of heap items, tombstones included.
//
// Times: every time given on the wire must be at most 2**64-1 (C-TIME-4: more digits are
// a ValueError, never wrapped), and `now` never goes past 2**64-1 (an advance that would
// is a ValueError). Times computed inside the clock (a child at now + delay, the next
// firing of a periodic or rate grid) are held in unsigned 128-bit integers, so they stay
// exact beyond 2**64-1 too; such entries simply never become due.
//
// Random streams (C-X-BITS): `draw` returns the raw 64-bit outputs of numpy's
// PCG64(SeedSequence(seed, spawn_key=K)), K the four big-endian 32-bit words of
// blake2b(b"simclock.random_source.v1\0" + path, digest_size=16), written here from
// the published algorithms (BLAKE2b of RFC 7693, numpy's SeedSequence entropy pool,
// PCG64 = 128-bit LCG with the XSL-RR output).
//
// Deliberately broken variants for testing the suite, from this same file:
//     -DBROKEN_FLOAT64          times stored as double (wrong above 2**53, C-TIME-4)
//     -DBROKEN_LIFO_TIES        equal times fire last-pushed first (C-TIE-1)
//     -DBROKEN_NUMBER_TIMES     a time sent as a JSON number is accepted (C-TIME-3, C-WIRE-2)
//     -DBROKEN_NESTED_ADVANCE   an advance from inside a callback runs (C-ADV-4)
//     -DBROKEN_NO_COMPACT       tombstones are never compacted (C-CAN-4)
//     -DBROKEN_BITS             spawn key words taken little-endian (C-X-BITS, C-RNG-2)
//     -DBROKEN_CRASH[=N]        the process aborts on its N-th advance (default 4; C-WIRE-5)
//     -DBROKEN_HANG             stops answering on an advance whose target is >= 2**62
//                               (C-WIRE-5: a hang, caught by the suite's deadline)

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <chrono>
#include <unordered_map>
#include <utility>
#include <vector>

typedef unsigned __int128 u128;
typedef uint64_t u64;
typedef uint32_t u32;

static const u64 U64_MAX = ~(u64)0;
static const u64 NS_PER_S = 1000000000ull;
static const u128 U64_MAX_U128 = (u128)U64_MAX;

// ---------------------------------------------------------------------------------------
// Errors: a refusal carries the protocol's error kind (C-WIRE-5).

struct Refusal {
    std::string kind;  // TypeError, ValueError, RuntimeError, bad_request, unsupported
    std::string message;
};

[[noreturn]] static void refuse(const std::string& kind, const std::string& message) {
    throw Refusal{kind, message};
}

// ---------------------------------------------------------------------------------------
// JSON: the subset the protocol uses (objects, arrays, strings, numbers, true/false/null).

struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool boolean = false;
    std::string text;  // a String's decoded UTF-8, or a Number's literal text
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> members;

    const Json* get(const char* key) const {
        for (const auto& m : members)
            if (m.first == key) return &m.second;
        return nullptr;
    }
};

struct ParseError {
    std::string message;
};

class Parser {
   public:
    explicit Parser(const std::string& s) : s_(s) {}

    Json document() {
        Json v = value(0);
        ws();
        if (i_ != s_.size()) fail("trailing characters after the JSON value");
        return v;
    }

   private:
    const std::string& s_;
    size_t i_ = 0;

    [[noreturn]] void fail(const std::string& why) {
        throw ParseError{why + " at offset " + std::to_string(i_)};
    }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
            ++i_;
    }
    bool eat(char c) {
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void literal(const char* word) {
        size_t n = std::strlen(word);
        if (s_.compare(i_, n, word) != 0) fail("invalid literal");
        i_ += n;
    }
    Json value(int depth) {
        if (depth > 512) fail("nesting deeper than 512");
        ws();
        if (i_ >= s_.size()) fail("unexpected end of input");
        Json v;
        char c = s_[i_];
        if (c == '{') {
            ++i_;
            v.kind = Json::Object;
            if (eat('}')) return v;
            do {
                ws();
                if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key");
                std::string key = string();
                if (!eat(':')) fail("expected ':'");
                v.members.emplace_back(std::move(key), value(depth + 1));
            } while (eat(','));
            if (!eat('}')) fail("expected ',' or '}'");
        } else if (c == '[') {
            ++i_;
            v.kind = Json::Array;
            if (eat(']')) return v;
            do {
                v.items.push_back(value(depth + 1));
            } while (eat(','));
            if (!eat(']')) fail("expected ',' or ']'");
        } else if (c == '"') {
            v.kind = Json::String;
            v.text = string();
        } else if (c == 't') {
            literal("true");
            v.kind = Json::Bool;
            v.boolean = true;
        } else if (c == 'f') {
            literal("false");
            v.kind = Json::Bool;
        } else if (c == 'n') {
            literal("null");
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            v.kind = Json::Number;
            size_t start = i_;
            if (s_[i_] == '-') ++i_;
            if (i_ >= s_.size() || !std::isdigit((unsigned char)s_[i_])) fail("invalid number");
            while (i_ < s_.size() && std::isdigit((unsigned char)s_[i_])) ++i_;
            if (i_ < s_.size() && s_[i_] == '.') {
                ++i_;
                if (i_ >= s_.size() || !std::isdigit((unsigned char)s_[i_])) fail("invalid number");
                while (i_ < s_.size() && std::isdigit((unsigned char)s_[i_])) ++i_;
            }
            if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
                ++i_;
                if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
                if (i_ >= s_.size() || !std::isdigit((unsigned char)s_[i_])) fail("invalid number");
                while (i_ < s_.size() && std::isdigit((unsigned char)s_[i_])) ++i_;
            }
            v.text = s_.substr(start, i_ - start);
        } else {
            fail("unexpected character");
        }
        return v;
    }
    static void put_utf8(std::string& out, u32 cp) {
        if (cp < 0x80) {
            out += (char)cp;
        } else if (cp < 0x800) {
            out += (char)(0xC0 | (cp >> 6));
            out += (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += (char)(0xE0 | (cp >> 12));
            out += (char)(0x80 | ((cp >> 6) & 0x3F));
            out += (char)(0x80 | (cp & 0x3F));
        } else {
            out += (char)(0xF0 | (cp >> 18));
            out += (char)(0x80 | ((cp >> 12) & 0x3F));
            out += (char)(0x80 | ((cp >> 6) & 0x3F));
            out += (char)(0x80 | (cp & 0x3F));
        }
    }
    u32 hex4() {
        if (i_ + 4 > s_.size()) fail("truncated \\u escape");
        u32 v = 0;
        for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            v <<= 4;
            if (h >= '0' && h <= '9') v |= (u32)(h - '0');
            else if (h >= 'a' && h <= 'f') v |= (u32)(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') v |= (u32)(h - 'A' + 10);
            else fail("invalid \\u escape");
        }
        return v;
    }
    std::string string() {
        ++i_;  // the opening quote
        std::string out;
        while (true) {
            if (i_ >= s_.size()) fail("unterminated string");
            unsigned char c = (unsigned char)s_[i_++];
            if (c == '"') break;
            if (c < 0x20) fail("control character in string");
            if (c != '\\') {
                out += (char)c;
                continue;
            }
            if (i_ >= s_.size()) fail("unterminated escape");
            char e = s_[i_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    u32 cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && i_ + 6 <= s_.size() && s_[i_] == '\\' &&
                        s_[i_ + 1] == 'u') {
                        size_t save = i_;
                        i_ += 2;
                        u32 lo = hex4();
                        if (lo >= 0xDC00 && lo < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        } else {
                            i_ = save;
                            cp = 0xFFFD;
                        }
                    } else if (cp >= 0xD800 && cp < 0xE000) {
                        cp = 0xFFFD;  // a lone surrogate has no UTF-8 form
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: fail("invalid escape");
            }
        }
        return out;
    }
};

// A reply is built as text, member by member.
class Out {
   public:
    Out() { s_ = "{"; }
    Out& raw(const char* key, const std::string& json) {
        sep();
        quote(key);
        s_ += ':';
        s_ += json;
        return *this;
    }
    Out& str(const char* key, const std::string& value) {
        sep();
        quote(key);
        s_ += ':';
        quote(value);
        return *this;
    }
    Out& boolean(const char* key, bool value) { return raw(key, value ? "true" : "false"); }
    std::string done() { return s_ + "}"; }

    static std::string quoted(const std::string& value) {
        Out o;
        o.s_.clear();
        o.quote(value);
        return o.s_;
    }

   private:
    std::string s_;
    void sep() {
        if (s_.size() > 1) s_ += ',';
    }
    void quote(const std::string& v) {
        s_ += '"';
        for (unsigned char c : v) {
            if (c == '"') s_ += "\\\"";
            else if (c == '\\') s_ += "\\\\";
            else if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                s_ += buf;
            } else s_ += (char)c;
        }
        s_ += '"';
    }
};

// ---------------------------------------------------------------------------------------
// Decimal strings (C-WIRE-2).

static std::string dec(u128 v) {
    if (v == 0) return "0";
    char buf[48];
    int n = 0;
    // 128-bit division is a library call: split off 19 digits at a time in 64-bit words.
    while (v > U64_MAX_U128) {
        u64 low = (u64)(v % 10000000000000000000ull);
        v /= 10000000000000000000ull;
        for (int k = 0; k < 19; ++k) {
            buf[n++] = (char)('0' + (int)(low % 10));
            low /= 10;
        }
    }
    u64 w = (u64)v;
    while (w > 0) {
        buf[n++] = (char)('0' + (int)(w % 10));
        w /= 10;
    }
    std::string out(n, '0');
    for (int k = 0; k < n; ++k) out[k] = buf[n - 1 - k];
    return out;
}

static std::string show(const Json* v) {
    if (!v) return "nothing";
    switch (v->kind) {
        case Json::Null: return "null";
        case Json::Bool: return v->boolean ? "true" : "false";
        case Json::Number: return "the JSON number " + v->text.substr(0, 60);
        case Json::String: return "the string " + Out::quoted(v->text.substr(0, 60));
        case Json::Array: return "an array";
        case Json::Object: return "an object";
    }
    return "?";
}

static bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// A protocol integer: a JSON string of [0-9]+ whose value is at most `max`.
// Missing: bad_request. Not a digit string (a JSON number included): TypeError
// (C-TIME-3 in its wire form). Larger than `max`: ValueError (C-TIME-4).
static u128 wire_uint(const Json& req, const char* name, u128 max) {
    const Json* v = req.get(name);
    if (!v) refuse("bad_request", std::string("missing field ") + name);
#ifdef BROKEN_NUMBER_TIMES
    if (v->kind == Json::Number && v->text[0] != '-') {
        // Broken on purpose: a JSON number is taken as a time, its fraction dropped.
        u128 r = 0;
        for (char c : v->text) {
            if (c < '0' || c > '9') break;
            r = r * 10 + (u128)(c - '0');
        }
        return r;
    }
#endif
    if (v->kind != Json::String || !all_digits(v->text))
        refuse("TypeError", std::string(name) + " must be a string of decimal digits [0-9]+, got " +
                                show(v) + "; send integers as strings, e.g. \"1000\"");
    u128 r = 0;
    for (char c : v->text) {
        u128 d = (u128)(c - '0');
        if (r > (max - d) / 10)
            refuse("ValueError", std::string(name) + " = " + v->text.substr(0, 60) +
                                     (v->text.size() > 60 ? "..." : "") + " is larger than " +
                                     dec(max) + ", the largest value this backend keeps exactly");
        r = r * 10 + d;
    }
    return r;
}

static std::string wire_string(const Json& req, const char* name) {
    const Json* v = req.get(name);
    if (!v) refuse("bad_request", std::string("missing field ") + name);
    if (v->kind != Json::String) refuse("bad_request", std::string(name) + " must be a string, got " + show(v));
    return v->text;
}

// An arbitrary non-negative decimal integer as little-endian 32-bit words (a seed).
static std::vector<u32> wire_bigint(const Json& req, const char* name) {
    const Json* v = req.get(name);
    if (!v) refuse("bad_request", std::string("missing field ") + name);
    if (v->kind != Json::String || !all_digits(v->text))
        refuse("TypeError", std::string(name) + " must be a string of decimal digits [0-9]+, got " + show(v));
    if (v->text.size() > 4000)
        refuse("ValueError", std::string(name) + " has " + std::to_string(v->text.size()) +
                                 " digits; this backend keeps at most 4000");
    std::vector<u32> words{0};
    for (char c : v->text) {
        u64 carry = (u64)(c - '0');
        for (auto& w : words) {
            u64 t = (u64)w * 10 + carry;
            w = (u32)t;
            carry = t >> 32;
        }
        if (carry) words.push_back((u32)carry);
    }
    return words;
}

// ---------------------------------------------------------------------------------------
// Random streams (C-X-BITS): BLAKE2b, numpy's SeedSequence, PCG64.

namespace bits {

static const u64 B2_IV[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull,
                             0xa54ff53a5f1d36f1ull, 0x510e527fade682d1ull, 0x9b05688c2b3e6c1full,
                             0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};
static const unsigned char B2_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

static inline u64 rotr64(u64 x, unsigned r) { return (x >> r) | (x << ((64 - r) & 63)); }

static void b2_compress(u64 h[8], const unsigned char block[128], u128 counter, bool last) {
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
    v[12] ^= (u64)counter;
    v[13] ^= (u64)(counter >> 64);
    if (last) v[14] = ~v[14];
    auto g = [&](int a, int b, int c, int d, u64 x, u64 y) {
        v[a] = v[a] + v[b] + x;
        v[d] = rotr64(v[d] ^ v[a], 32);
        v[c] = v[c] + v[d];
        v[b] = rotr64(v[b] ^ v[c], 24);
        v[a] = v[a] + v[b] + y;
        v[d] = rotr64(v[d] ^ v[a], 16);
        v[c] = v[c] + v[d];
        v[b] = rotr64(v[b] ^ v[c], 63);
    };
    for (int r = 0; r < 12; ++r) {
        const unsigned char* s = B2_SIGMA[r];
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

// Unkeyed BLAKE2b with an `outlen`-byte digest (RFC 7693).
static std::vector<unsigned char> blake2b(const std::string& data, size_t outlen) {
    u64 h[8];
    for (int i = 0; i < 8; ++i) h[i] = B2_IV[i];
    h[0] ^= 0x01010000ull ^ (u64)outlen;
    unsigned char block[128];
    size_t n = data.size(), off = 0;
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
    counter += (u128)(n - off);
    b2_compress(h, block, counter, true);
    std::vector<unsigned char> out(outlen);
    for (size_t i = 0; i < outlen; ++i) out[i] = (unsigned char)(h[i / 8] >> (8 * (i % 8)));
    return out;
}

// numpy's SeedSequence constants (pool of four 32-bit words).
static const u32 INIT_A = 0x43b0d7e5u, MULT_A = 0x931e8875u, INIT_B = 0x8b51f9ddu,
                 MULT_B = 0x58f38dedu, MIX_MULT_L = 0xca01f9ddu, MIX_MULT_R = 0x4973f715u;
static const unsigned XSHIFT = 16;
static const size_t POOL = 4;

// SeedSequence(entropy, spawn_key).generate_state(4, uint64), as four 64-bit words.
static void seed_sequence_state(const std::vector<u32>& entropy, const std::vector<u32>& spawn_key,
                                u64 out[4]) {
    std::vector<u32> run = entropy;
    // With a spawn key, the run entropy is zero-padded up to the pool size first.
    if (!spawn_key.empty() && run.size() < POOL) run.resize(POOL, 0);
    std::vector<u32> words = run;
    words.insert(words.end(), spawn_key.begin(), spawn_key.end());

    u32 hash_const = INIT_A;
    auto hashmix = [&](u32 value) {
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
    for (size_t i = 0; i < POOL; ++i) pool[i] = hashmix(i < words.size() ? words[i] : 0u);
    for (size_t src = 0; src < POOL; ++src)
        for (size_t dst = 0; dst < POOL; ++dst)
            if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    for (size_t src = POOL; src < words.size(); ++src)
        for (size_t dst = 0; dst < POOL; ++dst) pool[dst] = mix(pool[dst], hashmix(words[src]));

    u32 state[8];
    u32 hc = INIT_B;
    for (size_t i = 0; i < 8; ++i) {
        u32 v = pool[i % POOL];
        v ^= hc;
        hc *= MULT_B;
        v *= hc;
        v ^= v >> XSHIFT;
        state[i] = v;
    }
    // The 32-bit words are read as little-endian pairs, whatever the host's endianness.
    for (int i = 0; i < 4; ++i) out[i] = (u64)state[2 * i] | ((u64)state[2 * i + 1] << 32);
}

// PCG64: a 128-bit LCG with the XSL-RR output, seeded as numpy does.
struct Pcg64 {
    u128 state = 0, inc = 0;
    static u128 mult() { return ((u128)0x2360ED051FC65DA4ull << 64) | 0x4385DF649FCCF645ull; }
    void step() { state = state * mult() + inc; }
    void seed(const u64 w[4]) {
        u128 initstate = ((u128)w[0] << 64) | w[1];
        u128 initseq = ((u128)w[2] << 64) | w[3];
        state = 0;
        inc = (initseq << 1) | 1;
        step();
        state += initstate;
        step();
    }
    u64 next() {
        step();
        u64 x = (u64)(state >> 64) ^ (u64)state;
        unsigned rot = (unsigned)(state >> 122);
        return rotr64(x, rot);
    }
};

static const char DOMAIN[] = "simclock.random_source.v1";  // followed by one NUL byte

static std::vector<u32> spawn_key(const std::string& path) {
    std::string data(DOMAIN, sizeof(DOMAIN));  // sizeof includes the terminating NUL
    data += path;
    std::vector<unsigned char> d = blake2b(data, 16);
    std::vector<u32> key(4);
    for (int i = 0; i < 4; ++i) {
#ifdef BROKEN_BITS
        key[i] = (u32)d[4 * i] | ((u32)d[4 * i + 1] << 8) | ((u32)d[4 * i + 2] << 16) | ((u32)d[4 * i + 3] << 24);
#else
        key[i] = ((u32)d[4 * i] << 24) | ((u32)d[4 * i + 1] << 16) | ((u32)d[4 * i + 2] << 8) | d[4 * i + 3];
#endif
    }
    return key;
}

}  // namespace bits

// Join `label` onto `parent` (C-RNG-3): a leading '/' is optional and relative to the
// parent; every segment is non-empty and uses only [A-Za-z0-9_.-].
static std::string normalise_label(const std::string& parent, const Json& label) {
    if (label.kind != Json::String)
        refuse("TypeError", "label must be a string, got " + show(&label));
    const std::string& s = label.text;
    std::string body = (!s.empty() && s[0] == '/') ? s.substr(1) : s;
    std::string joined;
    size_t start = 0;
    while (true) {
        size_t slash = body.find('/', start);
        std::string seg = body.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        bool good = !seg.empty();
        for (char c : seg)
            if (!(std::isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-') || (unsigned char)c >= 0x80)
                good = false;
        if (!good)
            refuse("ValueError", "label " + Out::quoted(s.substr(0, 60)) +
                                     " is malformed: segments must be non-empty and use only "
                                     "[A-Za-z0-9_.-], e.g. \"/sensors/imu0/noise\"");
        joined += "/" + seg;
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return (parent == "/" ? "" : parent) + joined;
}

// ---------------------------------------------------------------------------------------
// Callbacks are data (C-WIRE-4).

struct Action;
typedef std::shared_ptr<const std::vector<Action>> Actions;

struct Action {
    enum Op { Schedule, Cancel, Advance, Raise, Halt } op;
    u128 ns = 0;          // delay_ns (schedule) or dt_ns (advance)
    std::string text;     // entry (cancel) or message (raise)
    Actions on_fire;      // schedule's child actions
};

// Check an `on_fire` list with its request: a bad time anywhere refuses the whole request.
static Actions parse_actions(const Json* list, int depth) {
    auto out = std::make_shared<std::vector<Action>>();
    if (!list) return out;
    if (list->kind != Json::Array) refuse("bad_request", "on_fire must be a list of actions, got " + show(list));
    if (depth > 200) refuse("bad_request", "on_fire is nested deeper than 200 levels");
    for (const Json& item : list->items) {
        if (item.kind != Json::Object) refuse("bad_request", "an on_fire action must be an object, got " + show(&item));
        std::string what = wire_string(item, "do");
        Action a;
        if (what == "schedule") {
            a.op = Action::Schedule;
            a.ns = wire_uint(item, "delay_ns", U64_MAX);
            a.on_fire = parse_actions(item.get("on_fire"), depth + 1);
        } else if (what == "cancel") {
            a.op = Action::Cancel;
            a.text = wire_string(item, "entry");
        } else if (what == "advance") {
            a.op = Action::Advance;
            a.ns = wire_uint(item, "dt_ns", U64_MAX);
        } else if (what == "raise") {
            a.op = Action::Raise;
            const Json* m = item.get("message");
            a.text = (m && m->kind == Json::String) ? m->text : std::string("raised");
        } else if (what == "halt") {
            a.op = Action::Halt;
        } else {
            refuse("bad_request", "unknown action do=" + Out::quoted(what.substr(0, 60)) +
                                      "; expected schedule, cancel, advance, raise or halt");
        }
        out->push_back(std::move(a));
    }
    return out;
}

// ---------------------------------------------------------------------------------------
// The clock (SPEC §1).

enum State { PENDING, RUNNING, CANCELLED, CANCELLED_RUNNING, FIRED, FAILED };
enum Kind { ONESHOT, PERIODIC, RATE };

struct Entry {
    std::string id;
    Kind kind = ONESHOT;
    State state = PENDING;
    u128 at = 0;   // heap key while in the heap
    u64 seq = 0;
    Actions on_fire;
    u64 children = 0;  // the next child number (C-WIRE-4: counted over all firings)
    // Repeating entries: firing k is at phase + k*period, or phase + ceil(k*1e9*den/num).
    u128 phase = 0, period = 0, k = 0;
    u64 num = 0, den = 0;
    u64 fired = 0, failed = 0;
};

// Storage of a time: exact, or (broken on purpose) rounded through a double.
static inline u128 keep(u128 t) {
#ifdef BROKEN_FLOAT64
    return (u128)(long double)(double)t;
#else
    return t;
#endif
}

// ceil(k * 1e9 * den / num) exactly (C-X-RATE): a 256-bit product divided by a 64-bit
// divisor, so no intermediate overflows for any rate the wire admits.
static u128 rate_offset(u128 k, u64 num, u64 den) {
    u128 p = (u128)NS_PER_S * den;  // < 2**94
    u64 a[2] = {(u64)k, (u64)(k >> 64)}, b[2] = {(u64)p, (u64)(p >> 64)};
    u64 r[4] = {0, 0, 0, 0};
    for (int i = 0; i < 2; ++i) {
        u64 carry = 0;
        for (int j = 0; j < 2; ++j) {
            u128 t = (u128)a[i] * b[j] + r[i + j] + carry;
            r[i + j] = (u64)t;
            carry = (u64)(t >> 64);
        }
        r[i + 2] += carry;
    }
    u64 q[4];
    u128 rem = 0;
    for (int i = 3; i >= 0; --i) {
        u128 cur = (rem << 64) | r[i];
        q[i] = (u64)(cur / num);
        rem = cur % num;
    }
    // Invariant: the offsets the clock asks for fit in 128 bits (k is bounded by the
    // times a grid can reach below 2**64 plus one step).
    u128 quotient = ((u128)q[1] << 64) | q[0];
    return quotient + (rem != 0 ? 1 : 0);
}

struct Clock {
    std::string id;
    u128 now = 0;
    u64 seq = 0;
    bool running = false;
    std::vector<Entry*> heap;
    size_t dead = 0;  // Invariant: number of heap items whose state is not PENDING
    std::unordered_map<std::string, std::unique_ptr<Entry>> entries;  // every id ever used
    std::vector<u32> seed;
    std::map<std::string, bits::Pcg64> streams;
    // The current advance's records (C-WIRE-3, C-WIRE-4).
    std::vector<std::string> fired_json, failures_json;

    static const size_t THRESHOLD = 64;

    static bool before(const Entry* x, const Entry* y) {
        if (x->at != y->at) return x->at < y->at;
#ifdef BROKEN_LIFO_TIES
        return x->seq > y->seq;
#else
        return x->seq < y->seq;
#endif
    }
    void sift_up(size_t pos) {
        Entry* e = heap[pos];
        while (pos > 0) {
            size_t parent = (pos - 1) / 2;
            if (!before(e, heap[parent])) break;
            heap[pos] = heap[parent];
            pos = parent;
        }
        heap[pos] = e;
    }
    void sift_down(size_t pos) {
        size_t n = heap.size();
        Entry* e = heap[pos];
        while (true) {
            size_t child = 2 * pos + 1;
            if (child >= n) break;
            if (child + 1 < n && before(heap[child + 1], heap[child])) ++child;
            if (!before(heap[child], e)) break;
            heap[pos] = heap[child];
            pos = child;
        }
        heap[pos] = e;
    }
    void push(Entry* e, u128 at) {
        e->at = keep(at);
        e->seq = seq++;
        heap.push_back(e);
        sift_up(heap.size() - 1);
    }
    Entry* pop_due(u128 limit) {
        if (heap.empty() || heap[0]->at > limit) return nullptr;
        Entry* first = heap[0];
        heap[0] = heap.back();
        heap.pop_back();
        if (!heap.empty()) sift_down(0);
        return first;
    }
    void compact_if_needed() {
#ifndef BROKEN_NO_COMPACT
        // C-CAN-4: the heap never holds more than 2*live + THRESHOLD items after a call.
        if (heap.size() > 2 * (heap.size() - dead) + THRESHOLD) {
            std::vector<Entry*> live;
            for (Entry* e : heap)
                if (e->state == PENDING) live.push_back(e);
            heap.swap(live);
            dead = 0;
            for (size_t i = heap.size() / 2; i-- > 0;) sift_down(i);
        }
#endif
    }
    // C-X-PEEK: the earliest live entry; tombstones at the root leave on the way.
    bool next_event(u128& at) {
        while (!heap.empty()) {
            if (heap[0]->state == PENDING) {
                at = heap[0]->at;
                return true;
            }
            pop_due(heap[0]->at);
            --dead;
        }
        return false;
    }
    void observe(Out& o) {
        u128 at;
        if (next_event(at)) o.str("next_event_ns", dec(at));
        else o.raw("next_event_ns", "null");
        o.str("now_ns", dec(now));
        o.str("stored", dec(heap.size()));
    }

    u128 time_of(const Entry& e) const {
        if (e.kind == PERIODIC) return e.phase + e.k * e.period;
        return e.phase + rate_offset(e.k, e.num, e.den);
    }
    // The first grid index whose time is >= now (C-PER-1, C-X-RATE).
    u128 first_index(const Entry& e) const {
        if (e.phase >= now) return 0;
        u128 elapsed = now - e.phase;  // < 2**64
        if (e.kind == PERIODIC) return (elapsed + e.period - 1) / e.period;
        u128 p = (u128)NS_PER_S * e.den;
        u128 k = (elapsed * e.num) / p;  // elapsed*num < 2**128
        while (rate_offset(k, e.num, e.den) < elapsed) ++k;
        while (k > 0 && rate_offset(k - 1, e.num, e.den) >= elapsed) --k;
        return k;
    }

    Entry* add(const std::string& id, Kind kind, Actions on_fire) {
        auto e = std::make_unique<Entry>();
        e->id = id;
        e->kind = kind;
        e->on_fire = std::move(on_fire);
        Entry* raw = e.get();
        entries.emplace(id, std::move(e));
        return raw;
    }
    void cancel(Entry* e) {
        // C-CAN-1..3: never fails, repeating it does nothing, a fired entry is a no-op.
        if (e->state == PENDING) {
            e->state = CANCELLED;
            ++dead;
            compact_if_needed();
        } else if (e->state == RUNNING) {
            e->state = CANCELLED_RUNNING;  // cancelled from its own callback: not re-pushed
        }
    }

    struct CallbackRaised {
        std::string message;
    };
    struct Halted {
        std::string entry;
        u128 at;
    };

    void run_actions(Entry* e, u128 at) {
        std::string record = "{\"entry\":" + Out::quoted(e->id) + ",\"now_ns\":\"" + dec(now) + "\"";
        [[maybe_unused]] size_t slot = fired_json.size();
        fired_json.push_back(record + "}");
        for (const Action& a : *e->on_fire) {
            switch (a.op) {
                case Action::Schedule: {
                    std::string child = e->id + "." + std::to_string(e->children++);
                    Entry* c = add(child, ONESHOT, a.on_fire);
                    push(c, now + a.ns);
                    break;
                }
                case Action::Cancel: {
                    auto it = entries.find(a.text);
                    if (it != entries.end()) cancel(it->second.get());
                    break;
                }
                case Action::Advance: {
#ifdef BROKEN_NESTED_ADVANCE
                    // Broken on purpose: the nested advance runs instead of being refused.
                    u128 target = now + a.ns;
                    fire(target);
                    running = true;
                    now = keep(target);
#else
                    // C-ADV-4: refused, nothing changes; the callback goes on.
                    fired_json[slot] = record + ",\"nested\":\"RuntimeError\"}";
#endif
                    break;
                }
                case Action::Raise:
                    throw CallbackRaised{a.text};
                case Action::Halt:
                    throw Halted{e->id, at};
            }
        }
    }

    // The firing loop: every live entry with at <= limit, in (at, seq) order.
    // C-ADV-2 now is the entry's time during its callback; C-ERR-1 a raise is isolated;
    // C-PER-2 a repeating entry is re-pushed after its callback returns or raises (a halt
    // included, C-ERR-2), with a fresh seq; C-PER-3 from its integer grid.
    void fire(u128 limit) {
        running = true;
        try {
            while (Entry* e = pop_due(limit)) {
                if (e->state != PENDING) {  // a tombstone leaving at the root
                    --dead;
                    continue;
                }
                u128 at = e->at;
                now = at;
                if (e->kind == ONESHOT) {
                    // Done before its callback runs: a cancel from inside it is a no-op (C-CAN-3).
                    e->state = FIRED;
                    try {
                        run_actions(e, at);
                    } catch (CallbackRaised& r) {
                        e->state = FAILED;
                        failures_json.push_back("{\"entry\":" + Out::quoted(e->id) + ",\"at_ns\":\"" + dec(at) +
                                                "\",\"message\":" + Out::quoted(r.message) + "}");
                    }
                    continue;
                }
                e->state = RUNNING;
                ++e->fired;
                try {
                    run_actions(e, at);
                } catch (CallbackRaised& r) {
                    ++e->failed;
                    failures_json.push_back("{\"entry\":" + Out::quoted(e->id) + ",\"at_ns\":\"" + dec(at) +
                                            "\",\"message\":" + Out::quoted(r.message) + "}");
                    rearm(e);
                    continue;
                } catch (Halted&) {
                    rearm(e);
                    throw;
                }
                rearm(e);
            }
        } catch (Halted&) {
            running = false;
            compact_if_needed();
            throw;
        }
        running = false;
        // Firing lowers the live count while far tombstones stay: re-check the bound here.
        compact_if_needed();
    }
    void rearm(Entry* e) {
        if (e->state == RUNNING) {
            e->state = PENDING;
            ++e->k;
            push(e, time_of(*e));
        } else {
            e->state = CANCELLED;  // cancelled while running; not in the heap, not a tombstone
        }
    }
};

// ---------------------------------------------------------------------------------------
// The protocol (C-WIRE-3).

class Driver {
   public:
    std::string handle(const std::string& line) {
        Json req;
        try {
            req = Parser(line).document();
        } catch (ParseError& e) {
            return error("bad_request", "the request is not one JSON object: " + e.message);
        }
        if (req.kind != Json::Object) return error("bad_request", "the request must be a JSON object");
        Clock* clock = nullptr;
        try {
            std::string op = wire_string(req, "op");
            if (op == "hello") return hello(req);
            if (op == "quit") {
                quit = true;
                return Out().boolean("ok", true).done();
            }
            static const char* clock_ops[] = {"create", "drop", "schedule", "schedule_periodic", "schedule_rate",
                                              "cancel", "advance", "observe", "stats", "step_ns", "draw"};
            bool known = false;
            for (const char* name : clock_ops) known = known || op == name;
            if (!known) refuse("bad_request", "unknown op " + Out::quoted(op.substr(0, 60)));
            std::string id = wire_string(req, "clock");
            auto it = clocks.find(id);
            if (op == "create") {
                if (it != clocks.end()) {
                    clock = it->second.get();
                    refuse("bad_request", "clock " + Out::quoted(id) + " is in use; drop it first or pick another id");
                }
                return create(req, id);
            }
            if (it == clocks.end()) refuse("bad_request", "unknown clock " + Out::quoted(id.substr(0, 60)));
            clock = it->second.get();
            Out o;
            o.boolean("ok", true);
            if (op == "drop") {
                clock->observe(o);
                std::string reply = o.done();
                clocks.erase(it);
                return reply;
            }
            if (op == "schedule" || op == "schedule_periodic" || op == "schedule_rate") schedule(*clock, req, op);
            else if (op == "cancel") clock->cancel(entry(*clock, req));
            else if (op == "advance") return advance(*clock, req);
            else if (op == "stats") {
                Entry* e = entry(*clock, req);
                u64 fired = e->kind == ONESHOT ? (e->state == FIRED || e->state == FAILED ? 1 : 0) : e->fired;
                o.str("fired", dec(fired)).str("skipped", "0").str("overruns", "0");
            } else if (op == "step_ns") o.str("step_ns", "1");  // a pure event clock (C-STEP-1)
            else if (op == "draw") draw(*clock, req, o);
            clock->observe(o);
            return o.done();
        } catch (Refusal& r) {
            Out o;
            o.boolean("ok", false).str("error", r.kind).str("message", r.message);
            if (clock) clock->observe(o);  // C-WIRE-3: a refusal carries the observation too
            return o.done();
        }
    }

    bool quit = false;

   private:
    std::map<std::string, std::unique_ptr<Clock>> clocks;
    unsigned long advances = 0;

    static std::string error(const std::string& kind, const std::string& message) {
        return Out().boolean("ok", false).str("error", kind).str("message", message).done();
    }

    std::string hello(const Json& req) {
        const Json* p = req.get("protocol");
        if (!p || p->kind != Json::String || p->text != "1")
            refuse("unsupported", "this driver speaks protocol \"1\" only, got " + show(p));
        std::string backend = "simclock-cpp-heap";
#ifdef BROKEN_VARIANT_NAME
        backend += "+" BROKEN_VARIANT_NAME;
#endif
        return Out()
            .boolean("ok", true)
            .str("protocol", "1")
            .str("backend", backend)
            .raw("features", "[\"peek\",\"rate\",\"stats\",\"start_ns\",\"bits\"]")
            .done();
    }

    std::string create(const Json& req, const std::string& id) {
        std::vector<u32> seed = wire_bigint(req, "seed");
        u128 start = req.get("start_ns") ? wire_uint(req, "start_ns", U64_MAX) : 0;
        auto c = std::make_unique<Clock>();
        c->id = id;
        c->seed = std::move(seed);
        c->now = keep(start);
        Out o;
        o.boolean("ok", true);
        c->observe(o);
        clocks.emplace(id, std::move(c));
        return o.done();
    }

    static std::string new_entry_id(Clock& c, const Json& req) {
        std::string id = wire_string(req, "entry");
        if (id.empty() || id.find('.') != std::string::npos)
            refuse("bad_request", "entry id " + Out::quoted(id.substr(0, 60)) + " must be non-empty without '.'");
        if (c.entries.count(id)) refuse("bad_request", "entry id " + Out::quoted(id.substr(0, 60)) + " is already used by this clock");
        return id;
    }

    static Entry* entry(Clock& c, const Json& req) {
        std::string id = wire_string(req, "entry");
        auto it = c.entries.find(id);
        if (it == c.entries.end()) refuse("bad_request", "unknown entry " + Out::quoted(id.substr(0, 60)));
        return it->second.get();
    }

    // Every check happens before anything is pushed: a refused call changes nothing.
    static void schedule(Clock& c, const Json& req, const std::string& op) {
        std::string id = new_entry_id(c, req);
        if (op == "schedule") {
            u128 at = keep(wire_uint(req, "at_ns", U64_MAX));
            Actions actions = parse_actions(req.get("on_fire"), 0);
            if (at < c.now)
                refuse("ValueError", "at_ns=" + dec(at) + " is in the past (now is " + dec(c.now) +
                                         " ns); schedule at or after now");
            c.push(c.add(id, ONESHOT, actions), at);
            return;
        }
        Entry proto;
        if (op == "schedule_periodic") {
            proto.kind = PERIODIC;
            proto.period = wire_uint(req, "period_ns", U64_MAX);
            if (req.get("phase_ns")) proto.phase = keep(wire_uint(req, "phase_ns", U64_MAX));
            if (proto.period == 0) refuse("ValueError", "period_ns must be > 0 ns, got 0");
        } else {
            proto.kind = RATE;
            const Json* r = req.get("rate_hz");
            if (!r) refuse("bad_request", "missing field rate_hz");
            if (r->kind != Json::Array || r->items.size() != 2)
                refuse("TypeError", "rate_hz must be a list [NUM, DEN] of two decimal strings, got " + show(r));
            Json parts;
            parts.kind = Json::Object;
            parts.members.emplace_back("rate_hz numerator", r->items[0]);
            parts.members.emplace_back("rate_hz denominator", r->items[1]);
            u64 num = (u64)wire_uint(parts, "rate_hz numerator", U64_MAX);
            u64 den = (u64)wire_uint(parts, "rate_hz denominator", U64_MAX);
            if (req.get("phase_ns")) proto.phase = keep(wire_uint(req, "phase_ns", U64_MAX));
            if (den == 0) refuse("ValueError", "rate_hz denominator must be > 0, got 0");
            if (num == 0) refuse("ValueError", "rate_hz must be > 0 Hz, got 0/" + dec(den));
            if ((u128)num > (u128)NS_PER_S * den)
                refuse("ValueError", "rate_hz must be <= 1e9 (one firing per ns at most), got " + dec(num) + "/" + dec(den));
            u64 a = num, b = den;
            while (b) {
                u64 t = a % b;
                a = b;
                b = t;
            }
            proto.num = num / a;
            proto.den = den / a;
        }
        Actions actions = parse_actions(req.get("on_fire"), 0);
        Entry* e = c.add(id, proto.kind, actions);
        e->period = proto.period;
        e->phase = proto.phase;
        e->num = proto.num;
        e->den = proto.den;
        e->k = c.first_index(*e);
        c.push(e, c.time_of(*e));
    }

    std::string advance(Clock& c, const Json& req) {
        u128 dt = wire_uint(req, "dt_ns", U64_MAX);
        u128 target = c.now + dt;
        if (target > U64_MAX)
            refuse("ValueError", "advance(dt_ns=" + dec(dt) + ") would take now from " + dec(c.now) +
                                     " past 2**64-1 ns, the largest time this backend keeps");
        ++advances;
#ifdef BROKEN_CRASH
        if (advances >= (BROKEN_CRASH > 1 ? BROKEN_CRASH : 4)) std::abort();
#endif
#ifdef BROKEN_HANG
        if (target >= ((u128)1 << 62)) {
            std::fprintf(stderr, "simclock_driver: hanging on purpose (BROKEN_HANG)\n");
            while (true) std::this_thread::sleep_for(std::chrono::seconds(3600));
        }
#endif
        c.fired_json.clear();
        c.failures_json.clear();
        Out o;
        try {
            c.fire(target);
            c.now = keep(target);
            o.boolean("ok", true);
        } catch (Clock::Halted& h) {
            // C-ERR-2: the advance stops; now stays at the halting entry's time.
            o.boolean("ok", false)
                .str("error", "halted")
                .str("message", "entry " + h.entry + " halted the advance")
                .str("entry", h.entry)
                .str("at_ns", dec(h.at));
        }
        o.raw("fired", join(c.fired_json)).raw("failures", join(c.failures_json));
        c.fired_json.clear();
        c.failures_json.clear();
        c.observe(o);
        return o.done();
    }

    static std::string join(const std::vector<std::string>& items) {
        std::string s = "[";
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) s += ',';
            s += items[i];
        }
        return s + "]";
    }

    static void draw(Clock& c, const Json& req, Out& o) {
        const Json* labels = req.get("labels");
        if (!labels) refuse("bad_request", "missing field labels");
        if (labels->kind != Json::Array) refuse("TypeError", "labels must be a list of strings, got " + show(labels));
        u128 n = wire_uint(req, "n", U64_MAX);
        if (n > ((u128)1 << 20))
            refuse("ValueError", "n = " + dec(n) + " is more than 1048576 values in one draw; draw in smaller batches");
        std::string path = "/";
        for (const Json& label : labels->items) path = normalise_label(path, label);
        auto it = c.streams.find(path);
        if (it == c.streams.end()) {
            u64 state[4];
            bits::seed_sequence_state(c.seed, bits::spawn_key(path), state);
            bits::Pcg64 g;
            g.seed(state);
            it = c.streams.emplace(path, g).first;
        }
        std::string values = "[";
        for (u128 i = 0; i < n; ++i) {
            if (i) values += ',';
            values += '"' + dec(it->second.next()) + '"';
        }
        o.raw("values", values + "]");
    }
};

int main() {
    std::ios::sync_with_stdio(false);
    Driver driver;
    std::string line;
    while (std::getline(std::cin, line)) {
        std::string reply;
        try {
            reply = driver.handle(line);
        } catch (std::exception& e) {
            reply = Out().boolean("ok", false).str("error", "internal").str("message", e.what()).done();
        }
        reply += '\n';
        std::fwrite(reply.data(), 1, reply.size(), stdout);
        std::fflush(stdout);
        if (driver.quit) return 0;
    }
    return 0;
}
