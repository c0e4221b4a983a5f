package io.fdkvc.eval.stats;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Percentile bootstrap (95%) over dialogues, seeded so that a report is reproducible. Paired
 * statistics resample the same dialogue indices for both policies.
 */
public final class Bootstrap {
    public static final int RESAMPLES = 2000;

    private Bootstrap() {}

    /** Mean of {@code xs} with its 95% percentile-bootstrap interval; NaN values are skipped. */
    public static Interval mean(double[] xs, long seed) {
        double[] v = Arrays.stream(xs).filter(x -> !Double.isNaN(x)).toArray();
        int n = v.length;
        if (n == 0) return new Interval(Double.NaN, Double.NaN, Double.NaN, 0);
        double mean = Arrays.stream(v).average().orElseThrow();
        SplittableRandom r = new SplittableRandom(seed);
        double[] stats = new double[RESAMPLES];
        for (int b = 0; b < RESAMPLES; b++) {
            double s = 0;
            for (int i = 0; i < n; i++) s += v[r.nextInt(n)];
            stats[b] = s / n;
        }
        return new Interval(mean, percentile(stats, 0.025), percentile(stats, 0.975), n);
    }

    /**
     * Relative improvement of a over b, mean(a) / mean(b) - 1, on paired samples (pairs with a
     * NaN on either side are dropped), with its paired 95% bootstrap interval.
     */
    public static Interval relativeImprovement(double[] a, double[] b, long seed) {
        return pairedRatio(a, b, seed, true);
    }

    /** mean(a) / mean(b) on paired samples with its paired 95% bootstrap interval. */
    public static Interval ratio(double[] a, double[] b, long seed) {
        return pairedRatio(a, b, seed, false);
    }

    private static Interval pairedRatio(double[] a, double[] b, long seed, boolean minusOne) {
        if (a.length != b.length) throw new IllegalArgumentException("paired samples differ in length");
        int n = 0;
        double[] pa = new double[a.length], pb = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            if (Double.isNaN(a[i]) || Double.isNaN(b[i])) continue;
            pa[n] = a[i];
            pb[n] = b[i];
            n++;
        }
        if (n == 0) return new Interval(Double.NaN, Double.NaN, Double.NaN, 0);
        double shift = minusOne ? 1 : 0;
        double point = sum(pa, n) / sum(pb, n) - shift;
        SplittableRandom r = new SplittableRandom(seed);
        double[] stats = new double[RESAMPLES];
        for (int k = 0; k < RESAMPLES; k++) {
            double sa = 0, sb = 0;
            for (int i = 0; i < n; i++) {
                int j = r.nextInt(n);
                sa += pa[j];
                sb += pb[j];
            }
            stats[k] = sa / sb - shift;
        }
        return new Interval(point, percentile(stats, 0.025), percentile(stats, 0.975), n);
    }

    private static double sum(double[] x, int n) {
        double s = 0;
        for (int i = 0; i < n; i++) s += x[i];
        return s;
    }

    /** Linear-interpolated percentile of the samples (sorted in place). */
    static double percentile(double[] xs, double q) {
        Arrays.sort(xs);
        double pos = q * (xs.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(lo + 1, xs.length - 1);
        return xs[lo] + (pos - lo) * (xs[hi] - xs[lo]);
    }
}
