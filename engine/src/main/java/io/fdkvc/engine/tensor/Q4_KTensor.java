package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.INT_LE;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.PARTS;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * GGML Q4_K: super-blocks of 256 weights (144 bytes): f16 {@code d}, f16 {@code dmin}, 12 bytes
 * packing eight 6-bit scales and eight 6-bit mins (one pair per sub-block of 32), then 128 bytes
 * of nibbles. The nibbles come in four runs of 32 bytes, one per 64 weights: the low nibbles are
 * the first sub-block of the 64, the high nibbles the second. Weight = d * scale * q - dmin * min.
 */
public final class Q4_KTensor extends MinKQuantTensor {
    static final int QK = 256, BLOCK = 144;

    // dequantizeBlocks16's constants (16 lanes; null at other widths). The 12 packed bytes give
    // scale j < 4 = byte j & 63, min j < 4 = byte j + 4 & 63, and for j >= 4 scale = byte j + 4 &
    // 15 | (byte j - 4 >> 6) << 4, min = byte j + 4 >> 4 | (byte j >> 6) << 4 (ggml's
    // get_scale_min_k4): lanes 0-7 of the result are the scales, 8-15 the mins.
    private static final FloatVector NIBBLES = L == 16 ? FloatVector.zero(F).addIndex(1) : null;
    private static final VectorShuffle<Integer> PACK_LOW = L == 16 ? VectorShuffle.fromValues(I, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11) : null;
    private static final IntVector PACK_LOW_SHIFT = L == 16 ? IntVector.fromArray(I, new int[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4}, 0) : null;
    private static final IntVector PACK_LOW_MASK = L == 16 ? IntVector.fromArray(I, new int[] {63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15}, 0) : null;
    private static final VectorShuffle<Integer> PACK_HIGH = L == 16 ? VectorShuffle.fromValues(I, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 4, 5, 6, 7) : null;
    private static final IntVector PACK_HIGH_MASK = L == 16 ? IntVector.fromArray(I, new int[] {0, 0, 0, 0, 3, 3, 3, 3, 0, 0, 0, 0, 3, 3, 3, 3}, 0) : null;
    private static final VectorMask<Float> MINS = L == 16 ? VectorMask.fromLong(F, 0xFF00L) : null;

    public Q4_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q4_K, seg, rows, cols);
    }

    @Override
    float dot(int row, float[] xp, float[] xs) {
        return UNIFORM_LOADS ? dotUniform(row, xp, xs) : dotMixed(row, xp, xs);
    }

    /**
     * Whether each int load of nibbles lies within one 32-byte chunk, so that all its lanes
     * belong to the same two sub-blocks (the low nibbles' and the high nibbles'): with 4 or 8
     * lanes; with 16 a load spans two chunks.
     */
    static final boolean UNIFORM_LOADS = 4 * L <= 32;

    /**
     * Lane shifts that place byte j of an int holding four mins in the low bits of lane j (mins
     * of sub-blocks 0-3 in one int, 4-7 in another): {@link #dotUniform}'s one vector of the
     * eight mins (two with 4 lanes).
     */
    private static final IntVector MIN_SHIFT = IntVector.fromArray(I, new int[] {0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24}, 0);
    private static final VectorMask<Integer> UPPER_FOUR = VectorMask.fromLong(I, 0xF0L);

    /**
     * Floats of sums {@link #prepare} writes: the sum of x over each sub-block of 32 weights, which
     * both kernels' mins terms read (no k-quant lane sums: neither kernel reads them); with 16
     * lanes eight zeros before each super-block's eight sums ({@link #dotMixed}'s layout).
     */
    @Override
    int sumsLength() {
        return L == 16 ? cols / 16 : cols / 32;
    }

    @Override
    void prepare(float[] x, int xOff, float[] xp, float[] xs) {
        permuteLanes(x, xOff, cols, SOURCE, 1f, xp, null);
        if (L != 16) {
            Simd.groupSumsInto(x, xOff, cols, 32, xs, 0);
            return;
        }
        // dotMixed's layout: per super-block b, 16 floats, zeros in 0-7 and the eight sums in
        // 8-15, where its vector of the unpacked scales and mins holds the mins
        for (int b = 0, nb = cols / QK; b < nb; b++) {
            Arrays.fill(xs, 16 * b, 16 * b + 8, 0f);
            Simd.groupSumsInto(x, xOff + b * QK, QK, 32, xs, 16 * b + 8);
        }
    }

    /**
     * The kernel with 4 or 8 lanes: every lane of (int load u, nibble n) has sub-block
     * j = 2c + n, c = 4Lu / 32, so its scale is one scalar, broadcast, where {@link #dotMixed}
     * extracts it lane by lane (five vector operations per load and nibble); and the mins term
     * of the super-block, the sum over j of min_j times the sum of x over sub-block j, is one
     * product of a vector of the eight mins with the eight sums {@link #prepare} wrote (as in
     * {@link #dotMixed}, there in the upper half of one 16-lane vector).
     */
    private float dotUniform(int row, float[] xp, float[] xs) {
        MemorySegment s = seg;
        long p = rowStart(row);
        FloatVector acc = FloatVector.zero(F), mAcc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            float dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            int s0 = s.get(INT_LE, p + 4), s1 = s.get(INT_LE, p + 8), s2 = s.get(INT_LE, p + 12);
            long sc = (scalesLo(s0) & 0xFFFFFFFFL) | (long) scalesHi(s0, s2) << 32;
            FloatVector bs = FloatVector.zero(F);
            for (int u = 0; u < U; u++) {
                IntVector q = IntVector.fromMemorySegment(I, s, p + 16 + 4 * L * u, LE);
                int c = (4 * L * u) >> 5;
                for (int n = 0; n < 2; n++) {
                    int v = b * QK + 4 * (u * 2 + n) * L;
                    IntVector qn = q.lanewise(VectorOperators.LSHR, 4 * n);
                    FloatVector sm = FloatVector.zero(F);
                    for (int m = 0; m < 4; m++) {
                        sm = Simd.intsToFloats(qn.and(0xF << (8 * m))).fma(FloatVector.fromArray(F, xp, v + m * L), sm);
                    }
                    bs = FloatVector.broadcast(F, (float) sub(sc, 2 * c + n)).fma(sm, bs);
                }
            }
            acc = bs.fma(FloatVector.broadcast(F, d), acc);
            // the eight mins: sub-blocks 0-3 from minsLo, 4-7 from minsHi, in lanes 0-7
            int mLo = minsLo(s1), mHi = minsHi(s1, s2);
            for (int k = 0; k < 8; k += L) {
                IntVector mw = L == 4 ? IntVector.broadcast(I, k == 0 ? mLo : mHi)
                        : IntVector.broadcast(I, mLo).blend(IntVector.broadcast(I, mHi), UPPER_FOUR);
                FloatVector mins = Simd.intsToFloats(mw.lanewise(VectorOperators.LSHR, MIN_SHIFT).and(0xFF));
                mAcc = mins.mul(FloatVector.fromArray(F, xs, 8 * b + k)).fma(FloatVector.broadcast(F, dmin), mAcc);
            }
        }
        return Simd.sum(acc.sub(mAcc));
    }

    // dotMixed's scales: lane i of load u, nibble n has sub-block 4u + 2 (i / 8) + n, so its
    // scale is lane PICK_SCALE[i] + 4u + n of the vector holding scale j in lane j
    private static final IntVector PICK_SCALE = L == 16 ? IntVector.fromArray(I, new int[] {0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2}, 0) : null;
    // lanes 8-15 to 0-7 and back: dotMixed's mins term, accumulated in lanes 8-15 (0-7 hold
    // zeros: the scales times the zeros of the prepared sums), moved once per row
    private static final VectorShuffle<Float> SWAP_HALVES = L == 16 ? VectorShuffle.fromOp(F, i -> i ^ 8) : null;

    private float dotMixed(int row, float[] xp, float[] xs) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // Per super-block: bs = sum over lanes of scale * (q . x), and the mins term, the sum over
        // sub-blocks j of min_j times the sum of x over sub-block j; d and dmin multiply them once
        // per block. The kernel of 16 lanes: int load u spans two 32-byte chunks, so the lanes of
        // one (load, nibble) belong to two sub-blocks (see MinKQuantTensor). The block's 16 header
        // bytes are two loads: d and dmin as one int, and the 12 packed bytes widened to int lanes
        // and unpacked at once into one float vector, the eight scales in lanes 0-7 and the eight
        // mins in 8-15 (dequantizeBlocks16's constants): each (load, nibble)'s pair of scales is
        // picked from it by an index look-up, and the mins term is one product of the whole
        // vector with the block's 16 prepared sums (zeros against the scales). Scalar loads of the
        // five header fields, each with its bounds check, and scalar unpacking cost about a fifth
        // of the kernel's instructions. The loops stay loops in the bytecode: written out, the
        // body exceeds C2's inlining node budget and the vector helpers stop being inlined (and
        // then box); C2 unrolls them after intrinsification.
        FloatVector acc = FloatVector.zero(F), mAcc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            int dd = s.get(INT_LE, p);
            float d = Float.float16ToFloat((short) dd), dmin = Float.float16ToFloat((short) (dd >>> 16));
            IntVector v = (IntVector) ByteVector.fromMemorySegment(B, s, p + 4, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector low = v.rearrange(PACK_LOW).lanewise(VectorOperators.LSHR, PACK_LOW_SHIFT).and(PACK_LOW_MASK);
            IntVector high = v.rearrange(PACK_HIGH).lanewise(VectorOperators.LSHR, 6).and(PACK_HIGH_MASK).lanewise(VectorOperators.LSHL, 4);
            FloatVector scm = Simd.intsToFloats(low.or(high));
            IntVector scf = scm.reinterpretAsInts();
            FloatVector bs = FloatVector.zero(F);
            for (int u = 0; u < U; u++) {
                IntVector q = IntVector.fromMemorySegment(I, s, p + 16 + 4 * L * u, LE);
                for (int n = 0; n < 2; n++) {
                    int t = (u * 2 + n) * L, w = b * QK + 4 * t;
                    IntVector qn = q.lanewise(VectorOperators.LSHR, 4 * n);
                    FloatVector sm = FloatVector.zero(F);
                    for (int m = 0; m < 4; m++) {
                        sm = Simd.intsToFloats(qn.and(0xF << (8 * m))).fma(FloatVector.fromArray(F, xp, w + m * L), sm);
                    }
                    bs = PICK_SCALE.add(4 * u + n).selectFrom(scf).reinterpretAsFloats().fma(sm, bs);
                }
            }
            acc = bs.fma(FloatVector.broadcast(F, d), acc);
            mAcc = scm.mul(FloatVector.fromArray(F, xs, 16 * b)).fma(FloatVector.broadcast(F, dmin), mAcc);
        }
        // the mins term moved to lanes 0-7 (zeros above) and one fixed-order fold reduces both:
        // reduceLanes would let the JIT tier choose the order (JitDeterminismTest). Simd.sum's
        // folds written out: C2 does not inline a call made once per row from a method this
        // large, and the call boxed the vector (an allocation per row)
        FloatVector v = acc.sub(mAcc.rearrange(SWAP_HALVES));
        if (L >= 16) v = v.add(v.rearrange(Simd.FOLD8));
        if (L >= 8) v = v.add(v.rearrange(Simd.FOLD4));
        v = v.add(v.rearrange(Simd.FOLD2));
        return v.add(v.rearrange(Simd.FOLD1)).lane(0);
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        if (L == 16) {
            dequantizeBlocks16(row, from / QK, to / QK, out, off - from);
            return;
        }
        MemorySegment s = seg;
        long p = rowStart(row) + (long) (from / QK) * BLOCK;
        off -= from;   // block b's weights go to out[off + b * QK ..]
        for (int b = from / QK, nb = to / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            float dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            long sc = scales(s, p), mn = mins(s, p);
            for (int c = 0; c < 4; c++) {
                long qp = p + 16 + 32 * c;
                int o = off + b * QK + 64 * c;
                float d1 = d * sub(sc, 2 * c), m1 = dmin * sub(mn, 2 * c);
                float d2 = d * sub(sc, 2 * c + 1), m2 = dmin * sub(mn, 2 * c + 1);
                for (int j = 0; j < 32; j += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, s, qp + j, LE);
                    for (int k = 0; k < PARTS; k++) {
                        IntVector qi = Simd.toInts(q, k);   // nibbles split in 32-bit lanes, as in dot
                        Simd.intsToFloats(qi.and(0xF)).mul(d1).sub(m1).intoArray(out, o + j + k * L);
                        Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 4).and(0xF)).mul(d2).sub(m2).intoArray(out, o + 32 + j + k * L);
                    }
                }
            }
        }
    }

    /**
     * {@link #dequantizeColumns} with 16 float lanes, for blocks [b0, b1) (block b's weights to
     * out[off + b * QK ..]), with the same bits. A nibble has 16 values, so each
     * sub-block's weights are one vector, {@code q * d_j - m_j} for q = 0..15 (the same two
     * roundings as the scalar form), and its weights are a lane-wise look-up in it ({@code
     * selectFrom} wraps each index to its low four bits, which is the nibble). The eight scales
     * and mins are unpacked into one vector as well, and each sub-block's pair is taken from it
     * with an index look-up (a shuffle object from an array would cost its load, a type check
     * and a mask per sub-block). {@code scripts/run-bench kernels.DequantBench Q4_K ROWS COLS}
     * measures it.
     */
    private void dequantizeBlocks16(int row, int b0, int b1, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) b0 * BLOCK;
        for (int b = b0; b < b1; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            float dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            // lane k of v: packed byte k (bytes 12-15 are nibbles, never selected); lanes 0-7 of
            // dm are d * scale_j, lanes 8-15 dmin * min_j
            IntVector v = (IntVector) ByteVector.fromMemorySegment(B, s, p + 4, LE).convertShape(VectorOperators.ZERO_EXTEND_B2I, I, 0);
            IntVector low = v.rearrange(PACK_LOW).lanewise(VectorOperators.LSHR, PACK_LOW_SHIFT).and(PACK_LOW_MASK);
            IntVector high = v.rearrange(PACK_HIGH).lanewise(VectorOperators.LSHR, 6).and(PACK_HIGH_MASK).lanewise(VectorOperators.LSHL, 4);
            IntVector dm = Simd.intsToFloats(low.or(high)).mul(FloatVector.broadcast(F, d).blend(dmin, MINS)).reinterpretAsInts();
            for (int c = 0; c < 4; c++) {
                long qp = p + 16 + 32 * c;
                int o = off + b * QK + 64 * c;
                IntVector t1 = NIBBLES.mul(lane(dm, 2 * c)).sub(lane(dm, 8 + 2 * c)).reinterpretAsInts();
                IntVector t2 = NIBBLES.mul(lane(dm, 2 * c + 1)).sub(lane(dm, 9 + 2 * c)).reinterpretAsInts();
                for (int j = 0; j < 32; j += 16) {
                    IntVector qi = Simd.toInts(ByteVector.fromMemorySegment(B, s, qp + j, LE), 0);
                    qi.selectFrom(t1).reinterpretAsFloats().intoArray(out, o + j);
                    qi.lanewise(VectorOperators.ASHR, 4).selectFrom(t2).reinterpretAsFloats().intoArray(out, o + 32 + j);
                }
            }
        }
    }

    /** Every lane of the result is lane k of v, as a float (an index vector and a look-up: no shuffle object). */
    private static FloatVector lane(IntVector v, int k) {
        return IntVector.broadcast(I, k).selectFrom(v).reinterpretAsFloats();
    }
}
