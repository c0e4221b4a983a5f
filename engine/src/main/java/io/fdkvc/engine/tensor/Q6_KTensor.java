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
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;

/**
 * GGML Q6_K: super-blocks of 256 weights (210 bytes): 128 bytes {@code ql} (low 4 bits), 64 bytes
 * {@code qh} (high 2 bits), 16 signed 8-bit scales (one per 16 weights), f16 {@code d}. Each half
 * of 128 weights uses 64 bytes of ql and 32 of qh: for l in 0..31, weight l takes the low nibble
 * of ql[l] and bits 0-1 of qh[l], weight l+32 the low nibble of ql[l+32] and bits 2-3, weight l+64
 * the high nibble of ql[l] and bits 4-5, weight l+96 the high nibble of ql[l+32] and bits 6-7.
 * Weight = d * scale * (q - 32).
 */
public final class Q6_KTensor extends PreparedXTensor {
    static final int QK = 256, BLOCK = 210;

    public Q6_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q6_K, seg, rows, cols);
    }

    /*
     * The kernel reads ql and qh as 32-bit lanes (four bytes each, Simd.I) and never moves the bits
     * into byte order; x is permuted instead, once per call, into the order in which the lanes hold
     * the weights (see MinKQuantTensor, which does the same for Q4_K and Q5_K). Int load u covers
     * ql bytes 4Lu + 4i .. 4Lu + 4i + 3 in lane i. ql byte P (of 128) is byte j = P % 64 of half
     * h = P / 64; its nibble n is weight 128h + 64n + 32k + l with k = j / 32, l = j % 32, and
     * takes bits 4n + 2k, 4n + 2k + 1 of qh[32h + l]. Each lane's 6-bit values are assembled in
     * place (nibble | high bits << 4 in every byte); byte m is then one AND with 0x3F << 8m,
     * a value q * 2^8m that converts to float exactly, and the permuted x carries 2^-8m.
     */

    /**
     * Per (int load u, nibble n, lane i), entry (2u + n) * L + i: the left rotation that brings
     * qh bits 4n + 2k, 4n + 2k + 1 of each byte to bits 4 and 5 (rotating instead of shifting
     * left or right keeps one operation; wrapped bits fall outside the mask 0x30303030); and the
     * left shift that brings the lane's scale byte, of the int at 192 + 4 (2h + n), to the top.
     * The int holds the scales of weights 128h + 64n .. + 63 in groups of 16: lane i's group is
     * 2k + l / 16, the same for its four bytes.
     */
    private static final int[] HIGH_ROT = new int[2 * U * L], SCALE_SHL = new int[2 * U * L];
    /**
     * With 16 lanes, load u = half u, nibble n: lane i's scale is number 8u + 4n + PICK_SCALE[i]
     * of the block's sixteen (its group of 16 weights within the 64 of (u, n): 2 (i / 8) +
     * (i % 8) / 4, the same for its four bytes).
     */
    private static final IntVector PICK_SCALE = L == 16 ? IntVector.fromArray(I, new int[] {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, 0) : null;
    /** Per int load u: the first int of qh that lane 0 needs (lanes i take int QH_INT[u] + i). */
    private static final int[] QH_INT = new int[U];
    static {
        for (int u = 0; u < U; u++) {
            for (int n = 0; n < 2; n++) {
                for (int i = 0; i < L; i++) {
                    int j = (4 * L * u + 4 * i) & 63, k = j >> 5;
                    HIGH_ROT[(u * 2 + n) * L + i] = (4 - 4 * n - 2 * k) & 31;
                    SCALE_SHL[(u * 2 + n) * L + i] = 24 - 8 * (2 * k + ((j & 31) >> 4));
                }
            }
            int pos = 4 * L * u;
            QH_INT[u] = 8 * (pos >> 6) + ((pos & 31) >> 2);
        }
    }

    /**
     * With 16 lanes, load u = half h needs qh ints 8h .. 8h + 7 in both halves of the vector
     * (lane i and i + 8 hold the same l); with 8 or 4 lanes the ints are consecutive in memory.
     */
    private static final VectorShuffle<Integer> DUP_LO = VectorShuffle.fromOp(I, i -> i & 7);
    private static final VectorShuffle<Integer> DUP_HI = VectorShuffle.fromOp(I, i -> L == 16 ? 8 + (i & 7) : i & 7);

    /**
     * x in lane order: {@code xp[256b + ((2u + n) * 4 + m) * L + i]} = the x of the weight in byte
     * m of lane i of int load u, nibble n, times 2^-8m (exact barring underflow below 2^-102);
     * {@code xs[64b + (2u + n) * L + i]} = -32 times the sum over m of those x, the offset of
     * q - 32, which the kernel takes as the starting value of each lane's sum.
     */
    @Override
    void prepare(float[] x, int xOff, float[] xp, float[] xs) {
        permuteLanes(x, xOff, cols, SOURCE, -32f, xp, xs);
    }

    /**
     * The weight (within its super-block) whose x goes to {@code xp[256b + k]}: for
     * {@code k = ((2u + n) * 4 + m) * L + i}, ql byte {@code P = 4Lu + 4i + m} is byte
     * {@code j = P % 64} of half {@code P / 64}, its nibble n weight
     * {@code 128 (P / 64) + 64n + 32 (j / 32) + j % 32}.
     */
    private static final int[] SOURCE = lanePositions((pos, n) -> 128 * (pos >> 6) + 64 * n + 32 * ((pos & 63) >> 5) + (pos & 31));

    @Override
    void rows(int from, int to, float[] xp, float[] xs, float[] out, int outOff) {
        for (int i = 0; i < to - from; i++) {
            int r = streamedRow(from, to, i, ROW_STREAMS);
            out[outOff + r] = dot(r, xp, xs);
        }
    }

    @Override
    float dot(int row, float[] xp, float[] xs) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // Per super-block, bs = sum over lanes of scale * (q - 32) . x; d multiplies it once per
        // block. The loops stay loops in the bytecode: written out, the body exceeds C2's inlining
        // node budget and the vector helpers stop being inlined (and then box).
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            FloatVector bs = FloatVector.zero(F);
            IntVector qhAll = L == 16 ? IntVector.fromMemorySegment(I, s, p + 128, LE) : null;
            // with 16 lanes: the sixteen signed scales as floats, scale g in lane g (one load and
            // one widening per block instead of a scalar load, its bounds check and two shifts
            // per load and nibble)
            IntVector scales = L == 16 ? Simd.toFloats(ByteVector.fromMemorySegment(B, s, p + 192, LE), 0).reinterpretAsInts() : null;
            for (int u = 0; u < U; u++) {
                IntVector ql = IntVector.fromMemorySegment(I, s, p + 4 * L * u, LE);
                IntVector qh = L == 16 ? qhAll.rearrange(u == 0 ? DUP_LO : DUP_HI) : IntVector.fromMemorySegment(I, s, p + 128 + 4 * QH_INT[u], LE);
                int h = (4 * L * u) >> 6;
                for (int n = 0; n < 2; n++) {
                    int t = (u * 2 + n) * L, v = b * QK + 4 * t;
                    IntVector hb = highBits(qh, t, u, n);
                    IntVector q6 = ql.lanewise(VectorOperators.LSHR, 4 * n).and(0x0F0F0F0F).or(hb.and(0x30303030));
                    FloatVector sm = FloatVector.fromArray(F, xs, b * 64 + t);   // the -32 offsets
                    for (int m = 0; m < 4; m++) {
                        sm = Simd.intsToFloats(q6.and(0x3F << (8 * m))).fma(FloatVector.fromArray(F, xp, v + m * L), sm);
                    }
                    FloatVector sc;
                    if (L == 16) {
                        // the lane's scale picked from the block's sixteen, unpacked once
                        sc = PICK_SCALE.add(8 * u + 4 * n).selectFrom(scales).reinterpretAsFloats();
                    } else {
                        // signed 8-bit scales: the lane's byte shifted to the top, then arithmetic shift down
                        sc = Simd.intsToFloats(IntVector.broadcast(I, s.get(INT_LE, p + 192 + 4 * (2 * h + n)))
                                .lanewise(VectorOperators.LSHL, IntVector.fromArray(I, SCALE_SHL, t)).lanewise(VectorOperators.ASHR, 24));
                    }
                    bs = sc.fma(sm, bs);
                }
            }
            acc = bs.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p + 208))), acc);
        }
        // Simd.sum's folds written out (see Q4_KTensor.dotMixed: the call boxed acc once per row)
        if (L >= 16) acc = acc.add(acc.rearrange(Simd.FOLD8));
        if (L >= 8) acc = acc.add(acc.rearrange(Simd.FOLD4));
        acc = acc.add(acc.rearrange(Simd.FOLD2));
        return acc.add(acc.rearrange(Simd.FOLD1)).lane(0);
    }

    /**
     * qh with the high bits of (int load u, nibble n) at bits 4-5 of every byte (other bits are
     * masked off by the caller). With 4 or 8 lanes every lane of a load has the same k
     * ({@code k = u & 1} at 8 lanes), so the rotation is one shift by a constant, left or right
     * (AVX2 has no vector rotation: a variable rotation is two shifts, an OR and the shift counts'
     * load); with 16 lanes it differs from lane to lane. Shifting instead of rotating changes
     * only bits outside the mask.
     */
    private static IntVector highBits(IntVector qh, int t, int u, int n) {
        if (L > 8) return qh.lanewise(VectorOperators.ROL, IntVector.fromArray(I, HIGH_ROT, t));
        int k = ((4 * L * u) & 63) >> 5, shift = 4 - 4 * n - 2 * k;
        return shift >= 0 ? qh.lanewise(VectorOperators.LSHL, shift) : qh.lanewise(VectorOperators.LSHR, -shift);
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        // block b's weights go to out[off - from + b * QK ..]
        if (PARTS == 1) dequantizePairs(row, from / QK, to / QK, out, off - from);
        else dequantizeQuarters(row, from / QK, to / QK, out, off - from);
    }

    /**
     * One byte load per vector (8 or 16 float lanes): each ql byte holds the low bits of two
     * weights (l and l + 64, or l + 32 and l + 96), so both are decoded from one load and one
     * widening, with the qh byte that holds their high bits in bits 2j..2j+1 and 4+2j..5+2j; one
     * shift brings either to bits 4-5 (x86 has no byte shifts, hence 32-bit lanes). The same
     * arithmetic as {@link #dequantizeQuarters}, so the same bits, with half the loads; the
     * scales are scaled as vectors ({@link #scaledScales}). Measure it with
     * {@code scripts/run-bench kernels.DequantBench Q6_K ROWS COLS}.
     */
    private void dequantizePairs(int row, int b0, int b1, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) b0 * BLOCK;
        float[] dm = SCALES.get();
        for (int b = b0; b < b1; b++, p += BLOCK) {
            scaledScales(s, p, Float.float16ToFloat(s.get(SHORT_LE, p + 208)), dm);
            for (int h = 0; h < 2; h++) {
                long qlp = p + 64 * h, qhp = p + 128 + 32 * h;
                int o = off + b * QK + 128 * h;
                // j = 0: ql[l] holds weights l and l + 64; j = 1: ql[l + 32] holds l + 32 and l + 96
                for (int j = 0; j < 2; j++) {
                    int up = 4 - 2 * j, down = 2 * j;
                    for (int l = 0; l < 32; l += BL) {
                        IntVector ql = Simd.toInts(ByteVector.fromMemorySegment(B, s, qlp + 32 * j + l, LE), 0);
                        IntVector qh = Simd.toInts(ByteVector.fromMemorySegment(B, s, qhp + l, LE), 0);
                        int sc = 8 * h + 2 * j + l / 16;   // BL <= 16, so a vector never straddles two scales
                        IntVector lo = ql.and(0xF).or(qh.lanewise(VectorOperators.LSHL, up).and(0x30));
                        IntVector hi = ql.lanewise(VectorOperators.ASHR, 4).and(0xF).or(qh.lanewise(VectorOperators.ASHR, down).and(0x30));
                        Simd.intsToFloats(lo.sub(32)).mul(dm[sc]).intoArray(out, o + 32 * j + l);
                        Simd.intsToFloats(hi.sub(32)).mul(dm[sc + 4]).intoArray(out, o + 64 + 32 * j + l);
                    }
                }
            }
        }
    }

    /**
     * With 4 float lanes a byte load is converted in two parts. Pair loops written for that (both
     * parts in one body, or each part in a helper) ran several times slower than this method;
     * vectors boxed past C2's node budget is the likely reason, as with the other kernels. So this shape decodes one quarter of the 128 weights at a time, loading and
     * widening each byte once per quarter that reads it.
     */
    private void dequantizeQuarters(int row, int b0, int b1, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) b0 * BLOCK;
        for (int b = b0; b < b1; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p + 208));
            for (int h = 0; h < 2; h++) {
                long qhp = p + 128 + 32 * h, scp = p + 192 + 8 * h;
                int o = off + b * QK + 128 * h;
                // quarter u: low (u < 2) or high nibbles of ql[32 * (u & 1) ..], qh bits 2u, 2u+1
                // (one loop body for the four quarters keeps C2 within its node budget)
                for (int u = 0; u < 4; u++) {
                    long qlp = p + 64 * h + 32 * (u & 1);
                    int shLo = 4 * (u >> 1), shHi = 2 * u;
                    for (int l = 0; l < 32; l += BL) {
                        ByteVector bl = ByteVector.fromMemorySegment(B, s, qlp + l, LE);
                        ByteVector bh = ByteVector.fromMemorySegment(B, s, qhp + l, LE);
                        for (int k = 0; k < PARTS; k++) {
                            // bit surgery in 32-bit lanes: x86 has no byte shifts
                            IntVector lo = Simd.toInts(bl, k).lanewise(VectorOperators.ASHR, shLo).and(0xF);
                            IntVector hi = Simd.toInts(bh, k).lanewise(VectorOperators.ASHR, shHi).and(3).lanewise(VectorOperators.LSHL, 4);
                            int li = l + k * L;   // L <= 16, so a vector never straddles two scales
                            float scale = d * s.get(ValueLayout.JAVA_BYTE, scp + 2 * u + li / 16);
                            Simd.intsToFloats(lo.or(hi).sub(32)).mul(scale).intoArray(out, o + 32 * u + li);
                        }
                    }
                }
            }
        }
    }

    /** Per-thread scratch of {@link #dequantizePairs}: a super-block's sixteen scales times d. */
    private static final ThreadLocal<float[]> SCALES = ThreadLocal.withInitial(() -> new float[16]);

    /**
     * dm[i] = d * scale i of the super-block at p, for its sixteen int8 scales, a vector at a time:
     * the same exact conversion and product as the scalar expression, so the same bits. One byte
     * load, widening and multiply per scale, one scalar at a time, was a large share of the pair
     * loop's time ({@code kernels.DequantBench} shows it). The quarter loop keeps the scalar
     * scales: with this helper C2 boxes its vectors at 4 lanes, as its comment describes.
     */
    private static void scaledScales(MemorySegment s, long p, float d, float[] dm) {
        for (int i = 0; i < 16; i += BL) {
            ByteVector v = ByteVector.fromMemorySegment(B, s, p + 192 + i, LE);
            for (int k = 0; k < PARTS; k++) Simd.toFloats(v, k).mul(d).intoArray(dm, i + k * L);
        }
    }
}
