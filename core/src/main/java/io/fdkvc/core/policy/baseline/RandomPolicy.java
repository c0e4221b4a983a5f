package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;
import java.util.SplittableRandom;

/**
 * Evicts a seeded uniform choice: every entry draws a uniform score and the lowest go, which
 * makes every subset of the budget's size equally likely. Same seed, same evictions.
 */
public final class RandomPolicy extends RankingPolicy {
    private final SplittableRandom random;

    public RandomPolicy(String name, int budget, RandomParams params) {
        super(name, budget);
        this.random = new SplittableRandom(params.seed());
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        for (int i = 0; i < s.size(); i++) {
            tier[i] = 0;
            score[i] = random.nextDouble();
        }
    }
}
