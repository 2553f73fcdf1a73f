package dev.simclock.driver;

import java.math.BigInteger;
import java.util.Optional;

/** Feature {@code peek} (C-X-PEEK): the time of the earliest live entry, without firing anything. */
public interface NextEvent {

    /**
     * The earliest live entry's time, or empty when nothing is pending. A {@link BigInteger}: an entry the clock
     * computed (a child at {@code now + delay}, a grid point) may lie beyond {@code 2**64-1}.
     */
    Optional<BigInteger> nextEventNs();
}
