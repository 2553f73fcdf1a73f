// The random streams bit for bit (C-X-BITS): BLAKE2b, SeedSequence and PCG64 against the
// golden vectors' stages, and label paths (C-RNG-3).
#include <gtest/gtest.h>

#include <cstdio>

#include "test_util.hpp"

using simclock::json::Value;
using simclock_test::u128;

namespace {

std::string hex(const std::vector<unsigned char>& bytes) {
    std::string out;
    char buf[3];
    for (unsigned char b : bytes) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        out += buf;
    }
    return out;
}

std::vector<std::uint64_t> u64s(const Value& list) {
    std::vector<std::uint64_t> out;
    for (const Value& v : list.items) out.push_back(static_cast<std::uint64_t>(u128(v.text)));
    return out;
}

std::string join(const std::vector<std::string>& labels) {
    std::string path = "/";
    for (const auto& l : labels) path = simclock::join_label(path, l);
    return path;
}

}  // namespace

TEST(Blake2b, C_X_BITS_rfc_7693_and_multi_block_digests) {
    EXPECT_EQ(hex(simclock::bits::blake2b("abc", 64)),
              "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
              "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
    EXPECT_EQ(hex(simclock::bits::blake2b("", 16)), "cae66941d9efbd404e4d88758ea67670");
    std::string block(128, '\0'), two(256, '\0');
    for (int i = 0; i < 256; ++i) two[static_cast<std::size_t>(i)] = static_cast<char>(i);
    for (int i = 0; i < 128; ++i) block[static_cast<std::size_t>(i)] = static_cast<char>(i);
    EXPECT_EQ(hex(simclock::bits::blake2b(block, 32)),
              "c3582f71ebb2be66fa5dd750f80baae97554f3b015663c8be377cfcb2488c1d1");
    EXPECT_EQ(hex(simclock::bits::blake2b(two, 16)), "c2472c0ac37a8dbdb25f05ada0d82643");
}

TEST(Streams, C_X_BITS_every_stage_equals_the_golden_vectors) {
    auto cases = simclock_test::vector_cases("streams.jsonl");
    ASSERT_EQ(cases.size(), 30u) << "golden vectors not found; run from the kit's folder";
    for (const Value& c : cases) {
        SCOPED_TRACE(c.get("id")->text);
        const Value& st = *c.get("stages");
        const std::string path = st.get("path")->text;
        simclock::Seed seed = simclock::Seed::from_decimal(st.get("seed")->text);
        std::vector<std::uint32_t> key = simclock::bits::spawn_key(path);
        std::vector<std::uint64_t> want_key = u64s(*st.get("spawn_key"));
        ASSERT_EQ(std::vector<std::uint64_t>(key.begin(), key.end()), want_key);
        auto words = simclock::bits::seed_sequence_words(seed.words, key);
        std::vector<std::uint64_t> first4(words.begin(), words.begin() + 4);
        EXPECT_EQ(first4, u64s(*st.get("seed_sequence_state")));
        auto g = simclock::bits::Pcg64::from_words(words);
        EXPECT_EQ(simclock::dec(g.state), st.get("pcg64_state")->get("state")->text);
        EXPECT_EQ(simclock::dec(g.inc), st.get("pcg64_state")->get("inc")->text);
        std::vector<std::uint64_t> outputs;
        simclock::Streams streams(seed);
        for (std::size_t i = 0; i < st.get("outputs")->items.size(); ++i) {
            outputs.push_back(g.next());
            EXPECT_EQ(streams.next(path), outputs.back());
        }
        EXPECT_EQ(outputs, u64s(*st.get("outputs")));
    }
}

TEST(Streams, C_RNG_3_label_paths_normalise_and_malformed_ones_are_ValueError) {
    EXPECT_EQ(join({}), "/");
    EXPECT_EQ(join({"a", "b"}), "/a/b");
    EXPECT_EQ(join({"a/b"}), "/a/b");
    EXPECT_EQ(join({"/a/b"}), "/a/b");
    EXPECT_EQ(join({"a", "/b/c"}), "/a/b/c");
    EXPECT_EQ(join({"x.y-z_1"}), "/x.y-z_1");
    for (const char* bad : {"a//b", "a b", "", "/", "\xc3\xa9", "b/"}) {
        try {
            join({"a", bad});
            ADD_FAILURE() << "accepted " << bad;
        } catch (const simclock::ValueError& e) {
            EXPECT_EQ(std::string(e.what()).rfind("label \"", 0), 0u);
        }
    }
}

TEST(Streams, C_RNG_4_each_stream_continues_where_it_stopped) {
    simclock::Streams one(simclock::Seed::from_decimal("42")), other(simclock::Seed::from_decimal("42"));
    std::uint64_t a0 = one.next("/a");
    one.next("/b");
    EXPECT_EQ(other.next("/a"), a0);
    EXPECT_EQ(one.next("/a"), other.next("/a"));
    EXPECT_NE(simclock::Streams(simclock::Seed::from_decimal("43")).next("/a"), a0);
    // a seed above 2**64 is more words, little-endian
    EXPECT_EQ(simclock::Seed::from_decimal("18446744073709551616").words, (std::vector<std::uint32_t>{0, 0, 1}));
}
