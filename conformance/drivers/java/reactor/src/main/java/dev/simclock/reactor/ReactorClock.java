package dev.simclock.reactor;

import dev.simclock.driver.Driver;
import dev.simclock.driver.RandomStreams;
import dev.simclock.driver.SimClockBackend;
import java.io.IOException;
import java.lang.reflect.Field;
import java.math.BigInteger;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * Reactor's {@link VirtualTimeScheduler} as a simclock backend, mapped as a Reactor user would: one wire ns is one
 * virtual ns, {@code schedule(task, at - now, NANOSECONDS)}, {@code schedulePeriodically(task, first - now, period,
 * NANOSECONDS)}, {@code Disposable.dispose()}, {@code advanceTimeBy(Duration.ofNanos(dt))}. Every time semantic is
 * the scheduler's; Reactor's times are signed {@code long} ns, so a time above {@code 2**63-1} is refused here.
 */
public final class ReactorClock implements SimClockBackend<Disposable> {
    private static final Field QUEUE = queueField();
    private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();

    private static Field queueField() {
        try { // the scheduler's task queue is package-private: read its size for `stored` (C-CAN-4)
            Field f = VirtualTimeScheduler.class.getDeclaredField("queue");
            f.setAccessible(true);
            return f;
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("this reactor-test has no VirtualTimeScheduler.queue", e);
        }
    }

    private static long signed(String name, long ns) { // Reactor's time is a signed long
        if (ns < 0) throw new IllegalArgumentException(name + " = " + Long.toUnsignedString(ns) + " ns is above 2**63-1,"
                + " the largest time Reactor's virtual clock (a signed long of ns) can be given");
        return ns;
    }

    @Override public long nowNs() { return scheduler.now(TimeUnit.NANOSECONDS); }

    @Override public Disposable schedule(long atNs, Runnable callback) {
        return scheduler.schedule(callback, signed("at_ns", atNs) - nowNs(), TimeUnit.NANOSECONDS);
    }

    @Override public Disposable scheduleAfter(long delayNs, Runnable callback) {
        return scheduler.schedule(callback, signed("delay_ns", delayNs), TimeUnit.NANOSECONDS);
    }

    @Override public Disposable schedulePeriodic(long periodNs, long phaseNs, Runnable callback) {
        long period = signed("period_ns", periodNs), phase = signed("phase_ns", phaseNs), now = nowNs();
        // Reactor has no phase: start at the first grid point phase + k*period at or after now (C-PER-1).
        long first = phase >= now || period <= 0 ? phase : phase + ((now - phase + period - 1) / period) * period;
        return scheduler.schedulePeriodically(callback, first - now, period, TimeUnit.NANOSECONDS);
    }

    @Override public void cancel(Disposable handle) { handle.dispose(); }

    @Override public void advance(long dtNs) { scheduler.advanceTimeBy(Duration.ofNanos(signed("dt_ns", dtNs))); }

    @Override public long stored() {
        try {
            return ((Collection<?>) QUEUE.get(scheduler)).size();
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override public String name() {
        return "reactor-test VirtualTimeScheduler " + VirtualTimeScheduler.class.getPackage().getImplementationVersion();
    }

    @Override public Optional<RandomStreams> randomStreams(BigInteger seed) { return Optional.empty(); } // Reactor has none

    /** Serve a fresh {@link VirtualTimeScheduler} per protocol clock on standard input and output. */
    public static void main(String[] args) throws IOException {
        Driver.serve(seed -> new ReactorClock());
    }
}
