package io.fdkvc.engine.model;

import io.fdkvc.engine.tensor.F32Tensor;
import io.fdkvc.engine.tensor.FloatTensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A deliberately plain Llama/Qwen2 forward pass for the tests: one token at a time, in double
 * precision, keys rotated at their true position and stored rotated (as llama2.c and llama.cpp
 * do), RoPE written from the papers' definitions (interleaved pairs for llama, halves for NEOX),
 * llama3 frequency scaling from Meta's reference. It shares no code with {@link Llama}.
 */
final class NaiveLlama {
    final LlamaConfig c;
    final LlamaWeights w;
    private final List<double[][]> keys = new ArrayList<>();   // per position: [layer][kvDim]
    private final List<double[][]> values = new ArrayList<>();

    NaiveLlama(LlamaConfig c, LlamaWeights w) {
        this.c = c;
        this.w = w;
    }

    /** Random weights of the given shape (normal, scaled by 1/sqrt(cols) so activations stay O(1)). */
    static LlamaWeights randomWeights(LlamaConfig c, long seed, boolean biases) {
        Random r = new Random(seed);
        int L = c.layers(), qd = c.heads() * c.headDim(), kd = c.kvDim();
        FloatTensor emb = rand(r, c.vocabSize(), c.dim(), 1.0);
        FloatTensor[] wq = new FloatTensor[L], wk = new FloatTensor[L], wv = new FloatTensor[L], wo = new FloatTensor[L];
        FloatTensor[] g = new FloatTensor[L], d = new FloatTensor[L], u = new FloatTensor[L];
        float[][] an = new float[L][], fn = new float[L][], bq = new float[L][], bk = new float[L][], bv = new float[L][];
        for (int l = 0; l < L; l++) {
            wq[l] = rand(r, qd, c.dim(), 1);
            wk[l] = rand(r, kd, c.dim(), 1);
            wv[l] = rand(r, kd, c.dim(), 1);
            wo[l] = rand(r, c.dim(), qd, 1);
            g[l] = rand(r, c.hiddenDim(), c.dim(), 1);
            d[l] = rand(r, c.dim(), c.hiddenDim(), 1);
            u[l] = rand(r, c.hiddenDim(), c.dim(), 1);
            an[l] = vec(r, c.dim(), 1, 0.2);
            fn[l] = vec(r, c.dim(), 1, 0.2);
            bq[l] = vec(r, qd, 0, 0.5);
            bk[l] = vec(r, kd, 0, 0.5);
            bv[l] = vec(r, kd, 0, 0.5);
        }
        FloatTensor out = c.tiedEmbeddings() ? emb : rand(r, c.vocabSize(), c.dim(), 1);
        return new LlamaWeights(emb, an, wq, wk, wv, wo, biases ? bq : null, biases ? bk : null, biases ? bv : null,
                fn, g, d, u, vec(r, c.dim(), 1, 0.2), out);
    }

    private static FloatTensor rand(Random r, int rows, int cols, double scale) {
        float[] a = new float[rows * cols];
        double s = scale / Math.sqrt(cols);
        for (int i = 0; i < a.length; i++) a[i] = (float) (r.nextGaussian() * s);
        return new F32Tensor(a, rows, cols);
    }

    private static float[] vec(Random r, int n, double mean, double sd) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = (float) (mean + r.nextGaussian() * sd);
        return a;
    }

    private static double[] row(FloatTensor t, int r) {
        float[] f = new float[t.cols()];
        t.dequantizeRow(r, f, 0);
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) d[i] = f[i];
        return d;
    }

    private static double[] matvec(FloatTensor t, double[] x, float[] bias) {
        double[] y = new double[t.rows()];
        for (int r = 0; r < t.rows(); r++) {
            double[] w = row(t, r);
            double s = 0;
            for (int i = 0; i < x.length; i++) s += w[i] * x[i];
            y[r] = s + (bias == null ? 0 : bias[r]);
        }
        return y;
    }

    private double[] rmsnorm(double[] x, float[] weight) {
        double ss = 0;
        for (double v : x) ss += v * v;
        double inv = 1 / Math.sqrt(ss / x.length + c.normEps());
        double[] y = new double[x.length];
        for (int i = 0; i < x.length; i++) y[i] = weight[i] * x[i] * inv;
        return y;
    }

    double frequency(int j) {
        double f = Math.pow(c.ropeTheta(), -2.0 * j / c.headDim());
        switch (c.ropeScaling()) {
            case "linear" -> f /= c.ropeScaleFactor();
            case "llama3" -> {
                double lowWavelen = c.ropeOrigContext() / 1.0, highWavelen = c.ropeOrigContext() / 4.0;
                double wl = 2 * Math.PI / f;
                if (wl > lowWavelen) {
                    f /= c.ropeScaleFactor();
                } else if (wl >= highWavelen) {
                    double smooth = (c.ropeOrigContext() / wl - 1) / (4 - 1);
                    f = (1 - smooth) * f / c.ropeScaleFactor() + smooth * f;
                }
            }
            default -> { }
        }
        return f;
    }

    /** Rotates every head of {@code v} in place to position {@code pos}. */
    private void rope(double[] v, int heads, int pos) {
        int hd = c.headDim(), half = hd / 2;
        for (int h = 0; h < heads; h++) {
            for (int j = 0; j < half; j++) {
                double a = pos * frequency(j), cs = Math.cos(a), sn = Math.sin(a);
                int i0 = c.ropeNeox() ? h * hd + j : h * hd + 2 * j;
                int i1 = c.ropeNeox() ? h * hd + j + half : h * hd + 2 * j + 1;
                double x0 = v[i0], x1 = v[i1];
                v[i0] = x0 * cs - x1 * sn;
                v[i1] = x0 * sn + x1 * cs;
            }
        }
    }

    /** Processes one token at the next position; returns its logits. */
    double[] next(int token) {
        int pos = keys.size(), hd = c.headDim(), group = c.heads() / c.kvHeads();
        double[] x = row(w.tokenEmbedding(), token);
        double[][] ks = new double[c.layers()][], vs = new double[c.layers()][];
        keys.add(ks);
        values.add(vs);
        for (int l = 0; l < c.layers(); l++) {
            double[] xn = rmsnorm(x, w.attnNorm()[l]);
            double[] q = matvec(w.wq()[l], xn, w.bq() == null ? null : w.bq()[l]);
            double[] k = matvec(w.wk()[l], xn, w.bk() == null ? null : w.bk()[l]);
            double[] v = matvec(w.wv()[l], xn, w.bv() == null ? null : w.bv()[l]);
            rope(q, c.heads(), pos);
            rope(k, c.kvHeads(), pos);
            ks[l] = k;
            vs[l] = v;
            double[] att = new double[c.heads() * hd];
            for (int h = 0; h < c.heads(); h++) {
                int kvh = h / group;
                double[] s = new double[pos + 1];
                double max = Double.NEGATIVE_INFINITY;
                for (int p = 0; p <= pos; p++) {
                    double[] kp = keys.get(p)[l];
                    double d = 0;
                    for (int i = 0; i < hd; i++) d += q[h * hd + i] * kp[kvh * hd + i];
                    s[p] = d / Math.sqrt(hd);
                    max = Math.max(max, s[p]);
                }
                double sum = 0;
                for (int p = 0; p <= pos; p++) sum += (s[p] = Math.exp(s[p] - max));
                for (int p = 0; p <= pos; p++) {
                    double[] vp = values.get(p)[l];
                    for (int i = 0; i < hd; i++) att[h * hd + i] += s[p] / sum * vp[kvh * hd + i];
                }
            }
            double[] o = matvec(w.wo()[l], att, null);
            for (int i = 0; i < x.length; i++) x[i] += o[i];
            double[] xf = rmsnorm(x, w.ffnNorm()[l]);
            double[] gate = matvec(w.wGate()[l], xf, null), up = matvec(w.wUp()[l], xf, null);
            double[] hmid = new double[gate.length];
            for (int i = 0; i < gate.length; i++) hmid[i] = gate[i] / (1 + Math.exp(-gate[i])) * up[i];
            double[] down = matvec(w.wDown()[l], hmid, null);
            for (int i = 0; i < x.length; i++) x[i] += down[i];
        }
        return matvec(w.output(), rmsnorm(x, w.outputNorm()), null);
    }
}
