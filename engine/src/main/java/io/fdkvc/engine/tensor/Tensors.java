package io.fdkvc.engine.tensor;

import java.lang.foreign.MemorySegment;

/** Creates the tensor view for a GGML type. */
public final class Tensors {
    private Tensors() {}

    /**
     * A {@code rows x cols} view of {@code seg} in the layout of {@code type}; the segment must
     * hold at least {@code rows * type.bytes(cols)} bytes and {@code cols} must be a multiple of
     * the type's block size.
     */
    public static SegmentTensor view(GgmlType type, MemorySegment seg, int rows, int cols) {
        return switch (type) {
            case F32 -> new F32SegmentTensor(seg, rows, cols);
            case F16 -> new F16Tensor(seg, rows, cols);
            case BF16 -> new BF16Tensor(seg, rows, cols);
            case Q8_0 -> new Q8_0Tensor(seg, rows, cols);
            case Q4_0 -> new Q4_0Tensor(seg, rows, cols);
            case Q4_1 -> new Q4_1Tensor(seg, rows, cols);
            case Q5_0 -> new Q5_0Tensor(seg, rows, cols);
            case Q5_1 -> new Q5_1Tensor(seg, rows, cols);
            case Q2_K -> new Q2_KTensor(seg, rows, cols);
            case Q3_K -> new Q3_KTensor(seg, rows, cols);
            case Q4_K -> new Q4_KTensor(seg, rows, cols);
            case Q5_K -> new Q5_KTensor(seg, rows, cols);
            case IQ4_NL -> new IQ4_NLTensor(seg, rows, cols);
            case IQ4_XS -> new IQ4_XSTensor(seg, rows, cols);
            case Q6_K -> new Q6_KTensor(seg, rows, cols);
        };
    }

    /** All of {@code t}, dequantised row after row. */
    public static float[] toFloats(FloatTensor t) {
        long n = (long) t.rows() * t.cols();
        if (n > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("tensor of " + n + " elements does not fit a float[]");
        float[] out = new float[(int) n];
        for (int r = 0; r < t.rows(); r++) t.dequantizeRow(r, out, r * t.cols());
        return out;
    }
}
