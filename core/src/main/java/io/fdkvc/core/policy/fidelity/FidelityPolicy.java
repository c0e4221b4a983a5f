package io.fdkvc.core.policy.fidelity;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.ObservationWindowPolicy;
import io.fdkvc.core.policy.Turn;

/**
 * FD-KVC's two channels on a model's own attention, for a cache whose predictions should stay
 * closest to the full cache's. After each turn an entry's score is
 * {@code wc * c / max c + wrho * rho / max rho}:
 * <ul>
 *   <li>long-term importance {@code c}: the attention every query row of every turn gave the entry,
 *       decayed by {@code gamma} per turn (the mean over the turn's rows is added; FD-KVC's
 *       cumulative channel with decay, H2O's score when gamma = 1);</li>
 *   <li>relevance {@code rho}: the attention of the turn's last {@code window} rows, max-pooled over
 *       {@code kernel} neighbours (SnapKV's observation window: what the model is reading now),
 *       decaying by {@code delta} per turn: {@code rho = max(delta * rho, window)}, so that what an
 *       earlier turn read stays relevant for a while (FD-KVC's decaying relevance; replaced every
 *       turn when delta = 0).</li>
 * </ul>
 * The first {@code sinks} positions (attention sinks) and the {@code recent} share of the budget
 * (the newest entries: the local context) are kept whatever their scores; the other entries
 * compete by score. Unlike SnapKV and TOVA the turn's own entries compete too, so a turn longer
 * than the budget does not flush the history. Reads the model's attention when the engine gives
 * it ({@link Turn#observed()}); otherwise computes it from the turn's query rows (a trace).
 */
public final class FidelityPolicy extends ObservationWindowPolicy {
    private final FidelityParams p;
    private double[] window = new double[0];

    public FidelityPolicy(String name, int budget, FidelityParams params) {
        super(name, budget, params.window(), params.kernel());
        if (params.sinks() >= budget) throw new ParameterException("sinks", "must be in 0..budget-1 = 0.." + (budget - 1) + ", got " + params.sinks());
        this.p = params;
    }

    @Override
    protected void observe(KvStream s, Turn t) {
        int n = s.size();
        double[] c = s.c();
        int rows = Math.max(1, t.rows());
        for (int i = 0; i < n; i++) c[i] *= p.gamma();
        ObservedAttention o = t.observed();
        if (o != null) {
            float[] sum = o.sum();
            for (int i = 0; i < o.entries(); i++) c[i] += sum[i] / rows;
        } else {
            // a trace: each row attends to the earlier turns' entries and to the turn's own up to its row
            double[] weights = rowWeights(n);
            int m = s.scored();
            for (int r = 0; r < t.rows(); r++) {
                int visible = Math.min(n, m + r + 1);
                StreamAttention.weights(s, visible, t.queries(), r * t.dim(), false, weights);
                for (int i = 0; i < visible; i++) c[i] += weights[i] / rows;
            }
        }
        if (p.delta() == 0) {
            pooledWindow(s, t, n, true, s.rho());
            return;
        }
        // decaying relevance: what an earlier turn read stays relevant, fading by delta a turn
        if (window.length < n) window = new double[Math.max(n, 2 * window.length)];
        pooledWindow(s, t, n, true, window);
        double[] rho = s.rho();
        for (int i = 0; i < n; i++) rho[i] = Math.max(p.delta() * rho[i], window[i]);
    }

    @Override
    protected void score(KvStream s, Turn t, int[] tier, double[] score) {
        int n = s.size();
        double[] c = s.c(), rho = s.rho();
        double maxC = 0, maxR = 0;
        for (int i = 0; i < n; i++) {
            maxC = Math.max(maxC, c[i]);
            maxR = Math.max(maxR, rho[i]);
        }
        double wc = maxC > 0 ? p.wc() / maxC : 0, wr = maxR > 0 ? p.wrho() / maxR : 0;
        // the newest entries whose costs fit the recent share (unit costs: the last floor(recent * B))
        int[] cost = s.costs();
        long room = (long) Math.floor(p.recent() * budget), used = 0;
        int recentFrom = n;
        while (recentFrom > 0 && used + cost[recentFrom - 1] <= room) used += cost[--recentFrom];
        for (int i = 0; i < n; i++) {
            boolean kept = s.position(i) < p.sinks() || i >= recentFrom;
            tier[i] = kept ? 1 : 0;
            score[i] = wc * c[i] + wr * rho[i];
        }
    }
}
