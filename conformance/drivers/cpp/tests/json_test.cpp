// Wire parsing: JSON, the protocol's digit strings and their refusals (C-WIRE-2), exact
// integers (C-TIME-4, C-X-RATE).
#include <gtest/gtest.h>

#include "test_util.hpp"

using simclock::ns_t;
using simclock::json::Parser;
using simclock::json::Value;
using simclock_test::u128;

namespace {

std::string parse_error(const std::string& text) {
    try {
        Parser(text).document();
    } catch (const simclock::json::ParseError& e) {
        return e.message;
    }
    return "";
}

// The wire's verdict on one value: "" accepted, else the refusal's kind and message.
std::pair<std::string, std::string> refusal(const std::string& json_value, ns_t max = simclock::U64_MAX_NS) {
    Value v = Parser(json_value).document();
    try {
        simclock::detail::uint_value(v, "at_ns", max);
    } catch (const simclock::Refusal& r) {
        return {r.kind(), r.what()};
    }
    return {"", ""};
}

}  // namespace

TEST(Json, C_WIRE_1_parses_objects_arrays_and_keeps_number_text) {
    Value v = Parser(R"( {"op":"x","n":[1.50e+3,-0,true,false,null],"o":{}} )").document();
    ASSERT_EQ(v.kind, Value::Object);
    ASSERT_EQ(v.members.size(), 3u);
    EXPECT_EQ(v.get("op")->text, "x");
    const Value& n = *v.get("n");
    ASSERT_EQ(n.items.size(), 5u);
    EXPECT_EQ(n.items[0].kind, Value::Number);
    EXPECT_EQ(n.items[0].text, "1.50e+3");
    EXPECT_EQ(n.items[1].text, "-0");
    EXPECT_TRUE(n.items[2].boolean);
    EXPECT_EQ(n.items[4].kind, Value::Null);
    EXPECT_EQ(v.get("missing"), nullptr);
}

TEST(Json, C_WIRE_1_decodes_escapes_to_utf8) {
    Value v = Parser(R"("a\"b\\c\/\n\u00e9\ud83d\ude00\ud800x")").document();
    EXPECT_EQ(v.text, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdx");
    EXPECT_EQ(simclock::json::quote("q\"\\\x01"), "\"q\\\"\\\\\\u0001\"");
}

TEST(Json, C_WIRE_5_malformed_documents_name_the_offset) {
    EXPECT_EQ(parse_error("{\"a\":1,}"), "expected a string key at offset 7");
    EXPECT_EQ(parse_error("[1 2]"), "expected ',' or ']' at offset 3");
    EXPECT_EQ(parse_error("{} x"), "trailing characters after the JSON value at offset 3");
    EXPECT_EQ(parse_error("01."), "invalid number at offset 3");
    EXPECT_EQ(parse_error("\"a\tb\""), "control character in string at offset 3");
    EXPECT_EQ(parse_error(""), "unexpected end of input at offset 0");
}

TEST(WireInt, C_WIRE_2_digit_strings_are_accepted_leading_zeros_included) {
    EXPECT_EQ(refusal(R"("0")").first, "");
    EXPECT_EQ(refusal(R"("00018446744073709551615")").first, "");
    Value v = Parser(R"("18446744073709551615")").document();
    EXPECT_EQ(simclock::detail::uint_value(v, "at_ns", simclock::U64_MAX_NS), simclock::U64_MAX_NS);
}

TEST(WireInt, C_WIRE_2_anything_but_a_digit_string_is_TypeError) {
    for (const char* bad : {"5", "0", "1.5", "null", "true", "[]", "{}", R"("1.5")", R"("1e6")", R"("-3")",
                            R"(" 5")", R"("")", R"("5 ")", R"("+5")", R"("0x10")", "\"\xd9\xa3\""}) {
        auto [kind, message] = refusal(bad);
        EXPECT_EQ(kind, "TypeError") << bad;
        EXPECT_EQ(message.rfind("at_ns must be a string of decimal digits [0-9]+, got ", 0), 0u) << message;
    }
    EXPECT_EQ(refusal("5").second,
              "at_ns must be a string of decimal digits [0-9]+, got the JSON number 5; "
              "send integers as strings, e.g. \"1000\"");
}

TEST(WireInt, C_TIME_4_digits_beyond_the_maximum_are_ValueError) {
    EXPECT_EQ(refusal(R"("18446744073709551616")"),
              (std::pair<std::string, std::string>{
                  "ValueError",
                  "at_ns = 18446744073709551616 is larger than 18446744073709551615, the largest value "
                  "this backend keeps exactly"}));
    EXPECT_EQ(refusal("\"" + std::string(400, '9') + "\"").first, "ValueError");
    EXPECT_EQ(refusal(R"("1001")", 1000).first, "ValueError");
    EXPECT_EQ(refusal(R"("1000")", 1000).first, "");
}

TEST(Numbers, C_WIRE_2_dec_writes_128_bit_integers) {
    EXPECT_EQ(simclock::dec(0), "0");
    EXPECT_EQ(simclock::dec(simclock::U64_MAX_NS), "18446744073709551615");
    EXPECT_EQ(simclock::dec(simclock::U64_MAX_NS + 1), "18446744073709551616");
    EXPECT_EQ(simclock::dec(~ns_t{0}), "340282366920938463463374607431768211455");
    EXPECT_EQ(u128(simclock::dec(u128("42297275027615254363273330286279433334"))),
              u128("42297275027615254363273330286279433334"));
}

TEST(Numbers, C_X_RATE_rate_offset_is_the_exact_ceiling) {
    std::vector<ns_t> got;
    for (int k = 0; k < 4; ++k) got.push_back(simclock::rate_offset(k, 30, 1));
    EXPECT_EQ(got, (std::vector<ns_t>{0, 33333334, 66666667, 100000000}));
    EXPECT_EQ(simclock::rate_offset(30, 30, 1), 1000000000u);
    EXPECT_EQ(simclock::rate_offset(3, 7, 3), 1285714286u);
    // A 256-bit intermediate: k * 1e9 * 1001 is far above 2**128.
    EXPECT_EQ(simclock::dec(simclock::rate_offset((ns_t{1} << 100) + 7, 30000, 1001)),
              "42297275027615254363273330286279433334");
}

TEST(Numbers, C_PER_1_first_rate_index_is_the_first_point_at_or_after) {
    EXPECT_EQ(simclock::first_rate_index(0, 30, 1), 0u);
    EXPECT_EQ(simclock::first_rate_index(1, 30, 1), 1u);
    EXPECT_EQ(simclock::first_rate_index(33333334, 30, 1), 1u);
    EXPECT_EQ(simclock::first_rate_index(33333335, 30, 1), 2u);
    ns_t big = simclock::U64_MAX_NS;
    ns_t k = simclock::first_rate_index(big, 30000, 1001);
    EXPECT_GE(simclock::rate_offset(k, 30000, 1001), big);
    EXPECT_LT(simclock::rate_offset(k - 1, 30000, 1001), big);
}
