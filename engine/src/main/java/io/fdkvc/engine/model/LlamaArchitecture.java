package io.fdkvc.engine.model;

/**
 * GGUF {@code llama}: Llama 1/2/3.x and the models converted to its layout (SmolLM2, TinyLlama,
 * Mistral 7B, llama2.c checkpoints). RoPE on interleaved pairs; q/k/v biases only where a
 * converter wrote them (all three or none); no q/k norm.
 */
public record LlamaArchitecture() implements Architecture {
    @Override public String name() { return "llama"; }
    @Override public boolean ropeNeox() { return false; }
    @Override public Biases qkvBiases() { return Biases.OPTIONAL; }
    @Override public boolean qkNorm() { return false; }
}
