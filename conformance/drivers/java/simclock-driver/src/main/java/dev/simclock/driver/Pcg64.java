package dev.simclock.driver;

/** numpy's PCG64: a 128-bit LCG with the XSL-RR output, seeded as numpy seeds it (C-X-BITS). */
public final class Pcg64 {
    private static final long MULT_HI = 0x2360ED051FC65DA4L;
    private static final long MULT_LO = 0x4385DF649FCCF645L;

    // Invariant: state and inc are 128-bit numbers kept as (hi, lo) pairs; inc is odd.
    private long stateHi;
    private long stateLo;
    private final long incHi;
    private final long incLo;

    /** Seeded with the four words of {@code SeedSequence.generate_state(4, uint64)}. */
    public Pcg64(long[] seedState) {
        // initstate = w0:w1, initseq = w2:w3, inc = initseq << 1 | 1.
        incHi = (seedState[2] << 1) | (seedState[3] >>> 63);
        incLo = (seedState[3] << 1) | 1;
        step();
        long lo = stateLo + seedState[1];
        stateHi = stateHi + seedState[0] + (Long.compareUnsigned(lo, stateLo) < 0 ? 1 : 0);
        stateLo = lo;
        step();
    }

    /** The state's high and low words (for tests against the golden vectors' stages). */
    public long[] state() {
        return new long[] {stateHi, stateLo};
    }

    /** The increment's high and low words. */
    public long[] inc() {
        return new long[] {incHi, incLo};
    }

    /** The next raw 64-bit output (unsigned). */
    public long next() {
        step();
        return Long.rotateRight(stateHi ^ stateLo, (int) (stateHi >>> 58));
    }

    // state = state * MULT + inc (mod 2**128).
    private void step() {
        long lo = stateLo * MULT_LO;
        long hi = unsignedMultiplyHigh(stateLo, MULT_LO) + stateLo * MULT_HI + stateHi * MULT_LO;
        long sum = lo + incLo;
        stateHi = hi + incHi + (Long.compareUnsigned(sum, lo) < 0 ? 1 : 0);
        stateLo = sum;
    }

    /** The high 64 bits of the unsigned 128-bit product (Java 18's Math.unsignedMultiplyHigh). */
    static long unsignedMultiplyHigh(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }
}
