package dev.simclock.driver;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * simclock's random streams (C-X-BITS): the stream at a label path is
 * {@code PCG64(SeedSequence(seed, spawn_key=K))}, {@code K} the four big-endian 32-bit words of
 * {@code blake2b(b"simclock.random_source.v1\0" + path, digest_size=16)}.
 */
public final class SimclockStreams implements RandomStreams {
    private static final byte[] DOMAIN = "simclock.random_source.v1\0".getBytes(StandardCharsets.US_ASCII);

    private final int[] seedWords;
    private final Map<String, Pcg64> streams = new HashMap<>();

    /** The streams of a clock seeded with {@code seed} (any non-negative integer). */
    public SimclockStreams(BigInteger seed) {
        this.seedWords = SeedSequence.words(seed);
    }

    /** The spawn key of a normalised label path. */
    public static int[] spawnKey(String path) {
        byte[] p = path.getBytes(StandardCharsets.UTF_8);
        byte[] data = new byte[DOMAIN.length + p.length];
        System.arraycopy(DOMAIN, 0, data, 0, DOMAIN.length);
        System.arraycopy(p, 0, data, DOMAIN.length, p.length);
        byte[] d = Blake2b.digest(data, 16);
        int[] key = new int[4];
        for (int i = 0; i < 4; i++) {
            key[i] = ((d[4 * i] & 0xFF) << 24) | ((d[4 * i + 1] & 0xFF) << 16) | ((d[4 * i + 2] & 0xFF) << 8)
                    | (d[4 * i + 3] & 0xFF);
        }
        return key;
    }

    /** A fresh generator for {@code path}, at its first output. */
    public Pcg64 generator(String path) {
        return new Pcg64(SeedSequence.state(seedWords, spawnKey(path)));
    }

    @Override
    public long[] draw(String path, int n) {
        Pcg64 g = streams.computeIfAbsent(path, this::generator);
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            out[i] = g.next();
        }
        return out;
    }
}
