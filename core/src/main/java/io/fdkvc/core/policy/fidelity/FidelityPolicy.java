package io.fdkvc.core.policy.fidelity;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.ObservationWindowPolicy;
import io.fdkvc.core.policy.Turn;
import java.util.Arrays;

/**
 * FD-KVC's two channels on a model's own attention, for a cache whose predictions should stay
 * closest to the full cache's. After each turn an entry's score is, by default ({@code ranks = 1}),
 * {@code wc * rank(c) / m + wrho * rank(rho) / m}, the ranks taken among the m entries that
 * compete, or with {@code ranks = 0} {@code wc * c / max c + wrho * rho / max rho}. Ranks put the
 * two channels on one scale whatever their spread: the maximum of either is usually the
 * start-of-text sink's, which dwarfs every other entry and so shrinks that channel's say. The
 * channels are:
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
 * The first {@code sinks} positions (attention sinks), the {@code recent} share of the budget
 * (the newest entries: the local context) and the {@code heavy} share (the other entries of
 * highest long-term importance {@code H}: the attention of every turn's rows, decayed by
 * {@code eta} per turn, H2O's heavy hitters when eta = 1) are kept whatever their scores; the
 * other entries compete by score. The heavy share gives the slow channel a part of the budget of
 * its own, so that an entry the model read strongly turns ago (a name) is not outscored by what
 * the fast-decaying channels favour now. Unlike SnapKV and TOVA the turn's own entries compete too, so a turn longer
 * than the budget does not flush the history. Reads the model's attention when the engine gives
 * it ({@link Turn#observed()}); otherwise computes it from the turn's query rows (a trace).
 */
public final class FidelityPolicy extends ObservationWindowPolicy {
    private final FidelityParams p;
    private double[] window = new double[0];
    private long[] byValue = new long[0];

    public FidelityPolicy(String name, int budget, FidelityParams params) {
        super(name, budget, params.window(), params.kernel());
        if (params.sinks() >= budget) throw new ParameterException("sinks", "must be in 0..budget-1 = 0.." + (budget - 1) + ", got " + params.sinks());
        this.p = params;
    }

    @Override
    protected void observe(KvStream s, Turn t) {
        int n = s.size();
        double[] c = s.c();
        // H is read only by the heavy share: without one it is neither decayed nor accumulated
        double[] h = p.heavy() > 0 ? s.h() : null;
        int rows = Math.max(1, t.rows());
        for (int i = 0; i < n; i++) c[i] *= p.gamma();
        if (h != null) for (int i = 0; i < n; i++) h[i] *= p.eta();
        ObservedAttention o = t.observed();
        if (o != null) {
            float[] sum = o.sum();
            for (int i = 0; i < o.entries(); i++) c[i] += sum[i] / rows;
            if (h != null) for (int i = 0; i < o.entries(); i++) h[i] += sum[i] / rows;
        } else {
            // a trace: each row attends to the earlier turns' entries and to the turn's own up to its row
            double[] weights = rowWeights(n);
            int m = s.scored();
            for (int r = 0; r < t.rows(); r++) {
                int visible = Math.min(n, m + r + 1);
                StreamAttention.weights(s, visible, t.queries(), r * t.dim(), false, weights);
                for (int i = 0; i < visible; i++) c[i] += weights[i] / rows;
                if (h != null) for (int i = 0; i < visible; i++) h[i] += weights[i] / rows;
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
        // the newest entries whose costs fit the recent share (unit costs: the last floor(recent * B))
        int[] cost = s.costs();
        long room = (long) Math.floor(p.recent() * budget), used = 0;
        int recentFrom = n;
        while (recentFrom > 0 && used + cost[recentFrom - 1] <= room) used += cost[--recentFrom];
        for (int i = 0; i < n; i++) tier[i] = s.position(i) < p.sinks() || i >= recentFrom ? 1 : 0;
        if (p.ranks() == 1) {
            Arrays.fill(score, 0, n, 0);
            addRanks(c, p.wc(), recentFrom, tier, score);
            addRanks(rho, p.wrho(), recentFrom, tier, score);
        } else {
            double maxC = 0, maxR = 0;
            for (int i = 0; i < n; i++) {
                maxC = Math.max(maxC, c[i]);
                maxR = Math.max(maxR, rho[i]);
            }
            double wc = maxC > 0 ? p.wc() / maxC : 0, wr = maxR > 0 ? p.wrho() / maxR : 0;
            for (int i = 0; i < n; i++) score[i] = wc * c[i] + wr * rho[i];
        }
        protectHeavy(s, recentFrom, tier);
    }

    /**
     * Adds {@code weight * rank / m} to the score of each of the m competing entries (tier 0),
     * the rank of its value among theirs from 0 (lowest) to m - 1; equal values share the lowest
     * rank of their group. Values are compared rounded to float (see {@link #sortByValue}).
     */
    private void addRanks(double[] value, double weight, int to, int[] tier, double[] score) {
        int m = sortByValue(value, to, tier);
        for (int k = 0; k < m; ) {
            int g = k;
            long bits = byValue[k] >>> 32;
            while (k < m && byValue[k] >>> 32 == bits) score[(int) byValue[k++]] += weight * g / m;
        }
    }

    /**
     * Sorts the competing entries below {@code to} (tier 0) by value into {@code byValue[0, m)},
     * ascending, and returns m: each is one long, the value's float bits (which order as the
     * values do for values >= 0) above its index, so that the sort allocates nothing and ties
     * follow the index.
     */
    private int sortByValue(double[] value, int to, int[] tier) {
        if (byValue.length < to) byValue = new long[Math.max(to, 2 * byValue.length)];
        int m = 0;
        for (int i = 0; i < to; i++) {
            if (tier[i] == 0) byValue[m++] = ((long) Float.floatToRawIntBits((float) value[i]) << 32) | i;
        }
        Arrays.sort(byValue, 0, m);
        return m;
    }

    /**
     * Raises to tier 1 the competing entries of highest H whose costs fit the heavy share (unit
     * costs: the floor(heavy * B) highest; H compared rounded to float, ties to the newer entry).
     */
    private void protectHeavy(KvStream s, int recentFrom, int[] tier) {
        long room = (long) Math.floor(p.heavy() * budget);
        if (room == 0) return;
        int m = sortByValue(s.h(), recentFrom, tier);
        int[] cost = s.costs();
        long used = 0;
        for (int k = m - 1; k >= 0 && used < room; k--) {
            int i = (int) byValue[k];
            if (used + cost[i] > room) continue;
            used += cost[i];
            tier[i] = 1;
        }
    }
}
