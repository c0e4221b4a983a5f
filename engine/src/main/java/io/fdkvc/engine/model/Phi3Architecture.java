package io.fdkvc.engine.model;

/**
 * GGUF {@code phi3}: Phi-3, Phi-3.5-mini and Phi-4-mini. NEOX RoPE, possibly over part of each
 * head ({@code phi3.rope.dimension_count}: 96 of 128 in Phi-4-mini); q, k and v usually fused in
 * {@code blk.N.attn_qkv.weight}, gate and up always fused in {@code blk.N.ffn_up.weight} (gate rows
 * first); no biases. LongRoPE files carry {@code rope_factors_short.weight} and
 * {@code rope_factors_long.weight} and {@code phi3.rope.scaling.attn_factor}; the loader applies the
 * short factors (llama.cpp's choice for a context up to {@code rope.scaling.original_context_length})
 * and the attention factor. {@code phi3.attention.sliding_window} is ignored, as llama.cpp ignores it.
 */
public record Phi3Architecture() implements Architecture {
    @Override public String name() { return "phi3"; }
    @Override public boolean ropeNeox() { return true; }
    @Override public Biases qkvBiases() { return Biases.NONE; }
    @Override public boolean qkNorm() { return false; }
    @Override public boolean fusedGateUp() { return true; }
    @Override public boolean partialRotary() { return true; }
}
