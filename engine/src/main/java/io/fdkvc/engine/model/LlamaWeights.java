package io.fdkvc.engine.model;

import io.fdkvc.engine.tensor.FloatTensor;
import java.util.ArrayList;
import java.util.List;

/**
 * All weights of a Llama-family model, per layer arrays indexed by layer. Matrices are
 * {@code rows = output features, cols = input features}. Biases and q/k norms are null where the
 * architecture has none (qwen2 has q, k, v biases; qwen3 has q and k norms, see {@link Architecture}).
 */
public record LlamaWeights(
        FloatTensor tokenEmbedding,   // vocab x dim
        float[][] attnNorm,           // layers x dim
        FloatTensor[] wq,             // heads*headDim x dim
        FloatTensor[] wk,             // kvHeads*headDim x dim
        FloatTensor[] wv,             // kvHeads*headDim x dim
        FloatTensor[] wo,             // dim x heads*headDim
        float[][] bq, float[][] bk, float[][] bv,
        float[][] ffnNorm,            // layers x dim
        FloatTensor[] wGate,          // hidden x dim   (w1)
        FloatTensor[] wDown,          // dim x hidden   (w2)
        FloatTensor[] wUp,            // hidden x dim   (w3)
        float[] outputNorm,           // dim
        FloatTensor output,           // vocab x dim (the token embedding when tied)
        float[][] qNorm,              // layers x headDim: per-head RMSNorm of q (qwen3, gemma3), or null
        float[][] kNorm,              // layers x headDim: per-head RMSNorm of k (qwen3, gemma3), or null
        float[][] postAttnNorm,       // layers x dim: RMSNorm of the attention block's output (gemma3), or null
        float[][] postFfnNorm) {      // layers x dim: RMSNorm of the feed-forward block's output (gemma3), or null

    /** Weights without post-block norms (every architecture but gemma3). */
    public LlamaWeights(FloatTensor tokenEmbedding, float[][] attnNorm, FloatTensor[] wq, FloatTensor[] wk,
                        FloatTensor[] wv, FloatTensor[] wo, float[][] bq, float[][] bk, float[][] bv, float[][] ffnNorm,
                        FloatTensor[] wGate, FloatTensor[] wDown, FloatTensor[] wUp, float[] outputNorm,
                        FloatTensor output, float[][] qNorm, float[][] kNorm) {
        this(tokenEmbedding, attnNorm, wq, wk, wv, wo, bq, bk, bv, ffnNorm, wGate, wDown, wUp, outputNorm, output, qNorm, kNorm,
                null, null);
    }

    /** Weights without q/k norms (llama, qwen2). */
    public LlamaWeights(FloatTensor tokenEmbedding, float[][] attnNorm, FloatTensor[] wq, FloatTensor[] wk,
                        FloatTensor[] wv, FloatTensor[] wo, float[][] bq, float[][] bk, float[][] bv, float[][] ffnNorm,
                        FloatTensor[] wGate, FloatTensor[] wDown, FloatTensor[] wUp, float[] outputNorm,
                        FloatTensor output) {
        this(tokenEmbedding, attnNorm, wq, wk, wv, wo, bq, bk, bv, ffnNorm, wGate, wDown, wUp, outputNorm, output, null, null, null, null);
    }

    /**
     * {@link FloatTensor#prepareDecode} of every matrix the decode step multiplies, the matrices
     * taken in parallel (the common fork-join pool): the row-lane copies that its Q4_K, Q6_K and
     * Q8_0 products read, made at load instead of on the first decoded token.
     */
    public void prepareDecode() {
        List<FloatTensor> all = new ArrayList<>();
        for (FloatTensor[] kind : List.of(wq, wk, wv, wo, wGate, wUp, wDown)) {
            for (FloatTensor t : kind) if (t != null) all.add(t);
        }
        if (output != null) all.add(output);
        // a bad kernel property fails here, with its message, not in whichever pool thread loads the
        // kernels first (the others would see only that the class failed to load)
        FloatTensor.checkKernelProperties();
        all.parallelStream().forEach(FloatTensor::prepareDecode);
    }
}
