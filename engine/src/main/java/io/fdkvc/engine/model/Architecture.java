package io.fdkvc.engine.model;

import io.fdkvc.engine.ModelFormatException;
import java.util.List;

/**
 * What distinguishes one model architecture of the Llama family from another, in one place per
 * architecture (one small file each): its GGUF name (the value of {@code general.architecture},
 * which is also the prefix of its hyper-parameter keys), the layout of its rotary embedding,
 * whether its attention projections carry biases, and whether q and k are RMS-normalised per head.
 * The loader reads tensors and keys through this description, and the forward pass applies the
 * options; supporting another architecture of the family means adding a file here and to
 * {@link #ALL}.
 *
 * <p>Every architecture here shares the Llama block: pre-RMSNorm, grouped-query attention with
 * RoPE, SwiGLU feed-forward, tied or separate classifier, and the standard GGUF tensor names.
 */
public sealed interface Architecture permits LlamaArchitecture, Qwen2Architecture, Qwen3Architecture {

    /** Every architecture the engine runs. */
    List<Architecture> ALL = List.of(new LlamaArchitecture(), new Qwen2Architecture(), new Qwen3Architecture());

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
