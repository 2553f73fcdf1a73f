// The example heap clock through the kit, request by request (SPEC §18's worked
// transcript in conformance/drivers/README.md), and its far-time and grid arithmetic.
#include <gtest/gtest.h>

#include "heap_clock.hpp"
#include "test_util.hpp"

namespace {

struct Step {
    const char* request;
    const char* reply;
};

void replay(simclock::Driver<HeapClock>& d, const std::vector<Step>& steps) {
    for (const Step& s : steps) EXPECT_EQ(d.handle(s.request), s.reply) << s.request;
}

}  // namespace

TEST(HeapClock, C_WIRE_3_the_worked_transcript) {
    simclock::Driver<HeapClock> d("simclock-cpp-heap");
    replay(d, {
        {R"({"op":"hello","protocol":"1"})",
         R"({"ok":true,"protocol":"1","backend":"simclock-cpp-heap","features":["peek","rate","stats","start_ns","bits"]})"},
        {R"({"op":"create","clock":"c","seed":"42"})", R"({"ok":true,"now_ns":"0","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"schedule","clock":"c","entry":"a","at_ns":"5","on_fire":[{"do":"schedule","delay_ns":"0"},{"do":"advance","dt_ns":"1"}]})",
         R"({"ok":true,"now_ns":"0","next_event_ns":"5","stored":"1"})"},
        {R"({"op":"schedule","clock":"c","entry":"b","at_ns":"5","on_fire":[{"do":"raise","message":"sensor lost"}]})",
         R"({"ok":true,"now_ns":"0","next_event_ns":"5","stored":"2"})"},
        {R"({"op":"schedule_rate","clock":"c","entry":"cam","rate_hz":["30","1"],"phase_ns":"0","on_fire":[]})",
         R"({"ok":true,"now_ns":"0","next_event_ns":"0","stored":"3"})"},
        {R"({"op":"advance","clock":"c","dt_ns":"40000000"})",
         R"({"ok":true,"fired":[{"entry":"cam","now_ns":"0"},{"entry":"a","now_ns":"5","nested":"RuntimeError"},)"
         R"({"entry":"b","now_ns":"5"},{"entry":"a.0","now_ns":"5"},{"entry":"cam","now_ns":"33333334"}],)"
         R"("failures":[{"entry":"b","at_ns":"5","message":"sensor lost"}],"now_ns":"40000000","next_event_ns":"66666667","stored":"1"})"},
        {R"({"op":"cancel","clock":"c","entry":"cam"})", R"({"ok":true,"now_ns":"40000000","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"stats","clock":"c","entry":"cam"})",
         R"({"ok":true,"fired":"2","skipped":"0","overruns":"0","now_ns":"40000000","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"draw","clock":"c","labels":["sensors","imu0"],"n":"2"})",
         R"({"ok":true,"values":["4798505500344436202","6344606573098996892"],"now_ns":"40000000","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"quit"})", R"({"ok":true})"},
    });
    EXPECT_TRUE(d.done());
}

TEST(HeapClock, C_TIME_4_far_times_exact_and_now_never_past_2_64_minus_1) {
    simclock::Driver<HeapClock> d("heap");
    replay(d, {
        {R"({"op":"create","clock":"c","seed":"0","start_ns":"18446744073709551606"})",
         R"({"ok":true,"now_ns":"18446744073709551606","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"schedule_periodic","clock":"c","entry":"p","period_ns":"9223372036854775808","phase_ns":"9223372036854775809"})",
         R"({"ok":true,"now_ns":"18446744073709551606","next_event_ns":"18446744073709551617","stored":"1"})"},
        {R"({"op":"schedule","clock":"c","entry":"t","at_ns":"18446744073709551615","on_fire":[{"do":"schedule","delay_ns":"18446744073709551615"}]})",
         R"({"ok":true,"now_ns":"18446744073709551606","next_event_ns":"18446744073709551615","stored":"2"})"},
        {R"({"op":"advance","clock":"c","dt_ns":"9"})",
         R"({"ok":true,"fired":[{"entry":"t","now_ns":"18446744073709551615"}],"failures":[],)"
         R"("now_ns":"18446744073709551615","next_event_ns":"18446744073709551617","stored":"2"})"},
        {R"({"op":"advance","clock":"c","dt_ns":"1"})",
         R"({"ok":false,"error":"ValueError","message":"ValueError: advance(dt_ns=1) would take now from 18446744073709551615 past 2**64-1 ns, the largest time this clock keeps",)"
         R"("now_ns":"18446744073709551615","next_event_ns":"18446744073709551617","stored":"2"})"},
    });
}

TEST(HeapClock, C_SCH_1_C_PER_1_refusals_and_the_first_grid_point) {
    simclock::Driver<HeapClock> d("heap");
    replay(d, {
        {R"({"op":"create","clock":"c","seed":"0","start_ns":"10"})", R"({"ok":true,"now_ns":"10","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"schedule","clock":"c","entry":"x","at_ns":"9"})",
         R"({"ok":false,"error":"ValueError","message":"ValueError: at_ns=9 is in the past (now is 10 ns); schedule at or after now","now_ns":"10","next_event_ns":null,"stored":"0"})"},
        {R"({"op":"schedule_periodic","clock":"c","entry":"p","period_ns":"4","phase_ns":"1"})",
         R"({"ok":true,"now_ns":"10","next_event_ns":"13","stored":"1"})"},
        {R"({"op":"advance","clock":"c","dt_ns":"3"})",
         R"({"ok":true,"fired":[{"entry":"p","now_ns":"13"}],"failures":[],"now_ns":"13","next_event_ns":"17","stored":"1"})"},
        {R"({"op":"schedule_rate","clock":"c","entry":"r","rate_hz":["60000","2002"],"phase_ns":"0"})",
         R"({"ok":true,"now_ns":"13","next_event_ns":"17","stored":"2"})"},
        // ceil(1e9 * 2002 / 60000) = 33366667; the cancelled p leaves the heap at the root
        {R"({"op":"cancel","clock":"c","entry":"p"})", R"({"ok":true,"now_ns":"13","next_event_ns":"33366667","stored":"1"})"},
    });
}

// The golden vectors' draw cases as requests: every reply's fields as recorded.
TEST(HeapClock, C_X_BITS_golden_draw_cases_replay_through_the_driver) {
    auto cases = simclock_test::vector_cases("streams.jsonl");
    ASSERT_EQ(cases.size(), 30u) << "golden vectors not found; run from the kit's folder";
    for (const simclock::json::Value& c : cases) {
        SCOPED_TRACE(c.get("id")->text);
        simclock::Driver<HeapClock> d("heap");
        for (const simclock::json::Value& step : c.get("steps")->items) {
            const simclock::json::Value& want = *step.get("reply");
            std::string request = simclock_test::to_json(*step.get("request"));
            simclock::json::Value got = simclock::json::Parser(d.handle(request)).document();
            for (const auto& [key, value] : want.members) {
                const simclock::json::Value* field = got.get(key.c_str());
                ASSERT_NE(field, nullptr) << key;
                if (value.kind == simclock::json::Value::Array) {
                    ASSERT_EQ(field->items.size(), value.items.size()) << key;
                    for (std::size_t i = 0; i < value.items.size(); ++i)
                        EXPECT_EQ(field->items[i].text, value.items[i].text) << key << "[" << i << "]";
                } else {
                    EXPECT_EQ(field->kind, value.kind) << key;
                    EXPECT_EQ(field->text, value.text) << key;
                    EXPECT_EQ(field->boolean, value.boolean) << key;
                }
            }
        }
    }
}
