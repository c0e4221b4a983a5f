package io.fdkvc.engine.model;

import java.util.ArrayList;
import java.util.List;

/**
 * GGUF {@code gemma3}: Gemma 3's text model. Every block is normalised before and after
 * ({@code blk.N.post_attention_norm.weight}, {@code blk.N.post_ffw_norm.weight}, with Gemma's +1
 * already in the stored weights), the embeddings are scaled by sqrt(dim), the feed-forward is
 * GeGLU (tanh gelu), q and k are RMS-normalised per head, RoPE is NEOX. Layers interleave a
 * sliding window ({@code gemma3.attention.sliding_window} tokens, RoPE base
 * {@code gemma3.rope.freq_base_swa}, default 10000, never scaled) with global attention (RoPE base
 * {@code gemma3.rope.freq_base} and the file's scaling): {@code sliding_window_pattern} P (default
 * 6) makes layer l sliding when l % P < P - 1, or it is an array of one flag per layer. Queries
 * are scaled by 1/sqrt(headDim), except in the 62-layer 27B, whose scale is 1/sqrt(dim/heads).
 * Vision tensors in the file are ignored (the loader notes how many).
 */
public record Gemma3Architecture() implements Architecture {
    @Override public String name() { return "gemma3"; }
    @Override public boolean ropeNeox() { return true; }
    @Override public Biases qkvBiases() { return Biases.NONE; }
    @Override public boolean qkNorm() { return true; }

    @Override
    public Blocks blocks(ModelMetadata m, int layers, int dim, int heads, int headDim, Rope global) {
        int window = (int) m.number("attention.sliding_window", 0);
        if (window < 0) throw m.fail("gemma3.attention.sliding_window = " + window + " is negative");
        boolean[] sliding = m.flags("attention.sliding_window_pattern");
        if (sliding == null) {
            int period = m.positiveInt("attention.sliding_window_pattern", 6);
            sliding = new boolean[layers];
            for (int l = 0; l < layers; l++) sliding[l] = l % period < period - 1;
        } else if (sliding.length != layers) {
            throw m.fail("gemma3.attention.sliding_window_pattern has " + sliding.length + " flags for " + layers + " layers");
        }
        float localBase = (float) m.number("rope.freq_base_swa", 10000);
        Rope local = new Rope(localBase, global.dims(), Rope.Scaling.NONE, 1, 0, global.betaFast(), global.betaSlow(), 1, null, null);
        List<Blocks.LayerAttention> plan = new ArrayList<>(layers);
        for (int l = 0; l < layers; l++) {
            boolean s = window > 0 && sliding[l];
            plan.add(new Blocks.LayerAttention(s ? window : 0, s ? local : global));
        }
        double queryDim = layers == 62 ? (double) dim / heads : headDim;
        return new Blocks(Blocks.Norms.PRE_AND_POST, Blocks.Activation.GELU, (float) Math.sqrt(dim),
                (float) (1.0 / Math.sqrt(queryDim)), plan, null);
    }
}
