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
 * GGML Q3_K: super-blocks of 256 weights (110 bytes): 32 bytes {@code hmask} (the third bit), 64
 * bytes of 2-bit quants, 12 bytes packing sixteen 6-bit scales, f16 {@code d}. Weight
 * 128h + 32j + w takes bits 2j..2j+1 of quant byte 32h + w and bit 4h + j of hmask byte w; its
 * value is q - 4 when that bit is clear, q when set; weight = d * (scale - 32) * value.
 */
final class Q3_KTensor extends BlockTensor {
    Q3_KTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q3_K, seg, rows, cols);
    }

    /**
     * The 6-bit scale of group g (0..15): its low 4 bits are the low (g < 4, 8 <= g < 12) or high
     * nibble of byte g % 8, its top 2 bits are bits 2(g / 4)..2(g / 4)+1 of byte 8 + g % 4.
     */
    static int scale(MemorySegment s, long sp, int g) {
        int lo = s.get(ValueLayout.JAVA_BYTE, sp + g % 8) & 0xFF;
        int hi = s.get(ValueLayout.JAVA_BYTE, sp + 8 + g % 4) & 0xFF;
        return ((g < 8 ? lo & 0xF : lo >> 4) | ((hi >> (2 * (g / 4))) & 3) << 4) - 32;
    }

    @Override
    void decodeBlock(MemorySegment s, long p, float[] out, int o) {
        float d = Float.float16ToFloat(s.get(SHORT_LE, p + 108));
        for (int h = 0; h < 2; h++) {
            long qp = p + 32 + 32 * h;
            for (int w = 0; w < 32; w += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, qp + w, LE);
                ByteVector m = ByteVector.fromMemorySegment(B, s, p + w, LE);
                for (int k = 0; k < PARTS; k++) {
                    int e = w + k * L;
                    var qi = Simd.toInts(q, k);
                    var mi = Simd.toInts(m, k);
                    for (int j = 0; j < 4; j++) {
                        int idx = 128 * h + 32 * j + e;
                        float dl = d * scale(s, p + 96, idx / 16);
                        // q | bit << 2 = q + 4 * bit, minus 4: q - 4 when the hmask bit is clear
                        var v = qi.lanewise(VectorOperators.ASHR, 2 * j).and(3)
                                .or(mi.lanewise(VectorOperators.ASHR, 4 * h + j).and(1).lanewise(VectorOperators.LSHL, 2)).sub(4);
                        Simd.intsToFloats(v).mul(dl).intoArray(out, o + idx);
                    }
                }
            }
        }
    }
}
