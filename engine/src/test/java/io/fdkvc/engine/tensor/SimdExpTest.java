package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

/** {@link Simd#exp} against {@link Math#exp} (double), over softmax's range and beyond. */
class SimdExpTest {
    @Test
    void withinTwoUlpOfTheDoubleExponential() {
        Random r = new Random(9);
        float[] x = new float[Simd.L], y = new float[Simd.L];
        for (int k = 0; k < 50_000; k++) {
            for (int i = 0; i < x.length; i++) {
                x[i] = switch (k % 3) {
                    case 0 -> (float) (-87.3 + 175.3 * r.nextDouble());   // the whole normal range
                    case 1 -> (float) (-20 * r.nextDouble());            // typical softmax inputs
                    default -> (float) (0.7 * r.nextDouble() - 0.35);    // around the reduction's edges
                };
            }
            Simd.exp(FloatVector.fromArray(Simd.F, x, 0)).intoArray(y, 0);
            for (int i = 0; i < x.length; i++) {
                double e = Math.exp(x[i]);
                assertThat((double) y[i]).as("exp(%s)", x[i]).isCloseTo(e, org.assertj.core.data.Offset.offset(2.0 * Math.ulp((float) e)));
            }
        }
    }

    @Test
    void edges() {
        float[] x = new float[Simd.L], y = new float[Simd.L];
        float[] probes = {0f, -0f, -87.4f, -1000f, Float.NEGATIVE_INFINITY, 1f, -1f, 88f};
        for (float p : probes) {
            java.util.Arrays.fill(x, p);
            Simd.exp(FloatVector.fromArray(Simd.F, x, 0)).intoArray(y, 0);
            float want = p < -87.3f ? 0f : (float) Math.exp(p);
            assertThat((double) y[0]).as("exp(%s)", p).isCloseTo(want, org.assertj.core.data.Offset.offset(2.0 * Math.ulp(want)));
        }
    }
}
