package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.F;
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

    @Override
    float dot(int row, float[] x, int xOff, float[] sums) {
        MemorySegment s = seg;
        long p = rowStart(row);
        FloatVector acc = FloatVector.zero(F);
        float minPart = 0;
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            float dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            int s0 = s.get(INT_LE, p + 4), s1 = s.get(INT_LE, p + 8), s2 = s.get(INT_LE, p + 12);
            // scales and mins as in Q4_KTensor.dot
            int hi0 = (s0 >>> 6) & 0x03030303, hi1 = (s1 >>> 6) & 0x03030303;
            int scLo = s0 & 0x3F3F3F3F, mLo = s1 & 0x3F3F3F3F;
            int scHi = (s2 & 0x0F0F0F0F) | hi0 << 4, mHi = ((s2 >>> 4) & 0x0F0F0F0F) | hi1 << 4;
            int sb = 8 * b;
            minPart += dmin * ((mLo & 0xFF) * sums[sb] + (mLo >>> 8 & 0xFF) * sums[sb + 1] + (mLo >>> 16 & 0xFF) * sums[sb + 2]
                    + (mLo >>> 24) * sums[sb + 3] + (mHi & 0xFF) * sums[sb + 4] + (mHi >>> 8 & 0xFF) * sums[sb + 5]
                    + (mHi >>> 16 & 0xFF) * sums[sb + 6] + (mHi >>> 24) * sums[sb + 7]);
            int xb = xOff + b * QK;
            for (int c = 0; c < 4; c++) {
                int sc = c < 2 ? scLo >>> (16 * c) : scHi >>> (16 * (c - 2));
                long qp = p + 48 + 32 * c;
                int xc = xb + 64 * c;
                FloatVector sLo = FloatVector.zero(F), sHi = FloatVector.zero(F);
                for (int j = 0; j < 32; j += BL) {
                    ByteVector q = ByteVector.fromMemorySegment(B, s, qp + j, LE);
                    ByteVector h = ByteVector.fromMemorySegment(B, s, p + 16 + j, LE);
                    for (int k = 0; k < PARTS; k++) {
                        IntVector qi = Simd.toInts(q, k), hi = Simd.toInts(h, k);   // bits in 32-bit lanes: x86 has no byte shifts
                        IntVector lo5 = qi.and(0xF).or(hi.lanewise(VectorOperators.ASHR, 2 * c).and(1).lanewise(VectorOperators.LSHL, 4));
                        IntVector hi5 = qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(hi.lanewise(VectorOperators.ASHR, 2 * c + 1).and(1).lanewise(VectorOperators.LSHL, 4));
                        sLo = Simd.intsToFloats(lo5).fma(FloatVector.fromArray(F, x, xc + j + k * L), sLo);
                        sHi = Simd.intsToFloats(hi5).fma(FloatVector.fromArray(F, x, xc + 32 + j + k * L), sHi);
                    }
                }
                acc = sLo.fma(FloatVector.broadcast(F, d * (sc & 0xFF)), acc);
                acc = sHi.fma(FloatVector.broadcast(F, d * (sc >>> 8 & 0xFF)), acc);
            }
        }
        return Simd.sum(acc) - minPart;
    }

    @Override
    public void dequantizeRow(int row, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row);
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p)), dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
            long sp = p + 4;
            for (int c = 0; c < 4; c++) {
                float d1 = d * Q4_KTensor.scale(s, sp, 2 * c), m1 = dmin * Q4_KTensor.min(s, sp, 2 * c);
                float d2 = d * Q4_KTensor.scale(s, sp, 2 * c + 1), m2 = dmin * Q4_KTensor.min(s, sp, 2 * c + 1);
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
