package io.fdkvc.eval.fidelity;

/**
 * The full cache's predictions for one chunk of positions, prepared once and compared with every
 * student's: per row, the log-partition, the argmax and the probabilities.
 */
final class TeacherRows {
    final int vocab;
    float[] logits;
    float[] probs;
    double[] logZ;
    int[] argmax;
    int rows;

    TeacherRows(int vocab, int maxRows) {
        this.vocab = vocab;
        probs = new float[maxRows * vocab];
        logZ = new double[maxRows];
        argmax = new int[maxRows];
    }

    /** Takes the teacher's logits of {@code n} rows (row r at {@code r * vocab}); keeps a reference to them. */
    void set(float[] logits, int n) {
        this.logits = logits;
        this.rows = n;
        for (int r = 0; r < n; r++) {
            int o = r * vocab;
            double lz = logPartition(logits, o, vocab);
            logZ[r] = lz;
            argmax[r] = argmax(logits, o, vocab);
            for (int i = 0; i < vocab; i++) probs[o + i] = (float) Math.exp(logits[o + i] - lz);
        }
    }

    /** log sum_i exp(x_i) over {@code x[o .. o+n)}, in double, shifted by the maximum. */
    static double logPartition(float[] x, int o, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) max = Math.max(max, x[o + i]);
        double s = 0;
        for (int i = 0; i < n; i++) s += Math.exp(x[o + i] - max);
        return max + Math.log(s);
    }

    /** The first index of the largest value of {@code x[o .. o+n)}. */
    static int argmax(float[] x, int o, int n) {
        int best = 0;
        for (int i = 1; i < n; i++) if (x[o + i] > x[o + best]) best = i;
        return best;
    }
}
