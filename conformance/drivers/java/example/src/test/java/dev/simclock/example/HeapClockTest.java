package dev.simclock.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.simclock.driver.Driver;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The example heap clock, directly and through the kit (SPEC §1, §18). */
class HeapClockTest {
    private final HeapClock clock = new HeapClock();
    private final List<String> log = new ArrayList<>();

    private Runnable note(String name) {
        return () -> log.add(name + "@" + Long.toUnsignedString(clock.nowNs()));
    }

    @Test
    void test_C_TIE_1_equal_times_fire_in_push_order() {
        clock.schedule(5, note("a"));
        clock.schedule(3, note("b"));
        clock.schedule(5, note("c"));
        clock.advance(5);
        assertEquals(List.of("b@3", "a@5", "c@5"), log);
    }

    @Test
    void test_C_PER_2_at_a_shared_instant_the_earlier_previous_firing_goes_first() {
        clock.schedulePeriodic(2, 0, note("p2"));
        clock.schedulePeriodic(3, 0, note("p3"));
        clock.advance(6);
        assertEquals(List.of("p2@0", "p3@0", "p2@2", "p3@3", "p2@4", "p3@6", "p2@6"), log);
    }

    @Test
    void test_C_ADV_4_a_nested_advance_is_refused_and_changes_nothing() {
        List<Throwable> seen = new ArrayList<>();
        clock.schedule(2, () -> seen.add(assertThrows(IllegalStateException.class, () -> clock.advance(5))));
        clock.schedule(3, note("next"));
        clock.advance(4);
        assertEquals(1, seen.size());
        assertEquals(List.of("next@3"), log);
        assertEquals(4, clock.nowNs());
    }

    @Test
    void test_C_SCH_1_a_past_time_is_refused() {
        clock.advance(10);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> clock.schedule(9, note("x")));
        assertEquals("at_ns=9 is in the past (now is 10 ns)", e.getMessage());
        assertEquals(0, clock.stored());
    }

    @Test
    void test_C_ERR_2_an_error_leaves_advance_at_its_entry_and_a_periodic_is_rearmed() {
        clock.schedulePeriodic(5, 1, () -> {
            throw new AssertionError("halt");
        });
        clock.schedule(1, note("tie"));
        assertThrows(AssertionError.class, () -> clock.advance(100));
        assertEquals(1, clock.nowNs());
        assertEquals(Optional.of(BigInteger.ONE), clock.nextEventNs()); // "tie" is still pending
        clock.cancel(clock.schedule(1, note("gone")));
        clock.advance(0);
        assertEquals(List.of("tie@1"), log);
        assertEquals(Optional.of(BigInteger.valueOf(6)), clock.nextEventNs()); // re-armed on its grid
    }

    @Test
    void test_C_TIME_4_a_child_past_2_64_minus_1_is_kept_exactly_and_never_due() {
        clock.startAt(-2L); // 2**64 - 2
        clock.scheduleAfter(5, note("far"));
        assertEquals(Optional.of(new BigInteger("18446744073709551619")), clock.nextEventNs());
        clock.advance(1);
        assertEquals(List.of(), log);
        assertThrows(IllegalArgumentException.class, () -> clock.advance(1));
        assertEquals("18446744073709551615", Long.toUnsignedString(clock.nowNs()));
    }

    @Test
    void test_C_CAN_4_tombstones_are_compacted() {
        for (int i = 0; i < 1000; i++) {
            clock.cancel(clock.schedule(10 + i, note("x")));
        }
        clock.schedule(5, note("live"));
        assertEquals(true, clock.stored() <= 2 * 1 + 64, "stored " + clock.stored());
    }

    @Test
    void test_C_X_RATE_30_hz_fires_on_the_ceiling_grid() {
        clock.scheduleRate(30, 1, 0, note("cam"));
        clock.advance(1_000_000_000L);
        assertEquals(31, log.size());
        assertEquals(List.of("cam@0", "cam@33333334", "cam@66666667"), log.subList(0, 3));
        assertEquals("cam@1000000000", log.get(30));
    }

    @Test
    void test_C_WIRE_3_the_worked_transcript() {
        Driver d = new Driver(seed -> new HeapClock());
        String[][] steps = {
            {"{\"op\":\"hello\",\"protocol\":\"1\"}",
                "{\"ok\":true,\"protocol\":\"1\",\"backend\":\"simclock-java-heap\",\"features\":[\"peek\",\"rate\",\"stats\",\"start_ns\",\"bits\"]}"},
            {"{\"op\":\"create\",\"clock\":\"c\",\"seed\":\"42\"}", "{\"ok\":true,\"now_ns\":\"0\",\"next_event_ns\":null,\"stored\":\"0\"}"},
            {"{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"a\",\"at_ns\":\"5\",\"on_fire\":[{\"do\":\"schedule\",\"delay_ns\":\"0\"},{\"do\":\"advance\",\"dt_ns\":\"1\"}]}",
                "{\"ok\":true,\"now_ns\":\"0\",\"next_event_ns\":\"5\",\"stored\":\"1\"}"},
            {"{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"b\",\"at_ns\":\"5\",\"on_fire\":[{\"do\":\"raise\",\"message\":\"sensor lost\"}]}",
                "{\"ok\":true,\"now_ns\":\"0\",\"next_event_ns\":\"5\",\"stored\":\"2\"}"},
            {"{\"op\":\"schedule_rate\",\"clock\":\"c\",\"entry\":\"cam\",\"rate_hz\":[\"30\",\"1\"],\"phase_ns\":\"0\",\"on_fire\":[]}",
                "{\"ok\":true,\"now_ns\":\"0\",\"next_event_ns\":\"0\",\"stored\":\"3\"}"},
            {"{\"op\":\"advance\",\"clock\":\"c\",\"dt_ns\":\"40000000\"}",
                "{\"ok\":true,\"fired\":[{\"entry\":\"cam\",\"now_ns\":\"0\"},{\"entry\":\"a\",\"now_ns\":\"5\",\"nested\":\"RuntimeError\"},"
                    + "{\"entry\":\"b\",\"now_ns\":\"5\"},{\"entry\":\"a.0\",\"now_ns\":\"5\"},{\"entry\":\"cam\",\"now_ns\":\"33333334\"}],"
                    + "\"failures\":[{\"entry\":\"b\",\"at_ns\":\"5\",\"message\":\"sensor lost\"}],"
                    + "\"now_ns\":\"40000000\",\"next_event_ns\":\"66666667\",\"stored\":\"1\"}"},
            {"{\"op\":\"cancel\",\"clock\":\"c\",\"entry\":\"cam\"}", "{\"ok\":true,\"now_ns\":\"40000000\",\"next_event_ns\":null,\"stored\":\"0\"}"},
            {"{\"op\":\"stats\",\"clock\":\"c\",\"entry\":\"cam\"}",
                "{\"ok\":true,\"fired\":\"2\",\"skipped\":\"0\",\"overruns\":\"0\",\"now_ns\":\"40000000\",\"next_event_ns\":null,\"stored\":\"0\"}"},
            {"{\"op\":\"schedule\",\"clock\":\"c\",\"entry\":\"far\",\"at_ns\":\"18446744073709551616\"}",
                "{\"ok\":false,\"error\":\"ValueError\",\"message\":\"at_ns = 18446744073709551616 is larger than 18446744073709551615, "
                    + "the largest value this backend keeps exactly\",\"now_ns\":\"40000000\",\"next_event_ns\":null,\"stored\":\"0\"}"},
            {"{\"op\":\"draw\",\"clock\":\"c\",\"labels\":[\"sensors\",\"imu0\"],\"n\":\"2\"}",
                "{\"ok\":true,\"values\":[\"4798505500344436202\",\"6344606573098996892\"],\"now_ns\":\"40000000\",\"next_event_ns\":null,\"stored\":\"0\"}"},
            {"{\"op\":\"quit\"}", "{\"ok\":true}"},
        };
        for (String[] step : steps) {
            assertEquals(step[1], d.handle(step[0]), step[0]);
        }
        assertEquals(true, d.quitting());
    }
}
