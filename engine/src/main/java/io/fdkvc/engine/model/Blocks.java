package io.fdkvc.engine.model;

import java.util.ArrayList;
import java.util.List;

/**
 * What a model's layers are made of, as the forward pass composes them: read from a file's
 * metadata by its {@link Architecture}, the same for every architecture's file of the same kind.
 *
 * @param norms          where each block's RMSNorm sits: before the block only, or before and after
 *                       (Gemma 3: the block's output is normalised again before its residual add)
 * @param activation     the feed-forward's gate activation: silu (SwiGLU) or tanh-approximated gelu (GeGLU)
 * @param embeddingScale the token embedding's factor (1; Gemma: sqrt(dim))
 * @param queryScale     the factor on q . k (usually 1 / sqrt(headDim))
 * @param layers         per layer: its attention window and its RoPE
 * @param temperature    the attention-temperature scale on queries by position, or null (Ministral 3)
 */
public record Blocks(Norms norms, Activation activation, float embeddingScale, float queryScale,
                     List<LayerAttention> layers, AttentionTemperature temperature) {

    public enum Norms { PRE, PRE_AND_POST }

    public enum Activation { SILU, GELU }

    /**
     * One layer's attention.
     *
     * @param window the sliding window: a query at position p sees the keys at positions above
     *               p - window (its own included); 0 = global attention (every key the cache holds)
     * @param rope   the layer's RoPE, or null for none (NoPE: SmolLM3's every fourth layer)
     */
    public record LayerAttention(int window, Rope rope) {
        public LayerAttention {
            if (window < 0) throw new IllegalArgumentException("negative attention window " + window);
        }

        public boolean sliding() {
            return window > 0;
        }
    }

    /**
     * Llama 4 / Ministral 3's attention temperature: each query at position p is multiplied by
     * {@code 1 + scale * ln(floor(p / length) + 1)}, 1 within the first {@code length} positions.
     */
    public record AttentionTemperature(float scale, int length) {
        public AttentionTemperature {
            if (length < 1) throw new IllegalArgumentException("attention temperature length " + length + " must be >= 1");
        }

        float at(long position) {
            return (float) (Math.log(Math.floor((double) position / length) + 1.0) * scale + 1.0);
        }
    }

    public Blocks {
        layers = List.copyOf(layers);
        if (!(embeddingScale > 0) || !(queryScale > 0)) throw new IllegalArgumentException("non-positive scale");
    }

    /** The plain Llama block for every layer: pre-norm, SwiGLU, global attention with {@code rope}. */
    public static Blocks plain(int layers, int headDim, Rope rope) {
        return new Blocks(Norms.PRE, Activation.SILU, 1f, (float) (1.0 / Math.sqrt(headDim)), uniform(layers, rope), null);
    }

    /** These blocks with another attention per layer. */
    public Blocks withLayers(List<LayerAttention> plan) {
        return new Blocks(norms, activation, embeddingScale, queryScale, plan, temperature);
    }

    /** These blocks with an attention temperature. */
    public Blocks withTemperature(AttentionTemperature t) {
        return new Blocks(norms, activation, embeddingScale, queryScale, layers, t);
    }

    /** {@code layers} global layers with the same RoPE. */
    static List<LayerAttention> uniform(int layers, Rope rope) {
        List<LayerAttention> l = new ArrayList<>(layers);
        for (int i = 0; i < layers; i++) l.add(new LayerAttention(0, rope));
        return l;
    }

    /** The windows per layer (0 for global layers), as the cache takes them. */
    public int[] windows() {
        int[] w = new int[layers.size()];
        for (int i = 0; i < w.length; i++) w[i] = layers.get(i).window();
        return w;
    }

    /** The largest sliding window, 0 when every layer is global. */
    public int maxWindow() {
        int m = 0;
        for (LayerAttention l : layers) m = Math.max(m, l.window());
        return m;
    }

    /**
     * Where a cache policy runs, in one line (for bench, chat and serve), or null when every layer
     * is global: sliding-window layers keep their window, the policy manages the global ones.
     */
    public String policyScope() {
        int sliding = slidingLayers();
        if (sliding == 0) return null;
        return "sliding-window layers: " + sliding + " of " + layers.size() + " keep their window of " + maxWindow()
                + " tokens; the policy runs on the " + (layers.size() - sliding) + " global layers";
    }

    /** Layers with a sliding window. */
    public int slidingLayers() {
        int n = 0;
        for (LayerAttention l : layers) if (l.sliding()) n++;
        return n;
    }
}
