package io.fdkvc.engine.model;

/**
 * GGUF {@code mistral3}: Ministral 3 (3B, 8B, 14B) text models. The Llama block with
 * interleaved-pair RoPE, YaRN-scaled ({@code mistral3.rope.scaling.type = yarn}, its factor,
 * original context, beta fast/slow and log multiplier, read by the loader for every architecture),
 * and an attention temperature: with {@code mistral3.attention.temperature_scale} = beta, each
 * query at position p is multiplied by 1 + beta * ln(floor(p / original context) + 1).
 */
public record Mistral3Architecture() implements Architecture {
    @Override public String name() { return "mistral3"; }
    @Override public boolean ropeNeox() { return false; }
    @Override public Biases qkvBiases() { return Biases.NONE; }
    @Override public boolean qkNorm() { return false; }

    @Override
    public Blocks blocks(ModelMetadata m, int layers, int dim, int heads, int headDim, Rope global) {
        Blocks plain = Blocks.plain(layers, headDim, global);
        float beta = (float) m.number("attention.temperature_scale", 0);
        if (beta == 0) return plain;
        if (!(beta > 0 && Float.isFinite(beta))) throw m.fail("mistral3.attention.temperature_scale = " + beta + " is not a positive number");
        int length = m.positiveInt("rope.scaling.original_context_length", m.positiveInt("context_length", -1));
        return plain.withTemperature(new Blocks.AttentionTemperature(beta, length));
    }
}
