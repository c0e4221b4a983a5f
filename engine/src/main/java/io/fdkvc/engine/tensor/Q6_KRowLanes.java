package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;

/**
 * Q6_K's {@link RowLanes}. The weights of a super-block are kept in their own order: weight
 * {@code y = 8v + 4n + m} has its low four bits in nibble n of byte m of low-bits int v (v < 32)
 * and its high two bits in int {@code v / 2} of the high bits, byte m, bits
 * {@code 2 (2 (v % 2) + n)} and up. Per group g of L rows and super-block b,
 * {@link #GROUP_BLOCK} bytes at {@code (g * blocks + b) * GROUP_BLOCK}: the L rows' d as floats,
 * for each sub-block s of 16 weights the L rows' signed scales as bytes, then per sub-block s
 * three vectors of L ints (lane k: row k), its high bits (int s) and its low bits (ints 2s and
 * 2s + 1), in the order the kernel reads them: one stream, where low and high bits in two runs
 * read as two streams ran at two thirds of the row kernel's speed from memory. A 6-bit value is masked in place, {@code q * 2^8m}, exact in a float, and x
 * carries {@code 2^-8m}; the offset of 32 is one subtraction per sub-block of 32 times the sum of
 * its x. The copy takes 212 bytes per 210 of the file's (d widened to a float).
 */
final class Q6_KRowLanes extends Int8RowLanes {
    static final int QK = Q6_KTensor.QK, BLOCK = Q6_KTensor.BLOCK;
    private static final int D = 0, QUADS = 4 * G, QUAD = 52 * G, SUB = 12 * G;

    /** Offset of sub-block s's scales within a group-block; its ints follow its quad's four scales. */
    private static long scales(int s) {
        return QUADS + (long) QUAD * (s >> 2) + G * (s & 3);
    }

    private static long sub(int s) {
        return QUADS + (long) QUAD * (s >> 2) + 4 * G + (long) SUB * (s & 3);
    }
    /** Bytes per group and super-block. */
    static final int GROUP_BLOCK = 212 * G;

    /**
     * The integer kernel's pairs of x ({@link Int8RowLanes#pairs}): pair 8sb + 2i + k is the weights
     * of bytes k and k + 2 of sub-block sb's int i (weights 16sb + 4i + k and 16sb + 4i + k + 2).
     */
    static final int[] PAIR_LO = new int[QK / 2], PAIR_HI = new int[QK / 2];
    static {
        for (int j = 0; j < QK / 2; j++) {
            int sb = j / 8, i = (j / 2) % 4, k = j % 2;
            PAIR_LO[j] = 16 * sb + 4 * i + k;
            PAIR_HI[j] = 16 * sb + 4 * i + k + 2;
        }
    }

    Q6_KRowLanes(MemorySegment seg, int rows, int cols) {
        super(seg, rows, cols, QK, GROUP_BLOCK, PAIR_LO, PAIR_HI, 16, 32f);
    }

    /** {@link #rowBlock} with its scratch, for one {@link #rearrange} (one thread's). */
    static RowBlock rowBlocks() {
        int[] q = new int[QK];
        return (src, p, out, o, k) -> rowBlock(src, p, out, o, k, q);
    }

    /**
     * Row k of a group's super-block at {@code src[p ..]} into its lanes of the group-block at
     * {@code dst[o ..]}, through q (256 ints of scratch).
     */
    static void rowBlock(byte[] src, int p, byte[] dst, int o, int k, int[] q) {
        // the 6-bit values in weight order (Q6_KTensor's class comment)
        for (int h = 0; h < 2; h++) {
            int ql = p + 64 * h, qh = p + 128 + 32 * h;
            for (int l = 0; l < 32; l++) {
                int lo = src[ql + l] & 0xFF, lo32 = src[ql + l + 32] & 0xFF, hi = src[qh + l] & 0xFF;
                q[128 * h + l] = (lo & 0xF) | (hi & 3) << 4;
                q[128 * h + l + 32] = (lo32 & 0xF) | (hi >> 2 & 3) << 4;
                q[128 * h + l + 64] = lo >> 4 | (hi >> 4 & 3) << 4;
                q[128 * h + l + 96] = lo32 >> 4 | (hi >> 6 & 3) << 4;
            }
        }
        FLOATS.set(dst, o + D + 4 * k, Float.float16ToFloat((short) ((src[p + 208] & 0xFF) | src[p + 209] << 8)));
        for (int s = 0; s < 16; s++) dst[o + (int) scales(s) + k] = src[p + 192 + s];
        for (int v = 0; v < 32; v++) {
            int word = 0;
            for (int m = 0; m < 4; m++) word |= ((q[8 * v + m] & 0xF) | (q[8 * v + 4 + m] & 0xF) << 4) << 8 * m;
            INTS.set(dst, o + (int) sub(v / 2) + 4 * G * (1 + v % 2) + 4 * k, word);
        }
        for (int s = 0; s < 16; s++) {
            int word = 0;
            for (int m = 0; m < 4; m++) {
                int y = 16 * s + m;
                word |= (q[y] >> 4 | (q[y + 4] >> 4) << 2 | (q[y + 8] >> 4) << 4 | (q[y + 12] >> 4) << 6) << 8 * m;
            }
            INTS.set(dst, o + (int) sub(s) + 4 * k, word);
        }
    }

    /**
     * x in weight order times 2^-8m ({@code xq[256b + y]}, y = 8v + 4n + m), and
     * {@code xs[16b + s]} = 32 times the sum of x over sub-block s of super-block b (the offsets).
     */
    @Override
    void prepareFloat(float[] x, int xOff, Prepared p) {
        float[] xq = p.xq, xs = p.xs;
        for (int i = 0; i < cols; i += L) FloatVector.fromArray(F, x, xOff + i).mul(BYTE_SCALE).intoArray(xq, i);
        Simd.groupSumsInto(x, xOff, cols, 16, xs, 0);
        for (int i = 0, n = cols / 16; i < n; i++) xs[i] *= 32f;
    }

    /**
     * {@link #group} with x rounded to integers ({@link Int8RowLanes#roundToBytes}, paired by {@link
     * #prepare}: {@code xi[128b + 8sb + 2i + k]} the x of sub-block sb's int i, bytes k and k + 2;
     * {@code xq[b]} the block's scale; {@code xs[16b + sb]} 32 times the sub-block's sum of the
     * rounded x). Each int of 6-bit values, read as 2L shorts (lane 2k + h: bytes 2h and 2h + 1
     * of row k's int), gives its low bytes' values by a mask and its high bytes' by a shift; each
     * is multiplied by a broadcast pair of x into one of two 16-bit sums of four products of at
     * most 63 * 127 (32004, no overflow). A row's four shorts are added as ints, less 32 times the
     * sum of x, times the sub-block's scale in floats: exact integers until the super-block's
     * {@code d * dx}.
     */
    @Override
    void groupInt8(int g, Prepared p, float[] dst, int dstOff) {
        MemorySegment s = seg;
        int[] xi = p.xi;
        float[] dx = p.xq, xs = p.xs;
        FloatVector acc = FloatVector.zero(F);
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F);
            for (int sb = 0; sb < 16; sb++) {
                // both offsets first: C2 inlines calls in bytecode order, and by the end of this body
                // its node budget is spent (NodeCountInliningCutoff), so scales(sb) there stayed a
                // call per sub-block, its vectors spilled around it: 26 -> 42 GMAC/s from L2
                long sub = base + sub(sb), sc = base + scales(sb);
                IntVector qh = IntVector.fromMemorySegment(I, s, sub, LE);
                IntVector q0 = IntVector.fromMemorySegment(I, s, sub + 4 * G, LE);
                IntVector q1 = IntVector.fromMemorySegment(I, s, sub + 8 * G, LE);
                ShortVector w0 = q0.and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30303030)).reinterpretAsShorts();
                ShortVector w1 = q0.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30303030)).reinterpretAsShorts();
                ShortVector w2 = q1.and(0x0F0F0F0F).or(qh.and(0x30303030)).reinterpretAsShorts();
                ShortVector w3 = q1.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30303030)).reinterpretAsShorts();
                int k = b * 128 + 8 * sb;
                ShortVector lo = w0.and((short) 0x3F).mul(IntVector.broadcast(I, xi[k]).reinterpretAsShorts())
                        .add(w1.and((short) 0x3F).mul(IntVector.broadcast(I, xi[k + 2]).reinterpretAsShorts()))
                        .add(w2.and((short) 0x3F).mul(IntVector.broadcast(I, xi[k + 4]).reinterpretAsShorts()))
                        .add(w3.and((short) 0x3F).mul(IntVector.broadcast(I, xi[k + 6]).reinterpretAsShorts()));
                ShortVector hi = w0.lanewise(VectorOperators.LSHR, 8).mul(IntVector.broadcast(I, xi[k + 1]).reinterpretAsShorts())
                        .add(w1.lanewise(VectorOperators.LSHR, 8).mul(IntVector.broadcast(I, xi[k + 3]).reinterpretAsShorts()))
                        .add(w2.lanewise(VectorOperators.LSHR, 8).mul(IntVector.broadcast(I, xi[k + 5]).reinterpretAsShorts()))
                        .add(w3.lanewise(VectorOperators.LSHR, 8).mul(IntVector.broadcast(I, xi[k + 7]).reinterpretAsShorts()));
                IntVector l = lo.reinterpretAsInts(), h = hi.reinterpretAsInts();
                IntVector sum = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16))
                        .add(h.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(h.lanewise(VectorOperators.ASHR, 16)));
                FloatVector scale = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.B2I, I, 0)).convert(VectorOperators.I2F, 0);
                bs = scale.fma(((FloatVector) sum.convert(VectorOperators.I2F, 0)).sub(xs[16 * b + sb]), bs);
            }
            acc = FloatVector.fromMemorySegment(F, s, base + D, LE).mul(dx[b]).fma(bs, acc);
        }
        acc.intoArray(dst, dstOff);
    }

    /**
     * Groups g and h in one pass ({@link RowLanes#rows}' two streams), the sub-block's eight
     * broadcast pairs of x and its offset shared by both: the same integer sums and float steps as
     * {@link #groupInt8} for each, so the same bits. From L2 on the AMD EPYC Zen 5
     * (`kernels.DotBench Q6_K 512 2048`, one thread, four alternating pairs of JVMs, old and new
     * jars) 47.4-50.1 GMAC/s against 40.8-42.4 with the groups one after the other. The two groups' bodies are
     * {@link #groupInt8}'s, written out: as one helper shared by both kernels (453 bytes of
     * bytecode) it was over the size C2 inlines at a hot call ("hot method too big"), stayed a
     * call and boxed its vectors, 5.8-6.4 GMAC/s from L2 (`KernelInliningTest` fails on that).
     */
    @Override
    void pairInt8(int g, int h, Prepared p, float[] dst, int gOff, int hOff) {
        MemorySegment s = seg;
        int[] xi = p.xi;
        float[] dx = p.xq, xs = p.xs;
        FloatVector acc = FloatVector.zero(F), bcc = acc;
        long base = (long) g * blocks * GROUP_BLOCK, hase = (long) h * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK, hase += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F), cs = bs;
            for (int sb = 0; sb < 16; sb++) {
                long sub = base + sub(sb), sc = base + scales(sb), tub = hase + sub(sb), tc = hase + scales(sb);
                int k = b * 128 + 8 * sb;
                ShortVector x0 = IntVector.broadcast(I, xi[k]).reinterpretAsShorts(), x1 = IntVector.broadcast(I, xi[k + 1]).reinterpretAsShorts();
                ShortVector x2 = IntVector.broadcast(I, xi[k + 2]).reinterpretAsShorts(), x3 = IntVector.broadcast(I, xi[k + 3]).reinterpretAsShorts();
                ShortVector x4 = IntVector.broadcast(I, xi[k + 4]).reinterpretAsShorts(), x5 = IntVector.broadcast(I, xi[k + 5]).reinterpretAsShorts();
                ShortVector x6 = IntVector.broadcast(I, xi[k + 6]).reinterpretAsShorts(), x7 = IntVector.broadcast(I, xi[k + 7]).reinterpretAsShorts();
                FloatVector xo = FloatVector.broadcast(F, xs[16 * b + sb]);
                {
                    IntVector qh = IntVector.fromMemorySegment(I, s, sub, LE);
                    IntVector q0 = IntVector.fromMemorySegment(I, s, sub + 4 * G, LE);
                    IntVector q1 = IntVector.fromMemorySegment(I, s, sub + 8 * G, LE);
                    ShortVector w0 = q0.and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30303030)).reinterpretAsShorts();
                    ShortVector w1 = q0.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30303030)).reinterpretAsShorts();
                    ShortVector w2 = q1.and(0x0F0F0F0F).or(qh.and(0x30303030)).reinterpretAsShorts();
                    ShortVector w3 = q1.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30303030)).reinterpretAsShorts();
                    ShortVector lo = w0.and((short) 0x3F).mul(x0).add(w1.and((short) 0x3F).mul(x2)).add(w2.and((short) 0x3F).mul(x4)).add(w3.and((short) 0x3F).mul(x6));
                    ShortVector hi = w0.lanewise(VectorOperators.LSHR, 8).mul(x1).add(w1.lanewise(VectorOperators.LSHR, 8).mul(x3))
                            .add(w2.lanewise(VectorOperators.LSHR, 8).mul(x5)).add(w3.lanewise(VectorOperators.LSHR, 8).mul(x7));
                    IntVector l = lo.reinterpretAsInts(), hh = hi.reinterpretAsInts();
                    IntVector sum = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16))
                            .add(hh.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(hh.lanewise(VectorOperators.ASHR, 16)));
                    FloatVector scale = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.B2I, I, 0)).convert(VectorOperators.I2F, 0);
                    bs = scale.fma(((FloatVector) sum.convert(VectorOperators.I2F, 0)).sub(xo), bs);
                }
                {
                    IntVector qh = IntVector.fromMemorySegment(I, s, tub, LE);
                    IntVector q0 = IntVector.fromMemorySegment(I, s, tub + 4 * G, LE);
                    IntVector q1 = IntVector.fromMemorySegment(I, s, tub + 8 * G, LE);
                    ShortVector w0 = q0.and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30303030)).reinterpretAsShorts();
                    ShortVector w1 = q0.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30303030)).reinterpretAsShorts();
                    ShortVector w2 = q1.and(0x0F0F0F0F).or(qh.and(0x30303030)).reinterpretAsShorts();
                    ShortVector w3 = q1.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30303030)).reinterpretAsShorts();
                    ShortVector lo = w0.and((short) 0x3F).mul(x0).add(w1.and((short) 0x3F).mul(x2)).add(w2.and((short) 0x3F).mul(x4)).add(w3.and((short) 0x3F).mul(x6));
                    ShortVector hi = w0.lanewise(VectorOperators.LSHR, 8).mul(x1).add(w1.lanewise(VectorOperators.LSHR, 8).mul(x3))
                            .add(w2.lanewise(VectorOperators.LSHR, 8).mul(x5)).add(w3.lanewise(VectorOperators.LSHR, 8).mul(x7));
                    IntVector l = lo.reinterpretAsInts(), hh = hi.reinterpretAsInts();
                    IntVector sum = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16))
                            .add(hh.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(hh.lanewise(VectorOperators.ASHR, 16)));
                    FloatVector scale = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, tc, LE).convertShape(VectorOperators.B2I, I, 0)).convert(VectorOperators.I2F, 0);
                    cs = scale.fma(((FloatVector) sum.convert(VectorOperators.I2F, 0)).sub(xo), cs);
                }
            }
            acc = FloatVector.fromMemorySegment(F, s, base + D, LE).mul(dx[b]).fma(bs, acc);
            bcc = FloatVector.fromMemorySegment(F, s, hase + D, LE).mul(dx[b]).fma(cs, bcc);
        }
        acc.intoArray(dst, gOff);
        bcc.intoArray(dst, hOff);
    }

    /**
     * Group g for two batch rows in one pass: each sub-block's 6-bit values assembled once and
     * multiplied by each batch row's broadcast pairs of x; each row's integer sums and float
     * steps those of {@link #groupInt8}, so the same bits. Written out for the reason {@link
     * #pairInt8} gives: the two batch rows' steps as one helper of 13 arguments, eight of them
     * vectors, stayed two calls (C2's node budget, NodeCountInliningCutoff, which {@code
     * KernelInliningTest} reports) and boxed them (`kernels.DotBench Q6_K 512 2048 5 2` 7.7-7.9
     * GMAC/s against 55.4).
     */
    @Override
    void group2Int8(int g, Prepared p0, Prepared p1, float[] dst, int o0, int o1) {
        MemorySegment s = seg;
        int[] xi = p0.xi, yi = p1.xi;
        float[] dx = p0.xq, dy = p1.xq, xs = p0.xs, ys = p1.xs;
        FloatVector acc = FloatVector.zero(F), bcc = acc;
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F), cs = bs;
            for (int sb = 0; sb < 16; sb++) {
                long sub = base + sub(sb), sc = base + scales(sb);
                int k = b * 128 + 8 * sb;
                IntVector qh = IntVector.fromMemorySegment(I, s, sub, LE);
                IntVector q0 = IntVector.fromMemorySegment(I, s, sub + 4 * G, LE);
                IntVector q1 = IntVector.fromMemorySegment(I, s, sub + 8 * G, LE);
                ShortVector w0 = q0.and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30303030)).reinterpretAsShorts();
                ShortVector w1 = q0.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30303030)).reinterpretAsShorts();
                ShortVector w2 = q1.and(0x0F0F0F0F).or(qh.and(0x30303030)).reinterpretAsShorts();
                ShortVector w3 = q1.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30303030)).reinterpretAsShorts();
                ShortVector v0 = w0.and((short) 0x3F), v1 = w1.and((short) 0x3F), v2 = w2.and((short) 0x3F), v3 = w3.and((short) 0x3F);
                ShortVector u0 = w0.lanewise(VectorOperators.LSHR, 8), u1 = w1.lanewise(VectorOperators.LSHR, 8);
                ShortVector u2 = w2.lanewise(VectorOperators.LSHR, 8), u3 = w3.lanewise(VectorOperators.LSHR, 8);
                FloatVector scale = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, sc, LE).convertShape(VectorOperators.B2I, I, 0)).convert(VectorOperators.I2F, 0);
                {
                    ShortVector lo = v0.mul(IntVector.broadcast(I, xi[k]).reinterpretAsShorts()).add(v1.mul(IntVector.broadcast(I, xi[k + 2]).reinterpretAsShorts()))
                            .add(v2.mul(IntVector.broadcast(I, xi[k + 4]).reinterpretAsShorts())).add(v3.mul(IntVector.broadcast(I, xi[k + 6]).reinterpretAsShorts()));
                    ShortVector hi = u0.mul(IntVector.broadcast(I, xi[k + 1]).reinterpretAsShorts()).add(u1.mul(IntVector.broadcast(I, xi[k + 3]).reinterpretAsShorts()))
                            .add(u2.mul(IntVector.broadcast(I, xi[k + 5]).reinterpretAsShorts())).add(u3.mul(IntVector.broadcast(I, xi[k + 7]).reinterpretAsShorts()));
                    IntVector l = lo.reinterpretAsInts(), hh = hi.reinterpretAsInts();
                    IntVector sum = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16))
                            .add(hh.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(hh.lanewise(VectorOperators.ASHR, 16)));
                    bs = scale.fma(((FloatVector) sum.convert(VectorOperators.I2F, 0)).sub(xs[16 * b + sb]), bs);
                }
                {
                    ShortVector lo = v0.mul(IntVector.broadcast(I, yi[k]).reinterpretAsShorts()).add(v1.mul(IntVector.broadcast(I, yi[k + 2]).reinterpretAsShorts()))
                            .add(v2.mul(IntVector.broadcast(I, yi[k + 4]).reinterpretAsShorts())).add(v3.mul(IntVector.broadcast(I, yi[k + 6]).reinterpretAsShorts()));
                    ShortVector hi = u0.mul(IntVector.broadcast(I, yi[k + 1]).reinterpretAsShorts()).add(u1.mul(IntVector.broadcast(I, yi[k + 3]).reinterpretAsShorts()))
                            .add(u2.mul(IntVector.broadcast(I, yi[k + 5]).reinterpretAsShorts())).add(u3.mul(IntVector.broadcast(I, yi[k + 7]).reinterpretAsShorts()));
                    IntVector l = lo.reinterpretAsInts(), hh = hi.reinterpretAsInts();
                    IntVector sum = l.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(l.lanewise(VectorOperators.ASHR, 16))
                            .add(hh.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16).add(hh.lanewise(VectorOperators.ASHR, 16)));
                    cs = scale.fma(((FloatVector) sum.convert(VectorOperators.I2F, 0)).sub(ys[16 * b + sb]), cs);
                }
            }
            FloatVector d = FloatVector.fromMemorySegment(F, s, base + D, LE);
            acc = d.mul(dx[b]).fma(bs, acc);
            bcc = d.mul(dy[b]).fma(cs, bcc);
        }
        acc.intoArray(dst, o0);
        bcc.intoArray(dst, o1);
    }

    /**
     * {@link #group} with x in floats ({@code fdkvc.int8Activations=false}, the products exact):
     * group g's L dot products, to {@code dst[dstOff ..]}: per sub-block four accumulators (one per
     * byte), each a chain of four FMAs over the sub-block's two low-bits ints and two nibbles;
     * their sum less 32 times the sum of x, times the L scales; d once per super-block. Written
     * as one method with loops: see {@link Q4_KRowLanes#groupFloat}.
     */
    @Override
    void groupFloat(int g, Prepared p, float[] dst, int dstOff) {
        MemorySegment s = seg;
        float[] xq = p.xq, xs = p.xs;
        FloatVector acc = FloatVector.zero(F);
        long base = (long) g * blocks * GROUP_BLOCK;
        for (int b = 0; b < blocks; b++, base += GROUP_BLOCK) {
            FloatVector bs = FloatVector.zero(F);
            for (int sb = 0; sb < 16; sb++) {
                long sub = base + sub(sb);
                IntVector qh = IntVector.fromMemorySegment(I, s, sub, LE);
                IntVector q0 = IntVector.fromMemorySegment(I, s, sub + 4 * G, LE);
                IntVector q1 = IntVector.fromMemorySegment(I, s, sub + 8 * G, LE);
                int xi = b * QK + 16 * sb;
                // the four (int, nibble) pairs: high bits at bits 0, 2, 4, 6 of each byte, brought to 4-5
                IntVector w0 = q0.and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30303030));
                IntVector w1 = q0.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30303030));
                IntVector w2 = q1.and(0x0F0F0F0F).or(qh.and(0x30303030));
                IntVector w3 = q1.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30303030));
                FloatVector a0 = ((FloatVector) w0.and(0x3F).convert(VectorOperators.I2F, 0)).mul(FloatVector.broadcast(F, xq[xi]));
                FloatVector a1 = ((FloatVector) w0.and(0x3F00).convert(VectorOperators.I2F, 0)).mul(FloatVector.broadcast(F, xq[xi + 1]));
                FloatVector a2 = ((FloatVector) w0.and(0x3F0000).convert(VectorOperators.I2F, 0)).mul(FloatVector.broadcast(F, xq[xi + 2]));
                FloatVector a3 = ((FloatVector) w0.and(0x3F000000).convert(VectorOperators.I2F, 0)).mul(FloatVector.broadcast(F, xq[xi + 3]));
                a0 = ((FloatVector) w1.and(0x3F).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 4]), a0);
                a1 = ((FloatVector) w1.and(0x3F00).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 5]), a1);
                a2 = ((FloatVector) w1.and(0x3F0000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 6]), a2);
                a3 = ((FloatVector) w1.and(0x3F000000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 7]), a3);
                a0 = ((FloatVector) w2.and(0x3F).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 8]), a0);
                a1 = ((FloatVector) w2.and(0x3F00).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 9]), a1);
                a2 = ((FloatVector) w2.and(0x3F0000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 10]), a2);
                a3 = ((FloatVector) w2.and(0x3F000000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 11]), a3);
                a0 = ((FloatVector) w3.and(0x3F).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 12]), a0);
                a1 = ((FloatVector) w3.and(0x3F00).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 13]), a1);
                a2 = ((FloatVector) w3.and(0x3F0000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 14]), a2);
                a3 = ((FloatVector) w3.and(0x3F000000).convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F, xq[xi + 15]), a3);
                FloatVector sum = a0.add(a1).add(a2.add(a3)).sub(xs[16 * b + sb]);
                FloatVector scale = (FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, base + scales(sb), LE).convertShape(VectorOperators.B2I, I, 0)).convert(VectorOperators.I2F, 0);
                bs = scale.fma(sum, bs);
            }
            acc = FloatVector.fromMemorySegment(F, s, base + D, LE).fma(bs, acc);
        }
        acc.intoArray(dst, dstOff);
    }

    /**
     * Per sub-block of 16 columns, its three int vectors give the four ints of 6-bit values as in
     * {@link #group}; value m of int i is column 16 sb + 4i + m, {@code (q - 32) * (scale * d)}:
     * {@link Q6_KTensor}'s dequantised bits.
     */
    @Override
    void fillBlock(long base, float[] w, int o, int stride) {
        MemorySegment s = seg;
        FloatVector d = FloatVector.fromMemorySegment(F, s, base + D, LE);
        for (int sb = 0; sb < 16; sb++, o += 16 * stride) {
            long sub = base + sub(sb);
            IntVector qh = IntVector.fromMemorySegment(I, s, sub, LE);
            IntVector q0 = IntVector.fromMemorySegment(I, s, sub + 4 * G, LE);
            IntVector q1 = IntVector.fromMemorySegment(I, s, sub + 8 * G, LE);
            FloatVector dm = ((FloatVector) ((IntVector) ByteVector.fromMemorySegment(B, s, base + scales(sb), LE).convertShape(VectorOperators.B2I, I, 0)).convert(VectorOperators.I2F, 0)).mul(d);
            for (int i = 0; i < 4; i++) {
                IntVector q = switch (i) {
                    case 0 -> q0.and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 4).and(0x30303030));
                    case 1 -> q0.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHL, 2).and(0x30303030));
                    case 2 -> q1.and(0x0F0F0F0F).or(qh.and(0x30303030));
                    default -> q1.lanewise(VectorOperators.LSHR, 4).and(0x0F0F0F0F).or(qh.lanewise(VectorOperators.LSHR, 2).and(0x30303030));
                };
                for (int m = 0; m < 4; m++) {
                    ((FloatVector) q.lanewise(VectorOperators.LSHR, 8 * m).and(0x3F).sub(32).convert(VectorOperators.I2F, 0)).mul(dm).intoArray(w, o + (4 * i + m) * stride);
                }
            }
        }
    }
}
