package io.fdkvc.core.policy;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;

/**
 * A {@link RankingPolicy} that reads SnapKV's observation window: the attention the turn's last
 * {@code window} query rows gave each entry, summed over those rows and max-pooled over the
 * {@code kernel} neighbouring entries (clipped at the stream's ends). The window is what the
 * model is reading now; pooling keeps the neighbours of a strongly read entry with it.
 *
 * <p>With {@link Turn#observed() observed attention} the window's weights are the model's own;
 * otherwise they are computed from the turn's query rows and the stream's keys (a trace). The
 * scratch arrays grow with the stream and are reused, so a turn allocates nothing.
 */
public abstract class ObservationWindowPolicy extends RankingPolicy {
    private final int window;
    private final int kernel;
    private double[] weights = new double[0];
    private double[] summed = new double[0];

    /**
     * @param window query rows of the observation window (>= 1; validated by the policy's parameters)
     * @param kernel max-pooling kernel over neighbouring entries (odd, >= 1)
     */
    protected ObservationWindowPolicy(String name, int budget, int window, int kernel) {
        super(name, budget);
        this.window = window;
        this.kernel = kernel;
    }

    @Override
    public final boolean readsAttention() {
        return true;
    }

    @Override
    public final int recentAttentionRows() {
        return window;
    }

    /**
     * A reusable array of at least {@code n} doubles for one query row's attention weights
     * ({@link StreamAttention#weights}); its contents are the caller's until the next call.
     */
    protected final double[] rowWeights(int n) {
        if (weights.length < n) weights = new double[Math.max(n, 2 * weights.length)];
        return weights;
    }

    /**
     * Writes the observation window's pooled attention for entries {@code [0, entries)} into
     * {@code out[0, entries)}. A traced row attends to the stream's first {@code entries} entries,
     * or, with {@code turnEntries}, to the entries scored at earlier turns and the turn's own up to
     * its row (as the model's rows do); observed attention already covers both.
     */
    protected final void pooledWindow(KvStream s, Turn t, int entries, boolean turnEntries, double[] out) {
        if (summed.length < entries) summed = new double[Math.max(entries, 2 * summed.length)];
        java.util.Arrays.fill(summed, 0, entries, 0);
        ObservedAttention o = t.observed();
        if (o != null) {
            float[] recent = o.recent();
            for (int i = 0, seen = Math.min(entries, o.entries()); i < seen; i++) summed[i] = recent[i];
        } else {
            double[] w = rowWeights(entries);
            int m = s.scored();
            for (int r = Math.max(0, t.rows() - window); r < t.rows(); r++) {
                int visible = turnEntries ? Math.min(entries, m + r + 1) : entries;
                StreamAttention.weights(s, visible, t.queries(), r * t.dim(), false, w);
                for (int i = 0; i < visible; i++) summed[i] += w[i];
            }
        }
        int half = kernel / 2;
        for (int i = 0; i < entries; i++) {
            double best = Double.NEGATIVE_INFINITY;
            for (int j = Math.max(0, i - half); j <= Math.min(entries - 1, i + half); j++) best = Math.max(best, summed[j]);
            out[i] = best;
        }
    }
}
