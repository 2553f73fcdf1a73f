package dev.simclock.driver;

import java.math.BigInteger;
import java.util.Optional;

/**
 * One clock, as the conformance suite drives it (SPEC §1, §18): the one interface a backend author implements.
 *
 * <p>Every time, duration, period and phase is a {@code long} <em>read as unsigned</em> nanoseconds, so the whole
 * range {@code 0 .. 2**64-1} of the wire fits (use {@link Long#compareUnsigned}, {@link Long#toUnsignedString}).
 * The kit only translates: it checks the wire's integers, turns each {@code on_fire} list into a {@link Runnable}
 * and records what the clock does. Every time semantic (order, ties, past times, nesting, errors, re-arming) is the
 * clock's own.
 *
 * <p>Errors: throw {@link IllegalArgumentException} (or {@link ArithmeticException}) for a value the clock refuses,
 * which the wire reports as {@code ValueError}; {@link IllegalStateException} (or
 * {@link UnsupportedOperationException}) for a call refused in the clock's present state, reported as
 * {@code RuntimeError}. Any other exception is reported as {@code internal}.
 *
 * <p>Optional parts, each a feature of {@code hello} when the clock class implements it: {@link NextEvent}
 * ({@code peek}), {@link RateSchedule} ({@code rate}), {@link EntryStats} ({@code stats}), {@link StartTime}
 * ({@code start_ns}); random streams ({@code bits}) are the kit's unless {@link #randomStreams} says otherwise.
 *
 * @param <H> the clock's handle of a scheduled entry
 */
public interface SimClockBackend<H> {

    /** C-TIME-1, C-TIME-2: the current time (unsigned); during a callback, that entry's time (C-ADV-2). */
    long nowNs();

    /**
     * Schedule {@code callback} at {@code atNs} (unsigned); C-SCH-1 (a past time is a ValueError), C-TIE-1 (equal
     * times fire in push order).
     */
    H schedule(long atNs, Runnable callback);

    /**
     * Schedule {@code callback} {@code delayNs} after now: what a callback's {@code {do:"schedule"}} calls (C-ADV-3).
     *
     * <p>The default is {@code schedule(now + delay)} when that sum fits in 64 unsigned bits and an
     * {@link ArithmeticException} (so a ValueError, C-TIME-4) when it does not. A clock that keeps times beyond
     * {@code 2**64-1} (as the reference heap clock does) overrides it.
     */
    default H scheduleAfter(long delayNs, Runnable callback) {
        long at = nowNs() + delayNs;
        if (Long.compareUnsigned(at, delayNs) < 0) {
            throw new ArithmeticException("now + " + Long.toUnsignedString(delayNs) + " ns is past 2**64-1 ns");
        }
        return schedule(at, callback);
    }

    /**
     * C-PER-1..3: fire {@code callback} on the grid {@code phaseNs + k*periodNs}, from the first grid point at or
     * after now; the next firing is pushed after the callback returns or raises (C-PER-2).
     */
    H schedulePeriodic(long periodNs, long phaseNs, Runnable callback);

    /** C-CAN-1..3: never fails, repeating it does nothing, cancelling a fired entry is a no-op. */
    void cancel(H handle);

    /**
     * C-ADV-1..5: fire every live entry with {@code at <= now + dtNs} in {@code (at, seq)} order, then set now.
     *
     * <p>A callback's {@link RuntimeException} is isolated (C-ERR-1); an {@link Error} propagates out of this call
     * (C-ERR-2, the kit's {@code halt} is one); a call from inside a callback throws
     * {@link IllegalStateException} and changes nothing (C-ADV-4).
     */
    void advance(long dtNs);

    /** C-CAN-4: the entries the clock holds, cancelled ones still in memory (tombstones) included. */
    long stored();

    /** C-STEP-1: the clock's step; 1 for a pure event clock. */
    default long stepNs() {
        return 1;
    }

    /** The backend's name in {@code hello}. */
    default String name() {
        return getClass().getName();
    }

    /**
     * C-X-BITS, C-RNG-1..4: the clock's random streams. The default is the kit's {@link SimclockStreams}, exactly
     * simclock's; return your own {@link RandomStreams} to be judged on them, or {@link Optional#empty()} for none
     * ({@code draw} is then {@code unsupported}).
     */
    default Optional<RandomStreams> randomStreams(BigInteger seed) {
        return Optional.of(new SimclockStreams(seed));
    }
}
