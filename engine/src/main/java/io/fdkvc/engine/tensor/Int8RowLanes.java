package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.I;
import static io.fdkvc.engine.tensor.Simd.L;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

/**
 * A {@link RowLanes} copy whose group kernel has two forms, chosen once by {@link
 * #INT8_ACTIVATIONS}: in integers (x rounded to 8 bits per 256 columns, {@link #roundToBytes},
 * and paired two to an int for 16-bit lanes, {@link #pairs}, in the order the type's kernel reads
 * them) or with x in floats. Q4_K and Q6_K: the types whose weights are at most 6 bits, so that
 * a weight times a rounded x and a few such products fit a 16-bit lane.
 */
abstract sealed class Int8RowLanes extends RowLanes permits Q4_KRowLanes, Q6_KRowLanes {
    /** 1.5 * 2^23: adding and then subtracting it rounds a float of magnitude below 2^22 to an integer, half to even. */
    private static final float ROUNDER = 12582912f;

    private final int[] pairLo, pairHi;
    private final int sums;
    private final float sumScale;

    /**
     * A copy as {@link RowLanes#RowLanes} has it, whose integer kernel reads x paired as {@link
     * #pairs} makes it from {@code pairLo} and {@code pairHi}, with {@code sums} sums of the rounded
     * x per super-block, each times {@code sumScale}.
     */
    Int8RowLanes(MemorySegment seg, int rows, int cols, int qk, int groupBlock, int[] pairLo, int[] pairHi, int sums, float sumScale) {
        super(seg, rows, cols, qk, groupBlock);
        this.pairLo = pairLo;
        this.pairHi = pairHi;
        this.sums = sums;
        this.sumScale = sumScale;
    }

    /** x rounded and paired for {@link #groupInt8} ({@code xq[b]} the blocks' scales), or {@link #prepareFloat}'s. */
    @Override
    final void prepare(float[] x, int xOff, Prepared p) {
        if (INT8_ACTIVATIONS) {
            roundToBytes(x, xOff, cols, p.xr, p.xq);
            pairs(p.xr, cols, pairLo, pairHi, p.xi, sums, sumScale, p.xs);
        } else {
            prepareFloat(x, xOff, p);
        }
    }

    @Override
    final void group(int g, Prepared p, float[] dst, int dstOff) {
        if (INT8_ACTIVATIONS) groupInt8(g, p, dst, dstOff);
        else groupFloat(g, p, dst, dstOff);
    }

    /** Groups g and h: in one pass in integers ({@link #pairInt8}), else one after the other with x in floats. */
    @Override
    final void pair(int g, int h, Prepared p, float[] dst, int gOff, int hOff) {
        if (INT8_ACTIVATIONS) {
            pairInt8(g, h, p, dst, gOff, hOff);
        } else {
            groupFloat(g, p, dst, gOff);
            groupFloat(h, p, dst, hOff);
        }
    }

    /** Group g for two batch rows: in one pass in integers ({@link #group2Int8}), else one after the other with x in floats. */
    @Override
    final void group2(int g, Prepared p0, Prepared p1, float[] dst, int o0, int o1) {
        if (INT8_ACTIVATIONS) {
            group2Int8(g, p0, p1, dst, o0, o1);
        } else {
            groupFloat(g, p0, dst, o0);
            groupFloat(g, p1, dst, o1);
        }
    }

    /**
     * {@link #groupInt8} of group g for two batch rows' x (prepared in p0 and p1) in one pass, to
     * {@code dst[o0 ..]} and {@code dst[o1 ..]}: each int vector of the weights read and unpacked
     * once for both, each batch row's sums in {@link #groupInt8}'s order (the same bits).
     */
    abstract void group2Int8(int g, Prepared p0, Prepared p1, float[] dst, int o0, int o1);

    /**
     * {@link #pair} in integers: groups g and h in one pass (two streams of weights), each
     * broadcast x shared by both, each group's outputs the bits {@link #groupInt8} gives it.
     */
    abstract void pairInt8(int g, int h, Prepared p, float[] dst, int gOff, int hOff);

    /** x[xOff ..] in the float kernel's order and its sums, into p ({@code fdkvc.int8Activations=false}). */
    abstract void prepareFloat(float[] x, int xOff, Prepared p);

    /** {@link #group} in integers, on x as {@link #prepare} rounds and pairs it. */
    abstract void groupInt8(int g, Prepared p, float[] dst, int dstOff);

    /** {@link #group} with x in floats ({@code fdkvc.int8Activations=false}): the products exact. */
    abstract void groupFloat(int g, Prepared p, float[] dst, int dstOff);

    /**
     * x[xOff .. xOff + cols) rounded per super-block b of 256: {@code xr[i] = rint(x[i] * (127 /
     * m))} with m the block's largest |x|, and {@code dx[b] = m / 127}, so that x[i] is about
     * {@code xr[i] * dx[b]}, within half of dx[b] (a block of zeros: all 0, dx 0). llama.cpp's
     * {@code quantize_row_q8_K} rounds the same way (its scale -127 over the block's largest
     * signed value, to nearest, so its values lie in [-127, 127] too); that range keeps 16
     * products of a 4-bit weight, or 4 of a 6-bit one, within a 16-bit lane.
     */
    static void roundToBytes(float[] x, int xOff, int cols, int[] xr, float[] dx) {
        for (int b = 0, o = xOff; b < cols / 256; b++, o += 256) {
            FloatVector m = FloatVector.zero(F);
            for (int i = 0; i < 256; i += L) m = m.max(FloatVector.fromArray(F, x, o + i).abs());
            float max = m.reduceLanes(VectorOperators.MAX), inv = max == 0f ? 0f : 127f / max;
            dx[b] = max / 127f;
            for (int i = 0; i < 256; i += L) {
                FloatVector r = FloatVector.fromArray(F, x, o + i).mul(inv).add(ROUNDER).sub(ROUNDER);
                ((IntVector) r.convert(VectorOperators.F2I, 0)).intoArray(xr, b * 256 + i);
            }
        }
    }

    /**
     * Rounded x (xr, {@link #roundToBytes}) two to an int for a kernel's 16-bit lanes: per
     * super-block b and j < 128, {@code xi[128b + j]} holds column lo[j]'s x in its low 16 bits and
     * column hi[j]'s in its high 16 bits (columns of the block), the pair one int lane's two
     * shorts multiply; and {@code xs[b * sums + k]} = {@code scale} times the sum of xr over the
     * block's k-th run of 256 / sums columns (the sub-blocks' terms that do not depend on the
     * weights' low bits). The pairs are gathered a vector at a time ({@code vpgatherdd}) and the
     * runs summed in vectors: written as a scalar loop, this took 1.5% of a decode step's samples
     * (every product prepares its x), and the vector form decoded the 1B Q4_K_M file at 1.019
     * and 1.026 times its speed (docs/benchmarks.md, "x paired in vectors"). The same integers.
     */
    static void pairs(int[] xr, int cols, int[] lo, int[] hi, int[] xi, int sums, float scale, float[] xs) {
        int run = 256 / sums, n = I.length();
        for (int b = 0; b < cols / 256; b++) {
            int o = 256 * b;
            for (int j = 0; j < 128; j += n) {
                IntVector l = IntVector.fromArray(I, xr, o, lo, j), h = IntVector.fromArray(I, xr, o, hi, j);
                l.and(0xFFFF).or(h.lanewise(VectorOperators.LSHL, 16)).intoArray(xi, 128 * b + j);
            }
            for (int k = 0; k < sums; k++) {
                IntVector t = IntVector.fromArray(I, xr, o + k * run);
                for (int i = o + k * run + n; i < o + (k + 1) * run; i += n) t = t.add(IntVector.fromArray(I, xr, i));
                xs[b * sums + k] = scale * t.reduceLanes(VectorOperators.ADD);
            }
        }
    }
}
