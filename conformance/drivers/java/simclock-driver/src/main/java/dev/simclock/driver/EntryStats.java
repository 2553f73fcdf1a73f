package dev.simclock.driver;

/**
 * Feature {@code stats} (C-X-STATS): how often an entry fired, skipped and overran.
 *
 * @param <H> the clock's handle of a scheduled entry
 */
public interface EntryStats<H> {

    /** The counts of one entry (unsigned). */
    record Counts(long fired, long skipped, long overruns) {}

    /** The counts of the entry behind {@code handle}, pending, fired or cancelled. */
    Counts stats(H handle);
}
