package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.PARTS;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q2_K: super-blocks of 256 weights (84 bytes): 16 bytes of scales (one per 16 weights: low
 * nibble the scale, high nibble the min), 64 bytes of 2-bit quants, f16 {@code d}, f16
 * {@code dmin}. Weight 128h + 32j + w (h < 2, j < 4, w < 32) is bits 2j..2j+1 of quant byte
 * 32h + w; weight = d * sc * q - dmin * m, with the scale byte of its group of 16.
 */
final class Q2_KTensor extends BlockTensor {
    Q2_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q2_K, seg, rows, cols);
    }

    @Override
    void decodeBlock(MemorySegment s, long p, float[] out, int o) {
        float d = Float.float16ToFloat(s.get(SHORT_LE, p + 80)), dmin = Float.float16ToFloat(s.get(SHORT_LE, p + 82));
        for (int h = 0; h < 2; h++) {
            long qp = p + 16 + 32 * h;
            for (int w = 0; w < 32; w += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, qp + w, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = w + k * L;   // L <= 16: a vector never straddles two groups of 16
                    var qi = Simd.toInts(q, k);
                    for (int j = 0; j < 4; j++) {
                        int idx = 128 * h + 32 * j + e;
                        int sc = s.get(ValueLayout.JAVA_BYTE, p + idx / 16) & 0xFF;
                        float dl = d * (sc & 0xF), ml = dmin * (sc >> 4);
                        Simd.intsToFloats(qi.lanewise(VectorOperators.ASHR, 2 * j).and(3)).mul(dl).sub(ml).intoArray(out, o + idx);
                    }
                }
            }
        }
    }
}
