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
    private final long seed;
    private SplittableRandom random;
    private long draws; // numbers drawn so far: the generator's state, for export

    public RandomPolicy(String name, int budget, RandomParams params) {
        super(name, budget);
        this.seed = params.seed();
        this.random = new SplittableRandom(seed);
    }

    /** The number of draws so far (a double carries it exactly up to 2^53). */
    @Override
    public double[] exportState() {
        return new double[] {draws};
    }

    /** Recreates the generator from the seed and replays the draws. */
    @Override
    public void restoreState(double[] state) {
        if (state.length != 1 || state[0] < 0 || state[0] != Math.rint(state[0])) {
            throw new IllegalArgumentException("random state is one non-negative draw count");
        }
        random = new SplittableRandom(seed);
        draws = (long) state[0];
        for (long i = 0; i < draws; i++) random.nextDouble();
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        for (int i = 0; i < s.size(); i++) {
            tier[i] = 0;
            score[i] = random.nextDouble();
            draws++;
        }
    }
}
