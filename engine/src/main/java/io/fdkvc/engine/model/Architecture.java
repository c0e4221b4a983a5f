package io.fdkvc.engine.model;

import io.fdkvc.engine.ModelFormatException;
import java.util.List;

/**
 * What distinguishes one decoder-only transformer architecture from another, in one small file
 * per architecture: its GGUF name (the value of {@code general.architecture}, which is also the
 * prefix of its hyper-parameter keys), the layout of its rotary embedding, its projections'
 * biases and tensors, whether q and k are RMS-normalised per head, and the {@link Blocks} its
 * layers are made of, read from the file's metadata as llama.cpp reads them (norm placement,
 * activation, embedding and query scales, per layer a sliding window or global attention and a
 * RoPE or none). The loader reads tensors and keys through this description and the forward pass
 * composes the blocks; supporting another architecture of the family means adding a file here
 * and to {@link #ALL}.
 *
 * <p>What they share: RMSNorm, grouped-query attention, a gated feed-forward, a tied or separate
 * classifier, and the standard GGUF tensor names ({@code blk.N.attn_q.weight}, or the fused
 * {@code blk.N.attn_qkv.weight}, which the loader accepts for every architecture as llama.cpp does).
 */
public sealed interface Architecture permits LlamaArchitecture, Qwen2Architecture, Qwen3Architecture,
        Gemma3Architecture, Phi3Architecture, Mistral3Architecture, SmolLM3Architecture {

    /** Every architecture the engine runs. */
    List<Architecture> ALL = List.of(new LlamaArchitecture(), new Qwen2Architecture(), new Qwen3Architecture(),
            new Gemma3Architecture(), new Phi3Architecture(), new Mistral3Architecture(), new SmolLM3Architecture());

    /** Biases of the q, k and v projections. */
    enum Biases {
        /** never present */
        NONE,
        /** all three present or none, as the file has them */
        OPTIONAL,
        /** always present: the file must have them */
        REQUIRED
    }

    /** The GGUF {@code general.architecture} value, and the prefix of the architecture's metadata keys. */
    String name();

    /**
     * RoPE layout: true for NEOX (coordinate j of a head paired with j + headDim/2), false for
     * llama's interleaved pairs (2j, 2j+1).
     */
    boolean ropeNeox();

    /** The q/k/v projection biases. */
    Biases qkvBiases();

    /**
     * Whether each head of q and of k is RMS-normalised (weights of headDim, shared by the heads,
     * the model's RMSNorm epsilon) after the projection and before RoPE (Qwen3, OLMo 2, Gemma 3).
     */
    boolean qkNorm();

    /** Whether {@code blk.N.ffn_up.weight} holds the gate rows and then the up rows, with no {@code ffn_gate} (phi3). */
    default boolean fusedGateUp() {
        return false;
    }

    /** Whether RoPE may rotate fewer coordinates than a head has ({@code rope.dimension_count}, Phi-4-mini). */
    default boolean partialRotary() {
        return false;
    }

    /**
     * The blocks of a file of this architecture, from its metadata: by default the plain Llama
     * block on every layer, global attention with {@code global}, the RoPE the common keys give
     * (base, rotated dimensions, scaling, LongRoPE factors).
     */
    default Blocks blocks(ModelMetadata m, int layers, int dim, int heads, int headDim, Rope global) {
        return Blocks.plain(layers, headDim, global);
    }

    /** The metadata key {@code name() + "." + suffix}, e.g. {@code llama.context_length}. */
    default String key(String suffix) {
        return name() + "." + suffix;
    }

    /** A layer's tensor name, e.g. {@code blk.3.attn_q.weight} for (3, "attn_q.weight"). */
    static String layerTensor(int layer, String suffix) {
        return "blk." + layer + "." + suffix;
    }

    /** The architecture named {@code name}; a {@link ModelFormatException} naming it and the supported ones otherwise. */
    static Architecture forName(String name) {
        for (Architecture a : ALL) if (a.name().equals(name)) return a;
        StringBuilder known = new StringBuilder();
        for (Architecture a : ALL) known.append(known.isEmpty() ? "" : ", ").append(a.name());
        throw new ModelFormatException("unsupported architecture '" + name + "' (this engine reads " + known + ")");
    }
}
