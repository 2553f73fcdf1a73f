package dev.simclock.driver;

/**
 * A refused request (C-WIRE-5): {@code kind} is the wire's {@code error}, one of {@code TypeError},
 * {@code ValueError}, {@code RuntimeError}, {@code bad_request}, {@code unsupported} or {@code internal}.
 */
public final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private static final java.util.Set<String> WIRE_KINDS =
            java.util.Set.of("TypeError", "ValueError", "RuntimeError", "bad_request", "unsupported", "internal");

    private final String kind;
    private final boolean own;

    /**
     * A clock's refusal of kind {@code kind}: {@code TypeError}, {@code ValueError}, {@code RuntimeError}, or a kind
     * of the adapter's own (say {@code "Deadlock"}), which the wire reports as {@code internal}. The reply's message
     * is {@code "KIND: message"} (docs/kits.md, "What a kit reports").
     */
    public Refusal(String kind, String message) {
        this(kind, message, false);
    }

    private Refusal(String kind, String message, boolean own) {
        super(message, null, false, false);
        this.kind = kind;
        this.own = own;
    }

    /** A refusal of the kit's own (a malformed request): its message is the text alone. */
    static Refusal own(String kind, String message) {
        return new Refusal(kind, message, true);
    }

    /** The error's own name: the wire's {@code error} field unless it is an adapter's own kind. */
    public String kind() {
        return kind;
    }

    /** The wire kind of anything a clock threw: its Java type mapped as {@link SimClockBackend} documents. */
    static String kindOf(Throwable t) {
        if (t instanceof Refusal r) {
            return WIRE_KINDS.contains(r.kind) ? r.kind : "internal";
        }
        if (t instanceof IllegalArgumentException || t instanceof ArithmeticException) {
            return "ValueError";
        }
        if (t instanceof IllegalStateException || t instanceof UnsupportedOperationException
                || t instanceof CallbackSignal.Raised) {
            return "RuntimeError";
        }
        return "internal";
    }

    /** The text of anything a clock or callback threw, without its name (what {@code failures} carries). */
    static String text(Throwable t) {
        String m = t.getMessage();
        return m == null ? name(t) : m;
    }

    /** {@code "Name: text"} of anything a clock threw (its own name first, as Python names an exception). */
    static String describe(Throwable t) {
        if (t instanceof Refusal r && r.own) {
            return t.getMessage();
        }
        String m = t.getMessage();
        return name(t) + (m == null ? "" : ": " + m);
    }

    private static String name(Throwable t) {
        if (t instanceof Refusal r) {
            return r.kind;
        }
        if (t instanceof CallbackSignal.Raised) {
            return "RuntimeError";
        }
        String simple = t.getClass().getSimpleName();
        return simple.isEmpty() ? t.getClass().getName() : simple;
    }
}
