package io.fdkvc.eval.stats;

/** Plain point means, shared by the reports and the tuners. */
public final class Means {
    private Means() {}

    /**
     * Arithmetic mean of the values of {@code xs} that are not NaN, summed in order (no
     * compensation), or NaN when there is none.
     */
    public static double skippingNaN(double[] xs) {
        double s = 0;
        int n = 0;
        for (double x : xs) {
            if (Double.isNaN(x)) continue;
            s += x;
            n++;
        }
        return n == 0 ? Double.NaN : s / n;
    }
}
