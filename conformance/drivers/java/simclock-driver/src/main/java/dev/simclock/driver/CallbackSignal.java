package dev.simclock.driver;

/** What a callback throws for the {@code raise} and {@code halt} actions of {@code on_fire} (C-WIRE-4). */
public final class CallbackSignal {
    private CallbackSignal() {}

    /** {@code {do:"raise"}}: an ordinary error, which the clock must isolate (C-ERR-1). */
    public static final class Raised extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Raised(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * {@code {do:"halt"}}: Java's equivalent of Python's {@code BaseException}, an {@link Error}, which the clock
     * lets out of {@code advance} (C-ERR-2).
     */
    public static final class Halt extends Error {
        private static final long serialVersionUID = 1L;

        final String entry;
        final long atNs;

        Halt(String entry, long atNs) {
            super("entry " + entry + " halted the advance", null, false, false);
            this.entry = entry;
            this.atNs = atNs;
        }
    }

    /** The first throwable of type {@code type} in {@code t}'s cause chain, or null. */
    static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }
}
