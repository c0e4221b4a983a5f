package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;

/** Keeps the {@code budget} most recent entries; evicts the oldest first. */
public final class WindowPolicy extends RankingPolicy {
    public WindowPolicy(String name, int budget) {
        super(name, budget);
    }

    @Override
    protected void score(KvStream stream, Turn turn, int[] tier, double[] score) {
        for (int i = 0; i < stream.size(); i++) {
            tier[i] = 0;
            score[i] = i; // position order: the oldest has the lowest score
        }
    }
}
