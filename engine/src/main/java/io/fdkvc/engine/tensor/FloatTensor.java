package io.fdkvc.engine.tensor;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

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
     * Batched product for rows {@code [rowFrom, rowTo)} on the calling thread (the caller splits
     * rows over threads): {@code out[outOff + b*outStride + r] = dot(r, x, xOff + b*xStride)} for
     * {@code b} in {@code [0, batch)}, up to rounding. This is the prefill path: each weight row
     * is read and dequantised once per batch instead of once per token.
     *
     * <p>The batch is transposed once per call into tiles of {@link #NB} rows laid out column by
     * column, so that one vector holds column k of NB batch rows; {@link #MR} weight rows are
     * dequantised at a time and each weight is broadcast against those vectors. The kernel keeps
     * MR x 2 accumulator vectors in registers and needs, per 2·MR FMAs, two vector loads and MR
     * broadcasts, and no horizontal reduction (about 2-3x the multiply-adds per second of a
     * row-times-row kernel on AVX2). Each output is one FMA chain over the columns in order: a
     * fixed order (the same bits in the interpreter and in C2), which differs from {@link #dot}'s
     * lane-wise order in the last bits. A batch of one is plain {@link #dot}.
     */
    public void matmul(int rowFrom, int rowTo, float[] x, int xOff, int xStride, int batch,
                       float[] out, int outOff, int outStride) {
        if (batch == 1) {
            for (int r = rowFrom; r < rowTo; r++) out[outOff + r] = dot(r, x, xOff);
            return;
        }
        int n = cols();
        if (batch <= SMALL_BATCH) {
            // a few rows (continuous batching's decode step): the tiles would compute NB lanes for
            // a handful of rows; instead each weight row is dequantised once, into L1, and dotted
            // with every batch row (the same arithmetic as the remainder rows below)
            float[] w = SCRATCH.get().ensure(0, n).w;
            for (int r = rowFrom; r < rowTo; r++) {
                dequantizeRow(r, w, 0);
                for (int b = 0; b < batch; b++) out[outOff + b * outStride + r] = Simd.dot(w, 0, x, xOff + b * xStride, n);
            }
            return;
        }
        int tiles = (batch + NB - 1) / NB;
        Scratch sc = SCRATCH.get().ensure(tiles * n * NB, MR * n);
        float[] xt = sc.xt, w = sc.w, acc = sc.acc;
        // transpose: xt[(tile*n + k)*NB + j] = x[batch row tile*NB + j][k], zero beyond the batch
        for (int t = 0; t < tiles; t++) {
            for (int j = 0; j < NB; j++) {
                int b = t * NB + j, base = t * n * NB + j;
                if (b < batch) {
                    for (int k = 0, xi = xOff + b * xStride; k < n; k++) xt[base + k * NB] = x[xi + k];
                } else {
                    for (int k = 0; k < n; k++) xt[base + k * NB] = 0f;
                }
            }
        }
        int r = rowFrom;
        for (; r + MR <= rowTo; r += MR) {
            for (int j = 0; j < MR; j++) dequantizeRow(r + j, w, j * n);
            for (int t = 0; t < tiles; t++) {
                kernel(w, n, xt, t * n * NB, acc);
                // scatter the MR x NB block: acc[j*NB + lane] is (row r+j, batch row t*NB+lane)
                for (int lane = 0, b = t * NB; lane < NB && b < batch; lane++, b++) {
                    int o = outOff + b * outStride + r;
                    for (int j = 0; j < MR; j++) out[o + j] = acc[j * NB + lane];
                }
            }
        }
        for (; r < rowTo; r++) {
            dequantizeRow(r, w, 0);
            for (int b = 0; b < batch; b++) out[outOff + b * outStride + r] = Simd.dot(w, 0, x, xOff + b * xStride, n);
        }
    }

    /** Weight rows per kernel call, and batch rows per tile (two vectors). */
    static final int MR = 6, NB = 2 * Simd.L;

    /**
     * Up to this many batch rows {@link #matmul} dots each dequantised weight row with every batch
     * row instead of running the tiled kernel, whose NB lanes would mostly be padding.
     */
    static final int SMALL_BATCH = 8;

    /** Per-thread scratch of {@link #matmul}: allocated on a thread's first chunk, then reused. */
    private static final class Scratch {
        float[] xt = new float[0], w = new float[0];
        final float[] acc = new float[MR * NB];

        Scratch ensure(int xtLen, int wLen) {
            if (xt.length < xtLen) xt = new float[xtLen];
            if (w.length < wLen) w = new float[wLen];
            return this;
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * acc[j*NB ..] = sum_k w[j*n + k] * xt[xo + k*NB ..] for the MR rows j: twelve accumulators
     * (MR x two vectors) in registers. Written out row by row because a helper returning vectors
     * that C2 does not inline would box them.
     */
    private static void kernel(float[] w, int n, float[] xt, int xo, float[] acc) {
        VectorSpecies<Float> F = Simd.F;
        int L = Simd.L;
        FloatVector c00 = FloatVector.zero(F), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
        FloatVector c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
        for (int k = 0, p = xo; k < n; k++, p += NB) {
            FloatVector v0 = FloatVector.fromArray(F, xt, p), v1 = FloatVector.fromArray(F, xt, p + L);
            FloatVector b = FloatVector.broadcast(F, w[k]);
            c00 = v0.fma(b, c00); c01 = v1.fma(b, c01);
            b = FloatVector.broadcast(F, w[n + k]);
            c10 = v0.fma(b, c10); c11 = v1.fma(b, c11);
            b = FloatVector.broadcast(F, w[2 * n + k]);
            c20 = v0.fma(b, c20); c21 = v1.fma(b, c21);
            b = FloatVector.broadcast(F, w[3 * n + k]);
            c30 = v0.fma(b, c30); c31 = v1.fma(b, c31);
            b = FloatVector.broadcast(F, w[4 * n + k]);
            c40 = v0.fma(b, c40); c41 = v1.fma(b, c41);
            b = FloatVector.broadcast(F, w[5 * n + k]);
            c50 = v0.fma(b, c50); c51 = v1.fma(b, c51);
        }
        c00.intoArray(acc, 0); c01.intoArray(acc, L);
        c10.intoArray(acc, NB); c11.intoArray(acc, NB + L);
        c20.intoArray(acc, 2 * NB); c21.intoArray(acc, 2 * NB + L);
        c30.intoArray(acc, 3 * NB); c31.intoArray(acc, 3 * NB + L);
        c40.intoArray(acc, 4 * NB); c41.intoArray(acc, 4 * NB + L);
        c50.intoArray(acc, 5 * NB); c51.intoArray(acc, 5 * NB + L);
    }
}
