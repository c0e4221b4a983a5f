package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q8_0's {@link RowLanes}, two of the file's blocks of 32 columns at a time. Per group g of L rows
 * and pair b of blocks (64 columns), {@link #GROUP_BLOCK} bytes at {@code (g * blocks + b) *
 * GROUP_BLOCK}: L ints, lane k holding row k's two d as the file has them (f16 bits, the first
 * block's in the low half), then per four columns 4c .. 4c + 3 a vector of L ints, lane k holding
 * row k's four bytes of them (byte m: column 4c + m), the order the kernel reads them in. Byte m
 * is moved to the top of its lane and the rest masked off, {@code q * 2^24} exact as a float, and
 * d, widened to a float in the kernel ({@link #group}), carries the 2^-24. The copy takes
 * the file's 34 bytes per 32 weights, and a group-block is a whole number of 64-byte lines (68 L
 * bytes). With d widened to floats at copy time it took 36 per 34 (the 1B Q8_0 file's copy 75 MB
 * larger), and on the AMD EPYC Zen 5 the kernel ran at 45.1-45.5 GMAC/s from L2 against
 * 46.4-47.9 now (`kernels.DotBench Q8_0 256 2048 4`); a pass over that file's weights at two
 * threads (`decode.WeightPassBench`, nine pairs of JVMs) measured 0.99-1.16x, median 1.04, one
 * pair 1.29x (docs/benchmarks.md). A matrix whose rows hold an odd number of blocks has no copy
 * (the row kernel serves it).
 */
final class Q8_0RowLanes extends RowLanes {
    /** Columns and file bytes per block of the copy: two of the file's blocks. */
    static final int QK = 2 * Q8_0Tensor.QK, BLOCK = 2 * Q8_0Tensor.BLOCK;
    private static final int HALF = Q8_0Tensor.QK, D = 0, QUANTS = 4 * G, TOP = 0xFF000000;
    /** Bytes per group and pair of blocks. */
    static final int GROUP_BLOCK = QUANTS + QK * G;

    Q8_0RowLanes(MemorySegment seg, int rows, int cols) {
        super(seg, rows, cols, QK, GROUP_BLOCK);
    }

    /** Row k's two blocks at {@code src[p ..]} into its lanes of the group-block at {@code dst[q ..]}. */
    static void rowBlock(byte[] src, int p, byte[] dst, int q, int k) {
        int second = p + Q8_0Tensor.BLOCK;
        INTS.set(dst, q + D + 4 * k, (src[p] & 0xFF) | (src[p + 1] & 0xFF) << 8 | (src[second] & 0xFF) << 16 | (src[second + 1] & 0xFF) << 24);
        // columns 4c .. 4c + 3 are four consecutive bytes in both layouts: one int each
        for (int c = 0; c < QK / 4; c++) {
            int block = c / (HALF / 4), j = 4 * c - block * HALF;
            INTS.set(dst, q + QUANTS + c * 4 * G + 4 * k, (int) INTS.get(src, p + block * Q8_0Tensor.BLOCK + 2 + j));
        }
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
            // the pair's d widened to floats times 2^-24: an f16's bits but the sign, moved up 13
            // places, are the float of the same bits with an exponent 112 lower (subnormal f16 to
            // float denormals alike), so a product by 2^(112 - 24) makes the value exactly; the
            // sign goes to bit 31. Infinities and NaNs would come out finite: a tensor with them
            // has no copy (RowLanes.fits). Written out in each kernel: a function of vectors was
            // not inlined into them (too large a caller) and boxed its result, and a pass
            // widening a group's d into an array ahead of its kernel read them from memory 1088
            // bytes apart and slowed a decode pass over the 1B Q8_0 file by a third.
            IntVector ds = IntVector.fromMemorySegment(I, s, base + D, LE);
            FloatVector d0 = ((FloatVector) ds.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(ds.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            FloatVector d1 = ((FloatVector) ds.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(ds.and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            for (int c0 = 0; c0 < QK; c0 += HALF) {
                FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0;
                long q = base + QUANTS;
                int xb = b * QK;
                for (int j = c0; j < c0 + HALF; j += 4) {
                    IntVector v = IntVector.fromMemorySegment(I, s, q + j * G, LE);
                    a0 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j]), a0);
                    a1 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j + 1]), a1);
                    a2 = ((FloatVector) v.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j + 2]), a2);
                    a3 = ((FloatVector) v.and(TOP).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xb + j + 3]), a3);
                }
                acc = a0.add(a1).add(a2.add(a3)).fma(c0 == 0 ? d0 : d1, acc);
            }
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
        IntVector ds = IntVector.fromMemorySegment(I, s, base + D, LE);
        FloatVector d0 = ((FloatVector) ds.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(ds.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
        FloatVector d1 = ((FloatVector) ds.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(ds.and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
        for (int j = 0; j < QK; j += 4, o += 4 * stride) {
            FloatVector d = j < HALF ? d0 : d1;
            IntVector v = IntVector.fromMemorySegment(I, s, base + QUANTS + j * G, LE);
            ((FloatVector) v.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o);
            ((FloatVector) v.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o + stride);
            ((FloatVector) v.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o + 2 * stride);
            ((FloatVector) v.and(TOP).convert(VectorOperators.I2F, 0)).mul(d).intoArray(w, o + 3 * stride);
        }
    }

    /**
     * {@link #group} for two batch rows' x (prepared in p0 and p1) at once, to dst[o0 ..] and
     * dst[o1 ..]: per int vector of the copy its four columns converted once and multiplied into each batch
     * row's four accumulators (four batch rows at once held more vectors than there are
     * registers and ran slower than this from L2). The loop is {@link #group}'s, written out
     * again with its d widening for the reason given there: a shared helper of vectors was not
     * inlined into the kernels and boxed its results.
     */
    @Override
    void group2(int g, Prepared p0, Prepared p1, float[] dst, int o0, int o1) {
        MemorySegment s = seg;
        float[] x0 = p0.xq, x1 = p1.xq;
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0;
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            IntVector ds = IntVector.fromMemorySegment(I, s, base + D, LE);
            FloatVector d0 = ((FloatVector) ds.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(ds.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            FloatVector d1 = ((FloatVector) ds.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(ds.and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            for (int c0 = 0; c0 < QK; c0 += HALF) {
                FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
                long q = base + QUANTS;
                int xb = b * QK;
                for (int j = c0; j < c0 + HALF; j += 4) {
                    IntVector v = IntVector.fromMemorySegment(I, s, q + j * G, LE);
                    FloatVector w0 = (FloatVector) v.lanewise(VectorOperators.LSHL, 24).convert(VectorOperators.I2F, 0);
                    FloatVector w1 = (FloatVector) v.lanewise(VectorOperators.LSHL, 16).and(TOP).convert(VectorOperators.I2F, 0);
                    FloatVector w2 = (FloatVector) v.lanewise(VectorOperators.LSHL, 8).and(TOP).convert(VectorOperators.I2F, 0);
                    FloatVector w3 = (FloatVector) v.and(TOP).convert(VectorOperators.I2F, 0);
                    int k = xb + j;
                    a0 = w0.fma(FloatVector.broadcast(F, x0[k]), a0);
                    b0 = w0.fma(FloatVector.broadcast(F, x1[k]), b0);
                    a1 = w1.fma(FloatVector.broadcast(F, x0[k + 1]), a1);
                    b1 = w1.fma(FloatVector.broadcast(F, x1[k + 1]), b1);
                    a2 = w2.fma(FloatVector.broadcast(F, x0[k + 2]), a2);
                    b2 = w2.fma(FloatVector.broadcast(F, x1[k + 2]), b2);
                    a3 = w3.fma(FloatVector.broadcast(F, x0[k + 3]), a3);
                    b3 = w3.fma(FloatVector.broadcast(F, x1[k + 3]), b3);
                }
                FloatVector d = c0 == 0 ? d0 : d1;
                acc0 = a0.add(a1).add(a2.add(a3)).fma(d, acc0);
                acc1 = b0.add(b1).add(b2.add(b3)).fma(d, acc1);
            }
        }
        acc0.intoArray(dst, o0);
        acc1.intoArray(dst, o1);
    }

    /** Groups g and h in one pass, each x broadcast once for both: two streams of weights, the same bits as {@link #group}. */
    @Override
    void pair(int g, int h, Prepared p, float[] dst, int gOff, int hOff) {
        MemorySegment s = seg;
        float[] xq = p.xq;
        FloatVector acc = FloatVector.zero(F), bcc = acc;
        long base = (long) g * blocks * GROUP_BLOCK, hase = (long) h * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK, hase += GROUP_BLOCK) {
            IntVector ds = IntVector.fromMemorySegment(I, s, base + D, LE), es = IntVector.fromMemorySegment(I, s, hase + D, LE);
            FloatVector d0 = ((FloatVector) ds.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(ds.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            FloatVector d1 = ((FloatVector) ds.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(ds.and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            FloatVector e0 = ((FloatVector) es.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(es.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            FloatVector e1 = ((FloatVector) es.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(es.and(0x80000000)).reinterpretAsFloats()).mul(0x1p88f);
            for (int c0 = 0; c0 < QK; c0 += HALF) {
                FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
                long q = base + QUANTS, r = hase + QUANTS;
                int xb = b * QK;
                for (int j = c0; j < c0 + HALF; j += 4) {
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
                acc = a0.add(a1).add(a2.add(a3)).fma(c0 == 0 ? d0 : d1, acc);
                bcc = b0.add(b1).add(b2.add(b3)).fma(c0 == 0 ? e0 : e1, bcc);
            }
        }
        acc.intoArray(dst, gOff);
        bcc.intoArray(dst, hOff);
    }
}
