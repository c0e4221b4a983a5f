package io.fdkvc.engine.tensor;

import java.lang.foreign.MemorySegment;

/**
 * The k-quants whose weights are {@code d * scale * q - dmin * min} per sub-block of 32 (Q4_K,
 * Q5_K): their dot product needs the sums of x per sub-block, which the mins multiply. A batch of
 * one takes those sums once per call instead of once per row; each type writes only
 * {@link #dot(int, float[], int, float[])}.
 */
abstract sealed class MinKQuantTensor extends SegmentTensor permits Q4_KTensor, Q5_KTensor {

    MinKQuantTensor(GgmlType type, MemorySegment seg, int rows, int cols) {
        super(type, seg, rows, cols);
    }

    /** Row {@code row} dotted with x, given {@code sums[j]} = the sum of x over sub-block j. */
    abstract float dot(int row, float[] x, int xOff, float[] sums);

    @Override
    public final float dot(int row, float[] x, int xOff) {
        return dot(row, x, xOff, Simd.groupSums(x, xOff, cols, 32));
    }

    @Override
    public final void matmul(int rowFrom, int rowTo, float[] x, int xOff, int xStride, int batch,
                             float[] out, int outOff, int outStride) {
        if (batch != 1) {
            super.matmul(rowFrom, rowTo, x, xOff, xStride, batch, out, outOff, outStride);
            return;
        }
        float[] sums = Simd.groupSums(x, xOff, cols, 32);
        for (int r = rowFrom; r < rowTo; r++) out[outOff + r] = dot(r, x, xOff, sums);
    }
}
