package io.fdkvc.engine.model;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.tensor.F32Tensor;
import io.fdkvc.engine.tensor.FloatTensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A deliberately plain forward pass of every architecture the engine runs, for the tests: one
 * token at a time, in double precision, RoPE written from the papers' definitions (interleaved
 * pairs for llama, halves for NEOX, partial rotary leaving the last coordinates alone), llama3
 * frequency scaling from Meta's reference, YaRN's ramp from its paper (with llama.cpp's floor and
 * ceil of the correction dimensions), LongRoPE's factors, the per-head RMSNorm of q and k, Gemma
 * 3's scaled embeddings, post-block norms, tanh gelu and sliding windows, SmolLM3's layers without
 * RoPE, Ministral 3's attention temperature. It reads the config's {@link Blocks} (what the model
 * is) and shares no code with {@link Llama}.
 *
 * <p>{@link #next(int)} attends to every earlier token at its true position (keys rotated as
 * llama2.c and llama.cpp do). {@link #next(int, KvCache)} attends, per (layer, KV head), only to
 * the entries an engine cache holds (after the engine processed the same token), at their true
 * positions or at their slots as the cache's {@link PositionMode} says, with the cache's eq. 9
 * bias: the reference for eviction. Keys are kept before RoPE and rotated when attended to. The
 * last token's attention weights are kept ({@link #weights}) for the tests of observed attention.
 */
final class NaiveLlama {
    final LlamaConfig c;
    final LlamaWeights w;
    private final List<double[][]> keys = new ArrayList<>();   // per position: [layer][kvDim], before RoPE
    private final List<double[][]> values = new ArrayList<>();
    /** The last token's attention: [layer][query head][visible entry], and the visible positions [layer][KV head][]. */
    double[][][] weights;
    long[][][] visible;

    NaiveLlama(LlamaConfig c, LlamaWeights w) {
        this.c = c;
        this.w = w;
    }

    /** Random weights of the given shape (normal, scaled by 1/sqrt(cols) so activations stay O(1)). */
    static LlamaWeights randomWeights(LlamaConfig c, long seed, boolean biases) {
        LlamaWeights w = randomWeights0(c, seed, biases);
        if (!c.arch().qkNorm()) return w;
        Random r = new Random(seed + 1);
        float[][] qn = new float[c.layers()][], kn = new float[c.layers()][];
        for (int l = 0; l < c.layers(); l++) {
            qn[l] = vec(r, c.headDim(), 1, 0.3);
            kn[l] = vec(r, c.headDim(), 1, 0.3);
        }
        return new LlamaWeights(w.tokenEmbedding(), w.attnNorm(), w.wq(), w.wk(), w.wv(), w.wo(), w.bq(), w.bk(), w.bv(),
                w.ffnNorm(), w.wGate(), w.wDown(), w.wUp(), w.outputNorm(), w.output(), qn, kn);
    }

    private static LlamaWeights randomWeights0(LlamaConfig c, long seed, boolean biases) {
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

    static double frequency(Rope r, int j) {
        double f = Math.pow(r.theta(), -2.0 * j / r.dims());
        if (r.frequencyFactors() != null) f /= r.frequencyFactors()[j];
        double orig = r.originalContext(), factor = r.factor();
        switch (r.scaling()) {
            case LINEAR -> f /= factor;
            case LLAMA3 -> {
                double lowWavelen = orig / 1.0, highWavelen = orig / 4.0;
                double wl = 2 * Math.PI / f;
                if (wl > lowWavelen) {
                    f /= factor;
                } else if (wl >= highWavelen) {
                    double smooth = (orig / wl - 1) / (4 - 1);
                    f = (1 - smooth) * f / factor + smooth * f;
                }
            }
            case YARN -> {
                // the pair index at which a wavelength turns `beta` times over the original context
                double fast = r.dims() * Math.log(orig / (r.betaFast() * 2 * Math.PI)) / (2 * Math.log(r.theta()));
                double slow = r.dims() * Math.log(orig / (r.betaSlow() * 2 * Math.PI)) / (2 * Math.log(r.theta()));
                double lo = Math.max(0, Math.floor(fast)), hi = Math.min(r.dims() - 1, Math.ceil(slow));
                double ramp = Math.min(1, Math.max(0, (j - lo) / Math.max(0.001, hi - lo)));
                // ramp 0: high frequencies kept (extrapolation), 1: low ones interpolated
                f = f * (1 - ramp) + f / factor * ramp;
            }
            case NONE -> { }
        }
        return f;
    }

    /** Head {@code h} of {@code v} (heads of headDim) rotated by {@code r} (none: copied) to position {@code pos}, as a new array of headDim. */
    private double[] rope(double[] v, int h, long pos, Rope r) {
        int hd = c.headDim();
        double[] out = new double[hd];
        System.arraycopy(v, h * hd, out, 0, hd);
        if (r == null) return out;
        int half = r.dims() / 2;
        for (int j = 0; j < half; j++) {
            double a = pos * frequency(r, j), cs = Math.cos(a) * r.magnitude(), sn = Math.sin(a) * r.magnitude();
            int i0 = c.ropeNeox() ? j : 2 * j;
            int i1 = c.ropeNeox() ? j + half : 2 * j + 1;
            double x0 = out[i0], x1 = out[i1];
            out[i0] = x0 * cs - x1 * sn;
            out[i1] = x0 * sn + x1 * cs;
        }
        return out;
    }

    /** RMSNorm of each head of {@code v} in place (Qwen3's q/k norm). */
    private void headNorm(double[] v, int heads, float[] weight) {
        int hd = c.headDim();
        for (int h = 0; h < heads; h++) {
            double[] x = new double[hd];
            System.arraycopy(v, h * hd, x, 0, hd);
            System.arraycopy(rmsnorm(x, weight), 0, v, h * hd, hd);
        }
    }

    /** Processes one token at the next position, attending to every token so far; returns its logits. */
    double[] next(int token) {
        return step(token, null);
    }

    /**
     * Processes one token at the next position attending, in each (layer, KV head), to the
     * entries {@code cache}'s stream holds up to this token's position (call it after the engine
     * processed the same token), at their true positions or slots, with the stream's logit bias.
     */
    double[] next(int token, KvCache cache) {
        return step(token, cache);
    }

    private double[] step(int token, KvCache cache) {
        int pos = keys.size(), hd = c.headDim(), group = c.heads() / c.kvHeads();
        boolean slots = cache != null && cache.positionMode() == PositionMode.CACHE;
        double[] x = row(w.tokenEmbedding(), token);
        for (int i = 0; i < x.length; i++) x[i] *= c.blocks().embeddingScale();
        Blocks.AttentionTemperature temp = c.blocks().temperature();
        double[][] ks = new double[c.layers()][], vs = new double[c.layers()][];
        keys.add(ks);
        values.add(vs);
        weights = new double[c.layers()][c.heads()][];
        visible = new long[c.layers()][c.kvHeads()][];
        for (int l = 0; l < c.layers(); l++) {
            Rope lr = c.blocks().layers().get(l).rope();
            int window = c.blocks().layers().get(l).window();
            double[] xn = rmsnorm(x, w.attnNorm()[l]);
            double[] q = matvec(w.wq()[l], xn, w.bq() == null ? null : w.bq()[l]);
            double[] k = matvec(w.wk()[l], xn, w.bk() == null ? null : w.bk()[l]);
            double[] v = matvec(w.wv()[l], xn, w.bv() == null ? null : w.bv()[l]);
            if (w.qNorm() != null) {
                headNorm(q, c.heads(), w.qNorm()[l]);
                headNorm(k, c.kvHeads(), w.kNorm()[l]);
            }
            ks[l] = k;
            vs[l] = v;
            for (int kvh = 0; kvh < c.kvHeads(); kvh++) visible[l][kvh] = visible(cache, l, kvh, pos);
            double[] att = new double[c.heads() * hd];
            for (int h = 0; h < c.heads(); h++) {
                int kvh = h / group;
                long[] vis = visible[l][kvh];
                int n = vis.length;
                float[] bias = cache != null && cache.modulated() ? cache.stream(l, kvh).logitBias() : null;
                double[] qr = rope(q, h, slots ? n - 1 : pos, lr);
                if (temp != null) {
                    double f = 1 + temp.scale() * Math.log(Math.floor((double) pos / temp.length()) + 1);
                    for (int j = 0; j < hd; j++) qr[j] *= f;
                }
                double[] s = new double[n];
                double max = Double.NEGATIVE_INFINITY;
                for (int i = 0; i < n; i++) {
                    int p = (int) vis[i];
                    if (window > 0 && pos - p >= window) {
                        s[i] = Double.NEGATIVE_INFINITY; // out of the sliding window
                        continue;
                    }
                    double[] kr = rope(keys.get(p)[l], kvh, slots ? i : p, lr);
                    double d = 0;
                    for (int j = 0; j < hd; j++) d += qr[j] * kr[j];
                    s[i] = d * c.blocks().queryScale() + (bias == null ? 0 : bias[i]);
                    max = Math.max(max, s[i]);
                }
                double sum = 0;
                for (int i = 0; i < n; i++) sum += (s[i] = Math.exp(s[i] - max));
                for (int i = 0; i < n; i++) {
                    s[i] /= sum;
                    double[] vp = values.get((int) vis[i])[l];
                    for (int j = 0; j < hd; j++) att[h * hd + j] += s[i] * vp[kvh * hd + j];
                }
                weights[l][h] = s;
            }
            double[] o = matvec(w.wo()[l], att, null);
            if (w.postAttnNorm() != null) o = rmsnorm(o, w.postAttnNorm()[l]);
            for (int i = 0; i < x.length; i++) x[i] += o[i];
            double[] xf = rmsnorm(x, w.ffnNorm()[l]);
            double[] gate = matvec(w.wGate()[l], xf, null), up = matvec(w.wUp()[l], xf, null);
            double[] hmid = new double[gate.length];
            boolean gelu = c.blocks().activation() == Blocks.Activation.GELU;
            for (int i = 0; i < gate.length; i++) {
                double g = gate[i];
                double act = gelu ? 0.5 * g * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (g + 0.044715 * g * g * g)))
                        : g / (1 + Math.exp(-g));
                hmid[i] = act * up[i];
            }
            double[] down = matvec(w.wDown()[l], hmid, null);
            if (w.postFfnNorm() != null) down = rmsnorm(down, w.postFfnNorm()[l]);
            for (int i = 0; i < x.length; i++) x[i] += down[i];
        }
        return matvec(w.output(), rmsnorm(x, w.outputNorm()), null);
    }

    /** Positions this token attends to in (layer, KV head): all so far, or the stream's entries up to it. */
    private static long[] visible(KvCache cache, int l, int kvh, int pos) {
        if (cache == null) {
            long[] all = new long[pos + 1];
            for (int i = 0; i <= pos; i++) all[i] = i;
            return all;
        }
        KvStream st = cache.stream(l, kvh);
        int n = 0;
        while (n < st.size() && st.position(n) <= pos) n++;
        if (n == 0 || st.position(n - 1) != pos) throw new AssertionError("the stream does not hold position " + pos);
        return java.util.Arrays.copyOf(st.positions(), n);
    }

    /** The last token's attention in (layer, KV head), averaged over the group's query heads, over {@link #visible}. */
    double[] groupMean(int l, int kvh) {
        int group = c.heads() / c.kvHeads();
        double[] m = new double[visible[l][kvh].length];
        for (int j = 0; j < group; j++) {
            double[] wj = weights[l][kvh * group + j];
            for (int i = 0; i < m.length; i++) m[i] += wj[i] / group;
        }
        return m;
    }
}
