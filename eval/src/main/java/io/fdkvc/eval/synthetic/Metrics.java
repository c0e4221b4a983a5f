package io.fdkvc.eval.synthetic;

/**
 * The benchmark's per-dialogue metric functions (definitions in docs/evaluation.md, "Metrics"),
 * on primitive arrays so that the simulator's inner loop allocates nothing. Labels are small
 * non-negative topic ids (below 64).
 */
public final class Metrics {
    /** Share of the attention mass the new topic must reach for a change to count as adapted. */
    public static final double ADAPTATION_THRESHOLD = 0.5;

    private Metrics() {}

    /** First turn of the late third: T - floor(T/3). */
    public static int lateFrom(int turns) {
        return turns - turns / 3;
    }

    /** Mean of {@code perTurn[t]} over the late third of {@code turns}, NaN values skipped; NaN if none. */
    public static double lateMean(double[] perTurn, int turns) {
        return lateMean(perTurn, 0, turns);
    }

    /** As {@link #lateMean(double[], int)} on {@code perTurn[off .. off+turns)}. */
    public static double lateMean(double[] perTurn, int off, int turns) {
        double s = 0;
        int k = 0;
        for (int t = lateFrom(turns); t < turns; t++) {
            double v = perTurn[off + t];
            if (Double.isNaN(v)) continue;
            s += v;
            k++;
        }
        return k == 0 ? Double.NaN : s / k;
    }

    /** Distinct values among {@code labels[0..count)}. */
    public static int distinct(int[] labels, int count) {
        long seen = 0;
        for (int i = 0; i < count; i++) seen |= bit(labels[i]);
        return Long.bitCount(seen);
    }

    /**
     * Topic diversity of a cache: distinct labels among its {@code count} entries (label of
     * entry i = {@code labelOfPosition[positions[i]]}) over distinct labels in {@code turnLabel};
     * NaN for an empty dialogue.
     */
    public static double diversity(int[] labelOfPosition, long[] positions, int count, int[] turnLabel, int turns) {
        long held = 0;
        for (int i = 0; i < count; i++) held |= bit(labelOfPosition[(int) positions[i]]);
        int seen = distinct(turnLabel, turns);
        return seen == 0 ? Double.NaN : (double) Long.bitCount(held) / seen;
    }

    /** Share of the {@code count} entries whose label is {@code label}; NaN for an empty cache. */
    public static double share(int[] labelOfPosition, long[] positions, int count, int label) {
        if (count == 0) return Double.NaN;
        int k = 0;
        for (int i = 0; i < count; i++) if (labelOfPosition[(int) positions[i]] == label) k++;
        return (double) k / count;
    }

    /** Attention mass {@code sum w_i} over the entries of {@code label}; NaN for an empty cache. */
    public static double massOn(double[] w, int[] labelOfPosition, long[] positions, int count, int label) {
        if (count == 0) return Double.NaN;
        double m = 0;
        for (int i = 0; i < count; i++) if (labelOfPosition[(int) positions[i]] == label) m += w[i];
        return m;
    }

    /**
     * Adaptation of one dialogue. A change is a turn {@code s >= 1} whose label differs from turn
     * {@code s-1}'s; its segment ends at the next change or at {@code turns} ({@code e}). The
     * change's value is {@code t* - s} for the first {@code t*} in {@code [s, e)} with
     * {@code massOnCurrent[t*] >= threshold}, or {@code e - s} (censored) when there is none.
     * A NaN mass (empty past) never reaches the threshold.
     *
     * @return mean over changes (NaN when there is none), number of changes, number censored
     */
    public static Adaptation adaptation(int[] turnLabel, double[] massOnCurrent, int turns, double threshold) {
        return adaptation(turnLabel, massOnCurrent, 0, turns, threshold);
    }

    /** As above with the masses at {@code massOnCurrent[off .. off+turns)}. */
    public static Adaptation adaptation(int[] turnLabel, double[] massOnCurrent, int off, int turns, double threshold) {
        double sum = 0;
        int changes = 0, censored = 0;
        for (int s = 1; s < turns; s++) {
            if (turnLabel[s] == turnLabel[s - 1]) continue;
            int e = s + 1;
            while (e < turns && turnLabel[e] == turnLabel[s]) e++;
            int value = -1;
            for (int t = s; t < e; t++) {
                if (massOnCurrent[off + t] >= threshold) { // false for NaN
                    value = t - s;
                    break;
                }
            }
            if (value < 0) {
                value = e - s;
                censored++;
            }
            sum += value;
            changes++;
        }
        return new Adaptation(changes == 0 ? Double.NaN : sum / changes, changes, censored);
    }

    /** A dialogue's adaptation: mean turns over its changes, how many changes, how many censored. */
    public record Adaptation(double meanTurns, int changes, int censored) {
        /** Share of the changes that never reached the threshold; NaN without changes. */
        public double censoredShare() {
            return changes == 0 ? Double.NaN : (double) censored / changes;
        }
    }

    private static long bit(int label) {
        if (label < 0 || label >= 64) throw new IllegalArgumentException("topic labels must be in [0, 64), got " + label);
        return 1L << label;
    }
}
