package io.fdkvc.engine.model;

/** GGUF {@code qwen2}: Qwen2 and Qwen2.5. NEOX RoPE; q, k and v projections always have biases; no q/k norm. */
public record Qwen2Architecture() implements Architecture {
    @Override public String name() { return "qwen2"; }
    @Override public boolean ropeNeox() { return true; }
    @Override public Biases qkvBiases() { return Biases.REQUIRED; }
    @Override public boolean qkNorm() { return false; }
}
