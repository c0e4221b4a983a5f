package io.fdkvc.core.policy;

import io.fdkvc.core.cache.KvStream;

/**
 * Template for the baselines (kvpress style): the template observes the turn, and when the stream
 * holds more than the budget (in cost units; each entry costs 1 unless appended with a cost) asks the subclass for a tier and a score per entry and evicts the
 * lowest through the {@link Ranker}. Subclasses write only {@link #observe} (running scores) and
 * {@link #score}.
 */
public abstract class RankingPolicy implements Policy {
    private final String name;
    protected final int budget;
    protected final Ranker ranker = new Ranker();

    protected RankingPolicy(String name, int budget) {
        if (budget < 1) throw new io.fdkvc.core.param.ParameterException("budget", "must be >= 1, got " + budget);
        this.name = name;
        this.budget = budget;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final int budget() {
        return budget;
    }

    @Override
    public final void setPacking(boolean on) {
        ranker.setPacking(on);
    }

    @Override
    public final boolean packing() {
        return ranker.packing();
    }

    @Override
    public final void endTurn(KvStream stream, Turn turn) {
        stream.beginUpdate();
        ranker.ensure(stream.size());
        observe(stream, turn);
        if (stream.totalCost() > budget && !unbounded()) {
            score(stream, turn, ranker.tier(), ranker.score());
            ranker.evictToBudget(stream, budget, logEvictionsInPositionOrder());
        }
        stream.markScored();
    }

    /** Updates running scores (written to the stream's {@code c}) before any eviction. */
    protected void observe(KvStream stream, Turn turn) {}

    /**
     * Fills tier and score for entries {@code [0, stream.size())}; the lowest by (tier, score,
     * position) are evicted. Entries {@code [stream.scored(), size)} are the turn's new ones.
     */
    protected abstract void score(KvStream stream, Turn turn, int[] tier, double[] score);

    /** Whether evictions are reported in position order rather than from the lowest score up. */
    protected boolean logEvictionsInPositionOrder() {
        return false;
    }
}
