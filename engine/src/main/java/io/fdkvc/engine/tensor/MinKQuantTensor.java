package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.INT_LE;
import static io.fdkvc.engine.tensor.Simd.L;

import java.lang.foreign.MemorySegment;

/**
 * The k-quants whose weights are {@code d * scale * q - dmin * min} per sub-block of 32 (Q4_K,
 * Q5_K), whose 128 bytes of nibbles per super-block share one layout: byte {@code 32c + l} holds
 * weight {@code 64c + l} in its low nibble and weight {@code 64c + 32 + l} in its high nibble.
 *
 * <p>The kernels read the nibbles as 32-bit lanes ({@link Simd#I}, four bytes per lane) and never
 * move them into byte order: x is permuted instead, once per call, into the order in which the
 * lanes hold the weights ({@link #prepare}, {@link PreparedXTensor#permuteLanes}). Then weight byte m of every lane is one AND with
 * {@code 0xF << 8m} (a value of {@code q * 2^8m}, exact in a float) and one int-to-float
 * conversion, and the permuted x carries the factor {@code 2^-8m}, so the product is the same
 * float as {@code q * x}. Per 16 weights that is three vector operations (AND, convert, FMA)
 * against four when each byte is widened to an int lane and its nibbles shifted and masked there
 * (widen, AND, shift, AND, two converts, two FMAs per 32 weights), and one segment load per 4L
 * bytes of weights instead of per L bytes. Measured: 1.6x on Q4_K (one thread, 2048 x 2048),
 * more than the 4/3 the count predicts; disabling the Vector API's bounds checks
 * (jdk.incubator.vector.VECTOR_ACCESS_OOB_CHECK=0) did not change the speed.
 *
 * <p>A batch of one permutes x once per call for all its rows (see {@link PreparedXTensor}).
 */
abstract sealed class MinKQuantTensor extends PreparedXTensor permits Q4_KTensor, Q5_KTensor {
    static final int QK = 256;
    /**
     * Lane shifts that bring the scale (or min) byte of lane i's sub-block to the bottom of an
     * int holding four packed 6-bit scales: entry {@code (2u + n) * L + i} for int load u and
     * nibble n (0 low, 1 high). Lane i of load u holds bytes {@code 4Lu + 4i ..} of the nibbles,
     * so its sub-block is {@code 2c + n} with {@code c = (4Lu + 4i) / 32}; sub-blocks 0-3 sit in
     * one int, 4-7 in the other.
     */
    static final int[] SCALE_SHIFT = new int[2 * U * L];
    static {
        for (int u = 0; u < U; u++) {
            for (int n = 0; n < 2; n++) {
                for (int i = 0; i < L; i++) SCALE_SHIFT[(u * 2 + n) * L + i] = 8 * ((2 * ((4 * L * u + 4 * i) >> 5) + n) & 3);
            }
        }
    }

    /*
     * The 6-bit scales and mins of a super-block's 8 sub-blocks, one per byte of two ints, from
     * its 12 packed bytes read as three ints s0, s1, s2: sub-blocks 0-3 keep theirs in the low 6
     * bits of bytes 0-3 (scales, s0) and 4-7 (mins, s1); sub-blocks 4-7 split theirs between the
     * nibbles of bytes 8-11 (s2) and the top 2 bits of bytes 0-3 / 4-7.
     */
    static int scalesLo(int s0) {
        return s0 & 0x3F3F3F3F;
    }

    static int scalesHi(int s0, int s2) {
        return (s2 & 0x0F0F0F0F) | ((s0 >>> 6) & 0x03030303) << 4;
    }

    static int minsLo(int s1) {
        return s1 & 0x3F3F3F3F;
    }

    static int minsHi(int s1, int s2) {
        return ((s2 >>> 4) & 0x0F0F0F0F) | ((s1 >>> 6) & 0x03030303) << 4;
    }

    /**
     * The super-block's eight 6-bit scales, sub-block j's in byte j, from its 12 packed bytes at
     * {@code p + 4} read as three ints (two reads and a few shifts instead of a byte read per
     * scale and per min, which was a large share of Q4_K's dequantisation).
     */
    static long scales(MemorySegment s, long p) {
        int s0 = s.get(INT_LE, p + 4), s2 = s.get(INT_LE, p + 12);
        return (scalesLo(s0) & 0xFFFFFFFFL) | (long) scalesHi(s0, s2) << 32;
    }

    /** The super-block's eight 6-bit mins, sub-block j's in byte j (see {@link #scales}). */
    static long mins(MemorySegment s, long p) {
        int s1 = s.get(INT_LE, p + 8), s2 = s.get(INT_LE, p + 12);
        return (minsLo(s1) & 0xFFFFFFFFL) | (long) minsHi(s1, s2) << 32;
    }

    /** Byte j of a value of {@link #scales} or {@link #mins}. */
    static int sub(long packed, int j) {
        return (int) (packed >>> (8 * j)) & 0xFF;
    }

    MinKQuantTensor(GgmlType type, MemorySegment seg, int rows, int cols) {
        super(type, seg, rows, cols);
    }

    /**
     * x in lane order: per super-block b, {@code xp[256b + ((2u + n) * 4 + m) * L + i]} is the x of
     * the weight in byte m of lane i of int load u, nibble n, times {@code 2^-8m}; and
     * {@code xs[64b + (2u + n) * L + i]} the sum over m of those x (unscaled). The weight: nibble
     * byte {@code P = 4Lu + 4i + m} is byte {@code l = P % 32} of chunk {@code c = P / 32}, so
     * weight {@code 64c + 32n + l}. Multiplying by a power of two is exact (barring underflow
     * below 2^-102, which activations do not reach).
     */
    @Override
    void prepare(float[] x, int xOff, float[] xp, float[] xs) {
        permuteLanes(x, xOff, cols, SOURCE, 1f, xp, xs);
    }

    /**
     * The weight (within its super-block) held by nibble n of nibble byte P: byte {@code P % 32}
     * of chunk {@code P / 32}, so weight {@code 64 (P / 32) + 32n + P % 32}.
     */
    static int weight(int pos, int n) {
        return 64 * (pos >> 5) + 32 * n + (pos & 31);
    }

    /**
     * The weight (within its super-block) whose x goes to {@code xp[256b + k]}: for
     * {@code k = ((2u + n) * 4 + m) * L + i}, that of nibble n of byte {@code P = 4Lu + 4i + m}.
     */
    static final int[] SOURCE = lanePositions(MinKQuantTensor::weight);

    @Override
    final void rows(int from, int to, float[] xp, float[] xs, float[] out, int outOff) {
        for (int i = 0; i < to - from; i++) {
            int r = streamedRow(from, to, i, ROW_STREAMS);
            out[outOff + r] = dot(r, xp, xs);
        }
    }
}
