package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;

/** Never evicts: the reference for fidelity. Its stream grows without bound. */
public final class FullPolicy extends RankingPolicy {
    public FullPolicy(String name, int budget) {
        super(name, budget);
    }

    @Override
    public boolean unbounded() {
        return true;
    }

    @Override
    protected void score(KvStream stream, Turn turn, int[] tier, double[] score) {
        throw new AssertionError("full never evicts");
    }
}
