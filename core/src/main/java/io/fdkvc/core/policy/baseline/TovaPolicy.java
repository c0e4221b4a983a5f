package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;

/**
 * TOVA (Oren et al. 2024): rank scored entries by the attention weight of the turn's last query
 * row over C_{t-1} (written to {@code c}); the turn's own entries are kept before any older one,
 * the oldest of them going first when they alone exceed the budget. With
 * {@link Turn#observed() observed attention} the last row's weights are the model's own.
 */
public final class TovaPolicy extends RankingPolicy {
    private double[] weights = new double[0];

    public TovaPolicy(String name, int budget) {
        super(name, budget);
    }

    @Override
    public boolean readsAttention() {
        return true;
    }

    @Override
    public int recentAttentionRows() {
        return 1;
    }

    @Override
    protected void observe(KvStream s, Turn t) {
        ObservedAttention o = t.observed();
        if (o != null) {
            // the last row's weights as the model computed them (the turn's own entries are
            // ranked apart, by position, as the spec says)
            float[] last = o.recent();
            double[] c = s.c();
            for (int i = 0, m = s.scored(); i < m; i++) c[i] = last[i];
            return;
        }
        int m = s.scored();
        if (m == 0) return;
        if (weights.length < m) weights = new double[Math.max(m, 2 * weights.length)];
        StreamAttention.weights(s, m, t.queries(), (t.rows() - 1) * t.dim(), false, weights);
        System.arraycopy(weights, 0, s.c(), 0, m);
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        NewEntriesKeptRanking.rank(s, tier, score);
    }
}
