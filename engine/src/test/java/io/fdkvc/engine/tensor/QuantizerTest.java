package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The quantisers: layout (decoded by the independent reference) and error bounds. */
class QuantizerTest {
    private static float[] gaussian(Random r, int n, double sigma) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) x[i] = (float) (r.nextGaussian() * sigma);
        return x;
    }

    /**
     * ggml rounds x * (1/d) for the unrounded d = amax / 127 and rounds ties away from zero; the
     * f16 rounding of d then moves a decoded value by up to 127 |d - half(d)| <= 127 * 2^-11 d
     * beyond half a step.
     */
    @Property(tries = 100)
    void q8_0ErrorIsAtMostHalfAStepPlusTheScaleRounding(@ForAll long seed, @ForAll @IntRange(min = 1, max = 4) int blocks) {
        Random r = new Random(seed);
        float[] x = gaussian(r, 32 * blocks, Math.pow(10, r.nextInt(7) - 3));
        byte[] q = Quantizer.quantize(GgmlType.Q8_0, x);
        float[] y = Reference.decode(GgmlType.Q8_0, q, 0, x.length);
        for (int b = 0; b < blocks; b++) {
            float d = Reference.half(q, 34 * b);
            float amax = 0;
            for (int i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[32 * b + i]));
            // f16 rounding: relative 2^-11, or half the subnormal step 2^-24 for tiny scales; plus one
            // float ulp, because the check's own subtraction rounds (a tie at exactly 2^-25 came out
            // 7e-13 above it)
            assertThat(d).isCloseTo(amax / 127, org.assertj.core.api.Assertions.within(
                    Math.max(amax / 127 / 2000, 0x1p-25f) + Math.ulp(amax / 127)));
            for (int i = 0; i < 32; i++)
                assertThat(Math.abs(y[32 * b + i] - x[32 * b + i])).isLessThanOrEqualTo(d * (0.5001f + 127 * 0x1p-11f) + 0x1p-24f * 127);
        }
    }

    @Test
    void q8_0RoundsTiesAwayFromZeroWithTheUnroundedScale() {
        float[] x = new float[32];
        x[0] = 127;                    // amax 127: d = 1, 1/d = 1
        x[1] = -2.5f;                  // roundf: -3 (Math.round would give -2)
        x[2] = 2.5f;                   // 3
        x[3] = -0.5f;                  // -1
        x[4] = 0.49999997f;            // 0
        byte[] q = Quantizer.quantize(GgmlType.Q8_0, x);
        assertThat(new byte[] {q[2], q[3], q[4], q[5], q[6]}).containsExactly(127, -3, 3, -1, 0);
        // amax 90: d = 90/127 = 0.70866144 rounds down to f16 0.70849609; 0.35424805 * (1/d) =
        // 0.49988 -> 0 (ggml), whereas 0.35424805 / half(d) = 0.5 exactly would round to 1
        float[] y = new float[32];
        y[0] = 90;
        y[1] = 0.35424805f;
        byte[] r = Quantizer.quantize(GgmlType.Q8_0, y);
        assertThat(Reference.half(r, 0)).isEqualTo(0.70849609375f);
        assertThat(r[2]).isEqualTo((byte) 127);
        assertThat(r[3]).isEqualTo((byte) 0);
    }

    @Property(tries = 100)
    void q4_0ErrorIsAtMostOneStepAndTheExtremeIsExact(@ForAll long seed) {
        Random r = new Random(seed);
        float[] x = gaussian(r, 64, 1);
        byte[] q = Quantizer.quantize(GgmlType.Q4_0, x);
        float[] y = Reference.decode(GgmlType.Q4_0, q, 0, 64);
        for (int b = 0; b < 2; b++) {
            float d = Math.abs(Reference.half(q, 18 * b));
            int ext = 32 * b;
            for (int i = 0; i < 32; i++) {
                // one step, except that +8 steps clamps to +7: at most |max| - 7|d| with |d| down to
                // |max|/8 * (1 - 2^-11) after f16 rounding, i.e. |d| * (1 + 8 * 2^-11)
                assertThat(Math.abs(y[32 * b + i] - x[32 * b + i])).isLessThanOrEqualTo(d * (1 + 8 * 0x1p-11f) * 1.0001f);
                if (Math.abs(x[32 * b + i]) > Math.abs(x[ext])) ext = 32 * b + i;
            }
            // the element of largest magnitude maps to -8 * d exactly, up to the f16 rounding of d
            assertThat(y[ext]).isCloseTo(x[ext], org.assertj.core.api.Assertions.within(Math.abs(x[ext]) / 500));
        }
    }

    /** Relative RMS error over Gaussian data: 4-bit ~ step/sqrt(12) with step ~ range/15. */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class)
    void rmsErrorIsWhatTheBitWidthAllows(GgmlType type) {
        Random r = new Random(7);
        float[] x = gaussian(r, 256 * 64, 1);
        float[] y = Reference.decode(type, Quantizer.quantize(type, x), 0, x.length);
        double se = 0, ss = 0;
        for (int i = 0; i < x.length; i++) {
            se += (x[i] - y[i]) * (double) (x[i] - y[i]);
            ss += (double) x[i] * x[i];
        }
        double rel = Math.sqrt(se / ss);
        double bound = switch (type) {
            case F32 -> 0;
            case F16 -> 3e-4;        // 11-bit significand
            case BF16 -> 3e-3;       // 8-bit significand
            case Q8_0 -> 0.01;       // step = amax/127 ~ 2.5/127, rms = step/sqrt(12) ~ 0.006
            case Q6_K -> 0.03;       // step ~ amax/32 ~ 0.07 (16-element groups), rms ~ 0.02
            case Q4_0 -> 0.12;       // step ~ amax/8 ~ 0.3, rms ~ 0.09
            case Q4_K -> 0.12;       // step ~ range/15 ~ 0.3, rms ~ 0.09
            case Q4_1 -> 0.12;       // step ~ range/15 over 32 values ~ 0.3
            case Q5_0, Q5_1, Q5_K -> 0.06;   // half the 4-bit step
            case IQ4_NL, IQ4_XS -> 0.12;     // 16 non-linear levels, denser near zero
            case Q3_K -> 0.25;       // step ~ amax/4 over 16 values ~ 0.5, rms ~ 0.15
            case Q2_K -> 0.45;       // step ~ range/3 over 16 values ~ 1.2, rms ~ 0.35
        };
        assertThat(rel).as(type.toString()).isLessThanOrEqualTo(bound);
        if (type == GgmlType.F32) assertThat(y).containsExactly(x);
    }

    @ParameterizedTest
    @EnumSource(value = GgmlType.class)
    void zerosStayZeroAndConstantsStayClose(GgmlType type) {
        int n = 512;
        for (float v : Reference.decode(type, Quantizer.quantize(type, new float[n]), 0, n)) assertThat(v == 0).isTrue();   // either sign
        float[] c = new float[n];
        java.util.Arrays.fill(c, -1.5f);
        for (float v : Reference.decode(type, Quantizer.quantize(type, c), 0, n))
            assertThat(v).isCloseTo(-1.5f, org.assertj.core.api.Assertions.within(0.02f));
    }

    @Test
    void refusesWhatCannotBeEncoded() {
        assertThatThrownBy(() -> Quantizer.quantize(GgmlType.Q8_0, new float[33])).isInstanceOf(IllegalArgumentException.class);
        float[] nan = new float[32];
        nan[3] = Float.NaN;
        assertThatThrownBy(() -> Quantizer.quantize(GgmlType.Q4_0, nan)).hasMessageContaining("non-finite");
        float[] huge = new float[32];
        huge[0] = 1e30f;
        assertThatThrownBy(() -> Quantizer.quantize(GgmlType.Q8_0, huge)).hasMessageContaining("half precision");
    }
}
