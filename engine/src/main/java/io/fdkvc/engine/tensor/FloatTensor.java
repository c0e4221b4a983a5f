package io.fdkvc.engine.tensor;

import jdk.incubator.vector.FloatVector;

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

    /**
     * Batched product for rows {@code [rowFrom, rowTo)} on the calling thread (the caller splits
     * rows over threads): {@code out[outOff + b*outStride + r] = dot(r, x, xOff + b*xStride)} for
     * {@code b} in {@code [0, batch)}. This is the prefill path: each weight row is read from
     * memory once per batch instead of once per token. The default dequantises four rows at a
     * time into a scratch block and multiplies them with two batch rows at once (eight register
     * accumulators), so quantised types pay the decoding once per chunk; a batch of one is plain
     * {@link #dot}. Subclasses may specialise.
     */
    public void matmul(int rowFrom, int rowTo, float[] x, int xOff, int xStride, int batch,
                       float[] out, int outOff, int outStride) {
        if (batch == 1) {
            for (int r = rowFrom; r < rowTo; r++) out[outOff + r] = dot(r, x, xOff);
            return;
        }
        int n = cols();
        float[] w = new float[4 * n + 8 * Simd.L]; // one small block per call (per chunk), never per token; lanes at 4n
        int r = rowFrom;
        for (; r + 4 <= rowTo; r += 4) {
            for (int j = 0; j < 4; j++) dequantizeRow(r + j, w, j * n);
            block4(w, n, x, xOff, xStride, batch, out, outOff + r, outStride);
        }
        for (; r < rowTo; r++) {
            dequantizeRow(r, w, 0);
            for (int b = 0; b < batch; b++) out[outOff + b * outStride + r] = Simd.dot(w, 0, x, xOff + b * xStride, n);
        }
    }

    /** Four dequantised rows {@code w} (n floats each) times every batch row, two batch rows at a time. */
    private static void block4(float[] w, int n, float[] x, int xOff, int xStride, int batch,
                               float[] out, int o, int outStride) {
        int L = Simd.L, up = Simd.F.loopBound(n);
        int b = 0;
        for (; b + 2 <= batch; b += 2) {
            int x0 = xOff + b * xStride, x1 = x0 + xStride;
            FloatVector a00 = FloatVector.zero(Simd.F), a10 = a00, a20 = a00, a30 = a00;
            FloatVector a01 = a00, a11 = a00, a21 = a00, a31 = a00;
            int i = 0;
            for (; i < up; i += L) {
                FloatVector v0 = FloatVector.fromArray(Simd.F, x, x0 + i), v1 = FloatVector.fromArray(Simd.F, x, x1 + i);
                FloatVector w0 = FloatVector.fromArray(Simd.F, w, i), w1 = FloatVector.fromArray(Simd.F, w, n + i);
                FloatVector w2 = FloatVector.fromArray(Simd.F, w, 2 * n + i), w3 = FloatVector.fromArray(Simd.F, w, 3 * n + i);
                a00 = w0.fma(v0, a00); a10 = w1.fma(v0, a10); a20 = w2.fma(v0, a20); a30 = w3.fma(v0, a30);
                a01 = w0.fma(v1, a01); a11 = w1.fma(v1, a11); a21 = w2.fma(v1, a21); a31 = w3.fma(v1, a31);
            }
            // the accumulators go through memory and Simd.sum's scalar twin: eight sum(vector)
            // calls exceed C2's inlining budget here, and a call that is not inlined boxes its vector
            int lp = 4 * n;
            a00.intoArray(w, lp); a10.intoArray(w, lp + L); a20.intoArray(w, lp + 2 * L); a30.intoArray(w, lp + 3 * L);
            a01.intoArray(w, lp + 4 * L); a11.intoArray(w, lp + 5 * L); a21.intoArray(w, lp + 6 * L); a31.intoArray(w, lp + 7 * L);
            float s00 = Simd.sum(w, lp), s10 = Simd.sum(w, lp + L), s20 = Simd.sum(w, lp + 2 * L), s30 = Simd.sum(w, lp + 3 * L);
            float s01 = Simd.sum(w, lp + 4 * L), s11 = Simd.sum(w, lp + 5 * L), s21 = Simd.sum(w, lp + 6 * L), s31 = Simd.sum(w, lp + 7 * L);
            for (; i < n; i++) {
                float v0 = x[x0 + i], v1 = x[x1 + i];
                s00 += w[i] * v0; s10 += w[n + i] * v0; s20 += w[2 * n + i] * v0; s30 += w[3 * n + i] * v0;
                s01 += w[i] * v1; s11 += w[n + i] * v1; s21 += w[2 * n + i] * v1; s31 += w[3 * n + i] * v1;
            }
            int p0 = o + b * outStride, p1 = p0 + outStride;
            out[p0] = s00; out[p0 + 1] = s10; out[p0 + 2] = s20; out[p0 + 3] = s30;
            out[p1] = s01; out[p1 + 1] = s11; out[p1 + 2] = s21; out[p1 + 3] = s31;
        }
        for (; b < batch; b++) {
            int x0 = xOff + b * xStride, p0 = o + b * outStride;
            for (int j = 0; j < 4; j++) out[p0 + j] = Simd.dot(w, j * n, x, x0, n);
        }
    }
}
