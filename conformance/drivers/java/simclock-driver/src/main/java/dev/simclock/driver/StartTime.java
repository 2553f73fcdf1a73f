package dev.simclock.driver;

/** Feature {@code start_ns} (C-TIME-1): a clock that can start at a time other than 0. */
public interface StartTime {

    /** Called once, right after the factory made the clock and before anything else, when a start is given. */
    void startAt(long startNs);
}
