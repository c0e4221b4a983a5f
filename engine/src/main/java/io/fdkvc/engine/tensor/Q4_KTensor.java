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

/**
 * GGML Q4_K: super-blocks of 256 weights (144 bytes): f16 {@code d}, f16 {@code dmin}, 12 bytes
 * packing eight 6-bit scales and eight 6-bit mins (one pair per sub-block of 32), then 128 bytes
 * of nibbles. The nibbles come in four runs of 32 bytes, one per 64 weights: the low nibbles are
 * the first sub-block of the 64, the high nibbles the second. Weight = d * scale * q - dmin * min.
 */
public final class Q4_KTensor extends MinKQuantTensor {
    static final int QK = 256, BLOCK = 144;

    public Q4_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q4_K, seg, rows, cols);
    }

    @Override
    float dot(int row, float[] xp, float[] xs) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // Per super-block: bs = sum over lanes of scale * (q . x), ms = sum of min * (sum of x);
        // d and dmin multiply them once per block. Lane i of int load u holds four nibble bytes
        // of one sub-block pair (see MinKQuantTensor), so its scale and min are one byte of the
        // packed ints scLo/scHi (mLo/mHi), picked by a per-lane shift. The loops stay loops in
        // the bytecode: written out, the body exceeds C2's inlining node budget and the vector
        // helpers stop being inlined (and then box); C2 unrolls them after intrinsification.
        FloatVector acc = FloatVector.zero(F), mAcc = FloatVector.zero(F);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            float dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            int s0 = s.get(INT_LE, p + 4), s1 = s.get(INT_LE, p + 8), s2 = s.get(INT_LE, p + 12);
            int scLo = scalesLo(s0), scHi = scalesHi(s0, s2), mLo = minsLo(s1), mHi = minsHi(s1, s2);
            FloatVector bs = FloatVector.zero(F), ms = FloatVector.zero(F);
            for (int u = 0; u < U; u++) {
                IntVector q = IntVector.fromMemorySegment(I, s, p + 16 + 4 * L * u, LE);
                int sc = u < U / 2 ? scLo : scHi, mn = u < U / 2 ? mLo : mHi;
                for (int n = 0; n < 2; n++) {
                    int t = (u * 2 + n) * L, v = b * QK + 4 * t;
                    IntVector qn = q.lanewise(VectorOperators.LSHR, 4 * n);
                    FloatVector sm = FloatVector.zero(F);
                    for (int m = 0; m < 4; m++) {
                        sm = Simd.intsToFloats(qn.and(0xF << (8 * m))).fma(FloatVector.fromArray(F, xp, v + m * L), sm);
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
    public void dequantizeRow(int row, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
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
}
