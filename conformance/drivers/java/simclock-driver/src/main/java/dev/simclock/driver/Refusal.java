package dev.simclock.driver;

/**
 * A refused request (C-WIRE-5): {@code kind} is the wire's {@code error}, one of {@code TypeError},
 * {@code ValueError}, {@code RuntimeError}, {@code bad_request}, {@code unsupported} or {@code internal}.
 */
public final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String kind;

    /** A refusal of the given wire kind. */
    public Refusal(String kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    /** The wire's {@code error} field. */
    public String kind() {
        return kind;
    }

    /** The wire kind of anything a clock threw: its Java type mapped as {@link SimClockBackend} documents. */
    static String kindOf(Throwable t) {
        if (t instanceof Refusal r) {
            return r.kind;
        }
        if (t instanceof IllegalArgumentException || t instanceof ArithmeticException) {
            return "ValueError";
        }
        if (t instanceof IllegalStateException || t instanceof UnsupportedOperationException) {
            return "RuntimeError";
        }
        return "internal";
    }

    /** A message for anything a clock threw. */
    static String describe(Throwable t) {
        if (t instanceof Refusal) {
            return t.getMessage();
        }
        String m = t.getMessage();
        return t.getClass().getName() + (m == null ? "" : ": " + m);
    }
}
