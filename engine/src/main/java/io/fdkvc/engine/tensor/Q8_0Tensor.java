package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.B;
import static io.fdkvc.engine.tensor.Simd.BL;
import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.L;
import static io.fdkvc.engine.tensor.Simd.LE;
import static io.fdkvc.engine.tensor.Simd.PARTS;
import static io.fdkvc.engine.tensor.Simd.SHORT_LE;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

/**
 * GGML Q8_0: blocks of 32 weights stored as an f16 scale {@code d} followed by 32 signed bytes
 * {@code q}; weight i is {@code d * q[i]} (34 bytes per block). A batch of one runs on the
 * matrix's {@link Q8_0RowLanes} copy where it has one (rows in whole groups of L), else on the
 * row kernel here ({@link #rowDot}, two rows per pass); larger batches read the file's blocks.
 */
public final class Q8_0Tensor extends SegmentTensor {
    static final int QK = 32, BLOCK = 34;

    public Q8_0Tensor(MemorySegment seg, int rows, int cols) {
        super(GgmlType.Q8_0, seg, rows, cols);
    }

    /** Row {@code row} dotted with x: on the {@link RowLanes} copy where products run on one, else {@link #rowDot}. */
    @Override
    public float dot(int row, float[] x, int xOff) {
        RowLanes l = rowLanes();
        return l != null && row < l.groupedRows() ? l.dot(row, x, xOff) : rowDot(row, x, xOff);
    }

    /** The row kernel: row {@code row} dotted with x, two blocks per pass. */
    private float rowDot(int row, float[] x, int xOff) {
        MemorySegment s = seg;
        long base = rowStart(row);
        int nb = cols / QK;
        // Everything stays in this one method: a helper returning a vector that C2 declines to
        // inline would box the vector on every block. Two blocks per iteration with their own
        // accumulators: the per-block FMA with the scale is the only loop-carried dependency,
        // and two chains halve its latency's share of the loop.
        FloatVector acc0 = FloatVector.zero(F), acc1 = FloatVector.zero(F);
        int b = 0;
        for (; b + 1 < nb; b += 2) {
            long p = base + b * (long) BLOCK;
            int xb = xOff + b * QK;
            FloatVector s0 = FloatVector.zero(F), s1 = FloatVector.zero(F);
            for (int j = 0; j < QK; j += BL) {
                ByteVector q0 = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                ByteVector q1 = ByteVector.fromMemorySegment(B, s, p + BLOCK + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    s0 = Simd.toFloats(q0, k).fma(FloatVector.fromArray(F, x, xb + j + k * L), s0);
                    s1 = Simd.toFloats(q1, k).fma(FloatVector.fromArray(F, x, xb + QK + j + k * L), s1);
                }
            }
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc0);
            acc1 = s1.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p + BLOCK))), acc1);
        }
        if (b < nb) {
            long p = base + b * (long) BLOCK;
            int xb = xOff + b * QK;
            FloatVector s0 = FloatVector.zero(F);
            for (int j = 0; j < QK; j += BL) {
                ByteVector q0 = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) s0 = Simd.toFloats(q0, k).fma(FloatVector.fromArray(F, x, xb + j + k * L), s0);
            }
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc0);
        }
        return Simd.sum(acc0.add(acc1));
    }

    /**
     * A few batch rows (continuous batching's decode step, a short prompt's prefill, see {@link
     * FloatTensor#SMALL_BATCH}): on the {@link RowLanes} copy where there is one, each group of
     * rows read once for the whole batch and each weight vector converted once for two batch
     * rows ({@link Q8_0RowLanes#group2}); without one, each weight row is read once for up to four
     * batch rows at a time, scaled per block and multiplied into four accumulators. Either way the
     * weights cost one pass however many conversations decode together. Larger batches take the
     * tiled kernel.
     */
    @Override
    public void matmul(int rowFrom, int rowTo, float[] x, int xOff, int xStride, int batch,
                       float[] out, int outOff, int outStride) {
        // the rows go in streamedRow's order (STREAMS weight streams in flight); each row's sum is
        // computed as before, so only the order of the rows changes
        if (batch > SMALL_BATCH) {
            super.matmul(rowFrom, rowTo, x, xOff, xStride, batch, out, outOff, outStride);
            return;
        }
        // the rows in whole groups on the RowLanes copy, where there is one (each group read once
        // for all the batch rows, each batch row's outputs the bits of its product alone); the
        // rest batch row by batch row as a batch of one
        RowLanes l = rowLanes();
        if (l != null) {
            int from = l.product(rowFrom, rowTo, x, xOff, xStride, batch, out, outOff, outStride);
            for (int b = 0; b < batch && from < rowTo; b++) rowPairs(from, rowTo, x, xOff + b * xStride, out, outOff + b * outStride);
            return;
        }
        if (batch == 1) {
            rowPairs(rowFrom, rowTo, x, xOff, out, outOff);
            return;
        }
        int n = rowTo - rowFrom;
        for (int b0 = 0; b0 < batch; b0 += 4) {
            int m = Math.min(4, batch - b0);
            if (m <= 2) {
                // one or two rows left: the four-row kernel would spend half its FMAs on copies
                int x0 = xOff + b0 * xStride, o = outOff + b0 * outStride;
                for (int i = 0; i < n; i++) {
                    int r = streamedRow(rowFrom, rowTo, i);
                    if (m == 1) out[o + r] = rowDot(r, x, x0);
                    else dot2(r, x, x0, x0 + xStride, out, o + r, outStride);
                }
                continue;
            }
            // the missing rows of a short group read the group's last row; their sums are dropped
            int x0 = xOff + b0 * xStride;
            int x1 = xOff + (b0 + Math.min(1, m - 1)) * xStride;
            int x2 = xOff + (b0 + Math.min(2, m - 1)) * xStride;
            int x3 = xOff + (b0 + Math.min(3, m - 1)) * xStride;
            int o = outOff + b0 * outStride;
            // two weight rows at a time (eight FMA chains in flight, each batch row's vector
            // loaded once for both); an odd last row is paired with itself
            int i = 0;
            for (; i + 1 < n; i += 2) {
                dot4Pair(streamedRow(rowFrom, rowTo, i), streamedRow(rowFrom, rowTo, i + 1), x, x0, x1, x2, x3, out, o, outStride, m);
            }
            if (i < n) dot4Pair(rowTo - 1, rowTo - 1, x, x0, x1, x2, x3, out, o, outStride, m);
        }
    }

    /**
     * Rows [from, to) dotted with x into out[outOff + r] on the row kernel: two weight rows per
     * pass over x (four FMA chains in flight), each summed in rowDot's order (the same bits),
     * consecutive steps of streamedRow (with two streams rows r and r + q, then r + 1 and r + q + 1).
     */
    private void rowPairs(int from, int to, float[] x, int xOff, float[] out, int outOff) {
        int i = 0, left = to - from;
        for (; i + 1 < left; i += 2) dotPair(streamedRow(from, to, i), streamedRow(from, to, i + 1), x, xOff, out, outOff);
        if (i < left) out[outOff + to - 1] = rowDot(to - 1, x, xOff);
    }

    /** Rows {@code row} and {@code row2} dotted with x into out[outOff + row], out[outOff + row2], each in {@link #rowDot}'s order. */
    private void dotPair(int row, int row2, float[] x, int xOff, float[] out, int outOff) {
        MemorySegment s = seg;
        long p = rowStart(row), pr = rowStart(row2);
        int nb = cols / QK;
        FloatVector acc0 = FloatVector.zero(F), acc1 = acc0, bcc0 = acc0, bcc1 = acc0;
        int b = 0;
        for (; b + 1 < nb; b += 2, p += 2 * BLOCK, pr += 2 * BLOCK) {
            int xb = xOff + b * QK;
            FloatVector s0 = FloatVector.zero(F), s1 = s0, t0 = s0, t1 = s0;
            for (int j = 0; j < QK; j += BL) {
                ByteVector q0 = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                ByteVector q1 = ByteVector.fromMemorySegment(B, s, p + BLOCK + 2 + j, LE);
                ByteVector r0 = ByteVector.fromMemorySegment(B, s, pr + 2 + j, LE);
                ByteVector r1 = ByteVector.fromMemorySegment(B, s, pr + BLOCK + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    FloatVector xa = FloatVector.fromArray(F, x, xb + j + k * L), xc = FloatVector.fromArray(F, x, xb + QK + j + k * L);
                    s0 = Simd.toFloats(q0, k).fma(xa, s0);
                    s1 = Simd.toFloats(q1, k).fma(xc, s1);
                    t0 = Simd.toFloats(r0, k).fma(xa, t0);
                    t1 = Simd.toFloats(r1, k).fma(xc, t1);
                }
            }
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc0);
            acc1 = s1.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p + BLOCK))), acc1);
            bcc0 = t0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, pr))), bcc0);
            bcc1 = t1.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, pr + BLOCK))), bcc1);
        }
        if (b < nb) {
            int xb = xOff + b * QK;
            FloatVector s0 = FloatVector.zero(F), t0 = s0;
            for (int j = 0; j < QK; j += BL) {
                ByteVector q0 = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                ByteVector r0 = ByteVector.fromMemorySegment(B, s, pr + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    FloatVector xa = FloatVector.fromArray(F, x, xb + j + k * L);
                    s0 = Simd.toFloats(q0, k).fma(xa, s0);
                    t0 = Simd.toFloats(r0, k).fma(xa, t0);
                }
            }
            acc0 = s0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p))), acc0);
            bcc0 = t0.fma(FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, pr))), bcc0);
        }
        out[outOff + row] = Simd.sum(acc0.add(acc1));
        out[outOff + row2] = Simd.sum(bcc0.add(bcc1));
    }

    /** Row {@code row} dotted with two batch rows, into out[o] and out[o + stride] (as {@link #dot4Pair}). */
    private void dot2(int row, float[] x, int x0, int x1, float[] out, int o, int stride) {
        MemorySegment s = seg;
        long p = rowStart(row);
        // two accumulators per batch row, one per half block: with one, each vector of weights
        // would wait for the previous FMA into the same register; the halves are added at the
        // end (a fixed order)
        FloatVector a0 = FloatVector.zero(F), a1 = a0, b0 = a0, b1 = a0;
        final int half = QK / 2;
        for (int bk = 0, nb = cols / QK; bk < nb; bk++, p += BLOCK) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p)));
            int c = bk * QK;
            for (int j = 0; j < half; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                ByteVector r = ByteVector.fromMemorySegment(B, s, p + 2 + half + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    FloatVector w = Simd.toFloats(q, k).mul(d), v = Simd.toFloats(r, k).mul(d);
                    int cc = c + j + k * L, cv = cc + half;
                    a0 = w.fma(FloatVector.fromArray(F, x, x0 + cc), a0);
                    a1 = w.fma(FloatVector.fromArray(F, x, x1 + cc), a1);
                    b0 = v.fma(FloatVector.fromArray(F, x, x0 + cv), b0);
                    b1 = v.fma(FloatVector.fromArray(F, x, x1 + cv), b1);
                }
            }
        }
        out[o] = Simd.sum(a0.add(b0));
        out[o + stride] = Simd.sum(a1.add(b1));
    }

    /**
     * Rows {@code row} and {@code row2} each dotted with four batch rows; the first {@code m}
     * results go to out[o + row + i * stride] and out[o + row2 + i * stride]. Each block's weights
     * are scaled, then multiplied into one accumulator per batch row. {@code row2 == row} computes
     * one row (the odd row of a range), with the same bits. One method, as in dot(): a
     * vector-returning helper that C2 does not inline would box.
     */
    private void dot4Pair(int row, int row2, float[] x, int x0, int x1, int x2, int x3, float[] out, int o, int stride, int m) {
        MemorySegment s = seg;
        long p = rowStart(row), pr = rowStart(row2);
        FloatVector a0 = FloatVector.zero(F), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (int b = 0, nb = cols / QK; b < nb; b++, p += BLOCK, pr += BLOCK) {
            FloatVector d = FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, p)));
            FloatVector e = FloatVector.broadcast(F, Float.float16ToFloat(s.get(SHORT_LE, pr)));
            int c = b * QK;
            for (int j = 0; j < QK; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                ByteVector r = ByteVector.fromMemorySegment(B, s, pr + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) {
                    FloatVector w = Simd.toFloats(q, k).mul(d), v = Simd.toFloats(r, k).mul(e);
                    int cc = c + j + k * L;
                    FloatVector y0 = FloatVector.fromArray(F, x, x0 + cc), y1 = FloatVector.fromArray(F, x, x1 + cc);
                    FloatVector y2 = FloatVector.fromArray(F, x, x2 + cc), y3 = FloatVector.fromArray(F, x, x3 + cc);
                    a0 = w.fma(y0, a0);
                    b0 = v.fma(y0, b0);
                    a1 = w.fma(y1, a1);
                    b1 = v.fma(y1, b1);
                    a2 = w.fma(y2, a2);
                    b2 = v.fma(y2, b2);
                    a3 = w.fma(y3, a3);
                    b3 = v.fma(y3, b3);
                }
            }
        }
        out[o + row] = Simd.sum(a0);
        out[o + row2] = Simd.sum(b0);
        if (m > 1) { out[o + stride + row] = Simd.sum(a1); out[o + stride + row2] = Simd.sum(b1); }
        if (m > 2) { out[o + 2 * stride + row] = Simd.sum(a2); out[o + 2 * stride + row2] = Simd.sum(b2); }
        if (m > 3) { out[o + 3 * stride + row] = Simd.sum(a3); out[o + 3 * stride + row2] = Simd.sum(b3); }
    }

    @Override
    void dequantizeColumns(int row, int from, int to, float[] out, int off) {
        MemorySegment s = seg;
        long p = rowStart(row) + (long) (from / QK) * BLOCK;
        off -= from;   // block b's weights go to out[off + b * QK ..]
        for (int b = from / QK, nb = to / QK; b < nb; b++, p += BLOCK) {
            float d = Float.float16ToFloat(s.get(SHORT_LE, p));
            int o = off + b * QK;
            for (int j = 0; j < QK; j += BL) {
                ByteVector q = ByteVector.fromMemorySegment(B, s, p + 2 + j, LE);
                for (int k = 0; k < PARTS; k++) Simd.toFloats(q, k).mul(d).intoArray(out, o + j + k * L);
            }
        }
    }
}
