package dev.simclock.driver;

import java.math.BigInteger;

/** numpy's {@code SeedSequence} (pool of four 32-bit words), as far as simclock's streams use it (C-X-BITS). */
public final class SeedSequence {
    private static final int INIT_A = 0x43b0d7e5;
    private static final int MULT_A = 0x931e8875;
    private static final int INIT_B = 0x8b51f9dd;
    private static final int MULT_B = 0x58f38ded;
    private static final int MIX_MULT_L = 0xca01f9dd;
    private static final int MIX_MULT_R = 0x4973f715;
    private static final int POOL = 4;

    private SeedSequence() {}

    /** A non-negative integer as little-endian 32-bit words, as numpy takes an entropy int ({@code 0} is one word). */
    public static int[] words(BigInteger value) {
        if (value.signum() < 0) {
            throw new IllegalArgumentException("seed must be >= 0, got " + value);
        }
        int n = Math.max(1, (value.bitLength() + 31) / 32);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = value.shiftRight(32 * i).intValue();
        }
        return out;
    }

    /** {@code SeedSequence(entropy, spawn_key=spawnKey).generate_state(4, uint64)}. */
    public static long[] state(int[] entropy, int[] spawnKey) {
        int[] state = generateState32(entropy, spawnKey, 8);
        long[] out = new long[4];
        // The 32-bit words are read as little-endian pairs.
        for (int i = 0; i < 4; i++) {
            out[i] = (state[2 * i] & 0xFFFFFFFFL) | ((long) state[2 * i + 1] << 32);
        }
        return out;
    }

    /** {@code SeedSequence(entropy, spawn_key=spawnKey).generate_state(n, uint32)}. */
    public static int[] generateState32(int[] entropy, int[] spawnKey, int n) {
        // With a spawn key, the run entropy is zero-padded up to the pool size first.
        int runLen = spawnKey.length > 0 ? Math.max(entropy.length, POOL) : entropy.length;
        int[] words = new int[runLen + spawnKey.length];
        System.arraycopy(entropy, 0, words, 0, entropy.length);
        System.arraycopy(spawnKey, 0, words, runLen, spawnKey.length);

        int[] hashConst = {INIT_A};
        int[] pool = new int[POOL];
        for (int i = 0; i < POOL; i++) {
            pool[i] = hashmix(i < words.length ? words[i] : 0, hashConst);
        }
        for (int src = 0; src < POOL; src++) {
            for (int dst = 0; dst < POOL; dst++) {
                if (src != dst) {
                    pool[dst] = mix(pool[dst], hashmix(pool[src], hashConst));
                }
            }
        }
        for (int src = POOL; src < words.length; src++) {
            for (int dst = 0; dst < POOL; dst++) {
                pool[dst] = mix(pool[dst], hashmix(words[src], hashConst));
            }
        }
        int[] state = new int[n];
        int hc = INIT_B;
        for (int i = 0; i < n; i++) {
            int v = pool[i % POOL];
            v ^= hc;
            hc *= MULT_B;
            v *= hc;
            v ^= v >>> 16;
            state[i] = v;
        }
        return state;
    }

    private static int hashmix(int value, int[] hashConst) {
        value ^= hashConst[0];
        hashConst[0] *= MULT_A;
        value *= hashConst[0];
        value ^= value >>> 16;
        return value;
    }

    private static int mix(int x, int y) {
        int result = MIX_MULT_L * x - MIX_MULT_R * y;
        result ^= result >>> 16;
        return result;
    }
}
