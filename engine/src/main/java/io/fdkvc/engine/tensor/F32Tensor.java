package io.fdkvc.engine.tensor;

import java.util.Objects;

/** Float32 rows in a Java array (llama2.c checkpoints, tests, small derived matrices). */
public final class F32Tensor extends FloatTensor {
    private final float[] data;
    private final int offset, rows, cols;

    /** {@code rows x cols} floats starting at {@code data[offset]}, row-major; the array is shared, not copied. */
    public F32Tensor(float[] data, int offset, int rows, int cols) {
        Objects.requireNonNull(data, "data");
        if (rows < 0 || cols < 0 || offset < 0 || (long) offset + (long) rows * cols > data.length)
            throw new IllegalArgumentException("shape " + rows + " x " + cols + " at offset " + offset
                    + " does not fit an array of " + data.length);
        this.data = data;
        this.offset = offset;
        this.rows = rows;
        this.cols = cols;
    }

    public F32Tensor(float[] data, int rows, int cols) {
        this(data, 0, rows, cols);
    }

    @Override
    public int rows() {
        return rows;
    }

    @Override
    public int cols() {
        return cols;
    }

    @Override
    public GgmlType type() {
        return GgmlType.F32;
    }

    /** The backing array (shared). */
    public float[] data() {
        return data;
    }

    /** Where row 0 starts in {@link #data()}. */
    public int offset() {
        return offset;
    }

    @Override
    public float dot(int row, float[] x, int xOff) {
        Objects.checkIndex(row, rows);
        return Simd.dot(data, offset + row * cols, x, xOff, cols);
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        Objects.checkIndex(row, rows);
        System.arraycopy(data, offset + row * cols + from, out, off, to - from);
    }
}
