package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * GGML IQ4_XS: super-blocks of 256 weights (136 bytes): f16 {@code d}, a 16-bit word of scale
 * high bits, 4 bytes of scale low nibbles, then eight runs of 16 bytes laid out as IQ4_NL blocks.
 * Sub-block i's 6-bit scale is nibble i % 2 of byte i / 2 with bits 2i..2i+1 of the word as its
 * top bits; its weights are {@code d * (scale - 32) * LEVELS[nibble]}.
 */
final class IQ4_XSTensor extends BlockTensor {
    IQ4_XSTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.IQ4_XS, seg, rows, cols);
    }

    @Override
    void decodeBlock(MemorySegment s, long p, float[] out, int o) {
        float d = Float.float16ToFloat(s.get(SHORT_LE, p));
        int hi = s.get(SHORT_LE, p + 2) & 0xFFFF;
        for (int i = 0; i < 8; i++) {
            int lo = (s.get(ValueLayout.JAVA_BYTE, p + 4 + i / 2) & 0xFF) >> (4 * (i % 2)) & 0xF;
            int ls = lo | ((hi >> (2 * i)) & 3) << 4;
            IQ4_NLTensor.decodeNibbles(s, p + 8 + 16 * i, d * (ls - 32), out, o + 32 * i);
        }
    }
}
