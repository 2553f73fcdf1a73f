package dev.simclock.driver;

/** A clock's random streams (C-RNG-1..4), one per normalised label path. */
public interface RandomStreams {

    /**
     * The next {@code n} raw 64-bit outputs (unsigned) of the stream at {@code path}, a normalised label path such
     * as {@code "/"} or {@code "/sensors/imu0"} (the kit checks and joins the labels, C-RNG-3); a stream goes on
     * where its last draw stopped.
     */
    long[] draw(String path, int n);
}
