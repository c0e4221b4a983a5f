package io.fdkvc.engine.model;

import java.util.ArrayList;
import java.util.List;

/**
 * GGUF {@code smollm3}: SmolLM3. The Llama block and tensors (interleaved-pair RoPE, q/k/v biases
 * only where a converter wrote them), except that every fourth layer (3, 7, 11, ...) has no RoPE
 * at all (NoPE): its keys and queries attend by content alone. There is no key for this; llama.cpp
 * fixes the step at 4, as here.
 */
public record SmolLM3Architecture() implements Architecture {
    /** Layer l has no RoPE when (l + 1) % this == 0. */
    static final int NO_ROPE_STEP = 4;

    @Override public String name() { return "smollm3"; }
    @Override public boolean ropeNeox() { return false; }
    @Override public Biases qkvBiases() { return Biases.OPTIONAL; }
    @Override public boolean qkNorm() { return false; }

    @Override
    public Blocks blocks(ModelMetadata m, int layers, int dim, int heads, int headDim, Rope global) {
        List<Blocks.LayerAttention> plan = new ArrayList<>(layers);
        for (int l = 0; l < layers; l++) plan.add(new Blocks.LayerAttention(0, (l + 1) % NO_ROPE_STEP == 0 ? null : global));
        return Blocks.plain(layers, headDim, global).withLayers(plan);
    }
}
