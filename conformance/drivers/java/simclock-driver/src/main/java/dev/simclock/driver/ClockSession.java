package dev.simclock.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One protocol clock: the author's clock plus what the wire needs around it (entry ids, the firing records).
 *
 * <p>The session only translates and records (C-WIRE-3, C-WIRE-4): each {@code on_fire} list becomes a
 * {@link Runnable} that records its invocation in {@code fired} (with {@code now} as the callback reads it), performs
 * its actions through the clock's own API, and, when it ends by throwing an ordinary exception, lists that in
 * {@code failures} before rethrowing it for the clock to isolate or not.
 *
 * @param <H> the clock's handle type
 */
final class ClockSession<H> {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    /** One entry id and what the clock returned for it. */
    private final class Entry {
        H handle; // null while the clock's schedule call has not returned
        long children; // the next child number (C-WIRE-4: counted over all firings)
    }

    final SimClockBackend<H> clock;
    private final Optional<RandomStreams> streams;
    private final Map<String, Entry> entries = new HashMap<>(); // every id this clock ever accepted
    ArrayNode fired = JSON.arrayNode();
    ArrayNode failures = JSON.arrayNode();

    ClockSession(SimClockBackend<H> clock, Optional<RandomStreams> streams) {
        this.clock = clock;
        this.streams = streams;
    }

    /** The observation (C-WIRE-3): {@code now_ns}, {@code next_event_ns} (feature peek) and {@code stored}. */
    void observe(ObjectNode reply) {
        reply.put("now_ns", Long.toUnsignedString(clock.nowNs()));
        if (clock instanceof NextEvent peek) {
            var next = peek.nextEventNs();
            if (next.isPresent()) {
                reply.put("next_event_ns", next.get().toString());
            } else {
                reply.putNull("next_event_ns");
            }
        }
        reply.put("stored", Long.toUnsignedString(clock.stored()));
    }

    boolean has(String id) {
        return entries.containsKey(id);
    }

    /** The handle of a known entry; {@code bad_request} for an unknown one. */
    H handle(String id) {
        Entry e = entries.get(id);
        if (e == null) {
            throw new Refusal("bad_request", "unknown entry \"" + id + "\"");
        }
        if (e.handle == null) {
            throw new Refusal("internal", "entry \"" + id + "\" has no handle: the clock's schedule call never returned");
        }
        return e.handle;
    }

    /** A top-level schedule request: the clock's call, undone from the id table if the clock refuses it. */
    interface Scheduler<H> {
        H call(Runnable callback);
    }

    void add(String id, List<Action> onFire, Scheduler<H> how) {
        Entry e = new Entry();
        // Registered before the call: a clock may run the callback from inside it.
        entries.put(id, e);
        try {
            e.handle = how.call(callback(id, onFire));
        } catch (RuntimeException | Error t) {
            entries.remove(id);
            throw t;
        }
    }

    boolean hasStreams() {
        return streams.isPresent();
    }

    long[] draw(String path, int n) {
        return streams.orElseThrow().draw(path, n);
    }

    private Runnable callback(String id, List<Action> onFire) {
        return () -> run(id, onFire);
    }

    private void run(String id, List<Action> onFire) {
        long at = clock.nowNs();
        ObjectNode record = fired.addObject();
        record.put("entry", id);
        record.put("now_ns", Long.toUnsignedString(at));
        try {
            for (Action a : onFire) {
                switch (a.kind()) {
                    case SCHEDULE -> scheduleChild(id, a);
                    case CANCEL -> {
                        Entry target = entries.get(a.text());
                        if (target != null && target.handle != null) {
                            clock.cancel(target.handle);
                        }
                    }
                    case ADVANCE -> {
                        try {
                            clock.advance(a.ns());
                        } catch (RuntimeException refused) {
                            // An error a callback threw inside the nested advance is not the clock's refusal.
                            if (CallbackSignal.find(refused, CallbackSignal.Raised.class) != null) {
                                throw refused;
                            }
                            record.put("nested", Refusal.kindOf(refused));
                        }
                    }
                    case RAISE -> throw new CallbackSignal.Raised(a.text());
                    case HALT -> throw new CallbackSignal.Halt(id, at);
                }
            }
        } catch (RuntimeException error) {
            ObjectNode failure = failures.addObject();
            failure.put("entry", id);
            failure.put("at_ns", Long.toUnsignedString(at));
            failure.put("message", error instanceof CallbackSignal.Raised ? error.getMessage() : Refusal.describe(error));
            throw error;
        }
    }

    private void scheduleChild(String parentId, Action a) {
        Entry parent = entries.get(parentId);
        String child = parentId + "." + parent.children;
        add(child, a.onFire(), cb -> clock.scheduleAfter(a.ns(), cb));
        parent.children++; // a schedule that fails takes no number
    }

    /** Hand over the records of the callbacks that ran since the last call, and start new lists. */
    ArrayNode[] takeRecords() {
        ArrayNode[] out = {fired, failures};
        fired = JSON.arrayNode();
        failures = JSON.arrayNode();
        return out;
    }

    static boolean isEmpty(JsonNode list) {
        return list.size() == 0;
    }
}
