package io.fdkvc.engine.model;

/**
 * Hyper-parameters of a Llama-family model, read from GGUF metadata or a llama2.c header.
 *
 * @param architecture   the GGUF architecture name ({@link Architecture#name()}: llama, qwen2, qwen3)
 * @param headDim        dim / heads unless the file says otherwise
 * @param contextLength  the context the model was trained for (positions beyond it are warned about)
 * @param ropeTheta      RoPE base frequency
 * @param ropeScaling    "none", "linear" or "llama3" (Llama 3.1 style frequency scaling)
 * @param ropeScaleFactor the scaling factor (1 for none)
 * @param ropeOrigContext original context for llama3 scaling (0 when unused)
 * @param ropeNeox       true for the NEOX layout (rotate halves: qwen2, qwen3), false for interleaved pairs (llama)
 * @param tiedEmbeddings output projection shares the token embedding
 */
public record LlamaConfig(String architecture, int dim, int hiddenDim, int layers, int heads, int kvHeads,
                          int headDim, int vocabSize, int contextLength, float normEps, float ropeTheta,
                          String ropeScaling, float ropeScaleFactor, int ropeOrigContext, boolean ropeNeox,
                          boolean tiedEmbeddings) {
    public int kvDim() {
        return kvHeads * headDim;
    }

    public int queriesPerKvHead() {
        return heads / kvHeads;
    }

    /** The architecture's description; a {@link io.fdkvc.engine.ModelFormatException} for an unknown name. */
    public Architecture arch() {
        return Architecture.forName(architecture);
    }
}
