package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;

/**
 * Reference H2O (Zhang et al. 2023): every query row's attention over C_{t-1} accumulates into
 * {@code c} (new entries start at 0); keep the floor(B/2) most recent entries plus the other
 * entries of highest accumulated attention. Evictions are reported in position order.
 *
 * <p>With {@link Turn#observed() observed attention} (the engine) the accumulated attention is the
 * model's own, summed over the turn's rows, and the turn's own entries accumulate too.
 */
public final class H2oPolicy extends RankingPolicy {
    private double[] weights = new double[0];

    public H2oPolicy(String name, int budget) {
        super(name, budget);
    }

    @Override
    public boolean readsAttention() {
        return true;
    }

    @Override
    protected void observe(KvStream s, Turn t) {
        ObservedAttention o = t.observed();
        if (o != null) {
            // the model's own attention: every row's weights, the turn's own entries included
            // (they accumulate from the rows after them, as in H2O's decoding)
            float[] sum = o.sum();
            double[] c = s.c();
            for (int i = 0; i < o.entries(); i++) c[i] += sum[i];
            return;
        }
        int m = s.scored();
        if (m == 0) return;
        if (weights.length < m) weights = new double[Math.max(m, 2 * weights.length)];
        double[] c = s.c();
        for (int r = 0; r < t.rows(); r++) {
            StreamAttention.weights(s, m, t.queries(), r * t.dim(), false, weights);
            for (int i = 0; i < m; i++) c[i] += weights[i];
        }
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        int n = s.size();
        // The most recent entries whose costs fit in floor(B/2) (with unit costs: the last floor(B/2)).
        int[] cost = s.costs();
        int recentFrom = n;
        long recent = 0;
        while (recentFrom > 0 && recent + cost[recentFrom - 1] <= budget / 2) recent += cost[--recentFrom];
        double[] c = s.c();
        for (int i = 0; i < n; i++) {
            tier[i] = i >= recentFrom ? 1 : 0;
            score[i] = c[i];
        }
    }

    @Override
    protected boolean logEvictionsInPositionOrder() {
        return true;
    }
}
