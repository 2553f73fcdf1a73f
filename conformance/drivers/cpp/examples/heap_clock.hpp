// The reference heap clock on the simclock driver kit (SPEC §1): every feature.
//
// A binary heap of entries keyed (at_ns, seq), seq a per-clock counter taken at every
// push: equal times fire in push order (C-TIE-1), and a repeating entry, re-pushed after
// its callback with a fresh seq (C-PER-2), fires after the entries already waiting at its
// next time. Cancellation is lazy (C-CAN-4): a cancelled entry stays as a tombstone until
// it reaches the root, or until the heap holds more than 2*live + 64 items, when it is
// rebuilt from the live entries. `now` never passes 2**64 - 1; times the clock computes
// (a child at now + delay, a grid's next point) are exact in 128 bits beyond it and such
// entries simply never become due (C-TIME-4).
//
// Deliberately broken clocks, for testing the suite (-D one macro at a time):
//     BROKEN_FLOAT64 BROKEN_LIFO_TIES BROKEN_NESTED_ADVANCE BROKEN_NO_COMPACT
//     BROKEN_CRASH[=N] BROKEN_HANG           (see README.md)
#ifndef SIMCLOCK_EXAMPLE_HEAP_CLOCK_HPP
#define SIMCLOCK_EXAMPLE_HEAP_CLOCK_HPP

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

#include <simclock/driver.hpp>

class HeapClock {
    using ns_t = simclock::ns_t;
    enum Kind { ONESHOT, PERIODIC, RATE };
    enum State { PENDING, RUNNING, CANCELLED, CANCELLED_RUNNING, FIRED };

    struct Entry {
        Kind kind = ONESHOT;
        State state = PENDING;
        simclock::Callback callback;
        ns_t at = 0;  // the heap key while in the heap
        std::uint64_t seq = 0;
        // A repeating entry's firing k is at phase + k*period, or phase + ceil(k*1e9*den/num).
        ns_t phase = 0, period = 0, k = 0;
        std::uint64_t num = 0, den = 0, fired = 0;
    };

   public:
    using Handle = std::shared_ptr<Entry>;

    HeapClock(const simclock::Seed& seed, ns_t start_ns) : now_(keep(start_ns)), streams_(seed) {}

    ns_t now_ns() const { return now_; }
    std::size_t stored() const { return heap_.size(); }  // tombstones included
    simclock::Streams& streams() { return streams_; }

    // C-X-PEEK: the earliest live entry; tombstones at the root leave on the way.
    std::optional<ns_t> next_event_ns() {
        for (; !heap_.empty(); --dead_) {
            if (heap_.front()->state == PENDING) return heap_.front()->at;
            pop();
        }
        return std::nullopt;
    }

    Handle schedule(ns_t at, simclock::Callback cb) {
        if (keep(at) < now_)
            throw simclock::ValueError("at_ns=" + simclock::dec(at) + " is in the past (now is " +
                                       simclock::dec(now_) + " ns); schedule at or after now");
        return push(make(ONESHOT, std::move(cb)), at);
    }

    Handle schedule_periodic(ns_t period, ns_t phase, simclock::Callback cb) {
        if (period == 0) throw simclock::ValueError("period_ns must be > 0 ns, got 0");
        Handle e = make(PERIODIC, std::move(cb));
        e->period = period;
        e->phase = keep(phase);
        e->k = e->phase >= now_ ? 0 : (now_ - e->phase + period - 1) / period;  // C-PER-1
        return push(e, time_of(*e));
    }

    Handle schedule_rate(std::uint64_t num, std::uint64_t den, ns_t phase, simclock::Callback cb) {
        if (den == 0) throw simclock::ValueError("rate_hz denominator must be > 0, got 0");
        if (num == 0) throw simclock::ValueError("rate_hz must be > 0 Hz, got 0/" + simclock::dec(den));
        if (static_cast<ns_t>(num) > static_cast<ns_t>(simclock::NS_PER_S) * den)
            throw simclock::ValueError("rate_hz must be <= 1e9 (one firing per ns at most), got " +
                                       simclock::dec(num) + "/" + simclock::dec(den));
        Handle e = make(RATE, std::move(cb));
        std::uint64_t g = std::gcd(num, den);
        e->num = num / g;
        e->den = den / g;
        e->phase = keep(phase);
        e->k = e->phase >= now_ ? 0 : simclock::first_rate_index(now_ - e->phase, e->num, e->den);
        return push(e, time_of(*e));
    }

    // C-CAN-1..3: never fails, a second cancel or one after firing does nothing.
    void cancel(Handle& e) {
        if (e->state == PENDING) {
            e->state = CANCELLED;
            ++dead_;
            compact_if_needed();
        } else if (e->state == RUNNING) {
            e->state = CANCELLED_RUNNING;  // from its own callback: not re-pushed
        }
    }

    simclock::Stats stats(Handle& e) {
        if (e->kind == ONESHOT) return {e->state == FIRED ? 1u : 0u, 0, 0};
        return {e->fired, 0, 0};
    }

    void advance(ns_t dt) {
        if (running_) {
#ifdef BROKEN_NESTED_ADVANCE
            fire(now_ + dt);  // broken on purpose: the nested advance runs
            running_ = true;
            now_ = keep(now_ + dt);
            return;
#else
            throw simclock::RuntimeError("advance() called from inside a callback (C-ADV-4)");
#endif
        }
        ns_t target = now_ + dt;
        if (target > simclock::U64_MAX_NS)
            throw simclock::ValueError("advance(dt_ns=" + simclock::dec(dt) + ") would take now from " +
                                       simclock::dec(now_) + " past 2**64-1 ns, the largest time this clock keeps");
        misbehave(target);
        fire(target);
        now_ = keep(target);
    }

   private:
    ns_t now_;
    std::uint64_t seq_ = 0;
    bool running_ = false;
    std::vector<Handle> heap_;
    std::size_t dead_ = 0;  // Invariant: the number of heap items whose state is not PENDING
    simclock::Streams streams_;

    static constexpr std::size_t THRESHOLD = 64;

    // Storage of a time: exact, or (broken on purpose) rounded through a double.
    static ns_t keep(ns_t t) {
#ifdef BROKEN_FLOAT64
        return static_cast<ns_t>(static_cast<long double>(static_cast<double>(t)));
#else
        return t;
#endif
    }
    // The heap's order: `later(x, y)` when y fires first (std's heaps keep the largest on top).
    static bool later(const Handle& x, const Handle& y) {
        if (x->at != y->at) return x->at > y->at;
#ifdef BROKEN_LIFO_TIES
        return x->seq < y->seq;
#else
        return x->seq > y->seq;
#endif
    }
    static Handle make(Kind kind, simclock::Callback cb) {
        auto e = std::make_shared<Entry>();
        e->kind = kind;
        e->callback = std::move(cb);
        return e;
    }
    Handle push(Handle e, ns_t at) {
        e->at = keep(at);
        e->seq = seq_++;
        heap_.push_back(e);
        std::push_heap(heap_.begin(), heap_.end(), later);
        return e;
    }
    Handle pop() {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        Handle e = std::move(heap_.back());
        heap_.pop_back();
        return e;
    }
    ns_t time_of(const Entry& e) const {
        if (e.kind == PERIODIC) return e.phase + e.k * e.period;
        return e.phase + simclock::rate_offset(e.k, e.num, e.den);  // C-X-RATE
    }
    void compact_if_needed() {
#ifndef BROKEN_NO_COMPACT
        // C-CAN-4: the heap never holds more than 2*live + THRESHOLD items after a call.
        if (heap_.size() > 2 * (heap_.size() - dead_) + THRESHOLD) {
            heap_.erase(std::remove_if(heap_.begin(), heap_.end(), [](const Handle& e) { return e->state != PENDING; }),
                        heap_.end());
            std::make_heap(heap_.begin(), heap_.end(), later);
            dead_ = 0;
        }
#endif
    }

    // Every live entry with at <= limit, in (at, seq) order. C-ADV-2: now is the entry's
    // time during its callback. C-ERR-1: an ordinary error is isolated. C-PER-2: a
    // repeating entry is re-pushed after its callback returns, raises or halts (C-ERR-2),
    // with a fresh seq, on its integer grid (C-PER-3). A halt is not caught: it ends the
    // advance where it happened.
    void fire(ns_t limit) {
        running_ = true;
        try {
            while (!heap_.empty() && heap_.front()->at <= limit) {
                Handle e = pop();
                if (e->state != PENDING) {  // a tombstone leaving at the root
                    --dead_;
                    continue;
                }
                now_ = e->at;
                if (e->kind == ONESHOT) {
                    e->state = FIRED;  // before its callback: a cancel from inside it is a no-op
                    run(*e);
                    continue;
                }
                e->state = RUNNING;
                ++e->fired;
                try {
                    run(*e);
                } catch (...) {
                    rearm(e);
                    throw;
                }
                rearm(e);
            }
        } catch (...) {
            running_ = false;
            compact_if_needed();
            throw;
        }
        running_ = false;
        compact_if_needed();  // firing lowers the live count while far tombstones stay
    }
    static void run(Entry& e) {
        try {
            e.callback();
        } catch (const std::exception&) {
            // C-ERR-1: isolated; the callback's error does not stop the advance.
        }
    }
    void rearm(const Handle& e) {
        if (e->state != RUNNING) {
            e->state = CANCELLED;  // cancelled while running: not in the heap, not a tombstone
            return;
        }
        e->state = PENDING;
        ++e->k;
        push(e, time_of(*e));
    }

    // Process-level faults for testing the suite: abort on the N-th advance, or hang
    // on an advance to 2**62 ns or later.
    static void misbehave([[maybe_unused]] ns_t target) {
#ifdef BROKEN_CRASH
        static unsigned long advances = 0;
        if (++advances >= (BROKEN_CRASH > 1 ? BROKEN_CRASH : 4)) std::abort();
#endif
#ifdef BROKEN_HANG
        if (target >= (ns_t{1} << 62)) {
            std::fprintf(stderr, "heap_clock: hanging on purpose (BROKEN_HANG)\n");
            while (true) std::this_thread::sleep_for(std::chrono::seconds(3600));
        }
#endif
    }
};

#endif
