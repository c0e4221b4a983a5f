package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;

/**
 * A block-quantised type whose dot product decodes each block into a per-thread scratch of floats
 * (vectorised where the layout allows) and multiplies it with {@code x} in vectors. This costs a
 * round trip through L1 per block compared with a fused kernel, and is used for the types that
 * llama-quantize's presets produce less often (Q2_K, Q3_K, IQ4_NL, IQ4_XS); it keeps each
 * layout in one decoder that both {@link #dot} and {@link #dequantizeRow} use, so they cannot
 * disagree about the layout.
 */
abstract sealed class BlockTensor extends SegmentTensor permits Q2_KTensor, Q3_KTensor, IQ4_NLTensor, IQ4_XSTensor {
    BlockTensor(GgmlType type, MemorySegment seg, int rows, int cols) {
        super(type, seg, rows, cols);
    }

    /** Writes the {@code type().blockSize} weights of the block at byte {@code p} to {@code out[o ..]}. */
    abstract void decodeBlock(MemorySegment s, long p, float[] out, int o);

    private static final ThreadLocal<float[]> SCRATCH = ThreadLocal.withInitial(() -> new float[256]);

    @Override
    public final float dot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long p = rowStart(row);
        int qk = type().blockSize, bytes = type().blockBytes;
        float[] w = SCRATCH.get();
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        for (int b = 0, nb = cols / qk; b < nb; b++, p += bytes) {
            decodeBlock(s, p, w, 0);
            int xb = xOff + b * qk;
            // blocks hold 32 or 256 weights: a multiple of 2 L for every species
            for (int i = 0; i < qk; i += 2 * L) {
                acc0 = FloatVector.fromArray(F, w, i).fma(FloatVector.fromArray(F, x, xb + i), acc0);
                acc1 = FloatVector.fromArray(F, w, i + L).fma(FloatVector.fromArray(F, x, xb + i + L), acc1);
            }
        }
        return Simd.sum(acc0.add(acc1));
    }

    @Override
    final void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        MemorySegment s = seg;
        int qk = type().blockSize, bytes = type().blockBytes;
        long p = rowStart(row) + (long) (from / qk) * bytes;
        for (int b = from / qk, nb = to / qk; b < nb; b++, p += bytes) decodeBlock(s, p, out, off + b * qk - from);
    }
}
