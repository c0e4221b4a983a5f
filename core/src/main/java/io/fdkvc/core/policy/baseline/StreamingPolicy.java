package io.fdkvc.core.policy.baseline;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.Ranker;
import io.fdkvc.core.policy.RankingPolicy;
import io.fdkvc.core.policy.Turn;

/** StreamingLLM (Xiao et al. 2024): the first {@code sinks} entries plus the most recent ones. */
public final class StreamingPolicy extends RankingPolicy {
    private final int sinks;

    public StreamingPolicy(String name, int budget, StreamingParams params) {
        super(name, budget);
        if (params.sinks() > budget - 1) {
            throw new ParameterException("sinks", "must be in 0..budget-1 = 0.." + (budget - 1) + ", got " + params.sinks());
        }
        this.sinks = params.sinks();
    }

    @Override
    protected void score(KvStream stream, Turn turn, int[] tier, double[] score) {
        // Sinks are the first `sinks` entries the stream ever held: they are never evicted, so
        // they are always its first indices, whatever positions the stream started at.
        for (int i = 0; i < stream.size(); i++) {
            tier[i] = i < sinks ? Ranker.NEVER : 0;
            score[i] = i;
        }
    }
}
