package dev.simclock.driver;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The simclock wire protocol (SPEC §18) served over a {@link ClockFactory}: one JSON request per line in, one reply
 * per line out, flushed (C-WIRE-1).
 *
 * <p>Use {@link #serve(ClockFactory)} from {@code main}. The features of {@code hello} follow from the optional
 * interfaces the clock class implements; the kit finds them by asking the factory for one clock (seed 0), once,
 * before the first reply that needs them.
 */
public final class Driver {
    private static final List<String> CLOCK_OPS = List.of("create", "drop", "schedule", "schedule_periodic",
            "schedule_rate", "cancel", "advance", "observe", "stats", "step_ns", "draw");
    private static final int MAX_DRAW = 1 << 20;

    private final ClockFactory factory;
    private final ObjectMapper json = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private final Map<String, ClockSession<?>> clocks = new HashMap<>();
    private List<String> features;
    private String backendName;
    private boolean quit;

    /** A driver over {@code factory}; {@link #handle} answers one request. */
    public Driver(ClockFactory factory) {
        this.factory = factory;
    }

    /**
     * Serve the protocol on standard input and output until {@code quit} or the end of input. While it runs,
     * {@code System.out} goes to standard error, so that nothing but replies reaches the suite (C-WIRE-1).
     */
    public static void serve(ClockFactory factory) throws IOException {
        PrintStream original = System.out;
        OutputStream stdout = new FileOutputStream(FileDescriptor.out);
        System.setOut(System.err);
        try {
            new Driver(factory).serve(System.in, stdout);
        } finally {
            System.setOut(original);
        }
    }

    /** Serve the protocol on {@code in} and {@code out} until {@code quit} or the end of {@code in}. */
    public void serve(InputStream in, OutputStream out) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        Writer writer = new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null) {
            writer.write(handle(line));
            writer.write('\n');
            writer.flush();
            if (quit) {
                return;
            }
        }
    }

    /** The reply (one line of JSON, no newline) to one request line. */
    public String handle(String line) {
        ObjectNode reply;
        try {
            reply = reply(line);
        } catch (RuntimeException | StackOverflowError e) {
            reply = json.createObjectNode().put("ok", false).put("error", "internal")
                    .put("message", "the driver failed: " + Refusal.describe(e));
        }
        try {
            return json.writeValueAsString(reply);
        } catch (JsonProcessingException e) {
            return "{\"ok\":false,\"error\":\"internal\",\"message\":\"the reply could not be written\"}";
        }
    }

    /** True once {@code quit} was answered. */
    public boolean quitting() {
        return quit;
    }

    private ObjectNode reply(String line) {
        JsonNode req;
        try {
            req = json.readTree(line);
        } catch (JsonProcessingException e) {
            return error("bad_request", "the request is not one JSON object: " + e.getOriginalMessage());
        }
        if (req == null || !req.isObject()) {
            return error("bad_request", "the request must be a JSON object");
        }
        ClockSession<?> clock = null;
        try {
            String op = Wire.string(req, "op");
            if (op.equals("hello")) {
                return hello(req);
            }
            if (op.equals("quit")) {
                quit = true;
                return ok();
            }
            if (!CLOCK_OPS.contains(op)) {
                throw Refusal.own("bad_request", "unknown op \"" + op + "\"");
            }
            String id = Wire.string(req, "clock");
            clock = clocks.get(id);
            if (op.equals("create")) {
                if (clock != null) {
                    throw Refusal.own("bad_request", "clock \"" + id + "\" is in use; drop it first or pick another id");
                }
                return create(req, id);
            }
            if (clock == null) {
                throw Refusal.own("bad_request", "unknown clock \"" + id + "\"");
            }
            ObjectNode reply = perform(clock, op, req);
            if (op.equals("drop")) {
                clocks.remove(id);
            }
            return reply;
        } catch (RuntimeException | Error e) {
            CallbackSignal.Halt halt = CallbackSignal.find(e, CallbackSignal.Halt.class);
            if (halt != null) {
                // A halt left a call other than advance (a clock that runs callbacks there).
                ObjectNode r = json.createObjectNode().put("ok", false).put("error", "halted").put("entry", halt.entry)
                        .put("at_ns", Long.toUnsignedString(halt.atNs));
                if (clock != null) {
                    carry(clock, req.path("op").asText(), r);
                    clock.observe(r);
                }
                return r;
            }
            if (e instanceof Error err && !(e instanceof StackOverflowError)) {
                throw err;
            }
            ObjectNode r = error(Refusal.kindOf(e), Refusal.describe(e));
            if (clock != null) {
                clock.escaped(e); // a callback's error the clock let out of the call: not an isolated failure
                carry(clock, req.path("op").asText(), r);
                clock.observe(r); // C-WIRE-3: a refusal carries the observation too
            }
            return r;
        }
    }

    private ObjectNode ok() {
        return json.createObjectNode().put("ok", true);
    }

    private ObjectNode error(String kind, String message) {
        return json.createObjectNode().put("ok", false).put("error", kind).put("message", message);
    }

    private void probe() {
        if (features != null) {
            return;
        }
        SimClockBackend<?> sample = factory.create(BigInteger.ZERO);
        List<String> f = new ArrayList<>();
        if (sample instanceof NextEvent) {
            f.add("peek");
        }
        if (sample instanceof RateSchedule) {
            f.add("rate");
        }
        if (sample instanceof EntryStats) {
            f.add("stats");
        }
        if (sample instanceof StartTime) {
            f.add("start_ns");
        }
        if (sample.randomStreams(BigInteger.ZERO).isPresent()) {
            f.add("bits");
        }
        features = List.copyOf(f);
        backendName = sample.name();
    }

    private ObjectNode hello(JsonNode req) {
        JsonNode p = req.get("protocol");
        if (p == null || !p.isTextual() || !p.asText().equals("1")) {
            throw Refusal.own("unsupported", "this driver speaks protocol \"1\" only, got " + Wire.show(p));
        }
        probe();
        ObjectNode r = ok().put("protocol", "1").put("backend", backendName);
        ArrayNode f = r.putArray("features");
        features.forEach(f::add);
        return r;
    }

    private ObjectNode create(JsonNode req, String id) {
        BigInteger seed = Wire.bigint(req, "seed");
        Long start = null;
        if (req.has("start_ns")) {
            start = Wire.u64(req, "start_ns", Wire.U64_MAX);
        }
        SimClockBackend<?> backend = factory.create(seed);
        if (start != null) {
            if (!(backend instanceof StartTime s)) {
                throw Refusal.own("unsupported", "start_ns: " + backend.name() + " has no start time (feature start_ns)");
            }
            s.startAt(start);
        }
        ClockSession<?> session = new ClockSession<>(backend, backend.randomStreams(seed));
        ObjectNode r = ok();
        session.observe(r);
        clocks.put(id, session);
        return r;
    }

    private static String newEntry(ClockSession<?> c, JsonNode req) {
        String id = Wire.string(req, "entry");
        if (id.isEmpty() || id.contains(".")) {
            throw Refusal.own("bad_request", "entry id \"" + id + "\" must be non-empty without '.'");
        }
        if (c.has(id)) {
            throw Refusal.own("bad_request", "entry id \"" + id + "\" is already used by this clock");
        }
        return id;
    }

    private static void unsupported(ClockSession<?> c, String op, String feature) {
        throw Refusal.own("unsupported", op + ": " + c.clock.name() + " does not offer it (feature " + feature + ")");
    }

    private <H> ObjectNode perform(ClockSession<H> c, String op, JsonNode req) {
        SimClockBackend<H> clock = c.clock;
        ObjectNode r = ok();
        switch (op) {
            case "drop", "observe" -> { }
            case "schedule" -> {
                String id = newEntry(c, req);
                long at = Wire.u64(req, "at_ns", Wire.U64_MAX);
                List<Action> actions = Action.parseList(req.get("on_fire"));
                c.add(id, actions, cb -> clock.schedule(at, cb));
            }
            case "schedule_periodic" -> {
                String id = newEntry(c, req);
                long period = Wire.u64(req, "period_ns", Wire.U64_MAX);
                long phase = req.has("phase_ns") ? Wire.u64(req, "phase_ns", Wire.U64_MAX) : 0;
                List<Action> actions = Action.parseList(req.get("on_fire"));
                c.add(id, actions, cb -> clock.schedulePeriodic(period, phase, cb));
            }
            case "schedule_rate" -> {
                if (!(clock instanceof RateSchedule)) {
                    unsupported(c, op, "rate");
                }
                @SuppressWarnings("unchecked")
                RateSchedule<H> rates = (RateSchedule<H>) clock;
                String id = newEntry(c, req);
                JsonNode rate = req.get("rate_hz");
                if (rate == null) {
                    throw Refusal.own("bad_request", "missing field rate_hz");
                }
                if (!rate.isArray() || rate.size() != 2) {
                    throw Refusal.own("TypeError", "rate_hz must be a list [NUM, DEN] of two decimal strings, got "
                            + Wire.show(rate));
                }
                long num = Wire.u64Value(rate.get(0), "rate_hz numerator", Wire.U64_MAX);
                long den = Wire.u64Value(rate.get(1), "rate_hz denominator", Wire.U64_MAX);
                long phase = req.has("phase_ns") ? Wire.u64(req, "phase_ns", Wire.U64_MAX) : 0;
                List<Action> actions = Action.parseList(req.get("on_fire"));
                c.add(id, actions, cb -> rates.scheduleRate(num, den, phase, cb));
            }
            case "cancel" -> clock.cancel(c.handle(Wire.string(req, "entry")));
            case "advance" -> {
                return advance(c, req);
            }
            case "stats" -> {
                if (!(clock instanceof EntryStats)) {
                    unsupported(c, op, "stats");
                }
                @SuppressWarnings("unchecked")
                EntryStats<H> stats = (EntryStats<H>) clock;
                EntryStats.Counts n = stats.stats(c.handle(Wire.string(req, "entry")));
                r.put("fired", Long.toUnsignedString(n.fired()))
                        .put("skipped", Long.toUnsignedString(n.skipped()))
                        .put("overruns", Long.toUnsignedString(n.overruns()));
            }
            case "step_ns" -> r.put("step_ns", Long.toUnsignedString(clock.stepNs()));
            case "draw" -> draw(c, req, r);
            default -> throw Refusal.own("bad_request", "unknown op \"" + op + "\"");
        }
        carry(c, op, r);
        c.observe(r);
        return r;
    }

    private static final List<String> CARRIERS = List.of("schedule", "schedule_periodic", "schedule_rate", "cancel");

    /**
     * Put the firings and failures not yet reported into {@code r} (a schedule* or cancel reply), if there are any: a
     * callback the clock ran inside that call, or on a thread of its own since the last reply, shows where the suite
     * sees it (docs/kits.md, "What a kit reports").
     */
    private static void carry(ClockSession<?> c, String op, ObjectNode r) {
        if (!CARRIERS.contains(op) || (c.fired.size() == 0 && c.failures.size() == 0)) {
            return;
        }
        ArrayNode[] records = c.takeRecords();
        r.set("fired", records[0]);
        r.set("failures", records[1]);
    }

    /** The clock's advance and every firing not yet reported (see {@link #carry}). */
    private ObjectNode advance(ClockSession<?> c, JsonNode req) {
        long dt = Wire.u64(req, "dt_ns", Wire.U64_MAX);
        ObjectNode r;
        try {
            c.clock.advance(dt);
            r = ok();
        } catch (RuntimeException | Error e) {
            CallbackSignal.Halt halt = CallbackSignal.find(e, CallbackSignal.Halt.class);
            if (halt != null) {
                // C-ERR-2: the halt left advance; now is wherever the clock left it.
                r = json.createObjectNode().put("ok", false).put("error", "halted").put("entry", halt.entry)
                        .put("at_ns", Long.toUnsignedString(halt.atNs));
            } else if (e instanceof Error err && !(e instanceof StackOverflowError)) {
                throw err;
            } else {
                // An error the clock let out: the reply's error, not one of the failures it isolated.
                c.escaped(e);
                r = error(Refusal.kindOf(e), Refusal.describe(e));
                if (c.fired.size() == 0 && c.failures.size() == 0) {
                    c.observe(r); // refused before anything ran: a plain refusal
                    return r;
                }
            }
        }
        ArrayNode[] records = c.takeRecords();
        r.set("fired", records[0]);
        r.set("failures", records[1]);
        c.observe(r);
        return r;
    }

    private static void draw(ClockSession<?> c, JsonNode req, ObjectNode r) {
        if (!c.hasStreams()) {
            unsupported(c, "draw", "bits");
        }
        JsonNode labels = req.get("labels");
        if (labels == null) {
            throw Refusal.own("bad_request", "missing field labels");
        }
        if (!labels.isArray()) {
            throw Refusal.own("TypeError", "labels must be a list of strings, got " + Wire.show(labels));
        }
        long n = Wire.u64(req, "n", Wire.U64_MAX);
        if (Long.compareUnsigned(n, MAX_DRAW) > 0) {
            throw Refusal.own("ValueError", "n = " + Long.toUnsignedString(n) + " is more than " + MAX_DRAW
                    + " values in one draw; draw in smaller batches");
        }
        String path = Wire.labelPath(labels);
        ArrayNode values = r.putArray("values");
        for (long v : c.draw(path, (int) n)) {
            values.add(Long.toUnsignedString(v));
        }
    }
}
