package io.fdkvc.engine.model;

/**
 * GGUF {@code qwen3}: Qwen3 (dense). NEOX RoPE; no q/k/v biases; each head of q and k is
 * RMS-normalised before RoPE ({@code blk.N.attn_q_norm.weight}, {@code blk.N.attn_k_norm.weight},
 * headDim values each). The head dimension is given by {@code qwen3.attention.key_length} and is
 * not embedding_length / head_count (Qwen3-0.6B: 1024 / 16 heads, head dimension 128).
 */
public record Qwen3Architecture() implements Architecture {
    @Override public String name() { return "qwen3"; }
    @Override public boolean ropeNeox() { return true; }
    @Override public Biases qkvBiases() { return Biases.NONE; }
    @Override public boolean qkNorm() { return true; }
}
