package dev.simclock.example;

import dev.simclock.driver.Driver;
import dev.simclock.driver.SimClockBackend;
import java.io.IOException;
import java.math.BigInteger;
import java.util.Comparator;
import java.util.PriorityQueue;

/** The smallest conforming clock on the kit: the required methods only, no optional feature. */
public final class MinimalClock implements SimClockBackend<MinimalClock.Entry> {
    /** A pending firing; {@code period} is null for a one-shot. */
    public static final class Entry {
        final Runnable callback;
        final BigInteger period;
        BigInteger at;
        long seq;
        boolean queued, cancelled;
        Entry(Runnable callback, BigInteger period) { this.callback = callback; this.period = period; }
    }

    private final PriorityQueue<Entry> heap =
            new PriorityQueue<>(Comparator.comparing((Entry e) -> e.at).thenComparingLong(e -> e.seq));
    private long now, seq, dead; // Invariant: dead = cancelled entries still in the heap
    private boolean advancing;
    private static BigInteger u(long v) { return new BigInteger(Long.toUnsignedString(v)); }

    private Entry push(Entry e, BigInteger at) { e.at = at; e.seq = seq++; e.queued = true; heap.add(e); return e; }
    @Override public long nowNs() { return now; }
    @Override public long stored() { return heap.size(); }
    @Override public Entry schedule(long atNs, Runnable callback) {
        if (Long.compareUnsigned(atNs, now) < 0) throw new IllegalArgumentException("at_ns is in the past");
        return push(new Entry(callback, null), u(atNs));
    }

    @Override public Entry scheduleAfter(long delayNs, Runnable callback) { // exact past 2**64-1 too
        return push(new Entry(callback, null), u(now).add(u(delayNs)));
    }

    @Override public Entry schedulePeriodic(long periodNs, long phaseNs, Runnable callback) {
        if (periodNs == 0) throw new IllegalArgumentException("period_ns must be > 0");
        BigInteger period = u(periodNs), phase = u(phaseNs), late = u(now).subtract(phase);
        BigInteger k = late.signum() <= 0 ? BigInteger.ZERO : late.add(period).subtract(BigInteger.ONE).divide(period);
        return push(new Entry(callback, period), phase.add(k.multiply(period)));
    }

    @Override public void cancel(Entry e) {
        if (e.queued && !e.cancelled) dead++;
        e.cancelled = true;
        compact();
    }

    private void compact() { // C-CAN-4: tombstones <= 2*live + 1024, after a cancel and after firings
        if (heap.size() > 2 * (heap.size() - dead) + 64) { heap.removeIf(x -> x.cancelled); dead = 0; }
    }

    @Override public void advance(long dtNs) {
        if (advancing) throw new IllegalStateException("advance() from inside a callback");
        long target = now + dtNs;
        if (Long.compareUnsigned(target, now) < 0) throw new IllegalArgumentException("now would pass 2**64-1");
        advancing = true;
        try {
            while (!heap.isEmpty() && heap.peek().at.compareTo(u(target)) <= 0) {
                Entry e = heap.poll();
                e.queued = false;
                if (e.cancelled) { dead--; continue; }
                now = e.at.longValue();
                try {
                    e.callback.run();
                } catch (RuntimeException isolated) { // an Error (the halt) goes on up
                } finally {
                    if (e.period != null && !e.cancelled) push(e, e.at.add(e.period));
                }
            }
            now = target;
        } finally {
            advancing = false;
            compact();
        }
    }
    /** Serve this clock on standard input and output. */
    public static void main(String[] args) throws IOException { Driver.serve(seed -> new MinimalClock()); }
}
