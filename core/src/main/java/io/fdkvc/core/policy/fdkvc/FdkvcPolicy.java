package io.fdkvc.core.policy.fdkvc;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.math.VectorMath;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.Ranker;
import io.fdkvc.core.policy.Turn;

/**
 * FD-KVC, Algorithm 1 of the paper exactly as {@code shared/spec/fdkvc-algorithm.md} fixes it.
 * One instance per stream: it carries the learning rate alpha from turn to turn.
 *
 * <p>The comments number the steps as the spec does; the equations are referenced by number.
 */
public final class FdkvcPolicy implements Policy {
    /** The spec's eps in eq. 3. */
    public static final double EPS = 1e-8;

    private final String name;
    private final int budget;
    private final FdkvcParams p;
    private final Ranker ranker = new Ranker();

    private double alpha;
    private double loss;
    private double[] attention = new double[0];
    private double[] cosine = new double[0];

    public FdkvcPolicy(String name, int budget, FdkvcParams params) {
        if (budget < 1) throw new ParameterException("budget", "must be >= 1, got " + budget);
        if (params.sinks() > budget - 1) {
            throw new ParameterException("sinks", "must be in 0..budget-1 = 0.." + (budget - 1) + ", got " + params.sinks());
        }
        this.name = name;
        this.budget = budget;
        this.p = params;
        this.alpha = params.alpha0();
    }

    public FdkvcParams params() {
        return p;
    }

    @Override public String name() { return name; }
    @Override public int budget() { return budget; }
    @Override public double alpha() { return alpha; }
    @Override public double loss() { return loss; }
    @Override public boolean modulatesAttention() { return p.beta() > 0; }

    /** alpha and the last loss: the only state FD-KVC carries between turns besides the stream's scores. */
    @Override
    public double[] exportState() {
        return new double[] {alpha, loss};
    }

    @Override
    public void restoreState(double[] state) {
        if (state.length != 2) throw new IllegalArgumentException("fdkvc state has 2 values (alpha, loss), got " + state.length);
        alpha = state[0];
        loss = state[1];
    }

    @Override public void setPacking(boolean on) { ranker.setPacking(on); }
    @Override public boolean packing() { return ranker.packing(); }

    @Override
    public void endTurn(KvStream s, Turn t) {
        s.beginUpdate();
        ensure(s.size());
        loss = 0;
        if (s.scored() > 0) {
            scoreCache(s, t);
        }
        insertNewEntries(s, t);
        enforceBudget(s);
        writeModulation(s);
        s.markScored();
    }

    /** Steps 1 to 5 over C = C_{t-1}, the entries scored at earlier turns. */
    private void scoreCache(KvStream s, Turn t) {
        int m = s.scored();
        double[] c = s.c(), rho = s.rho(), h = s.h();

        // Step 1 (eq. 1): cumulative attention of the mean query. The raw similarity dot
        // products of step 3 are taken here too: in one pass over the keys when the embeddings
        // are the keys.
        int d = s.keyDim();
        double scale = 1.0 / Math.sqrt(d);
        if (s.embeddings() == s.keys()) {
            VectorMath.dots2(s.keys(), m, d, t.meanQuery(), scale, attention, t.queryEmbedding(), cosine);
        } else {
            VectorMath.logits(t.meanQuery(), 0, s.keys(), m, d, scale, attention);
            embeddingDots(s, 0, m, t);
        }
        VectorMath.softmaxInPlace(attention, m);
        for (int i = 0; i < m; i++) c[i] += attention[i];

        // Step 2 (eq. 2): recency decay.
        for (int i = 0; i < m; i++) rho[i] *= p.gamma();

        // Step 3 (eq. 3, 4): reinforcement by min-max normalised similarity to the query.
        toCosines(s, 0, m, t);
        double min = Double.POSITIVE_INFINITY, max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < m; i++) {
            min = Math.min(min, cosine[i]);
            max = Math.max(max, cosine[i]);
        }
        double range = max - min + EPS;
        for (int i = 0; i < m; i++) rho[i] += alpha * ((cosine[i] - min) / range);

        // Step 4 (eq. 5, 6, 7): ownership, convergence loss, adaptive learning rate.
        double maxH = ownership(s, m);
        double l = 0;
        if (maxH > 0) {
            for (int i = 0; i < m; i++) {
                double hh = h[i] / maxH;
                l += hh * (1 - hh);
            }
        }
        loss = l / m;
        alpha = p.alpha0() / (1 + p.mu() * loss);

        // Step 5 (eq. 8): threshold eviction of non-sink entries.
        double threshold = p.tau() * maxH;
        boolean[] flags = ranker.removeFlags();
        long[] pos = s.positions();
        for (int i = 0; i < m; i++) {
            flags[i] = h[i] < threshold && pos[i] >= p.sinks();
        }
        ranker.clearFlags(m, s.size()); // the turn's new entries are not candidates
        ranker.evictFlagged(s);
    }

    /** Step 6: the turn's entries enter with c = 1 and rho = alpha * max(0, cos). */
    private void insertNewEntries(KvStream s, Turn t) {
        int from = s.scored(), to = s.size();
        if (from == to) return;
        embeddingDots(s, from, to, t);
        toCosines(s, from, to, t);
        double[] c = s.c(), rho = s.rho();
        for (int i = from; i < to; i++) {
            c[i] = 1;
            rho[i] = alpha * Math.max(0, cosine[i]);
        }
    }

    /**
     * Step 7: the turn's scores over the whole cache, then the budget: the lowest-h non-sink
     * entries go until |C| <= B (or, with costed entries, until their total cost fits).
     */
    private void enforceBudget(KvStream s) {
        int n = s.size();
        ownership(s, n);
        if (s.totalCost() <= budget) return;
        int[] tier = ranker.tier();
        double[] score = ranker.score();
        long[] pos = s.positions();
        double[] h = s.h();
        for (int i = 0; i < n; i++) {
            tier[i] = pos[i] < p.sinks() ? Ranker.NEVER : 0;
            score[i] = h[i];
        }
        ranker.evictToBudget(s, budget, false);
    }

    /** Eq. 9 as a logit bias: beta * ln(0.5 + 0.5 * rho_i / max rho), 0 when max rho <= 0. */
    private void writeModulation(KvStream s) {
        int n = s.size();
        float[] bias = s.logitBias();
        double[] rho = s.rho();
        double maxRho = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) maxRho = Math.max(maxRho, rho[i]);
        if (p.beta() == 0 || !(maxRho > 0)) {
            java.util.Arrays.fill(bias, 0, n, 0f);
            return;
        }
        VectorMath.scaledLogHalfToOne(rho, n, maxRho, p.beta(), bias);
    }

    /** Eq. 5 over entries [0, n): h_i = wc * c_i / max c + wrho * rho_i; returns max h. */
    private double ownership(KvStream s, int n) {
        double[] c = s.c(), rho = s.rho(), h = s.h();
        double maxC = 0;
        for (int i = 0; i < n; i++) maxC = Math.max(maxC, c[i]);
        double inv = maxC > 0 ? 1 / maxC : 0;
        double maxH = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            h[i] = p.wc() * (c[i] * inv) + p.wrho() * rho[i];
            maxH = Math.max(maxH, h[i]);
        }
        return maxH;
    }

    /** cosine[i] = e_i . ebar_q (raw dot products) for i in [from, to). */
    private void embeddingDots(KvStream s, int from, int to, Turn t) {
        int ed = s.embeddingDim();
        float[] e = s.embeddings();
        float[] q = t.queryEmbedding();
        for (int i = from; i < to; i++) cosine[i] = VectorMath.dot(e, i * ed, q, 0, ed);
    }

    /** Turns the raw dot products in cosine[from, to) into cos(e_i, ebar_q) (0 for a zero norm). */
    private void toCosines(KvStream s, int from, int to, Turn t) {
        double qNorm = VectorMath.norm(t.queryEmbedding(), 0, s.embeddingDim());
        double[] norms = s.embeddingNorms();
        for (int i = from; i < to; i++) cosine[i] = VectorMath.cosine(cosine[i], norms[i], qNorm);
    }

    private void ensure(int n) {
        ranker.ensure(n);
        if (attention.length < n) {
            int cap = Math.max(n, attention.length * 2);
            attention = new double[cap];
            cosine = new double[cap];
        }
    }
}
