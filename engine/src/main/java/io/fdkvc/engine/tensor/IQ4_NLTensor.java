package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * GGML IQ4_NL: blocks of 32 weights (18 bytes): f16 {@code d}, 16 bytes of nibbles (byte j:
 * element j low, element j + 16 high) that index a fixed non-linear table of 16 levels
 * ({@link #LEVELS}); weight = d * LEVELS[nibble]. llama-quantize falls back to it from Q2_K, Q3_K
 * and IQ4_XS when a row is not a multiple of 256.
 */
final class IQ4_NLTensor extends BlockTensor {
    /** ggml's kvalues_iq4nl: the 16 levels, denser near zero. */
    static final int[] LEVELS = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    IQ4_NLTensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.IQ4_NL, seg, rows, cols);
    }

    @Override
    void decodeBlock(MemorySegment s, long p, float[] out, int o) {
        float d = Float.float16ToFloat(s.get(SHORT_LE, p));
        decodeNibbles(s, p + 2, d, out, o);
    }

    /** 16 bytes at {@code q}: 32 weights {@code d * LEVELS[nibble]} (a table lookup, so scalar). */
    static void decodeNibbles(MemorySegment s, long q, float d, float[] out, int o) {
        for (int j = 0; j < 16; j++) {
            int b = s.get(ValueLayout.JAVA_BYTE, q + j) & 0xFF;
            out[o + j] = d * LEVELS[b & 0xF];
            out[o + j + 16] = d * LEVELS[b >> 4];
        }
    }
}
