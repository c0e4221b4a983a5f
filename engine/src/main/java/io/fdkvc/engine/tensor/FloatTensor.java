package io.fdkvc.engine.tensor;

/**
 * A read-only row-major matrix of {@code rows x cols} weights, possibly quantised, usually a view
 * of a memory-mapped model file. Rows are the unit of work: a matrix-vector product is one
 * {@link #dot} per row, dequantising in the inner loop.
 */
public abstract class FloatTensor {
    /** Number of rows (output features). */
    public abstract int rows();

    /** Number of columns (input features); a multiple of the type's block size. */
    public abstract int cols();

    public abstract GgmlType type();

    /** Dot product of row {@code row} with {@code x[xOff .. xOff + cols)}. */
    public abstract float dot(int row, float[] x, int xOff);

    /** Writes row {@code row}, dequantised, to {@code out[off .. off + cols)}. */
    public abstract void dequantizeRow(int row, float[] out, int off);

    /**
     * {@code out[outOff + r] = dot(r, x, xOff)} for every row, split over the shared worker pool
     * ({@link Parallel}).
     */
    public void matvec(float[] x, int xOff, float[] out, int outOff) {
        Parallel.forRange(rows(), (from, to) -> {
            for (int r = from; r < to; r++) out[outOff + r] = dot(r, x, xOff);
        });
    }
}
