package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;

/**
 * SnapKV (Li et al. 2024): importance of a scored entry = attention over C_{t-1} summed over the
 * turn's last {@code window} query rows, then max-pooled over the {@code kernel} neighbouring
 * entries (clipped at the ends), written to {@code c}. As in SnapKV, where the observation window
 * itself is always kept, the turn's own entries are kept before older ones. With
 * {@link Turn#observed() observed attention} the window's weights are the model's own.
 */
public final class SnapKvPolicy extends RankingPolicy {
    private final SnapKvParams p;
    private double[] weights = new double[0];
    private double[] summed = new double[0];

    public SnapKvPolicy(String name, int budget, SnapKvParams params) {
        super(name, budget);
        this.p = params;
    }

    @Override
    public boolean readsAttention() {
        return true;
    }

    @Override
    public int recentAttentionRows() {
        return p.window();
    }

    @Override
    protected void observe(KvStream s, Turn t) {
        int m = s.scored();
        if (m == 0) return;
        if (weights.length < m) {
            weights = new double[Math.max(m, 2 * weights.length)];
            summed = new double[weights.length];
        }
        ObservedAttention o = t.observed();
        if (o != null) {
            // the window's weights as the model computed them
            float[] recent = o.recent();
            for (int i = 0; i < m; i++) summed[i] = recent[i];
        } else {
            java.util.Arrays.fill(summed, 0, m, 0);
            for (int r = Math.max(0, t.rows() - p.window()); r < t.rows(); r++) {
                StreamAttention.weights(s, m, t.queries(), r * t.dim(), false, weights);
                for (int i = 0; i < m; i++) summed[i] += weights[i];
            }
        }
        int half = p.kernel() / 2;
        double[] c = s.c();
        for (int i = 0; i < m; i++) {
            double best = Double.NEGATIVE_INFINITY;
            for (int j = Math.max(0, i - half); j <= Math.min(m - 1, i + half); j++) best = Math.max(best, summed[j]);
            c[i] = best;
        }
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        NewEntriesKeptRanking.rank(s, tier, score);
    }
}
