package dev.simclock.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** C-WIRE-2 and C-RNG-3: the wire's integers and label paths. */
class WireTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode req(String json) throws Exception {
        return JSON.readTree(json);
    }

    private static Refusal refusal(String json, String field) throws Exception {
        JsonNode r = req(json);
        return assertThrows(Refusal.class, () -> Wire.u64(r, field, Wire.U64_MAX));
    }

    @Test
    void test_C_WIRE_2_digit_strings_are_kept_exactly_up_to_2_64_minus_1() throws Exception {
        assertEquals(0L, Wire.u64(req("{\"t\":\"0\"}"), "t", Wire.U64_MAX));
        assertEquals(7L, Wire.u64(req("{\"t\":\"0007\"}"), "t", Wire.U64_MAX));
        assertEquals("18446744073709551615",
                Long.toUnsignedString(Wire.u64(req("{\"t\":\"18446744073709551615\"}"), "t", Wire.U64_MAX)));
        assertEquals("9223372036854775808",
                Long.toUnsignedString(Wire.u64(req("{\"t\":\"9223372036854775808\"}"), "t", Wire.U64_MAX)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"18446744073709551615", "5", "-3", "1.5", "1e6", "true", "null", "[]", "\"1.5\"",
        "\"1e6\"", "\"-3\"", "\" 5\"", "\"5 \"", "\"\"", "\"0x10\"", "\"\u0661\""})
    void test_C_TIME_3_anything_but_a_digit_string_is_a_TypeError(String value) throws Exception {
        Refusal r = refusal("{\"at_ns\":" + value + "}", "at_ns");
        assertEquals("TypeError", r.kind());
        assertEquals(true, r.getMessage().startsWith("at_ns must be a string of decimal digits [0-9]+, got "),
                r.getMessage());
    }

    @Test
    void test_C_TIME_4_more_than_2_64_minus_1_is_a_ValueError() throws Exception {
        for (String v : new String[] {"18446744073709551616", "99999999999999999999999", "1" + "0".repeat(400)}) {
            Refusal r = refusal("{\"at_ns\":\"" + v + "\"}", "at_ns");
            assertEquals("ValueError", r.kind(), v);
        }
        Refusal low = assertThrows(Refusal.class, () -> Wire.u64(req("{\"n\":\"11\"}"), "n", 10));
        assertEquals("n = 11 is larger than 10, the largest value this backend keeps exactly", low.getMessage());
    }

    @Test
    void test_C_WIRE_3_a_missing_field_is_a_bad_request() throws Exception {
        Refusal r = refusal("{}", "at_ns");
        assertEquals("bad_request", r.kind());
        assertEquals("missing field at_ns", r.getMessage());
    }

    private static String path(String labels) throws Exception {
        return Wire.labelPath(req(labels));
    }

    @Test
    void test_C_RNG_3_label_paths_are_normalised() throws Exception {
        assertEquals("/", path("[]"));
        assertEquals("/a/b", path("[\"a\",\"b\"]"));
        assertEquals("/a/b", path("[\"a/b\"]"));
        assertEquals("/a/b", path("[\"/a/b\"]"));
        assertEquals("/a/b/c", path("[\"/a\",\"/b/c\"]"));
        assertEquals("/x.y-z_1", path("[\"x.y-z_1\"]"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"\"", "\"/\"", "\"a//b\"", "\"a/\"", "\"a b\"", "\"\u00e9\"", "\"//a\"", "\"a\\tb\""})
    void test_C_RNG_3_a_malformed_label_is_a_ValueError(String label) throws Exception {
        Refusal r = assertThrows(Refusal.class, () -> path("[\"ok\"," + label + "]"));
        assertEquals("ValueError", r.kind());
    }

    @Test
    void test_C_RNG_3_a_label_that_is_not_a_string_is_a_TypeError() throws Exception {
        Refusal r = assertThrows(Refusal.class, () -> path("[\"a\",5]"));
        assertEquals("TypeError", r.kind());
        assertEquals("label must be a string, got the JSON number 5", r.getMessage());
    }
}
