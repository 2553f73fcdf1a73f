package dev.simclock.driver;

import java.math.BigInteger;

/** Makes one clock per {@code create} request. */
@FunctionalInterface
public interface ClockFactory {

    /** A new clock at time 0 for {@code seed} (any non-negative integer). */
    SimClockBackend<?> create(BigInteger seed);
}
