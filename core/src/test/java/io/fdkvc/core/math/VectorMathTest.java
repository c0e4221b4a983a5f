package io.fdkvc.core.math;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class VectorMathTest {

    /** The series logarithm of eq. 9 agrees with Math.log to within one float ulp, vector lanes and tail alike. */
    @Property(tries = 200)
    void scaledLogMatchesMathLog(@ForAll @Size(min = 1, max = 40) double[] raw,
                                 @ForAll @DoubleRange(min = 0.01, max = 5) double scale) {
        int n = raw.length;
        double[] u = new double[n];
        double max = 0;
        for (int i = 0; i < n; i++) {
            u[i] = Math.abs(raw[i]) % 1000;
            if (!Double.isFinite(u[i])) u[i] = 0;
            max = Math.max(max, u[i]);
        }
        if (max == 0) max = 1;
        float[] out = new float[n];
        VectorMath.scaledLogHalfToOne(u, n, max, scale, out);
        for (int i = 0; i < n; i++) {
            float expected = (float) (scale * Math.log(0.5 + 0.5 * (u[i] / max)));
            assertThat(out[i]).isCloseTo(expected, org.assertj.core.data.Offset.offset(Math.ulp(expected) + 1e-12f));
        }
    }

    @Test
    void scaledLogEndPoints() {
        float[] out = new float[2];
        VectorMath.scaledLogHalfToOne(new double[] {0, 2}, 2, 2, 1.0, out);
        assertThat(out[0]).isCloseTo((float) Math.log(0.5), org.assertj.core.data.Offset.offset(1e-7f));
        assertThat(out[1]).isZero();
    }

    /** Softmax weights are positive and sum to one, whatever the spread of the logits. */
    @Property(tries = 200)
    void softmaxSumsToOne(@ForAll @Size(min = 1, max = 50) double[] raw, @ForAll @IntRange(min = 1, max = 3) int spread) {
        double[] x = new double[raw.length];
        for (int i = 0; i < x.length; i++) x[i] = Double.isFinite(raw[i]) ? (raw[i] % Math.pow(10, spread)) : 0;
        VectorMath.softmaxInPlace(x, x.length);
        double sum = 0;
        for (double v : x) {
            assertThat(v).isBetween(0.0, 1.0);
            sum += v;
        }
        assertThat(sum).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-12));
    }

    /** The fused two-dot pass equals two separate dot products exactly. */
    @Property(tries = 100)
    void dots2EqualsTwoDots(@ForAll @IntRange(min = 1, max = 40) int d, @ForAll @IntRange(min = 1, max = 9) int rows, @ForAll long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        float[] m = new float[rows * d], a = new float[d], b = new float[d];
        for (int i = 0; i < m.length; i++) m[i] = (float) r.nextGaussian();
        for (int i = 0; i < d; i++) {
            a[i] = (float) r.nextGaussian();
            b[i] = (float) r.nextGaussian();
        }
        double[] outA = new double[rows], outB = new double[rows];
        VectorMath.dots2(m, rows, d, a, 0.5, outA, b, outB);
        for (int i = 0; i < rows; i++) {
            assertThat(outA[i]).isEqualTo(VectorMath.dot(m, i * d, a, 0, d) * 0.5);
            assertThat(outB[i]).isEqualTo((double) VectorMath.dot(m, i * d, b, 0, d));
        }
    }
}
