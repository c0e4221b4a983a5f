package io.fdkvc.core.policy.dialogue;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.math.VectorMath;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.Ranker;
import io.fdkvc.core.policy.Turn;

/**
 * {@code fdkvc-dialogue}: FD-KVC's two channels for a conversation memory, with the most recent
 * share of the budget protected and two signals that carry what a turn needs (design and the
 * numbers behind each choice: docs/evaluation-dialogues.md).
 *
 * <p>Each turn, over the entries of the earlier turns:
 * <ol>
 *   <li>c_i = gamma * c_i + softmax_i(qbar . k_i / sqrt(d)): decayed cumulative attention of the
 *       turn's mean query (FD-KVC's first channel, eq. 1, with decay);</li>
 *   <li>rho_i = gamma * rho_i + max(0, cos(e_i, ebar_q)): decayed relevance of the entry's
 *       embedding to the turn's query embedding (FD-KVC's second channel; raw clipped cosine,
 *       not min-max normalised, because lexical vectors are mostly orthogonal and min-max would
 *       blow up noise). The turn's own entries start with c = 0 and rho = max(0, cos).</li>
 * </ol>
 * Then over all entries, newest first: novelty_i = the share of entry i's positive embedding
 * mass that the element-wise maximum of the newer cached entries does not reach (with the lexical
 * {@link DialogueFeatures}: the share of its words that no newer cached utterance says again, so
 * it holds the latest mention of them); speaker_i = 1 when the entry's speaker slot matches the
 * query's (the speaker who writes next), only when the embeddings have the
 * {@link DialogueFeatures} layout. Ownership h_i = wc * c_i / max c + wrho * rho_i
 * + wnovel * novelty_i + wspeaker * speaker_i.
 *
 * <p>Eviction: the most recent entries whose costs fit in {@code recent * budget} are kept first
 * (a higher tier), the rest by h, through the shared {@link Ranker} (with its packing). In an
 * engine, entries are tokens with unit costs and the embeddings are the keys: the speaker term is
 * absent, novelty reads the positive part of the keys, and the policy is a recent window plus
 * FD-KVC-style ownership.
 */
public final class DialoguePolicy implements Policy {
    private final String name;
    private final int budget;
    private final DialogueParams p;
    private final Ranker ranker = new Ranker();

    private double[] attention = new double[0];
    private double[] dots = new double[0];
    private float[] cover = new float[0];

    public DialoguePolicy(String name, int budget, DialogueParams params) {
        if (budget < 1) throw new ParameterException("budget", "must be >= 1, got " + budget);
        this.name = name;
        this.budget = budget;
        this.p = params;
    }

    public DialogueParams params() {
        return p;
    }

    @Override public String name() { return name; }
    @Override public int budget() { return budget; }
    @Override public void setPacking(boolean on) { ranker.setPacking(on); }
    @Override public boolean packing() { return ranker.packing(); }

    @Override
    public void endTurn(KvStream s, Turn t) {
        s.beginUpdate();
        int n = s.size();
        ensure(n, s.embeddingDim());
        int m = s.scored();
        double[] c = s.c(), rho = s.rho(), h = s.h();
        if (m > 0) {
            int d = s.keyDim();
            VectorMath.logits(t.meanQuery(), 0, s.keys(), m, d, 1.0 / Math.sqrt(d), attention);
            VectorMath.softmaxInPlace(attention, m);
            for (int i = 0; i < m; i++) c[i] = p.gamma() * c[i] + attention[i];
        }
        cosines(s, t, n);
        for (int i = 0; i < n; i++) {
            double rel = Math.max(0, dots[i]);
            if (i < m) {
                rho[i] = p.gamma() * rho[i] + rel;
            } else {
                c[i] = 0;
                rho[i] = rel;
            }
        }
        double maxC = 0;
        for (int i = 0; i < n; i++) maxC = Math.max(maxC, c[i]);
        double invC = maxC > 0 ? 1 / maxC : 0;
        boolean layout = s.embeddingDim() == DialogueFeatures.DIMENSION;
        novelty(s, n, layout ? DialogueFeatures.LEXICAL : s.embeddingDim(), dots); // dots now holds novelty
        float[] e = s.embeddings();
        int ed = s.embeddingDim();
        float[] q = t.queryEmbedding();
        for (int i = 0; i < n; i++) {
            double speaker = 0;
            if (layout) {
                int o = i * ed + DialogueFeatures.LEXICAL;
                speaker = e[o] * q[DialogueFeatures.LEXICAL] + e[o + 1] * q[DialogueFeatures.LEXICAL + 1];
            }
            h[i] = p.wc() * c[i] * invC + p.wrho() * rho[i] + p.wnovel() * dots[i] + p.wspeaker() * speaker;
        }
        if (s.totalCost() > budget) {
            int[] tier = ranker.tier();
            double[] score = ranker.score();
            int[] cost = s.costs();
            long protect = (long) Math.floor(p.recent() * budget);
            long used = 0;
            int from = n;
            while (from > 0 && used + cost[from - 1] <= protect) used += cost[--from];
            for (int i = 0; i < n; i++) {
                tier[i] = i >= from ? 1 : 0;
                score[i] = h[i];
            }
            ranker.evictToBudget(s, budget, false);
        }
        java.util.Arrays.fill(s.logitBias(), 0, s.size(), 0f);
        s.markScored();
    }

    /** dots[i] = cos(e_i, ebar_q) over the lexical part (all dims without the dialogue layout); 0 for a zero norm. */
    private void cosines(KvStream s, Turn t, int n) {
        int ed = s.embeddingDim();
        boolean layout = ed == DialogueFeatures.DIMENSION;
        int len = layout ? DialogueFeatures.LEXICAL : ed;
        float[] e = s.embeddings();
        float[] q = t.queryEmbedding();
        double qn = VectorMath.norm(q, 0, len);
        for (int i = 0; i < n; i++) {
            double dot = VectorMath.dot(e, i * ed, q, 0, len);
            double en = layout ? VectorMath.norm(e, i * ed, len) : s.embeddingNorms()[i];
            dots[i] = VectorMath.cosine(dot, en, qn);
        }
    }

    /**
     * out[i] = sum_b max(0, e_i[b] - cover[b]) / sum_b max(0, e_i[b]) over b in [0, len), where
     * cover is the element-wise maximum of the entries newer than i; 0 for an entry without
     * positive mass. One pass from the newest entry down: O(n * len).
     */
    private void novelty(KvStream s, int n, int len, double[] out) {
        int ed = s.embeddingDim();
        float[] e = s.embeddings();
        java.util.Arrays.fill(cover, 0, len, 0f);
        for (int i = n - 1; i >= 0; i--) {
            int o = i * ed;
            double mass = 0, fresh = 0;
            for (int b = 0; b < len; b++) {
                float x = e[o + b];
                if (x <= 0) continue;
                mass += x;
                float cv = cover[b];
                if (x > cv) {
                    fresh += x - cv;
                    cover[b] = x;
                }
            }
            out[i] = mass > 0 ? fresh / mass : 0;
        }
    }

    private void ensure(int n, int ed) {
        ranker.ensure(n);
        if (attention.length < n) {
            int cap = Math.max(n, attention.length * 2);
            attention = new double[cap];
            dots = new double[cap];
        }
        if (cover.length < ed) cover = new float[ed];
    }
}
