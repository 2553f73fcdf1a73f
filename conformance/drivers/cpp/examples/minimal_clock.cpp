// A minimal clock on the simclock driver kit: a sorted std::multimap, no peek, rate or
// stats. std::multimap inserts after the equal keys already there, which is the whole
// tie rule (C-TIE-1, C-PER-2); cancelled entries leave the map at once (C-CAN-4).
//
//     g++ -std=c++17 -O2 -Iinclude -o minimal_clock examples/minimal_clock.cpp
//     python -m simclock_conformance --driver -- ./minimal_clock
#include <map>
#include <memory>
#include <optional>

#include <simclock/driver.hpp>

using simclock::ns_t;

class MapClock {
    struct Entry;
    using Map = std::multimap<ns_t, std::shared_ptr<Entry>>;
    struct Entry {
        simclock::Callback callback;
        ns_t period = 0;               // 0: a one-shot
        std::optional<Map::iterator> pos;  // where it waits, if it does
        bool cancelled = false;
    };

   public:
    using Handle = std::shared_ptr<Entry>;

    MapClock(const simclock::Seed& seed, ns_t start_ns) : now_(start_ns), streams_(seed) {}
    ns_t now_ns() const { return now_; }
    std::size_t stored() const { return map_.size(); }
    simclock::Streams& streams() { return streams_; }

    Handle schedule(ns_t at, simclock::Callback cb) {
        if (at < now_) throw simclock::ValueError("at_ns " + simclock::dec(at) + " is in the past");
        return add(at, 0, std::move(cb));
    }
    Handle schedule_periodic(ns_t period, ns_t phase, simclock::Callback cb) {
        if (period == 0) throw simclock::ValueError("period_ns must be > 0");
        ns_t first = phase >= now_ ? phase : phase + (now_ - phase + period - 1) / period * period;
        return add(first, period, std::move(cb));
    }
    void cancel(Handle& e) {
        e->cancelled = true;  // a periodic cancelled from its own callback is not re-armed
        if (e->pos) map_.erase(*e->pos);
        e->pos.reset();
    }
    void advance(ns_t dt) {
        if (running_) throw simclock::RuntimeError("advance() from inside a callback");
        if (now_ + dt > simclock::U64_MAX_NS) throw simclock::ValueError("now would pass 2**64-1 ns");
        const ns_t target = now_ + dt;
        running_ = true;
        struct Done { bool& flag; ~Done() { flag = false; } } done{running_};
        while (!map_.empty() && map_.begin()->first <= target) {
            auto [at, e] = *map_.begin();
            map_.erase(map_.begin());
            e->pos.reset();
            now_ = at;
            try {
                e->callback();
            } catch (const std::exception&) {  // isolated (C-ERR-1); a simclock::Halt is not
            } catch (...) {
                rearm(e, at);
                throw;
            }
            rearm(e, at);
        }
        now_ = target;
    }

   private:
    ns_t now_;
    bool running_ = false;
    Map map_;
    simclock::Streams streams_;

    Handle add(ns_t at, ns_t period, simclock::Callback cb) {
        auto e = std::make_shared<Entry>();
        e->callback = std::move(cb);
        e->period = period;
        e->pos = map_.emplace(at, e);
        return e;
    }
    void rearm(const Handle& e, ns_t at) {
        if (e->period && !e->cancelled) e->pos = map_.emplace(at + e->period, e);
    }
};

int main() { return simclock::serve<MapClock>("simclock-cpp-multimap"); }
