package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.S2;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q4_K's {@link RowLanes}. Per group g of L rows and super-block b, {@link #GROUP_BLOCK} bytes at
 * {@code (g * blocks + b) * GROUP_BLOCK}: L ints, lane k holding row k's d and dmin as the file
 * has them (f16 bits, d in the low half; the kernels widen them in registers), then per
 * chunk c of 64 weights eight vectors of L ints (lane k of vector v is bytes 4v..4v+3 of row k's
 * 128 nibble bytes) followed by the L rows' 6-bit scales of sub-blocks 2c and 2c + 1 as bytes and
 * their mins: the order the kernel reads them in, one stream. Nibble n of byte m of
 * that int is weight {@code MinKQuantTensor.weight(4v + m, n)} of the super-block ({@link MinKQuantTensor}'s
 * layout), in sub-block {@code 2 (v / 8) + n}. As in {@link MinKQuantTensor}'s kernels the
 * nibble is masked in place ({@code q * 2^8m}, exact in a float) and x carries {@code 2^-8m}.
 * The copy takes 148 bytes per 144 of the file's (the scales and mins widened to bytes), 37
 * whole cache lines a group-block at 16 lanes; with d and dmin widened to floats at copy time it
 * took 152.
 */
final class Q4_KRowLanes extends Int8RowLanes {
    static final int QK = Q4_KTensor.QK, BLOCK = Q4_KTensor.BLOCK;
    private static final int D = 0, CHUNKS = 4 * G, CHUNK = 36 * G;
    /** Bytes per group and super-block. */
    static final int GROUP_BLOCK = CHUNKS + 4 * CHUNK;

    /** Offset of int v of the nibbles within a group-block: chunk v / 8's eight ints, then its scales and mins. */
    private static long quants(int v) {
        return CHUNKS + (long) CHUNK * (v >> 3) + 4L * G * (v & 7);
    }

    /** Offset of sub-block j's L scales; its L mins follow two sub-blocks later ({@link #quants}). */
    private static long scales(int j) {
        return CHUNKS + (long) CHUNK * (j >> 1) + 32L * G + (long) G * (j & 1);
    }

    Q4_KRowLanes(MemorySegment seg, int rows, int cols) {
        super(seg, rows, cols, QK, GROUP_BLOCK, PAIR_LO, PAIR_HI, 8, 1f);
    }

    /** Row k of a group's super-block at {@code src[p ..]} into its lanes of the group-block at {@code dst[q ..]}. */
    static void rowBlock(byte[] src, int p, byte[] dst, int q, int k) {
        INTS.set(dst, q + D + 4 * k, (int) INTS.get(src, p));   // d and dmin, f16 bits, as the file has them
        int s0 = (int) INTS.get(src, p + 4), s1 = (int) INTS.get(src, p + 8), s2 = (int) INTS.get(src, p + 12);
        long sc = (MinKQuantTensor.scalesLo(s0) & 0xFFFFFFFFL) | (long) MinKQuantTensor.scalesHi(s0, s2) << 32;
        long mn = (MinKQuantTensor.minsLo(s1) & 0xFFFFFFFFL) | (long) MinKQuantTensor.minsHi(s1, s2) << 32;
        for (int j = 0; j < 8; j++) {
            dst[q + (int) scales(j) + k] = (byte) MinKQuantTensor.sub(sc, j);
            dst[q + (int) scales(j) + 2 * G + k] = (byte) MinKQuantTensor.sub(mn, j);
        }
        for (int v = 0; v < 32; v++) INTS.set(dst, q + (int) quants(v) + 4 * k, (int) INTS.get(src, p + 16 + 4 * v));
    }

    /** SOURCE[8v + 4n + m] = the weight of nibble n of byte m of int v: the order x is read in. */
    private static final int[] SOURCE = new int[QK];
    /**
     * The integer kernel's pairs of x ({@link Int8RowLanes#pairs}): for int v, pair 4v + i is the
     * (short 0, short 1) weights of its i-th nibble of a short, nibbles (low of byte 0 | 2, high
     * of byte 0 | 2, low of byte 1 | 3, high of byte 1 | 3).
     */
    static final int[] PAIR_LO = new int[QK / 2], PAIR_HI = new int[QK / 2];
    static {
        for (int v = 0; v < 32; v++) {
            for (int n = 0; n < 2; n++) {
                for (int m = 0; m < 4; m++) SOURCE[8 * v + 4 * n + m] = MinKQuantTensor.weight(4 * v + m, n);
            }
            for (int i = 0; i < 4; i++) {
                int n = i & 1, m = i >> 1;   // nibble i of a short: byte m of it, nibble n
                PAIR_LO[4 * v + i] = MinKQuantTensor.weight(4 * v + m, n);
                PAIR_HI[4 * v + i] = MinKQuantTensor.weight(4 * v + 2 + m, n);
            }
        }
    }

    /**
     * x[xOff ..] in the kernel's order, {@code xq[256b + 8v + 4n + m]} = the x of that weight times
     * 2^-8m (exact, barring underflow below 2^-102), and {@code xs[8b + j]} the sum of x over
     * sub-block j of super-block b (the mins' term).
     */
    @Override
    void prepareFloat(float[] x, int xOff, Prepared p) {
        float[] xq = p.xq, xs = p.xs;
        for (int b = 0; b < blocks; b++) {
            int xb = xOff + b * QK;
            for (int t = 0; t < QK; t += L) {
                FloatVector.fromArray(F, x, xb, SOURCE, t).mul(BYTE_SCALE).intoArray(xq, b * QK + t);
            }
        }
        Simd.groupSumsInto(x, xOff, cols, 32, xs, 0);
    }

    /**
     * {@link #group} with x rounded to integers ({@link Int8RowLanes#roundToBytes}, paired by {@link
     * #prepare}: {@code xi[128b + 4v + i]} the x of int v's i-th pair of nibbles, {@code xq[b]} the
     * block's scale, {@code xs[8b + j]} the sum of the rounded x over sub-block j). Per int vector
     * of the copy, read as 2L shorts (lane 2k + h: bytes 2h and 2h + 1 of row k's int), its four
     * nibbles are brought to the low bits one at a time and multiplied by a broadcast pair of x:
     * nibbles 0 and 2 of a short (byte 2h and 2h + 1, low nibble) belong to sub-block 2c, 1 and 3
     * to sub-block 2c + 1. A 16-bit lane sums 16 products of at most 15 * 127 per sub-block
     * (30480, no overflow); its row's two shorts are then added as ints, scaled by the sub-block's
     * scale in floats, and the mins' term is min times the sub-block's sum of x: all exact integers
     * until the super-block's {@code d * dx} and {@code dmin * dx}.
     */
    @Override
    void groupInt8(int g, Prepared p, float[] dst, int dstOff) {
        MemorySegment s = seg;
        int[] xi = p.xi;
        float[] dx = p.xq, xs = p.xs;
        FloatVector acc = FloatVector.zero(F);
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F), ms = FloatVector.zero(F);
            for (int c = 0; c < 4; c++) {
                ShortVector lo = ShortVector.zero(S2), hi = lo;
                for (int v = 8 * c; v < 8 * c + 8; v++) {
                    ShortVector q = IntVector.fromMemorySegment(I, s, base + quants(v), LE).reinterpretAsShorts();
                    int k = b * 128 + 4 * v;
                    lo = lo.add(q.and((short) 0xF).mul(IntVector.broadcast(I, xi[k]).reinterpretAsShorts()))
                            .add(q.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(IntVector.broadcast(I, xi[k + 2]).reinterpretAsShorts()));
                    hi = hi.add(q.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(IntVector.broadcast(I, xi[k + 1]).reinterpretAsShorts()))
                            .add(q.lanewise(VectorOperators.LSHR, 12).mul(IntVector.broadcast(I, xi[k + 3]).reinterpretAsShorts()));
                }
                // each row's two shorts, sign-extended, added as ints
                IntVector l = lo.reinterpretAsInts(), h = hi.reinterpretAsInts();
                IntVector low = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16));
                IntVector high = h.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(h.lanewise(VectorOperators.ASHR, 16));
                long sc = base + scales(2 * c), mn = sc + 2 * G;
                FloatVector sLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector sHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                bs = sHigh.fma((FloatVector) high.convert(VectorOperators.I2F, 0), sLow.fma((FloatVector) low.convert(VectorOperators.I2F, 0), bs));
                ms = mHigh.fma(FloatVector.broadcast(F, xs[8 * b + 2 * c + 1]), mLow.fma(FloatVector.broadcast(F, xs[8 * b + 2 * c]), ms));
            }
            // d and dmin widened from their f16 bits (as Q8_0RowLanes#group widens its d)
            IntVector dd = IntVector.fromMemorySegment(I, s, base + D, LE);
            FloatVector d = ((FloatVector) dd.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(dd.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector dmin = ((FloatVector) dd.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(dd.and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            acc = d.mul(bs).sub(dmin.mul(ms)).fma(FloatVector.broadcast(F, dx[b]), acc);
        }
        acc.intoArray(dst, dstOff);
    }

    /**
     * Groups g and h in one pass ({@link RowLanes#rows}' two streams), each broadcast pair of x
     * shared by both: the same integer sums and float steps as {@link #groupInt8} for each, so
     * the same bits. On the AMD EPYC Zen 5 (`kernels.DotBench Q4_K 512 2048`, one thread, four
     * alternating pairs of JVMs, old and new jars) 68.1-73.2 GMAC/s from L2 against 46.3-49.3
     * with the groups one after the other, and 58.4-71.3 against 43.9-45.2 from memory (65536
     * rows). The loop is {@link #groupInt8}'s written out for two groups: a helper of
     * vectors shared by both would not be inlined into them and would box its results ({@link
     * Q8_0RowLanes#group}).
     */
    @Override
    void pairInt8(int g, int h, Prepared p, float[] dst, int gOff, int hOff) {
        MemorySegment s = seg;
        int[] xi = p.xi;
        float[] dx = p.xq, xs = p.xs;
        FloatVector acc = FloatVector.zero(F), bcc = acc;
        long base = (long) g * blocks * GROUP_BLOCK, hase = (long) h * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK, hase += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F), ms = bs, cs = bs, ns = bs;
            for (int c = 0; c < 4; c++) {
                // the offsets written out, not by quants() and scales(): this body is larger than
                // C2's node budget for inlining calls (NodeCountInliningCutoff), and a call left
                // here would spill the live vectors around it (Q6_KRowLanes#groupInt8)
                long chunk = CHUNKS + (long) CHUNK * c, sc = base + chunk + 32L * G, mn = sc + 2 * G, tc = hase + chunk + 32L * G, tn = tc + 2 * G;
                ShortVector lo = ShortVector.zero(S2), hi = lo, lo2 = lo, hi2 = lo;
                for (int v = 8 * c; v < 8 * c + 8; v++) {
                    long at = chunk + 4L * G * (v & 7);
                    ShortVector q = IntVector.fromMemorySegment(I, s, base + at, LE).reinterpretAsShorts();
                    ShortVector r = IntVector.fromMemorySegment(I, s, hase + at, LE).reinterpretAsShorts();
                    int k = b * 128 + 4 * v;
                    ShortVector x0 = IntVector.broadcast(I, xi[k]).reinterpretAsShorts(), x1 = IntVector.broadcast(I, xi[k + 1]).reinterpretAsShorts();
                    ShortVector x2 = IntVector.broadcast(I, xi[k + 2]).reinterpretAsShorts(), x3 = IntVector.broadcast(I, xi[k + 3]).reinterpretAsShorts();
                    lo = lo.add(q.and((short) 0xF).mul(x0)).add(q.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(x2));
                    lo2 = lo2.add(r.and((short) 0xF).mul(x0)).add(r.lanewise(VectorOperators.LSHR, 8).and((short) 0xF).mul(x2));
                    hi = hi.add(q.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(x1)).add(q.lanewise(VectorOperators.LSHR, 12).mul(x3));
                    hi2 = hi2.add(r.lanewise(VectorOperators.LSHR, 4).and((short) 0xF).mul(x1)).add(r.lanewise(VectorOperators.LSHR, 12).mul(x3));
                }
                IntVector l = lo.reinterpretAsInts(), hh = hi.reinterpretAsInts(), l2 = lo2.reinterpretAsInts(), h2 = hi2.reinterpretAsInts();
                IntVector low = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16));
                IntVector high = hh.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(hh.lanewise(VectorOperators.ASHR, 16));
                IntVector low2 = l2.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l2.lanewise(VectorOperators.ASHR, 16));
                IntVector high2 = h2.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(h2.lanewise(VectorOperators.ASHR, 16));
                FloatVector xlo = FloatVector.broadcast(F, xs[8 * b + 2 * c]), xhi = FloatVector.broadcast(F, xs[8 * b + 2 * c + 1]);
                FloatVector sLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector sHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                bs = sHigh.fma((FloatVector) high.convert(VectorOperators.I2F, 0), sLow.fma((FloatVector) low.convert(VectorOperators.I2F, 0), bs));
                ms = mHigh.fma(xhi, mLow.fma(xlo, ms));
                FloatVector tLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, tc, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector tHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, tc + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector nLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, tn, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector nHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, tn + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                cs = tHigh.fma((FloatVector) high2.convert(VectorOperators.I2F, 0), tLow.fma((FloatVector) low2.convert(VectorOperators.I2F, 0), cs));
                ns = nHigh.fma(xhi, nLow.fma(xlo, ns));
            }
            IntVector dd = IntVector.fromMemorySegment(I, s, base + D, LE), ee = IntVector.fromMemorySegment(I, s, hase + D, LE);
            FloatVector d = ((FloatVector) dd.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(dd.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector dmin = ((FloatVector) dd.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(dd.and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector e = ((FloatVector) ee.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(ee.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector emin = ((FloatVector) ee.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(ee.and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector xd = FloatVector.broadcast(F, dx[b]);
            acc = d.mul(bs).sub(dmin.mul(ms)).fma(xd, acc);
            bcc = e.mul(cs).sub(emin.mul(ns)).fma(xd, bcc);
        }
        acc.intoArray(dst, gOff);
        bcc.intoArray(dst, hOff);
    }

    /**
     * Group g for two batch rows in one pass (continuous batching's decode, a short prompt's
     * chunk): each int vector of the copy read and its four nibbles unpacked once, multiplied by
     * each batch row's broadcast pairs of x; each row's integer sums and float steps those of
     * {@link #groupInt8}, so the same bits. Written out for the reason {@link #pairInt8} gives.
     */
    @Override
    void group2Int8(int g, Prepared p0, Prepared p1, float[] dst, int o0, int o1) {
        MemorySegment s = seg;
        int[] xi = p0.xi, yi = p1.xi;
        float[] dx = p0.xq, dy = p1.xq, xs = p0.xs, ys = p1.xs;
        FloatVector acc = FloatVector.zero(F), bcc = acc;
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F), ms = bs, cs = bs, ns = bs;
            for (int c = 0; c < 4; c++) {
                long chunk = CHUNKS + (long) CHUNK * c, sc = base + chunk + 32L * G, mn = sc + 2 * G;
                ShortVector lo = ShortVector.zero(S2), hi = lo, lo2 = lo, hi2 = lo;
                for (int v = 8 * c; v < 8 * c + 8; v++) {
                    ShortVector q = IntVector.fromMemorySegment(I, s, base + chunk + 4L * G * (v & 7), LE).reinterpretAsShorts();
                    int k = b * 128 + 4 * v;
                    ShortVector n0 = q.and((short) 0xF), n1 = q.lanewise(VectorOperators.LSHR, 4).and((short) 0xF);
                    ShortVector n2 = q.lanewise(VectorOperators.LSHR, 8).and((short) 0xF), n3 = q.lanewise(VectorOperators.LSHR, 12);
                    lo = lo.add(n0.mul(IntVector.broadcast(I, xi[k]).reinterpretAsShorts())).add(n2.mul(IntVector.broadcast(I, xi[k + 2]).reinterpretAsShorts()));
                    hi = hi.add(n1.mul(IntVector.broadcast(I, xi[k + 1]).reinterpretAsShorts())).add(n3.mul(IntVector.broadcast(I, xi[k + 3]).reinterpretAsShorts()));
                    lo2 = lo2.add(n0.mul(IntVector.broadcast(I, yi[k]).reinterpretAsShorts())).add(n2.mul(IntVector.broadcast(I, yi[k + 2]).reinterpretAsShorts()));
                    hi2 = hi2.add(n1.mul(IntVector.broadcast(I, yi[k + 1]).reinterpretAsShorts())).add(n3.mul(IntVector.broadcast(I, yi[k + 3]).reinterpretAsShorts()));
                }
                IntVector l = lo.reinterpretAsInts(), hh = hi.reinterpretAsInts(), l2 = lo2.reinterpretAsInts(), h2 = hi2.reinterpretAsInts();
                IntVector low = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16));
                IntVector high = hh.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(hh.lanewise(VectorOperators.ASHR, 16));
                IntVector low2 = l2.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l2.lanewise(VectorOperators.ASHR, 16));
                IntVector high2 = h2.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(h2.lanewise(VectorOperators.ASHR, 16));
                FloatVector sLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector sHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                bs = sHigh.fma((FloatVector) high.convert(VectorOperators.I2F, 0), sLow.fma((FloatVector) low.convert(VectorOperators.I2F, 0), bs));
                ms = mHigh.fma(FloatVector.broadcast(F, xs[8 * b + 2 * c + 1]), mLow.fma(FloatVector.broadcast(F, xs[8 * b + 2 * c]), ms));
                cs = sHigh.fma((FloatVector) high2.convert(VectorOperators.I2F, 0), sLow.fma((FloatVector) low2.convert(VectorOperators.I2F, 0), cs));
                ns = mHigh.fma(FloatVector.broadcast(F, ys[8 * b + 2 * c + 1]), mLow.fma(FloatVector.broadcast(F, ys[8 * b + 2 * c]), ns));
            }
            IntVector dd = IntVector.fromMemorySegment(I, s, base + D, LE);
            FloatVector d = ((FloatVector) dd.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(dd.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector dmin = ((FloatVector) dd.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(dd.and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            acc = d.mul(bs).sub(dmin.mul(ms)).fma(FloatVector.broadcast(F, dx[b]), acc);
            bcc = d.mul(cs).sub(dmin.mul(ns)).fma(FloatVector.broadcast(F, dy[b]), bcc);
        }
        acc.intoArray(dst, o0);
        bcc.intoArray(dst, o1);
    }

    /**
     * {@link #group} with x in floats ({@code fdkvc.int8Activations=false}, the products exact): the
     * L dot products of group g's rows with x prepared by {@link #prepareFloat}, into
     * {@code dst[dstOff ..]} (a vector store: returned, the vector would be boxed when C2 does
     * not inline this method into its caller). Per super-block and
     * 64 weights (chunk c: sub-blocks 2c and 2c + 1), eight accumulators, one per (nibble, byte),
     * each a chain of eight FMAs; then scale times sum for each sub-block, and the mins' term,
     * min_j times the sum of x over sub-block j; d and dmin once per super-block. The chunk loop
     * and the vector loop stay loops in the bytecode: C2 unrolls them itself, and a body written
     * out would pass its inlining budget (the vector helpers would then box).
     */
    @Override
    void groupFloat(int g, Prepared p, float[] dst, int dstOff) {
        MemorySegment s = seg;
        float[] xq = p.xq, xs = p.xs;
        FloatVector acc = FloatVector.zero(F);
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F), ms = FloatVector.zero(F);
            for (int c = 0; c < 4; c++) {
                FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
                for (int v = 8 * c; v < 8 * c + 8; v++) {
                    IntVector q = IntVector.fromMemorySegment(I, s, base + quants(v), LE);
                    IntVector h = q.lanewise(VectorOperators.LSHR, 4);
                    int xi = b * QK + 8 * v;
                    a0 = ((FloatVector) q.and(0xF).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi]), a0);
                    a1 = ((FloatVector) q.and(0xF00).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 1]), a1);
                    a2 = ((FloatVector) q.and(0xF0000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 2]), a2);
                    a3 = ((FloatVector) q.and(0xF000000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 3]), a3);
                    a4 = ((FloatVector) h.and(0xF).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 4]), a4);
                    a5 = ((FloatVector) h.and(0xF00).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 5]), a5);
                    a6 = ((FloatVector) h.and(0xF0000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 6]), a6);
                    a7 = ((FloatVector) h.and(0xF000000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 7]), a7);
                }
                FloatVector low = a0.add(a1).add(a2.add(a3)), high = a4.add(a5).add(a6.add(a7));
                // the conversions written out, not in a helper: a call of it was not inlined
                // ("callee uses too much stack") and boxed its vector
                long sc = base + scales(2 * c), mn = sc + 2 * G;
                FloatVector sLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector sHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mLow = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                FloatVector mHigh = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0);
                bs = sHigh.fma(high, sLow.fma(low, bs));
                ms = mHigh.fma(FloatVector.broadcast(F, xs[8 * b + 2 * c + 1]), mLow.fma(FloatVector.broadcast(F, xs[8 * b + 2 * c]), ms));
            }
            // d and dmin widened from their f16 bits (as Q8_0RowLanes#group widens its d)
            IntVector dd = IntVector.fromMemorySegment(I, s, base + D, LE);
            FloatVector d = ((FloatVector) dd.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(dd.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            FloatVector dmin = ((FloatVector) dd.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(dd.and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
            acc = d.fma(bs, acc).sub(dmin.mul(ms));
        }
        acc.intoArray(dst, dstOff);
    }

    /**
     * Per chunk of 64 columns, sub-blocks 2c and 2c + 1: the L rows' {@code scale * d} and
     * {@code min * dmin}, then nibble n of byte m of each of the chunk's eight ints, column
     * {@code 64c + 32n + (4v + m) % 32}, is {@code q * (scale * d) - min * dmin}: {@link
     * Q4_KTensor}'s dequantised bits.
     */
    @Override
    void fillBlock(long base, float[] w, int o, int stride) {
        MemorySegment s = seg;
        IntVector dd = IntVector.fromMemorySegment(I, s, base + D, LE);
        FloatVector d = ((FloatVector) dd.lanewise(VectorOperators.LSHL, 13).and(0x0FFFE000).or(dd.lanewise(VectorOperators.LSHL, 16).and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
        FloatVector dmin = ((FloatVector) dd.lanewise(VectorOperators.LSHR, 3).and(0x0FFFE000).or(dd.and(0x80000000)).reinterpretAsFloats()).mul(0x1p112f);
        for (int c = 0; c < 4; c++) {
            long sc = base + scales(2 * c), mn = sc + 2 * G;
            FloatVector d1 = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0)).mul(d);
            FloatVector d2 = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0)).mul(d);
            FloatVector m1 = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0)).mul(dmin);
            FloatVector m2 = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, mn + G, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0)).convert(VectorOperators.I2F, 0)).mul(dmin);
            for (int v = 8 * c; v < 8 * c + 8; v++) {
                IntVector q = IntVector.fromMemorySegment(I, s, base + quants(v), LE);
                int col = o + (64 * c + (4 * v & 31)) * stride;
                for (int m = 0; m < 4; m++, col += stride) {
                    ((FloatVector) q.lanewise(VectorOperators.LSHR, 8 * m).and(0xF).convert(VectorOperators.I2F, 0)).mul(d1).sub(m1).intoArray(w, col);
                    ((FloatVector) q.lanewise(VectorOperators.LSHR, 8 * m + 4).and(0xF).convert(VectorOperators.I2F, 0)).mul(d2).sub(m2).intoArray(w, col + 32 * stride);
                }
            }
        }
    }
}
