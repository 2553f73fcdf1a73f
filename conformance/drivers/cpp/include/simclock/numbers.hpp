// simclock driver kit: exact integers for times, rates and the wire's decimal strings.
#ifndef SIMCLOCK_NUMBERS_HPP
#define SIMCLOCK_NUMBERS_HPP

#include <cstdint>
#include <string>

namespace simclock {

/// Nanoseconds. 128 bits, so that a time a clock computes itself (now + delay, the next
/// firing of a periodic) stays exact past 2**64 - 1 (C-TIME-4). GCC and Clang only.
using ns_t = unsigned __int128;

/// The largest time the wire gives a backend by default: 2**64 - 1 ns (about 584 years).
inline constexpr ns_t U64_MAX_NS = static_cast<ns_t>(~std::uint64_t{0});

inline constexpr std::uint64_t NS_PER_S = 1000000000ull;

/// `v` in decimal (the wire form of every integer, C-WIRE-2).
inline std::string dec(ns_t v) {
    if (v == 0) return "0";
    char buf[48];
    int n = 0;
    // Split off 19 digits at a time so that most of the work is 64-bit division.
    while (v > U64_MAX_NS) {
        std::uint64_t low = static_cast<std::uint64_t>(v % 10000000000000000000ull);
        v /= 10000000000000000000ull;
        for (int k = 0; k < 19; ++k) {
            buf[n++] = static_cast<char>('0' + low % 10);
            low /= 10;
        }
    }
    for (std::uint64_t w = static_cast<std::uint64_t>(v); w > 0; w /= 10)
        buf[n++] = static_cast<char>('0' + w % 10);
    std::string out(static_cast<std::size_t>(n), '0');
    for (int k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = buf[n - 1 - k];
    return out;
}

/// ceil(k * 10**9 * den / num), exactly (C-X-RATE): the time offset of firing `k` of a
/// `num/den` Hz grid. The product is formed in 256 bits and divided by the 64-bit `num`,
/// so nothing overflows for any `k` below 2**128 and any rate the wire admits.
/// Invariant: the caller asks only for offsets that fit in 128 bits.
inline ns_t rate_offset(ns_t k, std::uint64_t num, std::uint64_t den) {
    using u64 = std::uint64_t;
    const ns_t p = static_cast<ns_t>(NS_PER_S) * den;  // < 2**94
    const u64 a[2] = {static_cast<u64>(k), static_cast<u64>(k >> 64)};
    const u64 b[2] = {static_cast<u64>(p), static_cast<u64>(p >> 64)};
    u64 r[4] = {0, 0, 0, 0};
    for (int i = 0; i < 2; ++i) {
        u64 carry = 0;
        for (int j = 0; j < 2; ++j) {
            ns_t t = static_cast<ns_t>(a[i]) * b[j] + r[i + j] + carry;
            r[i + j] = static_cast<u64>(t);
            carry = static_cast<u64>(t >> 64);
        }
        r[i + 2] += carry;
    }
    u64 q[4];
    ns_t rem = 0;
    for (int i = 3; i >= 0; --i) {
        ns_t cur = (rem << 64) | r[i];
        q[i] = static_cast<u64>(cur / num);
        rem = cur % num;
    }
    return ((static_cast<ns_t>(q[1]) << 64) | q[0]) + (rem != 0 ? 1 : 0);
}

/// The first `k` with rate_offset(k, num, den) >= elapsed (C-PER-1 on a rate grid).
inline ns_t first_rate_index(ns_t elapsed, std::uint64_t num, std::uint64_t den) {
    // elapsed * num < 2**128 for elapsed < 2**64: a first guess, then exact steps.
    ns_t k = (elapsed * num) / (static_cast<ns_t>(NS_PER_S) * den);
    while (rate_offset(k, num, den) < elapsed) ++k;
    while (k > 0 && rate_offset(k - 1, num, den) >= elapsed) --k;
    return k;
}

}  // namespace simclock

#endif
