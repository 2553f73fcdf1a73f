// The request loop (C-WIRE-1..5) on a bare clock: what the kit does, and that it leaves
// every time semantic (isolation, nesting) to the clock.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include "test_util.hpp"

using simclock::ns_t;

namespace {

// Only the required members. It fires due items in push order; whether it isolates a
// callback's error is a switch; a time of 13 it refuses with std::invalid_argument.
struct BareClock {
    struct Item {
        ns_t at;
        simclock::Callback callback;
        bool cancelled = false;
    };
    using Handle = std::shared_ptr<Item>;
    static inline bool isolate = true;

    ns_t now = 0;
    bool running = false;
    std::vector<Handle> items;

    ns_t now_ns() { return now; }
    std::size_t stored() { return items.size(); }
    Handle schedule(ns_t at, simclock::Callback cb) {
        if (at == 13) throw std::invalid_argument("13 is unlucky");
        items.push_back(std::make_shared<Item>(Item{at, std::move(cb)}));
        return items.back();
    }
    Handle schedule_periodic(ns_t, ns_t, simclock::Callback) { throw simclock::ValueError("no periodics here"); }
    void cancel(Handle& h) { h->cancelled = true; }
    void advance(ns_t dt) {
        if (running) throw simclock::RuntimeError("nested advance");
        const ns_t target = now + dt;
        running = true;
        struct Done {
            bool& flag;
            ~Done() { flag = false; }
        } done{running};
        for (std::size_t i = 0; i < items.size();) {
            Handle h = items[i];
            if (h->at > target) {
                ++i;
                continue;
            }
            items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
            if (h->cancelled) continue;
            now = h->at;
            if (!isolate) {
                h->callback();
                continue;
            }
            try {
                h->callback();
            } catch (const std::exception&) {
            }
        }
        now = target;
    }
};

class BareDriver : public ::testing::Test {
   protected:
    void SetUp() override {
        BareClock::isolate = true;
        ASSERT_EQ(ask(R"({"op":"create","clock":"c","seed":"1"})"), R"({"ok":true,"now_ns":"0","stored":"0"})");
    }
    std::string ask(const std::string& line) { return driver.handle(line); }
    simclock::Driver<BareClock> driver{"bare"};
};

}  // namespace

TEST(Features, C_WIRE_3_features_follow_from_the_members_a_clock_has) {
    EXPECT_EQ(simclock::Driver<BareClock>::features(), std::vector<std::string>{});
    simclock::Driver<BareClock> d("bare");
    EXPECT_EQ(d.handle(R"({"op":"hello","protocol":"1"})"),
              R"({"ok":true,"protocol":"1","backend":"bare","features":[]})");
    EXPECT_EQ(d.handle(R"({"op":"hello","protocol":"2"})").rfind(R"({"ok":false,"error":"unsupported",)", 0), 0u);
}

TEST_F(BareDriver, C_WIRE_5_undeclared_features_are_unsupported_with_the_observation) {
    const std::string obs = R"(,"now_ns":"0","stored":"0"})";
    EXPECT_EQ(ask(R"({"op":"draw","clock":"c","labels":[],"n":"1"})"),
              R"({"ok":false,"error":"unsupported","message":"this clock has no random streams")" + obs);
    EXPECT_EQ(ask(R"({"op":"stats","clock":"c","entry":"a"})"),
              R"j({"ok":false,"error":"unsupported","message":"this clock has no stats (feature stats)")j" + obs);
    EXPECT_EQ(ask(R"({"op":"schedule_rate","clock":"c","entry":"r","rate_hz":["1","1"],"phase_ns":"0"})"),
              R"j({"ok":false,"error":"unsupported","message":"this clock has no schedule_rate (feature rate)")j" +
                  obs);
    EXPECT_EQ(ask(R"({"op":"create","clock":"d","seed":"1","start_ns":"5"})"),
              R"j({"ok":false,"error":"unsupported","message":"this clock does not take start_ns (feature start_ns)"})j");
    EXPECT_EQ(ask(R"({"op":"step_ns","clock":"c"})"), R"({"ok":true,"step_ns":"1")" + obs);
}

TEST_F(BareDriver, C_WIRE_4_records_children_nested_refusals_and_failures) {
    ask(R"({"op":"schedule","clock":"c","entry":"a","at_ns":"5","on_fire":[)"
        R"({"do":"schedule","delay_ns":"0"},{"do":"advance","dt_ns":"1"},)"
        R"({"do":"raise","message":"boom"},{"do":"schedule","delay_ns":"0"}]})");
    ask(R"({"op":"schedule","clock":"c","entry":"b","at_ns":"7"})");
    // This clock fires in push order whatever the times: the kit reports that unchanged.
    EXPECT_EQ(ask(R"({"op":"advance","clock":"c","dt_ns":"10"})"),
              R"({"ok":true,"fired":[{"entry":"a","now_ns":"5","nested":"RuntimeError"},)"
              R"({"entry":"b","now_ns":"7"},{"entry":"a.0","now_ns":"5"}],)"
              R"("failures":[{"entry":"a","at_ns":"5","message":"boom"}],"now_ns":"10","stored":"0"})");
    // the action after the raise did not run: a.1 never existed
    EXPECT_EQ(ask(R"({"op":"cancel","clock":"c","entry":"a.1"})"),
              R"({"ok":false,"error":"bad_request","message":"unknown entry \"a.1\"","now_ns":"10","stored":"0"})");
}

TEST_F(BareDriver, C_WIRE_4_a_child_schedule_refused_with_a_value_error_is_marked_and_takes_no_number) {
    // std::invalid_argument is a ValueError: the record says so and the callback goes on.
    ask(R"({"op":"schedule","clock":"c","entry":"a","at_ns":"5","on_fire":[{"do":"schedule","delay_ns":"8"}]})");
    EXPECT_EQ(ask(R"({"op":"advance","clock":"c","dt_ns":"10"})"),
              R"({"ok":true,"fired":[{"entry":"a","now_ns":"5","refused":"ValueError"}],)"
              R"("failures":[],"now_ns":"10","stored":"0"})");
    EXPECT_EQ(ask(R"({"op":"cancel","clock":"c","entry":"a.0"})").rfind(R"({"ok":false,"error":"bad_request")", 0), 0u);
}

TEST_F(BareDriver, C_ERR_1_the_kit_does_not_isolate_what_the_clock_does_not) {
    BareClock::isolate = false;
    ask(R"({"op":"schedule","clock":"c","entry":"r","at_ns":"2","on_fire":[{"do":"raise","message":"boom"}]})");
    ask(R"({"op":"schedule","clock":"c","entry":"s","at_ns":"3"})");
    EXPECT_EQ(ask(R"({"op":"advance","clock":"c","dt_ns":"10"})"),
              R"({"ok":false,"error":"RuntimeError","message":"RuntimeError: boom","fired":[{"entry":"r","now_ns":"2"}],)"
              R"("failures":[],"now_ns":"2","stored":"1"})");  // the reply's error, not an isolated failure
}

TEST_F(BareDriver, C_ERR_2_a_halt_the_clock_lets_through_ends_the_advance) {
    ask(R"({"op":"schedule","clock":"c","entry":"h","at_ns":"4","on_fire":[{"do":"halt"},{"do":"schedule","delay_ns":"0"}]})");
    ask(R"({"op":"schedule","clock":"c","entry":"later","at_ns":"4"})");
    EXPECT_EQ(ask(R"({"op":"advance","clock":"c","dt_ns":"10"})"),
              R"({"ok":false,"error":"halted","entry":"h","at_ns":"4",)"
              R"("fired":[{"entry":"h","now_ns":"4"}],"failures":[],"now_ns":"4","stored":"1"})");
}

TEST_F(BareDriver, C_WIRE_5_a_refused_request_changes_nothing) {
    // the clock refuses (std::invalid_argument is a ValueError): the id stays free
    EXPECT_EQ(ask(R"({"op":"schedule","clock":"c","entry":"x","at_ns":"13"})"),
              R"({"ok":false,"error":"ValueError","message":"ValueError: 13 is unlucky","now_ns":"0","stored":"0"})");
    // a bad time inside on_fire refuses the whole request before the clock is called
    EXPECT_EQ(ask(R"({"op":"schedule","clock":"c","entry":"x","at_ns":"1","on_fire":[{"do":"schedule","delay_ns":"1","on_fire":[{"do":"advance","dt_ns":1}]}]})")
                  .rfind(R"({"ok":false,"error":"TypeError","message":"dt_ns must be a string of decimal digits)", 0),
              0u);
    EXPECT_EQ(ask(R"({"op":"schedule","clock":"c","entry":"x","at_ns":"1"})"), R"({"ok":true,"now_ns":"0","stored":"1"})");
    EXPECT_EQ(ask(R"({"op":"schedule","clock":"c","entry":"x","at_ns":"2"})"),
              R"({"ok":false,"error":"bad_request","message":"entry id \"x\" is already used by this clock","now_ns":"0","stored":"1"})");
    EXPECT_EQ(ask(R"({"op":"schedule_periodic","clock":"c","entry":"p","period_ns":"2"})"),
              R"({"ok":false,"error":"ValueError","message":"ValueError: no periodics here","now_ns":"0","stored":"1"})");
    EXPECT_EQ(ask(R"({"op":"advance","clock":"c","dt_ns":"18446744073709551616"})").rfind(R"({"ok":false,"error":"ValueError")", 0), 0u);
    EXPECT_EQ(ask(R"({"op":"observe","clock":"c"})"), R"({"ok":true,"now_ns":"0","stored":"1"})");
}

TEST_F(BareDriver, C_WIRE_5_bad_requests) {
    auto kind = [this](const std::string& line) {
        std::string r = ask(line);
        auto at = r.find("\"error\":\"");
        return r.substr(at + 9, r.find('"', at + 9) - at - 9);
    };
    EXPECT_EQ(kind("this is not json"), "bad_request");
    EXPECT_EQ(kind("[1, 2]"), "bad_request");
    EXPECT_EQ(kind(R"({"clock":"c"})"), "bad_request");
    EXPECT_EQ(kind(R"({"op":"jump"})"), "bad_request");
    EXPECT_EQ(kind(R"({"op":"observe","clock":"nope"})"), "bad_request");
    EXPECT_EQ(kind(R"({"op":"schedule","clock":"c","entry":"a.0","at_ns":"1"})"), "bad_request");
    EXPECT_EQ(kind(R"({"op":"schedule","clock":"c","entry":"a","at_ns":"1","on_fire":[{"do":"dance"}]})"), "bad_request");
    EXPECT_EQ(kind(R"({"op":"create","clock":"d","seed":5})"), "TypeError");
    EXPECT_EQ(ask(R"({"op":"create","clock":"c","seed":"1"})"),
              R"({"ok":false,"error":"bad_request","message":"clock \"c\" is in use; drop it first or pick another id","now_ns":"0","stored":"0"})");
    EXPECT_EQ(ask(R"({"op":"drop","clock":"c"})"), R"({"ok":true,"now_ns":"0","stored":"0"})");
    EXPECT_EQ(kind(R"({"op":"observe","clock":"c"})"), "bad_request");
}

namespace {

// A start time and a smaller range: feature start_ns, and the kit refuses beyond max_ns.
struct SmallClock : BareClock {
    static constexpr ns_t max_ns = 1000;
    explicit SmallClock(ns_t start) { now = start; }
};

// Its own random streams: `draw` works, but no `bits` is claimed.
struct OwnStreams : BareClock {
    std::uint64_t draw(const std::string& path) { return path.size(); }
};

}  // namespace

TEST(Features, C_TIME_4_max_ns_bounds_every_wire_time_and_a_start_time_declares_start_ns) {
    EXPECT_EQ(simclock::Driver<SmallClock>::features(), std::vector<std::string>{"start_ns"});
    simclock::Driver<SmallClock> d("small");
    EXPECT_EQ(d.handle(R"({"op":"create","clock":"c","seed":"0","start_ns":"1001"})"),
              R"({"ok":false,"error":"ValueError","message":"start_ns = 1001 is larger than 1000, the largest value this backend keeps exactly"})");
    EXPECT_EQ(d.handle(R"({"op":"create","clock":"c","seed":"0","start_ns":"7"})"), R"({"ok":true,"now_ns":"7","stored":"0"})");
    EXPECT_EQ(d.handle(R"({"op":"schedule","clock":"c","entry":"a","at_ns":"1001"})"),
              R"({"ok":false,"error":"ValueError","message":"at_ns = 1001 is larger than 1000, the largest value this backend keeps exactly","now_ns":"7","stored":"0"})");
    EXPECT_EQ(d.handle(R"({"op":"schedule","clock":"c","entry":"a","at_ns":"9","on_fire":[{"do":"schedule","delay_ns":"1001"}]})")
                  .rfind(R"({"ok":false,"error":"ValueError","message":"delay_ns = 1001 is larger than 1000)", 0),
              0u);
}

TEST(Features, C_RNG_3_a_clock_with_its_own_draw_gets_normalised_paths_and_no_bits) {
    EXPECT_EQ(simclock::Driver<OwnStreams>::features(), std::vector<std::string>{});
    simclock::Driver<OwnStreams> d("own");
    d.handle(R"({"op":"create","clock":"c","seed":"0"})");
    EXPECT_EQ(d.handle(R"({"op":"draw","clock":"c","labels":["ab","/c"],"n":"2"})"),
              R"({"ok":true,"values":["5","5"],"now_ns":"0","stored":"0"})");  // "/ab/c"
    EXPECT_EQ(d.handle(R"({"op":"draw","clock":"c","labels":["a//b"],"n":"1"})").rfind(R"({"ok":false,"error":"ValueError")", 0), 0u);
    EXPECT_EQ(d.handle(R"({"op":"draw","clock":"c","labels":[3],"n":"1"})").rfind(R"({"ok":false,"error":"TypeError")", 0), 0u);
    EXPECT_EQ(d.handle(R"({"op":"draw","clock":"c","labels":[],"n":"1048577"})").rfind(R"({"ok":false,"error":"ValueError")", 0), 0u);
}

TEST(Serve, C_WIRE_1_one_flushed_line_per_request_until_quit) {
    std::istringstream in(
        "{\"op\":\"hello\",\"protocol\":\"1\"}\n{\"op\":\"quit\"}\n{\"op\":\"hello\",\"protocol\":\"1\"}\n");
    std::ostringstream out;
    EXPECT_EQ(simclock::serve<BareClock>("bare", in, out), 0);
    EXPECT_EQ(out.str(), "{\"ok\":true,\"protocol\":\"1\",\"backend\":\"bare\",\"features\":[]}\n{\"ok\":true}\n");
    std::istringstream empty("");
    std::ostringstream none;
    EXPECT_EQ(simclock::serve<BareClock>("bare", empty, none), 0);
    EXPECT_EQ(none.str(), "");
}

TEST(ErrorKind, C_WIRE_5_clock_exceptions_map_to_the_wire_kinds) {
    using simclock::detail::error_kind;
    EXPECT_EQ(error_kind(simclock::TypeError("t")), "TypeError");
    EXPECT_EQ(error_kind(simclock::ValueError("v")), "ValueError");
    EXPECT_EQ(error_kind(simclock::RuntimeError("r")), "RuntimeError");
    EXPECT_EQ(error_kind(std::invalid_argument("i")), "ValueError");
    EXPECT_EQ(error_kind(std::out_of_range("o")), "ValueError");
    EXPECT_EQ(error_kind(std::logic_error("l")), "RuntimeError");
    EXPECT_EQ(error_kind(std::runtime_error("r")), "RuntimeError");
    EXPECT_EQ(error_kind(std::bad_alloc()), "internal");
}
