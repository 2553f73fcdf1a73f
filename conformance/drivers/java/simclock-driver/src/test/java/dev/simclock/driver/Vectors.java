package dev.simclock.driver;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The repository's golden vectors, read in place (SPEC C-WIRE-7). */
final class Vectors {
    private Vectors() {}

    /** The folder of the v1 vectors: the {@code simclock.vectors} property, else relative to the module. */
    static Path dir() {
        String explicit = System.getProperty("simclock.vectors");
        return Path.of(explicit != null ? explicit : "../../../simclock_conformance/vectors/v1");
    }

    /** Every case of one vector file. */
    static List<JsonNode> cases(String file) {
        ObjectMapper json = new ObjectMapper();
        try {
            return Files.readAllLines(dir().resolve(file)).stream().filter(l -> !l.isBlank()).map(l -> {
                try {
                    return json.readTree(l);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }).toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the golden vectors at " + dir().toAbsolutePath(), e);
        }
    }
}
