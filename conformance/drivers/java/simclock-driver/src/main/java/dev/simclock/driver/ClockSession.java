package dev.simclock.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One protocol clock: the author's clock plus what the wire needs around it (entry ids, the firing records).
 *
 * <p>The session only translates and records (C-WIRE-3, C-WIRE-4): each {@code on_fire} list becomes a
 * {@link Runnable} that records its invocation in {@code fired} (with {@code now} as the callback reads it), performs
 * its actions through the clock's own API, and, when it ends by throwing an ordinary exception, lists that in
 * {@code failures} before rethrowing it for the clock to isolate or not (an exception the clock then lets out of
 * {@code advance} leaves {@code failures}: it is the reply's error). Docs/kits.md, "What a kit reports", has the
 * rules. A clock may run callbacks on threads of its own: the records are changed under the session's lock, never
 * held while the clock runs.
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
    private final Map<String, Entry> entries = new ConcurrentHashMap<>(); // every id this clock ever accepted
    ArrayNode fired = JSON.arrayNode();
    ArrayNode failures = JSON.arrayNode();
    private List<Throwable> errors = new ArrayList<>(); // the exception of each failure, in order

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
            throw Refusal.own("bad_request", "unknown entry \"" + id + "\"");
        }
        if (e.handle == null) {
            throw Refusal.own("internal", "entry \"" + id + "\" has no handle: the clock's schedule call never returned");
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
        ObjectNode record;
        synchronized (this) {
            record = fired.addObject();
            record.put("entry", id);
            record.put("now_ns", Long.toUnsignedString(at));
        }
        try {
            for (Action a : onFire) {
                switch (a.kind()) {
                    case SCHEDULE -> scheduleChild(id, a, record);
                    case CANCEL -> {
                        Entry target = entries.get(a.text());
                        if (target != null && target.handle != null) {
                            clock.cancel(target.handle);
                        }
                    }
                    case ADVANCE -> {
                        RuntimeException failed = null;
                        String nested = "accepted";
                        try {
                            clock.advance(a.ns());
                        } catch (RuntimeException e) {
                            failed = e;
                            nested = Refusal.kindOf(e);
                            escaped(e); // a callback's error the clock let out is not one it isolated
                        }
                        synchronized (this) {
                            record.put("nested", nested);
                        }
                        // A RuntimeError (the refusal C-ADV-4 asks for) lets the callback go on; any other kind fails it.
                        if (failed != null && !nested.equals("RuntimeError")) {
                            throw failed;
                        }
                    }
                    case RAISE -> throw new CallbackSignal.Raised(a.text());
                    case HALT -> throw new CallbackSignal.Halt(id, at);
                }
            }
        } catch (RuntimeException error) {
            synchronized (this) {
                ObjectNode failure = failures.addObject();
                failure.put("entry", id);
                failure.put("at_ns", Long.toUnsignedString(at));
                failure.put("message", Refusal.text(error));
                errors.add(error);
            }
            throw error;
        }
    }

    private void scheduleChild(String parentId, Action a, ObjectNode record) {
        Entry parent = entries.get(parentId);
        long n;
        synchronized (this) {
            n = parent.children;
        }
        String child = parentId + "." + n;
        try {
            add(child, a.onFire(), cb -> clock.scheduleAfter(a.ns(), cb));
        } catch (RuntimeException refused) {
            if (!Refusal.kindOf(refused).equals("ValueError")) {
                throw refused; // another kind fails the callback
            }
            synchronized (this) {
                record.put("refused", "ValueError"); // the callback goes on; the child takes no number
            }
            return;
        }
        synchronized (this) {
            parent.children = n + 1;
        }
    }

    /** An exception the clock let out of one of its calls: if a callback threw it, it is no failure the clock isolated. */
    synchronized void escaped(Throwable error) {
        for (int i = errors.size() - 1; i >= 0; i--) {
            if (errors.get(i) == error) {
                failures.remove(i);
                errors.remove(i);
                return;
            }
        }
    }

    /** Hand over the records of the callbacks not yet reported, and start new lists. */
    synchronized ArrayNode[] takeRecords() {
        ArrayNode[] out = {fired, failures};
        fired = JSON.arrayNode();
        failures = JSON.arrayNode();
        errors = new ArrayList<>();
        return out;
    }

    static boolean isEmpty(JsonNode list) {
        return list.size() == 0;
    }
}
