package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.L;

import java.lang.foreign.MemorySegment;
import java.util.function.IntBinaryOperator;
import jdk.incubator.vector.FloatVector;

/**
 * The weight types whose batch-of-one kernel reads x rearranged, once per call, into the order in
 * which it reads the weights (Q4_K, Q5_K and Q6_K: x permuted to the places the weight bytes have
 * in 32-bit lanes; Q5_0: the high half of each block pre-divided by 16), together with per-lane
 * sums of x that the kernel's offsets or mins multiply. Preparing x costs O(cols) per call, so a
 * batch of one prepares it once for all its rows; {@link #dot(int, float[], int)} prepares it per
 * call. This class holds the per-thread scratch and those two entry points; each type writes
 * {@link #prepare}, its kernel and the loop over its rows.
 */
abstract sealed class PreparedXTensor extends SegmentTensor permits MinKQuantTensor, Q6_KTensor, Q5_0Tensor {

    PreparedXTensor(GgmlType type, MemorySegment seg, int rows, int cols) {
        super(type, seg, rows, cols);
    }

    /**
     * Floats of per-lane sums {@link #prepare} writes for this tensor's columns: by default one
     * per four weights, the k-quants' lane layout ({@link #permuteLanes}).
     */
    int sumsLength() {
        return cols / 4;
    }

    /** Writes x[xOff .. xOff + cols) in the kernel's order to xp and its per-lane sums to xs. */
    abstract void prepare(float[] x, int xOff, float[] xp, float[] xs);

    /** Row {@code row} dotted with x prepared by {@link #prepare}. */
    abstract float dot(int row, float[] xp, float[] xs);

    /**
     * Weight streams of a batch of one ({@link FloatTensor#STREAMS} says why the count matters):
     * one, since these kernels read one row per pass. On the AMD EPYC Zen 5, a decode pass over
     * the Llama-3.2-1B Q4_K_M file's weights (Q4_K and Q6_K) at two threads, from private memory,
     * ran at 30.4-30.9 GMAC/s with one stream against 28.1-28.4 with two, alternating; its decode
     * end to end at 1.04-1.21x mapped and 1.02-1.09x copied, SmolLM2-135M Q4_K_M's at 1.03-1.20x
     * (docs/benchmarks.md). Q4_K and Q6_K now take {@link RowLanes} instead where it is enabled,
     * which reads its groups in order. {@code fdkvc.streams}, when set, overrides it.
     */
    static final int ROW_STREAMS = streams(System.getProperty("fdkvc.streams"), 1);

    /**
     * out[outOff + r] = {@link #dot(int, float[], float[])} for r in [from, to), visited in
     * {@code streamedRow}'s order ({@link #ROW_STREAMS} weight streams): the same short loop written by each type
     * so that its own kernel is inlined into it rather than called through a call site shared by
     * all four types.
     */
    abstract void rows(int from, int to, float[] xp, float[] xs, float[] out, int outOff);

    /** Per-thread prepared x and lane sums (reused; grown on a thread's first larger call). */
    private static final class Scratch {
        float[] xp = new float[0], xs = new float[0];
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Scratch prepared(float[] x, int xOff) {
        Scratch sc = SCRATCH.get();
        if (sc.xp.length < cols) sc.xp = new float[cols];
        if (sc.xs.length < sumsLength()) sc.xs = new float[sumsLength()];
        prepare(x, xOff, sc.xp, sc.xs);
        return sc;
    }

    @Override
    public final float dot(int row, float[] x, int xOff) {
        RowLanes l = rowLanes();
        if (l != null && row < l.groupedRows()) return l.dot(row, x, xOff);
        Scratch sc = prepared(x, xOff);
        return dot(row, sc.xp, sc.xs);
    }

    @Override
    public final void matmul(int rowFrom, int rowTo, float[] x, int xOff, int xStride, int batch,
                             float[] out, int outOff, int outStride) {
        RowLanes l = batch > SMALL_BATCH ? null : rowLanes();
        if (batch != 1 && l == null) {
            // the tiled product, or a few batch rows without a copy: each row dequantised once
            super.matmul(rowFrom, rowTo, x, xOff, xStride, batch, out, outOff, outStride);
            return;
        }
        // a batch of one, or up to SMALL_BATCH rows at once on the copy (each batch row's
        // outputs the bits of its product alone)
        int from = l == null ? rowFrom : l.product(rowFrom, rowTo, x, xOff, xStride, batch, out, outOff, outStride);
        if (from == rowTo) return;
        // the rows after the last whole group, or all where there are no row lanes: the row
        // kernel, batch row by batch row
        for (int b = 0; b < batch; b++) {
            Scratch sc = prepared(x, xOff + b * xStride);
            rows(from, rowTo, sc.xp, sc.xs, out, outOff + b * outStride);
        }
    }

    /** 2^-8m: undoes the position of byte m in its 32-bit lane. */
    static final float[] SCALE = {1f, 0x1p-8f, 0x1p-16f, 0x1p-24f};

    /** Int vectors per 128 bytes of a k-quant's low bits. */
    static final int U = 128 / (4 * L);

    /**
     * The source table of {@link #permuteLanes}: entry {@code ((2u + n) * 4 + m) * L + i} is
     * {@code weight(P, n)}, the weight (within its super-block) held by nibble n of byte
     * {@code P = 4Lu + 4i + m} of the type's 128 bytes of low bits, i.e. by byte m of lane i of
     * int load u.
     */
    static int[] lanePositions(IntBinaryOperator weight) {
        int[] source = new int[256];
        for (int u = 0; u < U; u++) {
            for (int n = 0; n < 2; n++) {
                for (int m = 0; m < 4; m++) {
                    for (int i = 0; i < L; i++) source[((u * 2 + n) * 4 + m) * L + i] = weight.applyAsInt(4 * L * u + 4 * i + m, n);
                }
            }
        }
        return source;
    }

    /**
     * The k-quants' lane order, per super-block b of 256: {@code xp[256b + ((2u + n) * 4 + m) * L + i]}
     * = x[source[that index]] times 2^-8m (the x of the weight in byte m of lane i of int load u,
     * nibble n; multiplying by a power of two is exact, barring underflow below 2^-102, which
     * activations do not reach), and {@code xs[64b + (2u + n) * L + i]} = {@code sumScale} times
     * the sum over m of those x (unscaled; none when xs is null, for a kernel that reads no lane
     * sums). One gather of L x per (u, n, m) from the table of
     * source positions: scalar index arithmetic per element cost about as much as 30 rows'
     * products on short matrices.
     */
    static void permuteLanes(float[] x, int xOff, int cols, int[] source, float sumScale, float[] xp, float[] xs) {
        for (int b = 0, nb = cols / 256; b < nb; b++) {
            int xb = xOff + b * 256;
            for (int t = 0; t < 2 * U * L; t += L) {
                FloatVector sum = FloatVector.zero(F);
                for (int m = 0; m < 4; m++) {
                    FloatVector xv = FloatVector.fromArray(F, x, xb, source, 4 * t + m * L);
                    sum = sum.add(xv);
                    xv.mul(SCALE[m]).intoArray(xp, b * 256 + 4 * t + m * L);
                }
                if (xs != null) sum.mul(sumScale).intoArray(xs, b * 64 + t);
            }
        }
    }
}
