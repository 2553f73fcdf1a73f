package dev.simclock.example;

import dev.simclock.driver.Driver;
import dev.simclock.driver.RandomStreams;
import dev.simclock.driver.Refusal;
import dev.simclock.driver.SimClockBackend;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The scripted careless clock of the kits' shared transcript: it breaks the contract on purpose, so that every rule
 * of "What a kit reports" (docs/kits.md) is reached once. {@code conformance/transcripts/careless.py} is the
 * reference; the replies to {@code careless.requests.jsonl} must be those of {@code careless.replies.jsonl}, byte
 * for byte. Entries at a multiple of 100 ns run their callback on a thread of their own.
 */
public final class CarelessClock implements SimClockBackend<CarelessClock.Entry> {
    private static final long HORIZON = 1_000_000;

    /** A pending entry; the same object is pushed again for a periodic, so its handle still cancels it. */
    public static final class Entry {
        final Runnable callback;
        final long period;
        long at, seq;

        Entry(Runnable callback, long at, long period) {
            this.callback = callback;
            this.at = at;
            this.period = period;
        }
    }

    private final List<Entry> pending = new ArrayList<>();
    private long now, seq;
    private int depth;

    private Entry push(Entry e) {
        e.seq = seq++;
        pending.add(e);
        return e;
    }

    @Override public long nowNs() { return now; }
    @Override public long stored() { return pending.size(); }
    @Override public String name() { return "careless:clock"; }
    @Override public Optional<RandomStreams> randomStreams(BigInteger seed) { return Optional.empty(); }

    @Override public Entry schedule(long at, Runnable callback) {
        if (at < now) throw new Refusal("ValueError", "at_ns " + at + " is before now " + now);
        if (at > HORIZON) throw new Refusal("ValueError", "at_ns " + at + " is past the horizon " + HORIZON);
        if (at == 4242) throw new Refusal("TypeError", "at_ns 4242 is unlucky");
        if (at == now && depth == 0) { // careless: fires inside schedule
            depth++;
            try {
                callback.run();
            } finally {
                depth--;
            }
            return new Entry(callback, at, 0);
        }
        return push(new Entry(callback, at, 0));
    }

    @Override public Entry scheduleAfter(long delayNs, Runnable callback) {
        if (Long.compareUnsigned(delayNs, HORIZON) > 0) { // now + delay would pass the horizon (or 2**64 - 1)
            throw new Refusal("ValueError", "at_ns " + new BigInteger(Long.toUnsignedString(now)).add(
                    new BigInteger(Long.toUnsignedString(delayNs))) + " is past the horizon " + HORIZON);
        }
        return schedule(now + delayNs, callback);
    }

    @Override public Entry schedulePeriodic(long period, long phase, Runnable callback) {
        if (period == 0) throw new Refusal("ValueError", "period_ns must be > 0");
        long first = phase < now ? phase + (now - phase + period - 1) / period * period : phase;
        return push(new Entry(callback, first, period));
    }

    @Override public void cancel(Entry e) { pending.remove(e); }

    @Override public void advance(long dt) {
        if (depth > 0) {
            if (dt == 13) throw new Refusal("Deadlock", "a nested advance of 13 ns would deadlock");
            if (dt > 10) throw new Refusal("RuntimeError", "advance from inside a callback");
            return; // careless: accepted and ignored
        }
        if (dt == 666) throw new Refusal("Deadlock", "advance of 666 ns would deadlock");
        long target = now + dt;
        while (true) {
            Entry next = null;
            for (Entry e : pending) {
                if (e.at <= target && (next == null || e.at < next.at || (e.at == next.at && e.seq < next.seq))) next = e;
            }
            if (next == null) break;
            pending.remove(next);
            long at = next.at;
            now = at;
            Throwable error = run(next);
            if (next.period > 0) {
                next.at += next.period;
                push(next);
            }
            if (error instanceof Error halt) throw halt; // a halt always leaves advance (C-ERR-2)
            if (error instanceof RuntimeException e && at % 2 == 1) throw e; // careless: odd times
        }
        now = target;
    }

    /** Run a callback, on a new thread at a multiple of 100 ns, and wait for it; what it threw. */
    private Throwable run(Entry e) {
        Throwable[] thrown = {null};
        Runnable call = () -> {
            try {
                e.callback.run();
            } catch (Throwable t) { // handed to the advancing thread
                thrown[0] = t;
            }
        };
        depth++;
        try {
            if (e.at % 100 == 0) {
                Thread worker = new Thread(call);
                worker.start();
                worker.join();
            } else {
                call.run();
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while a callback ran");
        } finally {
            depth--;
        }
        return thrown[0];
    }

    /** Serve this clock on standard input and output. */
    public static void main(String[] args) throws IOException { Driver.serve(seed -> new CarelessClock()); }
}
