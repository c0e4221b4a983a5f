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
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;

/**
 * GGML Q5_K: super-blocks of 256 weights (176 bytes): f16 {@code d}, f16 {@code dmin}, 12 bytes
 * of 6-bit scales and mins packed as in Q4_K, 32 bytes {@code qh}, 128 bytes of nibbles laid out
 * as in Q4_K. Weight 64c + l (l < 32) is the low nibble of byte 32c + l plus 16 times bit 2c of
 * qh[l]; weight 64c + 32 + l the high nibble plus bit 2c + 1. Weight = d * scale * q - dmin * min.
 * The dot product is {@link Q4_KTensor}'s with the fifth bits or-ed in.
 */
public final class Q5_KTensor extends MinKQuantTensor {
    static final int QK = 256, BLOCK = 176;

    public Q5_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q5_K, seg, rows, cols);
    }

    /**
     * Per (int load u, nibble n, lane i): the left rotation that brings the fifth bit of the
     * lane's weights, bit {@code 2c + n} of each qh byte (c = the lane's 64-weight chunk, see
     * {@link MinKQuantTensor}), to bit 4 of the byte, just above its nibble. Rotating (rather than
     * shifting one way or the other) keeps one operation for all lanes; the bits that wrap around
     * land outside the mask 0x10101010.
     */
    private static final int[] HIGH_ROT = new int[2 * U * L];
    static {
        for (int u = 0; u < U; u++) {
            for (int n = 0; n < 2; n++) {
                for (int i = 0; i < L; i++) HIGH_ROT[(u * 2 + n) * L + i] = (4 - 2 * ((4 * L * u + 4 * i) >> 5) - n) & 31;
            }
        }
    }

    /** Lane i takes int i % 8: the 32 qh bytes in both halves of a 16-lane vector. */
    private static final VectorShuffle<Integer> DUP8 = VectorShuffle.fromOp(I, i -> i & 7);

    @Override
    float dot(int row, float[] xp, float[] xs) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // Q4_KTensor.dot with the fifth bits or-ed into each byte before the bytes are picked out.
        // Lane i of int load u covers nibble bytes 4Lu + 4i.., so it needs qh bytes
        // (4Lu + 4i) % 32..: with 16 lanes the 8 ints of qh twice (one load and a permutation),
        // with 8 or 4 lanes a plain load at (4Lu) % 32.
        FloatVector acc = FloatVector.zero(F), mAcc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            float dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            int s0 = s.get(INT_LE, p + 4), s1 = s.get(INT_LE, p + 8), s2 = s.get(INT_LE, p + 12);
            int scLo = scalesLo(s0), scHi = scalesHi(s0, s2), mLo = minsLo(s1), mHi = minsHi(s1, s2);
            FloatVector bs = FloatVector.zero(F), ms = FloatVector.zero(F);
            // 64 bytes from qh on: qh and the first 32 nibble bytes, all inside the block
            IntVector qhAll = L == 16 ? IntVector.fromMemorySegment(I, s, p + 16, LE).rearrange(DUP8) : null;
            for (int u = 0; u < U; u++) {
                IntVector q = IntVector.fromMemorySegment(I, s, p + 48 + 4 * L * u, LE);
                IntVector qh = L == 16 ? qhAll : IntVector.fromMemorySegment(I, s, p + 16 + ((4 * L * u) & 31), LE);
                int sc = u < U / 2 ? scLo : scHi, mn = u < U / 2 ? mLo : mHi;
                for (int n = 0; n < 2; n++) {
                    int t = (u * 2 + n) * L, v = b * QK + 4 * t;
                    IntVector hb = qh.lanewise(VectorOperators.ROL, IntVector.fromArray(I, HIGH_ROT, t));
                    IntVector q5 = q.lanewise(VectorOperators.LSHR, 4 * n).and(0x0F0F0F0F).or(hb.and(0x10101010));
                    FloatVector sm = FloatVector.zero(F);
                    for (int m = 0; m < 4; m++) {
                        sm = Simd.intsToFloats(q5.and(0x1F << (8 * m))).fma(FloatVector.fromArray(F, xp, v + m * L), sm);
                    }
                    IntVector sh = IntVector.fromArray(I, SCALE_SHIFT, t);
                    bs = Simd.intsToFloats(IntVector.broadcast(I, sc).lanewise(VectorOperators.LSHR, sh).and(0xFF)).fma(sm, bs);
                    ms = Simd.intsToFloats(IntVector.broadcast(I, mn).lanewise(VectorOperators.LSHR, sh).and(0xFF))
                            .fma(FloatVector.fromArray(F, xs, b * 64 + t), ms);
                }
            }
            acc = bs.fma(FloatVector.broadcast(F, d), acc);
            mAcc = ms.fma(FloatVector.broadcast(F, dmin), mAcc);
        }
        return Simd.sum(acc.sub(mAcc));
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) (from / QK) * BLOCK;
        off -= from;   // block b's weights go to out[off + b * QK ..]
        for (int b = from / QK, nb = to / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p)), dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            long sc = scales(s, p), mn = mins(s, p);
            for (int c = 0; c < 4; c++) {
                float d1 = d * sub(sc, 2 * c), m1 = dmin * sub(mn, 2 * c);
                float d2 = d * sub(sc, 2 * c + 1), m2 = dmin * sub(mn, 2 * c + 1);
                for (int l = 0; l < 32; l += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, s, p + 48 + 32 * c + l, LE);
                    ByteVector h = ByteVector.fromMemorySegment(B, s, p + 16 + l, LE);
                    for (int k = 0; k < PARTS; k++) {
                        IntVector qi = Simd.toInts(q, k), hi = Simd.toInts(h, k);
                        IntVector lo5 = qi.and(0xF).or(hi.lanewise(VectorOperators.ASHR, 2 * c).and(1).lanewise(VectorOperators.LSHL, 4));
                        IntVector hi5 = qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(hi.lanewise(VectorOperators.ASHR, 2 * c + 1).and(1).lanewise(VectorOperators.LSHL, 4));
                        int e = off + b * QK + 64 * c + l + k * L;
                        Simd.intsToFloats(lo5).mul(d1).sub(m1).intoArray(out, e);
                        Simd.intsToFloats(hi5).mul(d2).sub(m2).intoArray(out, e + 32);
                    }
                }
            }
        }
    }
}
