package io.fdkvc.eval.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class BootstrapTest {
    private static double[] array(List<Double> l) {
        double[] a = new double[l.size()];
        for (int i = 0; i < a.length; i++) a[i] = l.get(i);
        return a;
    }

    @Property(tries = 100)
    void theIntervalContainsTheMean(@ForAll @Size(min = 2, max = 40) List<@DoubleRange(min = -100, max = 100) Double> list, @ForAll long seed) {
        double[] xs = array(list);
        Interval iv = Bootstrap.mean(xs, seed);
        double mean = 0;
        for (double x : xs) mean += x / xs.length;
        assertThat(iv.mean()).isCloseTo(mean, within(1e-9));
        assertThat(iv.low()).isLessThanOrEqualTo(iv.mean() + 1e-9);
        assertThat(iv.high()).isGreaterThanOrEqualTo(iv.mean() - 1e-9);
        assertThat(iv.n()).isEqualTo(xs.length);
    }

    @Test
    void nanValuesAreSkippedAndTheSeedMakesItReproducible() {
        Interval a = Bootstrap.mean(new double[]{1, Double.NaN, 3, 5, 7}, 42);
        assertThat(a.mean()).isEqualTo(4.0);
        assertThat(a.n()).isEqualTo(4);
        assertThat(Bootstrap.mean(new double[]{1, Double.NaN, 3, 5, 7}, 42)).isEqualTo(a);
        assertThat(Bootstrap.mean(new double[]{Double.NaN}, 1).n()).isZero();
    }

    @Test
    void aConstantSampleHasADegenerateInterval() {
        Interval iv = Bootstrap.mean(new double[]{2.5, 2.5, 2.5}, 7);
        assertThat(iv).isEqualTo(new Interval(2.5, 2.5, 2.5, 3));
    }

    @Test
    void pairedStatisticsOfProportionalSamplesAreExact() {
        double[] b = {1, 2, 3, 4, 5};
        double[] a = {1.1, 2.2, 3.3, 4.4, 5.5};
        Interval imp = Bootstrap.relativeImprovement(a, b, 3);
        // every resample has sum(a)/sum(b) = 1.1 exactly (up to rounding)
        assertThat(imp.mean()).isCloseTo(0.1, within(1e-12));
        assertThat(imp.low()).isCloseTo(0.1, within(1e-12));
        assertThat(imp.high()).isCloseTo(0.1, within(1e-12));
        Interval ratio = Bootstrap.ratio(b, a, 3);
        assertThat(ratio.mean()).isCloseTo(1 / 1.1, within(1e-12));
    }

    @Property(tries = 100)
    void thePairedRatioIntervalContainsThePointEstimate(@ForAll @Size(min = 2, max = 30) List<@DoubleRange(min = 0.1, max = 10) Double> list,
                                                        @ForAll long seed) {
        double[] a = array(list);
        double[] b = new double[a.length];
        for (int i = 0; i < a.length; i++) b[i] = 1 + ((i * 7919) % 13) / 13.0;
        Interval iv = Bootstrap.ratio(a, b, seed);
        double sa = 0, sb = 0;
        for (int i = 0; i < a.length; i++) { sa += a[i]; sb += b[i]; }
        assertThat(iv.mean()).isCloseTo(sa / sb, within(1e-9));
        assertThat(iv.low()).isLessThanOrEqualTo(iv.mean() + 1e-9);
        assertThat(iv.high()).isGreaterThanOrEqualTo(iv.mean() - 1e-9);
    }
}
