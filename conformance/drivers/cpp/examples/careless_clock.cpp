// The scripted careless clock of the kits' shared transcript: it breaks the contract on
// purpose, so that every rule of "What a kit reports" (docs/kits.md) is reached once.
// conformance/transcripts/careless.py is the reference; the replies to
// careless.requests.jsonl must be those of careless.replies.jsonl, byte for byte.
// Entries at a multiple of 100 ns run their callback on a thread of their own.
//
//     g++ -std=c++17 -O2 -pthread -Iinclude -o careless_clock examples/careless_clock.cpp
#include <algorithm>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include <simclock/driver.hpp>

using simclock::ns_t;

class CarelessClock {
    struct Entry {
        ns_t at, period;
        std::uint64_t seq;
        simclock::Callback callback;
    };
    static constexpr ns_t HORIZON = 1000000;

   public:
    using Handle = std::shared_ptr<Entry>;  // the same entry is pushed again for a periodic

    ns_t now_ns() const { return now_; }
    std::size_t stored() const { return pending_.size(); }

    Handle schedule(ns_t at, simclock::Callback cb) {
        using simclock::dec;
        if (at < now_) throw simclock::ValueError("at_ns " + dec(at) + " is before now " + dec(now_));
        if (at > HORIZON) throw simclock::ValueError("at_ns " + dec(at) + " is past the horizon " + dec(HORIZON));
        if (at == 4242) throw simclock::TypeError("at_ns 4242 is unlucky");
        if (at == now_ && depth_ == 0) {  // careless: fires inside schedule
            ++depth_;
            try {
                cb();
            } catch (...) {  // a callback's error leaves schedule
                --depth_;
                throw;
            }
            --depth_;
            return std::make_shared<Entry>(Entry{at, 0, 0, nullptr});
        }
        return push(std::make_shared<Entry>(Entry{at, 0, 0, std::move(cb)}));
    }

    Handle schedule_periodic(ns_t period, ns_t phase, simclock::Callback cb) {
        if (period == 0) throw simclock::ValueError("period_ns must be > 0");
        ns_t first = phase < now_ ? phase + (now_ - phase + period - 1) / period * period : phase;
        return push(std::make_shared<Entry>(Entry{first, period, 0, std::move(cb)}));
    }

    void cancel(Handle& h) { pending_.erase(std::remove(pending_.begin(), pending_.end(), h), pending_.end()); }

    void advance(ns_t dt) {
        if (depth_ > 0) {
            if (dt == 13) throw simclock::Refusal("Deadlock", "a nested advance of 13 ns would deadlock");
            if (dt > 10) throw simclock::RuntimeError("advance from inside a callback");
            return;  // careless: accepted and ignored
        }
        if (dt == 666) throw simclock::Refusal("Deadlock", "advance of 666 ns would deadlock");
        ns_t target = now_ + dt;
        for (;;) {
            Handle next;
            for (const Handle& e : pending_)
                if (e->at <= target && (!next || e->at < next->at || (e->at == next->at && e->seq < next->seq)))
                    next = e;
            if (!next) break;
            cancel(next);
            ns_t at = next->at;
            now_ = at;
            std::exception_ptr error = run(*next);
            if (next->period > 0) {
                next->at += next->period;
                push(next);
            }
            if (!error) continue;
            try {
                std::rethrow_exception(error);
            } catch (const std::exception&) {
                if (at % 2 == 1) throw;  // careless: an error at an odd time leaves advance
            }  // anything else (a halt) goes on up: it always leaves advance (C-ERR-2)
        }
        now_ = target;
    }

   private:
    Handle push(Handle e) {
        e->seq = seq_++;
        pending_.push_back(e);
        return e;
    }

    // Run a callback, on a new thread at a multiple of 100 ns, and wait for it.
    std::exception_ptr run(Entry& e) {
        std::exception_ptr error;
        auto call = [&] {
            try {
                e.callback();
            } catch (...) {  // handed to the advancing thread
                error = std::current_exception();
            }
        };
        ++depth_;
        if (e.at % 100 == 0) std::thread(call).join();
        else call();
        --depth_;
        return error;
    }

    ns_t now_ = 0;
    std::uint64_t seq_ = 0;
    int depth_ = 0;
    std::vector<Handle> pending_;
};

int main() { return simclock::serve<CarelessClock>("careless:clock"); }
