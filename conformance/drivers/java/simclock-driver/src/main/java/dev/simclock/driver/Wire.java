package dev.simclock.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/** The wire's integers, strings and label paths (C-WIRE-2, C-RNG-3). */
public final class Wire {
    /** {@code 2**64 - 1} as a {@code long} read as unsigned. */
    public static final long U64_MAX = -1L;

    private static final int MAX_SEED_DIGITS = 4000;

    private Wire() {}

    /** How a value is named in a message. */
    static String show(JsonNode v) {
        if (v == null || v.isMissingNode()) {
            return "nothing";
        }
        if (v.isNumber()) {
            return "the JSON number " + clip(v.asText());
        }
        if (v.isTextual()) {
            return "the string \"" + clip(v.asText()) + "\"";
        }
        if (v.isArray()) {
            return "an array";
        }
        if (v.isObject()) {
            return "an object";
        }
        return v.toString();
    }

    private static String clip(String s) {
        return s.length() > 60 ? s.substring(0, 60) + "..." : s;
    }

    private static boolean digits(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    /**
     * A protocol integer {@code name} of {@code obj}: a JSON string of {@code [0-9]+} at most {@code max} (unsigned).
     * Missing: {@code bad_request}; anything but a digit string, a JSON number included: {@code TypeError} (C-TIME-3
     * in its wire form); larger than {@code max}: {@code ValueError} (C-TIME-4).
     */
    public static long u64(JsonNode obj, String name, long max) {
        JsonNode v = obj.get(name);
        if (v == null) {
            throw Refusal.own("bad_request", "missing field " + name);
        }
        return u64Value(v, name, max);
    }

    static long u64Value(JsonNode v, String name, long max) {
        if (!v.isTextual() || !digits(v.asText())) {
            throw Refusal.own("TypeError", name + " must be a string of decimal digits [0-9]+, got " + show(v)
                    + "; send integers as strings, e.g. \"1000\"");
        }
        String s = v.asText();
        // Leading zeros are digits too: strip them before judging the size.
        String t = s.replaceFirst("^0+(?=.)", "");
        if (t.length() > 20 || new BigInteger(t).compareTo(new BigInteger(Long.toUnsignedString(max))) > 0) {
            throw Refusal.own("ValueError", name + " = " + clip(s) + " is larger than " + Long.toUnsignedString(max)
                    + ", the largest value this backend keeps exactly");
        }
        return Long.parseUnsignedLong(t);
    }

    /** A seed: a digit string of any size (up to 4000 digits). */
    static BigInteger bigint(JsonNode obj, String name) {
        JsonNode v = obj.get(name);
        if (v == null) {
            throw Refusal.own("bad_request", "missing field " + name);
        }
        if (!v.isTextual() || !digits(v.asText())) {
            throw Refusal.own("TypeError", name + " must be a string of decimal digits [0-9]+, got " + show(v));
        }
        if (v.asText().length() > MAX_SEED_DIGITS) {
            throw Refusal.own("ValueError", name + " has " + v.asText().length() + " digits; this driver keeps at most "
                    + MAX_SEED_DIGITS);
        }
        return new BigInteger(v.asText());
    }

    /** A string field (an op, a clock or entry id): missing or not a string is {@code bad_request}. */
    static String string(JsonNode obj, String name) {
        JsonNode v = obj.get(name);
        if (v == null) {
            throw Refusal.own("bad_request", "missing field " + name);
        }
        if (!v.isTextual()) {
            throw Refusal.own("bad_request", name + " must be a string, got " + show(v));
        }
        return v.asText();
    }

    /**
     * The normalised path of a list of labels (C-RNG-3): {@code ["a","b"]}, {@code ["a/b"]} and {@code ["/a/b"]} are
     * all {@code "/a/b"}, {@code []} is {@code "/"}. A label is a string (else {@code TypeError}) whose segments,
     * after one optional leading {@code /}, are non-empty and use only {@code [A-Za-z0-9_.-]} (else
     * {@code ValueError}).
     */
    public static String labelPath(JsonNode labels) {
        List<String> segments = new ArrayList<>();
        for (JsonNode label : labels) {
            if (!label.isTextual()) {
                throw Refusal.own("TypeError", "label must be a string, got " + show(label));
            }
            String s = label.asText();
            String body = s.startsWith("/") ? s.substring(1) : s;
            for (String seg : body.split("/", -1)) {
                if (!validSegment(seg)) {
                    throw Refusal.own("ValueError", "label \"" + clip(s) + "\" is malformed: segments must be non-empty"
                            + " and use only [A-Za-z0-9_.-], e.g. \"/sensors/imu0/noise\"");
                }
                segments.add(seg);
            }
        }
        return "/" + String.join("/", segments);
    }

    private static boolean validSegment(String seg) {
        if (seg.isEmpty()) {
            return false;
        }
        for (int i = 0; i < seg.length(); i++) {
            char c = seg.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
                    || c == '.' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
