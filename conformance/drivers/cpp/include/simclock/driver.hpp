// simclock driver kit: the wire protocol (SPEC §18) around a clock you write.
//
// You write one class, the clock; `simclock::serve<YourClock>("name")` is the whole
// driver: it reads one JSON request per line on stdin and writes one reply per line on
// stdout (C-WIRE-1), checks every integer of the wire (C-WIRE-2), keeps the entry ids,
// runs the `on_fire` actions as real callbacks (C-WIRE-4), reports refusals (C-WIRE-5)
// and draws the random streams. Everything about time (ordering, ties, periodics,
// cancellation, isolation of errors, nested advances) is the clock's: the kit passes the
// clock's answers through and never corrects them.
//
// The clock class (every name below is looked up at compile time; see README.md):
//
//   required
//     ns_t now_ns();                                        C-TIME-1
//     H    schedule(ns_t at_ns, simclock::Callback cb);     C-SCH-1, C-TIE-1
//     H    schedule_periodic(ns_t period_ns, ns_t phase_ns, simclock::Callback cb);  C-PER-1..3
//     void cancel(H& handle);                               C-CAN-1..4
//     void advance(ns_t dt_ns);                             C-ADV-1..5, C-ERR-1..2
//     std::size_t stored();                                 C-CAN-4 (tombstones included)
//   optional (each one declares its feature)
//     std::optional<ns_t> next_event_ns();                  feature peek, C-X-PEEK
//     H    schedule_rate(std::uint64_t num, std::uint64_t den, ns_t phase_ns, Callback cb);  rate
//     simclock::Stats stats(H& handle);                     feature stats, C-X-STATS
//     YourClock(const simclock::Seed&, ns_t start_ns) or YourClock(ns_t start_ns)  start_ns
//     simclock::Streams& streams();                         feature bits, C-X-BITS
//     std::uint64_t draw(const std::string& path);          your own streams (no bits)
//     ns_t step_ns();                                       C-STEP-1 (default 1)
//     static constexpr ns_t max_ns = ...;                   largest wire time (default 2**64-1)
//
// `H` is any copyable handle type.
#ifndef SIMCLOCK_DRIVER_HPP
#define SIMCLOCK_DRIVER_HPP

#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bits.hpp"
#include "errors.hpp"
#include "json.hpp"
#include "numbers.hpp"

namespace simclock {

/// What the clock calls when an entry fires. It may throw CallbackError (isolate it,
/// C-ERR-1) or simclock::Halt (let it through, C-ERR-2). It may be called on any thread
/// (the kit's records are behind a mutex, never held while the clock runs), and its
/// actions call the clock from that thread.
using Callback = std::function<void()>;

/// Per-entry counters of a repeating entry (C-X-STATS).
struct Stats {
    std::uint64_t fired = 0, skipped = 0, overruns = 0;
};

namespace detail {

template <class C>
using handle_t = decltype(std::declval<C&>().schedule(ns_t{}, Callback{}));

#define SIMCLOCK_DETECT(name, expr)                                         \
    template <class C, class = void>                                       \
    struct name : std::false_type {};                                      \
    template <class C>                                                     \
    struct name<C, std::void_t<decltype(expr)>> : std::true_type {};       \
    template <class C>                                                     \
    inline constexpr bool name##_v = name<C>::value;

SIMCLOCK_DETECT(has_now, std::declval<C&>().now_ns())
SIMCLOCK_DETECT(has_schedule, std::declval<C&>().schedule(ns_t{}, Callback{}))
SIMCLOCK_DETECT(has_periodic, std::declval<C&>().schedule_periodic(ns_t{}, ns_t{}, Callback{}))
SIMCLOCK_DETECT(has_cancel, std::declval<C&>().cancel(std::declval<handle_t<C>&>()))
SIMCLOCK_DETECT(has_advance, std::declval<C&>().advance(ns_t{}))
SIMCLOCK_DETECT(has_stored, std::declval<C&>().stored())
SIMCLOCK_DETECT(has_peek, std::declval<C&>().next_event_ns())
SIMCLOCK_DETECT(has_rate,
                std::declval<C&>().schedule_rate(std::uint64_t{}, std::uint64_t{}, ns_t{}, Callback{}))
SIMCLOCK_DETECT(has_stats, Stats(std::declval<C&>().stats(std::declval<handle_t<C>&>())))
SIMCLOCK_DETECT(has_streams, static_cast<Streams&>(std::declval<C&>().streams()))
SIMCLOCK_DETECT(has_draw, std::uint64_t(std::declval<C&>().draw(std::declval<const std::string&>())))
SIMCLOCK_DETECT(has_step, ns_t(std::declval<C&>().step_ns()))
SIMCLOCK_DETECT(has_max_ns, ns_t(C::max_ns))
#undef SIMCLOCK_DETECT

template <class C>
inline constexpr bool has_start_v =
    std::is_constructible_v<C, const Seed&, ns_t> || std::is_constructible_v<C, ns_t>;

template <class C>
constexpr ns_t max_ns() {
    if constexpr (has_max_ns_v<C>) return C::max_ns;
    else return U64_MAX_NS;
}

/// A refusal of the kit's own, found in the request before the clock is asked.
class KitRefusal : public Refusal {
   public:
    using Refusal::Refusal;
    bool from_kit() const noexcept override { return true; }
};

[[noreturn]] inline void bad_request(const std::string& m) { throw KitRefusal("bad_request", m); }
[[noreturn]] inline void unsupported(const std::string& m) { throw KitRefusal("unsupported", m); }
[[noreturn]] inline void wire_type_error(const std::string& m) { throw KitRefusal("TypeError", m); }
[[noreturn]] inline void wire_value_error(const std::string& m) { throw KitRefusal("ValueError", m); }

/// The wire's `error` for an exception a clock threw: simclock's own errors by kind (an
/// adapter's own kind is "internal"), the standard library's argument errors as
/// ValueError, its other logic and runtime errors as RuntimeError, anything else "internal".
inline std::string error_kind(const std::exception& e) {
    if (auto r = dynamic_cast<const Refusal*>(&e)) {
        const std::string& k = r->kind();
        bool wire = k == "TypeError" || k == "ValueError" || k == "RuntimeError" || k == "bad_request" ||
                    k == "unsupported" || k == "internal";
        return wire ? k : "internal";
    }
    if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::out_of_range*>(&e) ||
        dynamic_cast<const std::domain_error*>(&e))
        return "ValueError";
    if (dynamic_cast<const std::logic_error*>(&e) || dynamic_cast<const std::runtime_error*>(&e))
        return "RuntimeError";
    return "internal";
}

/// The message of a clock's error: "Name: text", the error's own name first (a Refusal's
/// kind, the adapter's own included; else the wire kind), as Python names an exception.
/// The kit's own refusals, and bad_request/unsupported, are the text alone.
inline std::string describe(const std::exception& e) {
    if (auto r = dynamic_cast<const Refusal*>(&e)) {
        if (r->from_kit() || r->kind() == "bad_request" || r->kind() == "unsupported") return e.what();
        return r->kind() + ": " + e.what();
    }
    return error_kind(e) + ": " + e.what();
}

inline bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

inline const json::Value& field(const json::Value& req, const char* name) {
    const json::Value* v = req.get(name);
    if (!v) bad_request(std::string("missing field ") + name);
    return *v;
}

/// A protocol integer (C-WIRE-2): a JSON string of [0-9]+ at most `max`. Anything else,
/// a JSON number included, is a TypeError (C-TIME-3 in its wire form); more than `max`
/// a ValueError (C-TIME-4).
inline ns_t uint_value(const json::Value& v, const std::string& name, ns_t max) {
#ifdef SIMCLOCK_KIT_BROKEN_NUMBER_TIMES
    if (v.kind == json::Value::Number && v.text[0] != '-') {
        // Broken on purpose (a test of the suite): a JSON number is taken, its fraction dropped.
        ns_t r = 0;
        for (std::size_t i = 0; i < v.text.size() && v.text[i] >= '0' && v.text[i] <= '9'; ++i)
            r = r * 10 + static_cast<ns_t>(v.text[i] - '0');
        return r;
    }
#endif
    if (v.kind != json::Value::String || !all_digits(v.text))
        wire_type_error(name + " must be a string of decimal digits [0-9]+, got " + json::show(&v) +
                        "; send integers as strings, e.g. \"1000\"");
    ns_t r = 0;
    for (char c : v.text) {
        ns_t d = static_cast<ns_t>(c - '0');
        if (r > (max - d) / 10)
            wire_value_error(name + " = " + v.text.substr(0, 60) + (v.text.size() > 60 ? "..." : "") +
                             " is larger than " + dec(max) + ", the largest value this backend keeps exactly");
        r = r * 10 + d;
    }
    return r;
}

inline ns_t wire_uint(const json::Value& req, const char* name, ns_t max) {
    return uint_value(field(req, name), name, max);
}

inline std::string wire_string(const json::Value& req, const char* name) {
    const json::Value& v = field(req, name);
    if (v.kind != json::Value::String) bad_request(std::string(name) + " must be a string, got " + json::show(&v));
    return v.text;
}

/// One `on_fire` action (C-WIRE-4), checked with its request.
struct Action;
using Actions = std::shared_ptr<const std::vector<Action>>;

struct Action {
    enum Op { Schedule, Cancel, Advance, Raise, Halt } op = Schedule;
    ns_t ns = 0;       // delay_ns (schedule) or dt_ns (advance)
    std::string text;  // entry (cancel) or message (raise)
    Actions on_fire;   // a scheduled child's own actions
};

/// An `on_fire` list; a bad time anywhere in it refuses the whole request (C-WIRE-3).
inline Actions parse_actions(const json::Value* list, ns_t max, int depth = 0) {
    auto out = std::make_shared<std::vector<Action>>();
    if (!list) return out;
    if (list->kind != json::Value::Array) bad_request("on_fire must be a list of actions, got " + json::show(list));
    if (depth > 200) bad_request("on_fire is nested deeper than 200 levels");
    for (const json::Value& item : list->items) {
        if (item.kind != json::Value::Object) bad_request("an on_fire action must be an object, got " + json::show(&item));
        std::string what = wire_string(item, "do");
        Action a;
        if (what == "schedule") {
            a.op = Action::Schedule;
            a.ns = wire_uint(item, "delay_ns", max);
            a.on_fire = parse_actions(item.get("on_fire"), max, depth + 1);
        } else if (what == "cancel") {
            a.op = Action::Cancel;
            a.text = wire_string(item, "entry");
        } else if (what == "advance") {
            a.op = Action::Advance;
            a.ns = wire_uint(item, "dt_ns", max);
        } else if (what == "raise") {
            a.op = Action::Raise;
            const json::Value* m = item.get("message");
            a.text = (m && m->kind == json::Value::String) ? m->text : std::string("raised");
        } else if (what == "halt") {
            a.op = Action::Halt;
        } else {
            bad_request("unknown action do=" + json::quote(what.substr(0, 60)) +
                        "; expected schedule, cancel, advance, raise or halt");
        }
        out->push_back(std::move(a));
    }
    return out;
}

}  // namespace detail

/// The wire protocol around clocks of type `Clock`; one instance serves a whole run.
template <class Clock>
class Driver {
    static_assert(detail::has_now_v<Clock>, "the clock needs `ns_t now_ns()`");
    static_assert(detail::has_schedule_v<Clock>, "the clock needs `H schedule(ns_t at_ns, simclock::Callback)`");
    static_assert(detail::has_periodic_v<Clock>,
                  "the clock needs `H schedule_periodic(ns_t period_ns, ns_t phase_ns, simclock::Callback)`");
    static_assert(detail::has_cancel_v<Clock>, "the clock needs `void cancel(H& handle)`");
    static_assert(detail::has_advance_v<Clock>, "the clock needs `void advance(ns_t dt_ns)`");
    static_assert(detail::has_stored_v<Clock>, "the clock needs `std::size_t stored()` (tombstones included)");

    using Handle = detail::handle_t<Clock>;
    static constexpr ns_t MAX = detail::max_ns<Clock>();

   public:
    explicit Driver(std::string backend) : backend_(std::move(backend)) {}

    /// The features the clock's optional members declare, in the wire's order.
    static std::vector<std::string> features() {
        std::vector<std::string> out;
        if (detail::has_peek_v<Clock>) out.push_back("peek");
        if (detail::has_rate_v<Clock>) out.push_back("rate");
        if (detail::has_stats_v<Clock>) out.push_back("stats");
        if (detail::has_start_v<Clock>) out.push_back("start_ns");
        if (detail::has_streams_v<Clock>) out.push_back("bits");
        return out;
    }

    /// The reply (one JSON object, no newline) to one request line.
    std::string handle(const std::string& line) {
        json::Value req;
        try {
            req = json::Parser(line).document();
        } catch (json::ParseError& e) {
            return error("bad_request", "the request is not one JSON object: " + e.message);
        }
        if (req.kind != json::Value::Object) return error("bad_request", "the request must be a JSON object");
        Session* s = nullptr;
        std::string op;
        try {
            op = detail::wire_string(req, "op");
            if (op == "hello") return hello(req);
            if (op == "quit") {
                done_ = true;
                return json::Object().boolean("ok", true).done();
            }
            static const char* const clock_ops[] = {"create", "drop",    "schedule", "schedule_periodic",
                                                    "schedule_rate", "cancel", "advance", "observe",
                                                    "stats", "step_ns", "draw"};
            bool known = false;
            for (const char* name : clock_ops) known = known || op == name;
            if (!known) detail::bad_request("unknown op " + json::quote(op.substr(0, 60)));
            std::string id = detail::wire_string(req, "clock");
            auto it = sessions_.find(id);
            if (it != sessions_.end()) s = it->second.get();
            if (op == "create") {
                if (s) detail::bad_request("clock " + json::quote(id) + " is in use; drop it first or pick another id");
                return create(req, id);
            }
            if (!s) detail::bad_request("unknown clock " + json::quote(id.substr(0, 60)));
            json::Object o;
            o.boolean("ok", true);
            if (op == "drop") {
                observe(*s, o);
                sessions_.erase(it);
                return o.done();
            }
            if (op == "advance") return advance(*s, req);
            if (op == "schedule" || op == "schedule_periodic" || op == "schedule_rate") schedule(*s, req, op);
            else if (op == "cancel") s->clock->cancel(entry(*s, req));
            else if (op == "stats") stats(*s, req, o);
            else if (op == "step_ns") o.str("step_ns", dec(step(*s)));
            else if (op == "draw") draw(*s, req, o);
            if (carrier(op)) carry(*s, o);
            observe(*s, o);
            return o.done();
        } catch (const std::exception& e) {
            json::Object o;
            o.boolean("ok", false).str("error", detail::error_kind(e)).str("message", detail::describe(e));
            if (s) {
                escaped(*s, std::current_exception());  // a callback's error let out of schedule, say
                if (carrier(op)) carry(*s, o);
                observe(*s, o);  // C-WIRE-3: a refusal carries the observation too
            }
            return o.done();
        }
    }

    /// True once `quit` was answered.
    bool done() const { return done_; }

   private:
    struct Record {
        std::string entry;
        ns_t now;
        // `refused` and `nested`, in the order the actions first set them (C-WIRE-4).
        std::vector<std::pair<std::string, std::string>> marks;
        void mark(const std::string& key, const std::string& value) {
            for (auto& m : marks)
                if (m.first == key) {
                    m.second = value;
                    return;
                }
            marks.emplace_back(key, value);
        }
    };
    struct Failure {
        std::string entry;
        ns_t at;
        std::string message;
        std::exception_ptr error;  // to know the one the clock let out of a call
    };
    // One wire clock: the author's clock and what the protocol keeps beside it.
    // Invariant: `lock` guards handles, children, fired and failures (a clock may run
    // callbacks on threads of its own); it is never held while the clock runs.
    struct Session {
        std::unique_ptr<Clock> clock;
        std::mutex lock;
        std::unordered_map<std::string, Handle> handles;         // every entry that exists, children too
        std::unordered_map<std::string, std::uint64_t> children;  // the next child number per parent
        std::vector<Record> fired;                                // since the last advance reply
        std::vector<Failure> failures;
    };

    static bool carrier(const std::string& op) {
        return op == "schedule" || op == "schedule_periodic" || op == "schedule_rate" || op == "cancel";
    }

    // The firings and failures not yet reported, as the reply's `fired` and `failures`.
    // Invariant: s.lock is held.
    static void report(Session& s, json::Object& o) {
        std::vector<std::string> fired, failures;
        for (const Record& r : s.fired) {
            json::Object f;
            f.str("entry", r.entry).str("now_ns", dec(r.now));
            for (const auto& m : r.marks) f.str(m.first.c_str(), m.second);
            fired.push_back(f.done());
        }
        for (const Failure& f : s.failures)
            failures.push_back(json::Object().str("entry", f.entry).str("at_ns", dec(f.at)).str("message", f.message).done());
        o.raw("fired", json::array(fired)).raw("failures", json::array(failures));
        s.fired.clear();
        s.failures.clear();
    }

    // Put the firings and failures not yet reported into a schedule* or cancel reply, if
    // there are any: a callback the clock ran inside that call shows where the suite sees it.
    static void carry(Session& s, json::Object& o) {
        std::lock_guard<std::mutex> guard(s.lock);
        if (!s.fired.empty() || !s.failures.empty()) report(s, o);
    }

    // An error the clock let out of one of its calls: if a callback threw it, it is no
    // failure the clock isolated.
    static void escaped(Session& s, const std::exception_ptr& error) {
        std::lock_guard<std::mutex> guard(s.lock);
        for (std::size_t i = s.failures.size(); i-- > 0;)
            if (s.failures[i].error == error) {
                s.failures.erase(s.failures.begin() + static_cast<std::ptrdiff_t>(i));
                return;
            }
    }

    std::string backend_;
    bool done_ = false;
    std::map<std::string, std::unique_ptr<Session>> sessions_;

    static std::string error(const std::string& kind, const std::string& message) {
        return json::Object().boolean("ok", false).str("error", kind).str("message", message).done();
    }

    std::string hello(const json::Value& req) {
        const json::Value* p = req.get("protocol");
        if (!p || p->kind != json::Value::String || p->text != "1")
            detail::unsupported("this driver speaks protocol \"1\" only, got " + json::show(p));
        std::vector<std::string> names;
        for (const auto& f : features()) names.push_back(json::quote(f));
        return json::Object()
            .boolean("ok", true)
            .str("protocol", "1")
            .str("backend", backend_)
            .raw("features", json::array(names))
            .done();
    }

    std::string create(const json::Value& req, const std::string& id) {
        const json::Value& seed = detail::field(req, "seed");
        if (seed.kind != json::Value::String || !detail::all_digits(seed.text))
            detail::wire_type_error("seed must be a string of decimal digits [0-9]+, got " + json::show(&seed));
        if (seed.text.size() > 4000)
            detail::wire_value_error("seed has " + std::to_string(seed.text.size()) + " digits; this driver keeps at most 4000");
        std::optional<ns_t> start;
        if (req.get("start_ns")) {
            if (!detail::has_start_v<Clock>) detail::unsupported("this clock does not take start_ns (feature start_ns)");
            start = detail::wire_uint(req, "start_ns", MAX);
        }
        auto s = std::make_unique<Session>();
        s->clock = make_clock(Seed::from_decimal(seed.text), start.value_or(0));
        json::Object o;
        o.boolean("ok", true);
        observe(*s, o);
        sessions_.emplace(id, std::move(s));
        return o.done();
    }

    static std::unique_ptr<Clock> make_clock(const Seed& seed, ns_t start) {
        if constexpr (std::is_constructible_v<Clock, const Seed&, ns_t>) return std::make_unique<Clock>(seed, start);
        else if constexpr (std::is_constructible_v<Clock, ns_t>) return std::make_unique<Clock>(start);
        else if constexpr (std::is_constructible_v<Clock, const Seed&>) return std::make_unique<Clock>(seed);
        else return std::make_unique<Clock>();
    }

    // The observation (C-WIRE-3): what the clock itself reports, unchanged.
    static void observe(Session& s, json::Object& o) {
        o.str("now_ns", dec(static_cast<ns_t>(s.clock->now_ns())));
        if constexpr (detail::has_peek_v<Clock>) {
            std::optional<ns_t> next = s.clock->next_event_ns();
            if (next) o.str("next_event_ns", dec(*next));
            else o.raw("next_event_ns", "null");
        }
        o.str("stored", dec(static_cast<ns_t>(s.clock->stored())));
    }

    static ns_t step(Session& s) {
        if constexpr (detail::has_step_v<Clock>) return s.clock->step_ns();
        else return 1;  // a pure event clock (C-STEP-1)
    }

    static Handle& entry(Session& s, const json::Value& req) {
        std::string id = detail::wire_string(req, "entry");
        std::lock_guard<std::mutex> guard(s.lock);
        auto it = s.handles.find(id);
        if (it == s.handles.end()) detail::bad_request("unknown entry " + json::quote(id.substr(0, 60)));
        return it->second;
    }

    // The callback of entry `id`: records its firing with the time the clock shows it,
    // then runs its actions in order (C-WIRE-4). Invariant: the session outlives every
    // callback its clock holds, since the session owns the clock.
    static Callback callback(Session& s, std::string id, detail::Actions actions) {
        return [&s, id = std::move(id), actions = std::move(actions)]() { run(s, id, *actions); };
    }

    static void run(Session& s, const std::string& id, const std::vector<detail::Action>& actions) {
        using detail::Action;
        const ns_t now = static_cast<ns_t>(s.clock->now_ns());
        std::size_t slot;
        {
            std::lock_guard<std::mutex> guard(s.lock);
            slot = s.fired.size();
            s.fired.push_back({id, now, {}});
        }
        auto mark = [&](const char* key, const std::string& value) {
            std::lock_guard<std::mutex> guard(s.lock);
            // The records may have been reported since (a clock that resumes callbacks later).
            if (slot < s.fired.size() && s.fired[slot].entry == id) s.fired[slot].mark(key, value);
        };
        try {
            for (const Action& a : actions) {
                switch (a.op) {
                    case Action::Schedule: {
                        std::uint64_t n;
                        {
                            std::lock_guard<std::mutex> guard(s.lock);
                            n = s.children[id];
                        }
                        std::string child = id + "." + std::to_string(n);
                        ns_t at = static_cast<ns_t>(s.clock->now_ns()) + a.ns;
                        std::optional<Handle> h;
                        try {
                            h.emplace(s.clock->schedule(at, callback(s, child, a.on_fire)));
                        } catch (const std::exception& e) {
                            // A ValueError is noted and the callback goes on (the child takes no
                            // number); another kind fails the callback.
                            if (detail::error_kind(e) != "ValueError") throw;
                            mark("refused", "ValueError");
                            break;
                        }
                        std::lock_guard<std::mutex> guard(s.lock);
                        s.children[id] = n + 1;
                        s.handles.insert_or_assign(child, std::move(*h));
                        break;
                    }
                    case Action::Cancel: {
                        std::optional<Handle> target;
                        {
                            std::lock_guard<std::mutex> guard(s.lock);
                            auto it = s.handles.find(a.text);
                            if (it != s.handles.end()) target.emplace(it->second);
                        }
                        if (target) s.clock->cancel(*target);
                        break;
                    }
                    case Action::Advance: {
                        std::string kind = "accepted";
                        std::exception_ptr failed;
                        try {
                            s.clock->advance(a.ns);
                        } catch (const std::exception& e) {
                            kind = detail::error_kind(e);
                            failed = std::current_exception();
                            escaped(s, failed);
                        }
                        mark("nested", kind);  // C-ADV-4
                        // A RuntimeError lets the callback go on; any other kind fails it.
                        if (failed && kind != "RuntimeError") std::rethrow_exception(failed);
                        break;
                    }
                    case Action::Raise:
                        throw CallbackError(a.text);
                    case Action::Halt:
                        throw simclock::Halt{id, now};
                }
            }
        } catch (const std::exception& e) {
            // An invocation that raised (C-WIRE-3); whether the advance goes on is the
            // clock's business (C-ERR-1). If the clock lets it out, it leaves the list.
            std::lock_guard<std::mutex> guard(s.lock);
            s.failures.push_back({id, now, e.what(), std::current_exception()});
            throw;
        }
    }

    static void add(Session& s, const std::string& id, Handle handle) {
        std::lock_guard<std::mutex> guard(s.lock);
        s.handles.emplace(id, std::move(handle));
    }

    void schedule(Session& s, const json::Value& req, const std::string& op) {
        if (op == "schedule_rate" && !detail::has_rate_v<Clock>)
            detail::unsupported("this clock has no schedule_rate (feature rate)");
        std::string id = detail::wire_string(req, "entry");
        if (id.empty() || id.find('.') != std::string::npos)
            detail::bad_request("entry id " + json::quote(id.substr(0, 60)) + " must be non-empty without '.'");
        if (s.handles.count(id))
            detail::bad_request("entry id " + json::quote(id.substr(0, 60)) + " is already used by this clock");
        // Every check happens before the clock is called: a refused request changes nothing.
        if (op == "schedule") {
            ns_t at = detail::wire_uint(req, "at_ns", MAX);
            auto actions = detail::parse_actions(req.get("on_fire"), MAX);
            add(s, id, s.clock->schedule(at, callback(s, id, actions)));
        } else if (op == "schedule_periodic") {
            ns_t period = detail::wire_uint(req, "period_ns", MAX);
            ns_t phase = req.get("phase_ns") ? detail::wire_uint(req, "phase_ns", MAX) : 0;
            auto actions = detail::parse_actions(req.get("on_fire"), MAX);
            add(s, id, s.clock->schedule_periodic(period, phase, callback(s, id, actions)));
        } else if constexpr (detail::has_rate_v<Clock>) {
            const json::Value& r = detail::field(req, "rate_hz");
            if (r.kind != json::Value::Array || r.items.size() != 2)
                detail::wire_type_error("rate_hz must be a list [NUM, DEN] of two decimal strings, got " + json::show(&r));
            auto num = static_cast<std::uint64_t>(detail::uint_value(r.items[0], "rate_hz numerator", U64_MAX_NS));
            auto den = static_cast<std::uint64_t>(detail::uint_value(r.items[1], "rate_hz denominator", U64_MAX_NS));
            ns_t phase = req.get("phase_ns") ? detail::wire_uint(req, "phase_ns", MAX) : 0;
            auto actions = detail::parse_actions(req.get("on_fire"), MAX);
            add(s, id, s.clock->schedule_rate(num, den, phase, callback(s, id, actions)));
        }
    }

    std::string advance(Session& s, const json::Value& req) {
        ns_t dt = detail::wire_uint(req, "dt_ns", MAX);
        // Every firing not yet reported (see carry).
        json::Object o;
        bool reported = true;
        try {
            s.clock->advance(dt);
            o.boolean("ok", true);
        } catch (const simclock::Halt& h) {
            // C-ERR-2: the clock let the halt through; where it stopped is the clock's.
            o.boolean("ok", false).str("error", "halted").str("entry", h.entry).str("at_ns", dec(h.at_ns));
        } catch (const std::exception& e) {
            // A refusal, or an error the clock did not isolate: reported as the clock gave
            // it, and no longer one of the failures.
            o.boolean("ok", false).str("error", detail::error_kind(e)).str("message", detail::describe(e));
            escaped(s, std::current_exception());
            std::lock_guard<std::mutex> guard(s.lock);
            reported = !s.fired.empty() || !s.failures.empty();
        }
        if (reported) {
            std::lock_guard<std::mutex> guard(s.lock);
            report(s, o);
        }
        observe(s, o);
        return o.done();
    }

    static void stats(Session& s, const json::Value& req, json::Object& o) {
        if constexpr (detail::has_stats_v<Clock>) {
            Stats st = s.clock->stats(entry(s, req));
            o.str("fired", dec(st.fired)).str("skipped", dec(st.skipped)).str("overruns", dec(st.overruns));
        } else {
            detail::unsupported("this clock has no stats (feature stats)");
        }
    }

    static void draw(Session& s, const json::Value& req, json::Object& o) {
        if constexpr (!detail::has_streams_v<Clock> && !detail::has_draw_v<Clock>) {
            detail::unsupported("this clock has no random streams");
        } else {
            const json::Value& labels = detail::field(req, "labels");
            if (labels.kind != json::Value::Array)
                detail::wire_type_error("labels must be a list of strings, got " + json::show(&labels));
            ns_t n = detail::wire_uint(req, "n", U64_MAX_NS);
            if (n > (ns_t{1} << 20))
                detail::wire_value_error("n = " + dec(n) + " is more than 1048576 values in one draw; draw in smaller batches");
            std::string path = "/";
            for (const json::Value& label : labels.items) {
                if (label.kind != json::Value::String) detail::wire_type_error("label must be a string, got " + json::show(&label));
                path = join_label(path, label.text);
            }
            std::vector<std::string> values;
            for (ns_t i = 0; i < n; ++i) {
                if constexpr (detail::has_streams_v<Clock>) values.push_back(json::quote(dec(s.clock->streams().next(path))));
                else values.push_back(json::quote(dec(s.clock->draw(path))));
            }
            o.raw("values", json::array(values));
        }
    }
};

/// Serves the wire protocol on `in`/`out` until `quit` or the end of input; returns the
/// process exit status (0). Every reply is flushed (C-WIRE-1).
template <class Clock>
int serve(const std::string& backend, std::istream& in = std::cin, std::ostream& out = std::cout) {
    std::ios::sync_with_stdio(false);
    Driver<Clock> driver(backend);
    std::string line;
    while (std::getline(in, line)) {
        std::string reply;
        try {
            reply = driver.handle(line);
        } catch (const std::exception& e) {
            reply = json::Object().boolean("ok", false).str("error", "internal").str("message", e.what()).done();
        } catch (...) {
            // A simclock::Halt outside an advance, or a clock throwing a non-exception.
            reply = json::Object().boolean("ok", false).str("error", "internal").str("message", "unknown exception").done();
        }
        out << reply << '\n' << std::flush;
        if (driver.done()) break;
    }
    return 0;
}

}  // namespace simclock

#endif
