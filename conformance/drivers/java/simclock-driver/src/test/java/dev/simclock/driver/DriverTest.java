package dev.simclock.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The request loop (C-WIRE-1..5) over a deliberately naive clock: the kit must report what the clock does, never
 * mend it.
 */
class DriverTest {

    /**
     * Fires due entries in insertion order (not by time), lets every exception out of advance, accepts nested
     * advances and past times: everything a conforming clock must not do.
     */
    static final class NaiveClock implements SimClockBackend<Integer> {
        record Item(long at, Runnable run) {}

        final List<Item> items = new ArrayList<>();
        long now;
        boolean runAtSchedule;

        @Override public long nowNs() { return now; }

        @Override public Integer schedule(long atNs, Runnable callback) {
            if (atNs == 666) throw new IllegalArgumentException("666 is refused");
            if (runAtSchedule) {
                try {
                    callback.run();
                } catch (Error e) {
                    throw new RuntimeException("wrapped", e); // as Reactor's Exceptions.propagate does
                }
                return -1;
            }
            items.add(new Item(atNs, callback));
            return items.size() - 1;
        }

        @Override public Integer schedulePeriodic(long periodNs, long phaseNs, Runnable callback) {
            throw new UnsupportedOperationException("no periodic timers");
        }

        @Override public void cancel(Integer handle) {
            if (handle >= 0) items.set(handle, new Item(Long.MAX_VALUE, () -> { }));
        }

        @Override public void advance(long dtNs) {
            long target = now + dtNs;
            for (int i = 0; i < items.size(); i++) {
                Item it = items.get(i);
                if (it.at <= target) {
                    items.set(i, new Item(Long.MAX_VALUE, () -> { }));
                    now = it.at;
                    it.run.run();
                }
            }
            now = target;
        }

        @Override public long stored() { return items.size(); }

        @Override public String name() { return "naive"; }

        @Override public Optional<RandomStreams> randomStreams(BigInteger seed) { return Optional.empty(); }
    }

    private final NaiveClock clock = new NaiveClock();

    private List<String> run(String... requests) throws Exception {
        Driver d = new Driver(seed -> clock);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String in = String.join("\n", requests) + "\n";
        d.serve(new ByteArrayInputStream(in.getBytes(StandardCharsets.UTF_8)), out);
        return List.of(out.toString(StandardCharsets.UTF_8).split("\n"));
    }

    private static final String CREATE = "{\"op\":\"create\",\"clock\":\"c\",\"seed\":\"1\"}";

    @Test
    void test_C_WIRE_3_hello_features_follow_the_interfaces_the_clock_implements() throws Exception {
        assertEquals(List.of("{\"ok\":true,\"protocol\":\"1\",\"backend\":\"naive\",\"features\":[]}",
                "{\"ok\":false,\"error\":\"unsupported\",\"message\":\"this driver speaks protocol \\\"1\\\" only, got the string \\\"2\\\"\"}"),
                run("{\"op\":\"hello\",\"protocol\":\"1\"}", "{\"op\":\"hello\",\"protocol\":\"2\"}"));
    }

    @Test
    void test_C_WIRE_1_one_reply_per_line_then_quit_ends_the_loop() throws Exception {
        List<String> replies = run(CREATE, "not json", "[1]", "{\"op\":\"nope\"}", "{\"op\":\"quit\"}", CREATE);
        assertEquals(4 + 1, replies.size());
        assertEquals("{\"ok\":true,\"now_ns\":\"0\",\"stored\":\"0\"}", replies.get(0));
        assertEquals(true, replies.get(1).startsWith("{\"ok\":false,\"error\":\"bad_request\",\"message\":\"the request is not one JSON object"));
        assertEquals("{\"ok\":false,\"error\":\"bad_request\",\"message\":\"the request must be a JSON object\"}", replies.get(2));
        assertEquals("{\"ok\":false,\"error\":\"bad_request\",\"message\":\"unknown op \\\"nope\\\"\"}", replies.get(3));
        assertEquals("{\"ok\":true}", replies.get(4));
    }

    @Test
    void test_C_WIRE_5_refusals_carry_the_observation_and_change_nothing() throws Exception {
        List<String> r = run(CREATE,
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"a\",\"at_ns\":\"666\"}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"a\",\"at_ns\":5}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"a\",\"at_ns\":\"5\",\"on_fire\":[{\"do\":\"schedule\",\"delay_ns\":\"-1\"}]}",
                "{\"op\":\"schedule_periodic\",\"clock\":\"c\",\"entry\":\"p\",\"period_ns\":\"5\"}",
                "{\"op\":\"schedule_rate\",\"clock\":\"c\",\"entry\":\"r\",\"rate_hz\":[\"1\",\"1\"]}",
                "{\"op\":\"draw\",\"clock\":\"c\",\"labels\":[],\"n\":\"1\"}",
                "{\"op\":\"cancel\",\"clock\":\"c\",\"entry\":\"a\"}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"a\",\"at_ns\":\"5\"}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"a\",\"at_ns\":\"6\"}",
                "{\"op\":\"observe\",\"clock\":\"d\"}");
        String obs0 = ",\"now_ns\":\"0\",\"stored\":\"0\"}";
        assertEquals("{\"ok\":false,\"error\":\"ValueError\",\"message\":\"IllegalArgumentException: 666 is refused\"" + obs0, r.get(1));
        assertEquals(true, r.get(2).startsWith("{\"ok\":false,\"error\":\"TypeError\",\"message\":\"at_ns must be"), r.get(2));
        assertEquals(true, r.get(3).startsWith("{\"ok\":false,\"error\":\"TypeError\",\"message\":\"delay_ns must be"), r.get(3));
        assertEquals("{\"ok\":false,\"error\":\"RuntimeError\",\"message\":\"UnsupportedOperationException: no periodic timers\"" + obs0, r.get(4));
        assertEquals("{\"ok\":false,\"error\":\"unsupported\",\"message\":\"schedule_rate: naive does not offer it (feature rate)\"" + obs0, r.get(5));
        assertEquals("{\"ok\":false,\"error\":\"unsupported\",\"message\":\"draw: naive does not offer it (feature bits)\"" + obs0, r.get(6));
        assertEquals("{\"ok\":false,\"error\":\"bad_request\",\"message\":\"unknown entry \\\"a\\\"\"" + obs0, r.get(7));
        assertEquals("{\"ok\":true,\"now_ns\":\"0\",\"stored\":\"1\"}", r.get(8));
        assertEquals("{\"ok\":false,\"error\":\"bad_request\",\"message\":\"entry id \\\"a\\\" is already used by this clock\",\"now_ns\":\"0\",\"stored\":\"1\"}", r.get(9));
        assertEquals("{\"ok\":false,\"error\":\"bad_request\",\"message\":\"unknown clock \\\"d\\\"\"}", r.get(10));
    }

    @Test
    void test_C_WIRE_4_the_kit_reports_the_clocks_order_errors_and_nesting_as_they_are() throws Exception {
        List<String> r = run(CREATE,
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"late\",\"at_ns\":\"9\"}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"n\",\"at_ns\":\"2\",\"on_fire\":[{\"do\":\"advance\",\"dt_ns\":\"1\"},{\"do\":\"schedule\",\"delay_ns\":\"0\"}]}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"x\",\"at_ns\":\"3\",\"on_fire\":[{\"do\":\"raise\",\"message\":\"lost\"},{\"do\":\"halt\"}]}",
                "{\"op\":\"advance\",\"clock\":\"c\",\"dt_ns\":\"10\"}");
        // Insertion order; n's nested advance ran x, whose error (a RuntimeError) the clock let out of it: n's record
        // says nested RuntimeError and n goes on (its child n.0 fires at 3); x's error is no failure the clock isolated.
        assertEquals("{\"ok\":true,\"fired\":[{\"entry\":\"late\",\"now_ns\":\"9\"},"
                + "{\"entry\":\"n\",\"now_ns\":\"2\",\"nested\":\"RuntimeError\"},{\"entry\":\"x\",\"now_ns\":\"3\"},"
                + "{\"entry\":\"n.0\",\"now_ns\":\"3\"}],\"failures\":[],\"now_ns\":\"10\",\"stored\":\"4\"}", r.get(4));
    }

    @Test
    void test_C_ERR_2_a_halt_stops_the_advance_with_its_entry_and_time() throws Exception {
        List<String> r = run(CREATE,
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"h\",\"at_ns\":\"4\",\"on_fire\":[{\"do\":\"halt\"},{\"do\":\"raise\"}]}",
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"after\",\"at_ns\":\"5\"}",
                "{\"op\":\"advance\",\"clock\":\"c\",\"dt_ns\":\"10\"}");
        assertEquals("{\"ok\":false,\"error\":\"halted\",\"entry\":\"h\",\"at_ns\":\"4\","
                + "\"fired\":[{\"entry\":\"h\",\"now_ns\":\"4\"}],\"failures\":[],\"now_ns\":\"4\",\"stored\":\"2\"}", r.get(3));
    }

    @Test
    void test_C_SCH_1_callbacks_a_clock_runs_outside_advance_are_shown_in_that_reply() throws Exception {
        clock.runAtSchedule = true;
        List<String> r = run(CREATE,
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"now\",\"at_ns\":\"0\",\"on_fire\":[{\"do\":\"raise\",\"message\":\"m\"}]}",
                "{\"op\":\"advance\",\"clock\":\"c\",\"dt_ns\":\"0\"}");
        // The callback's error left schedule: the schedule's error, with the firing it ran (no isolated failure).
        assertEquals("{\"ok\":false,\"error\":\"RuntimeError\",\"message\":\"RuntimeError: m\","
                + "\"fired\":[{\"entry\":\"now\",\"now_ns\":\"0\"}],\"failures\":[],\"now_ns\":\"0\",\"stored\":\"0\"}", r.get(1));
        assertEquals("{\"ok\":true,\"fired\":[],\"failures\":[],\"now_ns\":\"0\",\"stored\":\"0\"}", r.get(2));
    }

    @Test
    void test_C_ERR_2_a_halt_that_leaves_schedule_wrapped_is_still_a_halt() throws Exception {
        clock.runAtSchedule = true;
        List<String> r = run(CREATE,
                "{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"h\",\"at_ns\":\"0\",\"on_fire\":[{\"do\":\"halt\"}]}");
        assertEquals("{\"ok\":false,\"error\":\"halted\",\"entry\":\"h\",\"at_ns\":\"0\",\"fired\":[{\"entry\":\"h\",\"now_ns\":\"0\"}],"
                + "\"failures\":[],\"now_ns\":\"0\",\"stored\":\"0\"}", r.get(1));
    }
}
