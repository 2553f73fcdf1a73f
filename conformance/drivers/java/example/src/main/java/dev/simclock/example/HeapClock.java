package dev.simclock.example;

import dev.simclock.driver.Driver;
import dev.simclock.driver.EntryStats;
import dev.simclock.driver.NextEvent;
import dev.simclock.driver.RateSchedule;
import dev.simclock.driver.SimClockBackend;
import dev.simclock.driver.StartTime;
import java.io.IOException;
import java.math.BigInteger;
import java.util.Comparator;
import java.util.Optional;
import java.util.PriorityQueue;

/**
 * A reference heap clock on the driver kit (SPEC §1): entries keyed {@code (at, seq)} in a binary heap, lazy
 * cancellation with compaction, times the clock computes kept exactly as {@link BigInteger} (past 2**64-1 too).
 *
 * <p>Run it under the suite: {@code python -m simclock_conformance --driver -- java -cp ... dev.simclock.example.HeapClock}.
 */
public final class HeapClock implements SimClockBackend<HeapClock.Entry>, NextEvent, RateSchedule<HeapClock.Entry>,
        EntryStats<HeapClock.Entry>, StartTime {
    private static final BigInteger NS_PER_S = BigInteger.valueOf(1_000_000_000L);

    enum State { PENDING, RUNNING, CANCELLED, FIRED }

    /** One entry; a repeating one fires at {@code phase + ceil(k*step/num)} (C-PER-1: period = step/1). */
    public static final class Entry {
        final Runnable callback;
        final BigInteger phase, step, num; // null for a one-shot
        BigInteger at, k = BigInteger.ZERO;
        long seq, fired;
        State state = State.PENDING;

        Entry(Runnable callback, BigInteger phase, BigInteger step, BigInteger num) {
            this.callback = callback; this.phase = phase; this.step = step; this.num = num;
        }

        BigInteger time() { // C-PER-3, C-X-RATE: from the integer grid, never by adding periods
            return phase.add(k.multiply(step).add(num).subtract(BigInteger.ONE).divide(num));
        }
    }

    private final PriorityQueue<Entry> heap =
            new PriorityQueue<>(Comparator.comparing((Entry e) -> e.at).thenComparingLong(e -> e.seq));
    private long now, seq, dead; // Invariant: dead = heap items that are not PENDING
    private boolean running;

    private static BigInteger u(long v) { return new BigInteger(Long.toUnsignedString(v)); }

    @Override public long nowNs() { return now; }
    @Override public void startAt(long startNs) { now = startNs; }
    @Override public long stored() { return heap.size(); }
    @Override public String name() { return "simclock-java-heap"; }

    private Entry push(Entry e, BigInteger at) {
        e.at = at;
        e.seq = seq++; // C-TIE-1: equal times fire in push order
        heap.add(e);
        return e;
    }

    @Override public Entry schedule(long atNs, Runnable callback) {
        if (Long.compareUnsigned(atNs, now) < 0) { // C-SCH-1
            throw new IllegalArgumentException("at_ns=" + Long.toUnsignedString(atNs) + " is in the past (now is "
                    + Long.toUnsignedString(now) + " ns)");
        }
        return push(new Entry(callback, null, null, null), u(atNs));
    }

    @Override public Entry scheduleAfter(long delayNs, Runnable callback) {
        return push(new Entry(callback, null, null, null), u(now).add(u(delayNs)));
    }

    @Override public Entry schedulePeriodic(long periodNs, long phaseNs, Runnable callback) {
        if (periodNs == 0) throw new IllegalArgumentException("period_ns must be > 0 ns, got 0");
        return repeating(new Entry(callback, u(phaseNs), u(periodNs), BigInteger.ONE));
    }

    @Override public Entry scheduleRate(long num, long den, long phaseNs, Runnable callback) {
        if (den == 0) throw new IllegalArgumentException("rate_hz denominator must be > 0, got 0");
        if (num == 0) throw new IllegalArgumentException("rate_hz must be > 0 Hz, got 0/" + Long.toUnsignedString(den));
        if (u(num).compareTo(NS_PER_S.multiply(u(den))) > 0) {
            throw new IllegalArgumentException("rate_hz must be <= 1e9 Hz (one firing per ns at most)");
        }
        return repeating(new Entry(callback, u(phaseNs), NS_PER_S.multiply(u(den)), u(num)));
    }

    private Entry repeating(Entry e) { // C-PER-1: the first grid point at or after now
        BigInteger elapsed = u(now).subtract(e.phase);
        if (elapsed.signum() > 0) e.k = elapsed.subtract(BigInteger.ONE).multiply(e.num).divide(e.step).add(BigInteger.ONE);
        return push(e, e.time());
    }

    @Override public void cancel(Entry e) { // C-CAN-1..3; a running periodic is just not re-armed
        if (e.state == State.PENDING) { dead++; compact(); }
        if (e.state == State.PENDING || e.state == State.RUNNING) e.state = State.CANCELLED;
    }

    private void compact() { // C-CAN-4: at most 2*live + 64 heap items after a call
        if (heap.size() > 2 * (heap.size() - dead) + 64) { heap.removeIf(e -> e.state != State.PENDING); dead = 0; }
    }

    @Override public Optional<BigInteger> nextEventNs() { // C-X-PEEK; tombstones at the top leave on the way
        while (!heap.isEmpty() && heap.peek().state != State.PENDING) { heap.poll(); dead--; }
        return heap.isEmpty() ? Optional.empty() : Optional.of(heap.peek().at);
    }

    @Override public Counts stats(Entry e) { return new Counts(e.fired, 0, 0); }

    @Override public void advance(long dtNs) {
        if (running) throw new IllegalStateException("advance() called from inside a callback"); // C-ADV-4
        long target = now + dtNs;
        if (Long.compareUnsigned(target, now) < 0) throw new IllegalArgumentException("advance would take now past 2**64-1 ns");
        BigInteger limit = u(target);
        running = true;
        try {
            while (!heap.isEmpty() && heap.peek().at.compareTo(limit) <= 0) { // C-ADV-1, C-ADV-3
                Entry e = heap.poll();
                if (e.state != State.PENDING) { dead--; continue; }
                now = e.at.longValue(); // C-ADV-2
                e.state = e.num == null ? State.FIRED : State.RUNNING;
                e.fired++;
                try {
                    e.callback.run();
                } catch (RuntimeException isolated) { // C-ERR-1; an Error propagates (C-ERR-2)
                } finally {
                    if (e.state == State.RUNNING) { e.state = State.PENDING; e.k = e.k.add(BigInteger.ONE); push(e, e.time()); } // C-PER-2
                }
            }
            now = target;
        } finally {
            running = false;
            compact();
        }
    }

    /** Serve this clock on standard input and output. */
    public static void main(String[] args) throws IOException {
        Driver.serve(seed -> new HeapClock());
    }
}
