package io.fdkvc.eval.fidelity;

/**
 * The per-position comparison of a student's prediction with the teacher's (the full cache's):
 * KL(full || student) in nats, whether the argmaxes agree, and both NLLs of the actual next token.
 * Sums over positions; a dialogue turn's KL is kept apart for the per-turn curve, and each probe's
 * NLL increase is summed over its tokens.
 */
final class Fidelity {
    double klSum, nllSum, nllFullSum;
    long agree, predictions;
    final double[] turnKl;
    final int[] turnCount;
    final double[] probeIncrease;

    Fidelity(int turns, int probes) {
        turnKl = new double[turns];
        turnCount = new int[turns];
        probeIncrease = new double[probes];
    }

    /**
     * KL(p || q) for the teacher's row {@code r} (p) and the student's logits at
     * {@code s[so .. so+vocab)} (q): sum_i p_i (log p_i - log q_i). Where the student's logits equal
     * the teacher's bit for bit every term is exactly 0.
     */
    static double kl(TeacherRows t, int r, float[] s, int so, double logZs) {
        int to = r * t.vocab;
        double lzt = t.logZ[r], kl = 0;
        float[] tl = t.logits, p = t.probs;
        for (int i = 0; i < t.vocab; i++) {
            double d = (tl[to + i] - lzt) - (s[so + i] - logZs);
            kl += p[to + i] * d;
        }
        return kl;
    }

    /**
     * Adds the prediction made at one position: the teacher's row {@code r}, the student's logits at
     * {@code so}, the actual next token, the dialogue turn the position belongs to (measured when
     * {@code measured}), and the probe the next token belongs to (-1: none).
     */
    void add(TeacherRows t, int r, float[] s, int so, int next, int turn, boolean measured, int probe) {
        double lzs = TeacherRows.logPartition(s, so, t.vocab);
        double nll = lzs - s[so + next];
        double nllFull = t.logZ[r] - t.logits[r * t.vocab + next];
        if (probe >= 0) probeIncrease[probe] += nll - nllFull;
        if (!measured) return;
        double kl = kl(t, r, s, so, lzs);
        klSum += kl;
        nllSum += nll;
        nllFullSum += nllFull;
        if (TeacherRows.argmax(s, so, t.vocab) == t.argmax[r]) agree++;
        predictions++;
        turnKl[turn] += kl;
        turnCount[turn]++;
    }
}
