package dev.simclock.driver;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** One action of an {@code on_fire} list (C-WIRE-4), checked with its request. */
record Action(Kind kind, long ns, String text, List<Action> onFire) {

    enum Kind { SCHEDULE, CANCEL, ADVANCE, RAISE, HALT }

    private static final int MAX_DEPTH = 200;

    /** Check a whole {@code on_fire} list: a bad time anywhere refuses the whole request. */
    static List<Action> parseList(JsonNode list) {
        return parseList(list, 0);
    }

    private static List<Action> parseList(JsonNode list, int depth) {
        List<Action> out = new ArrayList<>();
        if (list == null || list.isNull()) {
            return out;
        }
        if (!list.isArray()) {
            throw Refusal.own("bad_request", "on_fire must be a list of actions, got " + Wire.show(list));
        }
        if (depth > MAX_DEPTH) {
            throw Refusal.own("bad_request", "on_fire is nested deeper than " + MAX_DEPTH + " levels");
        }
        for (JsonNode item : list) {
            if (!item.isObject()) {
                throw Refusal.own("bad_request", "an on_fire action must be an object, got " + Wire.show(item));
            }
            String what = Wire.string(item, "do");
            switch (what) {
                case "schedule" -> out.add(new Action(Kind.SCHEDULE, Wire.u64(item, "delay_ns", Wire.U64_MAX), null,
                        parseList(item.get("on_fire"), depth + 1)));
                case "cancel" -> out.add(new Action(Kind.CANCEL, 0, Wire.string(item, "entry"), List.of()));
                case "advance" -> out.add(new Action(Kind.ADVANCE, Wire.u64(item, "dt_ns", Wire.U64_MAX), null,
                        List.of()));
                case "raise" -> {
                    JsonNode m = item.get("message");
                    out.add(new Action(Kind.RAISE, 0, m != null && m.isTextual() ? m.asText() : "raised", List.of()));
                }
                case "halt" -> out.add(new Action(Kind.HALT, 0, null, List.of()));
                default -> throw Refusal.own("bad_request", "unknown action do=\"" + what
                        + "\"; expected schedule, cancel, advance, raise or halt");
            }
        }
        return out;
    }
}
