package dev.simclock.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.simclock.driver.Driver;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shared careless-clock transcript (docs/kits.md, "What a kit reports"), byte for byte. */
class CarelessClockTest {
    @Test
    void test_C_WIRE_4_C_WIRE_5_the_careless_transcript_byte_for_byte() throws Exception {
        Path dir = Path.of(System.getProperty("user.dir")).resolve("../../../transcripts").normalize();
        List<String> requests = Files.readAllLines(dir.resolve("careless.requests.jsonl"), StandardCharsets.UTF_8);
        List<String> replies = Files.readAllLines(dir.resolve("careless.replies.jsonl"), StandardCharsets.UTF_8);
        Driver driver = new Driver(seed -> new CarelessClock());
        for (int i = 0; i < requests.size(); i++) {
            assertEquals(replies.get(i), driver.handle(requests.get(i)), "request " + (i + 1) + " " + requests.get(i));
        }
    }
}
