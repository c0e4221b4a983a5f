package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.PARTS;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q5_K: super-blocks of 256 weights (176 bytes): f16 {@code d}, f16 {@code dmin}, 12 bytes
 * of 6-bit scales and mins packed as in Q4_K, 32 bytes {@code qh}, 128 bytes of nibbles laid out
 * as in Q4_K. Weight 64c + l (l < 32) is the low nibble of byte 32c + l plus 16 times bit 2c of
 * qh[l]; weight 64c + 32 + l the high nibble plus bit 2c + 1. Weight = d * scale * q - dmin * min.
 */
final class Q5_KTensor extends BlockTensor {
    Q5_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q5_K, seg, rows, cols);
    }

    @Override
    void decodeBlock(MemorySegment s, long p, float[] out, int o) {
        float d = Float.float16ToFloat(s.get(SHORT_LE, p)), dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 2));
        long sp = p + 4;
        for (int c = 0; c < 4; c++) {
            float d1 = d * Q4_KTensor.scale(s, sp, 2 * c), m1 = dmin * Q4_KTensor.min(s, sp, 2 * c);
            float d2 = d * Q4_KTensor.scale(s, sp, 2 * c + 1), m2 = dmin * Q4_KTensor.min(s, sp, 2 * c + 1);
            for (int l = 0; l < 32; l += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 48 + 32 * c + l, LE);
                ByteVector h = ByteVector.fromMemorySegment(B, s, p + 16 + l, LE);
                for (int k = 0; k < PARTS; k++) {
                    var qi = Simd.toInts(q, k);
                    var hi = Simd.toInts(h, k);
                    var lo5 = qi.and(0xF).or(hi.lanewise(VectorOperators.ASHR, 2 * c).and(1).lanewise(VectorOperators.LSHL, 4));
                    var hi5 = qi.lanewise(VectorOperators.ASHR, 4).and(0xF).or(hi.lanewise(VectorOperators.ASHR, 2 * c + 1).and(1).lanewise(VectorOperators.LSHL, 4));
                    int e = o + 64 * c + l + k * L;
                    Simd.intsToFloats(lo5).mul(d1).sub(m1).intoArray(out, e);
                    Simd.intsToFloats(hi5).mul(d2).sub(m2).intoArray(out, e + 32);
                }
            }
        }
    }
}
