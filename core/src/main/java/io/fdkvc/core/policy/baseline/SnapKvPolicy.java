package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.ObservationWindowPolicy;
import io.fdkvc.core.policy.Turn;

/**
 * SnapKV (Li et al. 2024): importance of a scored entry = attention over C_{t-1} summed over the
 * turn's last {@code window} query rows, then max-pooled over the {@code kernel} neighbouring
 * entries (clipped at the ends), written to {@code c}. As in SnapKV, where the observation window
 * itself is always kept, the turn's own entries are kept before older ones. With
 * {@link Turn#observed() observed attention} the window's weights are the model's own.
 */
public final class SnapKvPolicy extends ObservationWindowPolicy {
    public SnapKvPolicy(String name, int budget, SnapKvParams params) {
        super(name, budget, params.window(), params.kernel());
    }

    @Override
    protected void observe(KvStream s, Turn t) {
        int m = s.scored();
        if (m == 0) return;
        // the window over C_{t-1} only: the turn's own entries are kept apart, whatever their scores
        pooledWindow(s, t, m, false, s.c());
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        NewEntriesKeptRanking.rank(s, tier, score);
    }
}
