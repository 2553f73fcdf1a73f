package dev.simclock.driver;

/**
 * Feature {@code rate} (C-X-RATE): a timer at {@code num/den} Hz on the grid {@code phase + ceil(k*10**9*den/num)}.
 *
 * @param <H> the clock's handle of a scheduled entry
 */
public interface RateSchedule<H> {

    /** {@code num} and {@code den} unsigned; a zero part or a rate above 10**9 Hz is a ValueError. */
    H scheduleRate(long num, long den, long phaseNs, Runnable callback);
}
