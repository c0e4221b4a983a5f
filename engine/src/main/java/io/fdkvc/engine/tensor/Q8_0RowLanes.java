package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q8_0's {@link RowLanes}. Per group g of L rows and block b of 32 columns, {@link #GROUP_BLOCK}
 * bytes at {@code (g * blocks + b) * GROUP_BLOCK}: the L rows' d times 2^-24 as floats, then per
 * four columns 4c .. 4c + 3 a vector of L ints, lane k holding row k's four bytes of them (byte
 * m: column 4c + m), the order the kernel reads them in. Byte m is moved to the top of its lane
 * and the rest masked off, {@code q * 2^24} exact as a float, and d carries the 2^-24. The copy
 * takes 36 bytes per 34 of the file's (d widened to a float).
 */
final class Q8_0RowLanes extends RowLanes {
    static final int QK = Q8_0Tensor.QK, BLOCK = Q8_0Tensor.BLOCK;
    private static final int D = 0, QUANTS = 4 * G, TOP = 0xFF000000;
    /** Bytes per group and block. */
    static final int GROUP_BLOCK = QUANTS + QK * G;

    Q8_0RowLanes(MemorySegment seg, int rows, int cols) {
        super(seg, rows, cols, QK, GROUP_BLOCK);
    }

    /** Row k of a group's block at {@code src[p ..]} into its lanes of the group-block at {@code dst[q ..]}. */
    static void rowBlock(byte[] src, int p, byte[] dst, int q, int k) {
        FLOATS.set(dst, q + D + 4 * k, Float.float16ToFloat((short) ((src[p] & 0xFF) | src[p + 1] << 8)) * 0x1p-24f);
        // columns 4c .. 4c + 3 are four consecutive bytes in both layouts: one int each
        for (int c = 0; c < QK / 4; c++) INTS.set(dst, q + QUANTS + c * 4 * G + 4 * k, (int) INTS.get(src, p + 2 + 4 * c));
    }

    /** x as it is: the kernel broadcasts each x from xq; no sums. */
    @Override
    void prepare(float[] x, int xOff, Prepared p) {
        System.arraycopy(x, xOff, p.xq, 0, cols);
    }

    /**
     * The L dot products of group g's rows with x, into {@code dst[dstOff ..]} (a vector store:
     * returned, the vector would be boxed when C2 does not inline this method). Per block four
     * accumulators, one per byte of the int vectors, each a chain of eight FMAs, then their sum
     * times the L rows' d into the group's sums: the blocks' chains are independent of each other
     * but for that last FMA.
     */
    @Override
    void group(int g, Prepared p, float[] dst, int dstOff) {
        MemorySegment s = seg;
        float[] xq = p.xq;
        FloatVector acc = FloatVector.zero(F);
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
            long q = base + QUANTS;
            int xb = b * QK;
            for (int j = 0; j < QK; j += 4) {
                IntVector v = IntVector.fromMemorySegment(I, s, q + j * G, LE);
                a0 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j]), a0);
                a1 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j + 1]), a1);
                a2 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j + 2]), a2);
                a3 = ((FloatVector) v.and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j + 3]), a3);
            }
            acc = a0.add(a1).add(a2.add(a3)).fma(FloatVector.fromMemorySegment(F, s, base + D, LE), acc);
        }
        acc.intoArray(dst, dstOff);
    }

    /**
     * Per block, each four columns' int vector gives four columns of the L rows, byte m at the top
     * of its lane (q * 2^24) times d * 2^-24: q * d, the row kernel's dequantised bits (powers of
     * two scale exactly).
     */
    @Override
    void fillBlock(long base, float[] w, int o, int stride) {
        MemorySegment s = seg;
        FloatVector d = FloatVector.fromMemorySegment(F, s, base + D, LE);
        for (int j = 0; j < QK; j += 4, o += 4 * stride) {
            IntVector v = IntVector.fromMemorySegment(I, s, base + QUANTS + j * G, LE);
            ((FloatVector) v.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o);
            ((FloatVector) v.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o + stride);
            ((FloatVector) v.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o + 2 * stride);
            ((FloatVector) v.and(TOP).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o + 3 * stride);
        }
    }

    /** Groups g and h in one pass, each x broadcast once for both: two streams of weights, the same bits as {@link #group}. */
    @Override
    void pair(int g, int h, Prepared p, float[] dst, int gOff, int hOff) {
        MemorySegment s = seg;
        float[] xq = p.xq;
        FloatVector acc = FloatVector.zero(F), bcc = acc;
        long base = (long) g * blocks * GROUP_BLOCK, hase = (long) h * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK, hase += GROUP_BLOCK) {
            FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            long q = base + QUANTS, r = hase + QUANTS;
            int xb = b * QK;
            for (int j = 0; j < QK; j += 4) {
                IntVector v = IntVector.fromMemorySegment(I, s, q + j * G, LE), w = IntVector.fromMemorySegment(I, s, r + j * G, LE);
                FloatVector x0 = FloatVector.broadcast(F, xq[xb + j]), x1 = FloatVector.broadcast(F, xq[xb + j + 1]);
                FloatVector x2 = FloatVector.broadcast(F, xq[xb + j + 2]), x3 = FloatVector.broadcast(F, xq[xb + j + 3]);
                a0 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0)).fma(x0, a0);
                b0 = ((FloatVector) w.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0)).fma(x0, b0);
                a1 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0)).fma(x1, a1);
                b1 = ((FloatVector) w.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0)).fma(x1, b1);
                a2 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0)).fma(x2, a2);
                b2 = ((FloatVector) w.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0)).fma(x2, b2);
                a3 = ((FloatVector) v.and(TOP).convert(VectorOperators.I2F, 0)).fma(x3, a3);
                b3 = ((FloatVector) w.and(TOP).convert(VectorOperators.I2F, 0)).fma(x3, b3);
            }
            acc = a0.add(a1).add(a2.add(a3)).fma(FloatVector.fromMemorySegment(F, s, base + D, LE), acc);
            bcc = b0.add(b1).add(b2.add(b3)).fma(FloatVector.fromMemorySegment(F, s, hase + D, LE), bcc);
        }
        acc.intoArray(dst, gOff);
        bcc.intoArray(dst, hOff);
    }
}
