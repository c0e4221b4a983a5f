package io.fdkvc.core.math;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * The few numeric kernels every hot loop of the library is built from, on the Vector API.
 *
 * <p>All methods work on slices of flat {@code float[]} arrays (struct-of-arrays storage), never
 * allocate, and accumulate in float lanes with fused multiply-add; reductions that feed a
 * softmax or a normalisation are widened to double by the caller.
 */
public final class VectorMath {
    private static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Double> D = DoubleVector.SPECIES_PREFERRED;

    private VectorMath() {}

    /** a[aOff..aOff+n) . b[bOff..bOff+n) */
    public static float dot(float[] a, int aOff, float[] b, int bOff, int n) {
        int i = 0;
        float sum;
        int upper = F.loopBound(n);
        if (upper > 0) {
            FloatVector acc = FloatVector.zero(F);
            for (; i < upper; i += F.length()) {
                acc = FloatVector.fromArray(F, a, aOff + i).fma(FloatVector.fromArray(F, b, bOff + i), acc);
            }
            sum = sumLanes(acc);
        } else {
            sum = 0f;
        }
        for (; i < n; i++) {
            sum += a[aOff + i] * b[bOff + i];
        }
        return sum;
    }

    /**
     * Sum of the lanes in lane order. reduceLanes(ADD) leaves the order of the additions
     * unspecified, and the JIT's order differs from the interpreter's, so the same input could
     * give different last bits before and after warm-up; a fixed order keeps every result
     * reproducible.
     */
    private static float sumLanes(FloatVector v) {
        float s = 0f;
        for (int l = 0; l < v.length(); l++) s += v.lane(l);
        return s;
    }

    /** Euclidean norm of a[off..off+n), computed in double after a float dot product. */
    public static double norm(float[] a, int off, int n) {
        return Math.sqrt(dot(a, off, a, off, n));
    }

    /** y[yOff..) += alpha * x[xOff..), n elements. */
    public static void axpy(float alpha, float[] x, int xOff, float[] y, int yOff, int n) {
        int i = 0;
        int upper = F.loopBound(n);
        FloatVector va = FloatVector.broadcast(F, alpha);
        for (; i < upper; i += F.length()) {
            FloatVector.fromArray(F, x, xOff + i).fma(va, FloatVector.fromArray(F, y, yOff + i))
                    .intoArray(y, yOff + i);
        }
        for (; i < n; i++) {
            y[yOff + i] += alpha * x[xOff + i];
        }
    }

    /** x[off..off+n) *= s. */
    public static void scale(float[] x, int off, int n, float s) {
        int i = 0;
        int upper = F.loopBound(n);
        for (; i < upper; i += F.length()) {
            FloatVector.fromArray(F, x, off + i).mul(s).intoArray(x, off + i);
        }
        for (; i < n; i++) {
            x[off + i] *= s;
        }
    }

    /**
     * Mean of {@code rows} row vectors of length {@code d} stored back to back in {@code rowsData},
     * written to {@code out[0..d)}.
     */
    public static void meanRows(float[] rowsData, int rows, int d, float[] out) {
        java.util.Arrays.fill(out, 0, d, 0f);
        for (int r = 0; r < rows; r++) {
            axpy(1f, rowsData, r * d, out, 0, d);
        }
        scale(out, 0, d, 1f / rows);
    }

    /**
     * Logits of one query against {@code count} keys of dimension {@code d} stored row-wise from
     * index 0 of {@code keys}: {@code out[i] = q . k_i * scale}.
     */
    public static void logits(float[] q, int qOff, float[] keys, int count, int d, double scale, double[] out) {
        for (int i = 0; i < count; i++) {
            out[i] = dot(q, qOff, keys, i * d, d) * scale;
        }
    }

    /**
     * In-place softmax of x[0..n), computed in double with the max subtracted. The exponentials
     * are scalar Math.exp on purpose: the Vector API's vector exp differs from it in the last
     * bits depending on whether the code is compiled, which would make results depend on warm-up.
     * n must be >= 1.
     */
    public static void softmaxInPlace(double[] x, int n) {
        int upper = D.loopBound(n);
        double max = Double.NEGATIVE_INFINITY;
        int i = 0;
        if (upper > 0) {
            DoubleVector vmax = DoubleVector.broadcast(D, Double.NEGATIVE_INFINITY);
            for (; i < upper; i += D.length()) vmax = vmax.max(DoubleVector.fromArray(D, x, i));
            max = vmax.reduceLanes(VectorOperators.MAX); // max is order-independent
        }
        for (; i < n; i++) max = Math.max(max, x[i]);
        double sum = 0;
        for (i = 0; i < n; i++) {
            double e = Math.exp(x[i] - max);
            x[i] = e;
            sum += e;
        }
        double inv = 1.0 / sum;
        i = 0;
        for (; i < upper; i += D.length()) DoubleVector.fromArray(D, x, i).mul(inv).intoArray(x, i);
        for (; i < n; i++) x[i] *= inv;
    }

    /**
     * Two dot products over the same rows in one pass: for each row i of {@code rows} (dimension
     * d), {@code outA[i] = rows_i . a * scaleA} and {@code outB[i] = rows_i . b}. Reading each row
     * once halves the memory traffic when a policy needs both (FD-KVC: attention logits and
     * similarity when the embeddings are the keys).
     */
    public static void dots2(float[] rows, int count, int d, float[] a, double scaleA, double[] outA,
                             float[] b, double[] outB) {
        int upper = F.loopBound(d);
        for (int r = 0; r < count; r++) {
            int off = r * d;
            int i = 0;
            float sa = 0f, sb = 0f;
            if (upper > 0) {
                FloatVector accA = FloatVector.zero(F), accB = FloatVector.zero(F);
                for (; i < upper; i += F.length()) {
                    FloatVector row = FloatVector.fromArray(F, rows, off + i);
                    accA = row.fma(FloatVector.fromArray(F, a, i), accA);
                    accB = row.fma(FloatVector.fromArray(F, b, i), accB);
                }
                sa = sumLanes(accA);
                sb = sumLanes(accB);
            }
            for (; i < d; i++) {
                sa += rows[off + i] * a[i];
                sb += rows[off + i] * b[i];
            }
            outA[r] = sa * scaleA;
            outB[r] = sb;
        }
    }

    /**
     * {@code out[i] = (float) (scale * ln(x_i))} for {@code x_i = 0.5 + 0.5 * u[i] / uMax}, where
     * every u[i] / uMax lies in [0, 1] so that x lies in [0.5, 1]: eq. 9's modulation as a logit
     * bias. On that narrow range ln x = 2 atanh(t) with t = (x - 1) / (x + 1) in [-1/3, 0], whose
     * odd series converges fast: 13 terms leave a relative error below 1e-13, far under the
     * float result's rounding. Plain arithmetic on vectors, so it is both fast and identical
     * whether interpreted or compiled (a per-entry Math.log cost as much as the attention pass).
     */
    public static void scaledLogHalfToOne(double[] u, int n, double uMax, double scale, float[] out) {
        int upper = D.loopBound(n);
        double inv = 1.0 / uMax;
        int i = 0;
        for (; i < upper; i += D.length()) {
            DoubleVector x = DoubleVector.fromArray(D, u, i).mul(inv).mul(0.5).add(0.5);
            DoubleVector t = x.sub(1.0).div(x.add(1.0));
            DoubleVector t2 = t.mul(t);
            DoubleVector series = DoubleVector.broadcast(D, 1.0 / 25);
            for (int k = 11; k >= 0; k--) series = series.fma(t2, DoubleVector.broadcast(D, 1.0 / (2 * k + 1)));
            DoubleVector ln = t.mul(series).mul(2.0 * scale);
            for (int l = 0; l < D.length(); l++) out[i + l] = (float) ln.lane(l);
        }
        for (; i < n; i++) {
            double x = 0.5 + 0.5 * (u[i] * inv);
            double t = (x - 1) / (x + 1), t2 = t * t;
            double series = 1.0 / 25;
            for (int k = 11; k >= 0; k--) series = Math.fma(series, t2, 1.0 / (2 * k + 1));
            out[i] = (float) (t * series * (2.0 * scale));
        }
    }

    /** Cosine similarity of two vectors given their norms; 0 when either norm is 0 (spec, step 3). */
    public static double cosine(double dot, double normA, double normB) {
        if (normA == 0 || normB == 0) return 0;
        return dot / (normA * normB);
    }
}
