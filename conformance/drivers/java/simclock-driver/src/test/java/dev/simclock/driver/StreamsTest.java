package dev.simclock.driver;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** C-X-BITS: BLAKE2b, SeedSequence and PCG64, stage by stage, against the golden vectors' stream cases. */
class StreamsTest {

    static Stream<JsonNode> streamCases() {
        List<JsonNode> cases = Vectors.cases("streams.jsonl").stream().filter(c -> c.has("stages")).toList();
        assertEquals(30, cases.size(), "streams.jsonl should hold 30 cases with stages");
        return cases.stream();
    }

    private static String u32(int v) {
        return Integer.toUnsignedString(v);
    }

    private static BigInteger u128(long hi, long lo) {
        return new BigInteger(Long.toUnsignedString(hi)).shiftLeft(64).or(new BigInteger(Long.toUnsignedString(lo)));
    }

    @Test
    void test_C_X_BITS_blake2b_rfc7693_appendix_a() {
        // RFC 7693 Appendix A: BLAKE2b-512("abc").
        String want = "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923";
        assertEquals(want, HexFormat.of().formatHex(Blake2b.digest("abc".getBytes(StandardCharsets.US_ASCII), 64)));
    }

    @Test
    void test_C_X_BITS_blake2b_more_than_one_block() {
        // Python's hashlib.blake2b(..., digest_size=16) of bytes(range(256)) * 2, of b"" and of bytes(range(128)).
        byte[] data = new byte[512];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        assertEquals("43d6c8c9d71d2bf482bc9fdcb35a5496", HexFormat.of().formatHex(Blake2b.digest(data, 16)));
        assertEquals("cae66941d9efbd404e4d88758ea67670", HexFormat.of().formatHex(Blake2b.digest(new byte[0], 16)));
        // Exactly one block: compressed once, as the last block.
        assertEquals("a74787004ef589e31149183900d0294a",
                HexFormat.of().formatHex(Blake2b.digest(java.util.Arrays.copyOf(data, 128), 16)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streamCases")
    void test_C_X_BITS_every_stage_matches_the_vectors(JsonNode c) {
        JsonNode s = c.get("stages");
        BigInteger seed = new BigInteger(s.get("seed").asText());
        String path = s.get("path").asText();

        int[] key = SimclockStreams.spawnKey(path);
        for (int i = 0; i < 4; i++) {
            assertEquals(s.get("spawn_key").get(i).asText(), u32(key[i]), "spawn_key[" + i + "]");
        }
        int[] state32 = SeedSequence.generateState32(SeedSequence.words(seed), key, 4);
        for (int i = 0; i < 4; i++) {
            assertEquals(s.get("seed_sequence_state").get(i).asText(), u32(state32[i]), "seed_sequence_state[" + i + "]");
        }
        Pcg64 g = new SimclockStreams(seed).generator(path);
        assertEquals(s.get("pcg64_state").get("state").asText(), u128(g.state()[0], g.state()[1]).toString());
        assertEquals(s.get("pcg64_state").get("inc").asText(), u128(g.inc()[0], g.inc()[1]).toString());
        for (JsonNode out : s.get("outputs")) {
            assertEquals(out.asText(), Long.toUnsignedString(g.next()));
        }
    }

    /** A clock with no timers at all: enough for create, draw and drop. */
    static final class NoTimers implements SimClockBackend<Object> {
        @Override public long nowNs() { return 0; }
        @Override public Object schedule(long atNs, Runnable callback) { throw new UnsupportedOperationException(); }
        @Override public Object schedulePeriodic(long p, long f, Runnable c) { throw new UnsupportedOperationException(); }
        @Override public void cancel(Object handle) { }
        @Override public void advance(long dtNs) { }
        @Override public long stored() { return 0; }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streamCases")
    void test_C_X_BITS_draw_requests_replay_through_the_driver(JsonNode c) throws Exception {
        Driver d = new Driver(seed -> new NoTimers());
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        int draws = 0;
        for (JsonNode step : c.get("steps")) {
            JsonNode reply = json.readTree(d.handle(step.get("request").toString()));
            assertEquals(step.get("reply").get("ok"), reply.get("ok"), step.get("request").toString());
            if (step.get("request").get("op").asText().equals("draw")) {
                assertEquals(step.get("reply").get("values"), reply.get("values"));
                draws++;
            }
        }
        assertEquals(true, draws > 0);
    }

    @Test
    void test_C_RNG_4_a_stream_goes_on_where_it_stopped_whatever_else_is_drawn() {
        SimclockStreams both = new SimclockStreams(BigInteger.valueOf(7));
        long[] first = both.draw("/a", 2);
        both.draw("/b", 3);
        long[] second = both.draw("/a", 2);
        long[] alone = new SimclockStreams(BigInteger.valueOf(7)).draw("/a", 4);
        assertArrayEquals(alone, new long[] {first[0], first[1], second[0], second[1]});
    }

    @Test
    void test_C_X_BITS_seed_words_are_little_endian_32_bit() {
        assertArrayEquals(new int[] {0}, SeedSequence.words(BigInteger.ZERO));
        assertArrayEquals(new int[] {7, 1}, SeedSequence.words(new BigInteger("4294967303")));
        assertArrayEquals(new int[] {0, 0, 1}, SeedSequence.words(BigInteger.ONE.shiftLeft(64)));
    }
}
