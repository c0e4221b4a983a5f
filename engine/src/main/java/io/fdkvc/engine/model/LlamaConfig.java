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
 * @param blocks         what the layers are made of (norm placement, activation, per-layer window
 *                       and RoPE); the RoPE fields above are those of the global layers as the file
 *                       declares them
 */
public record LlamaConfig(String architecture, int dim, int hiddenDim, int layers, int heads, int kvHeads,
                          int headDim, int vocabSize, int contextLength, float normEps, float ropeTheta,
                          String ropeScaling, float ropeScaleFactor, int ropeOrigContext, boolean ropeNeox,
                          boolean tiedEmbeddings, Blocks blocks) {

    public LlamaConfig {
        java.util.Objects.requireNonNull(blocks, "blocks");
        if (blocks.layers().size() != layers)
            throw new IllegalArgumentException("blocks describe " + blocks.layers().size() + " layers, the model has " + layers);
    }

    /** A model of the plain Llama block (pre-norm, SwiGLU, global attention) with the given RoPE on every layer. */
    public LlamaConfig(String architecture, int dim, int hiddenDim, int layers, int heads, int kvHeads,
                       int headDim, int vocabSize, int contextLength, float normEps, float ropeTheta,
                       String ropeScaling, float ropeScaleFactor, int ropeOrigContext, boolean ropeNeox,
                       boolean tiedEmbeddings) {
        this(architecture, dim, hiddenDim, layers, heads, kvHeads, headDim, vocabSize, contextLength, normEps, ropeTheta,
                ropeScaling, ropeScaleFactor, ropeOrigContext, ropeNeox, tiedEmbeddings,
                Blocks.plain(layers, headDim, Rope.of(ropeTheta, headDim, ropeScaling, ropeScaleFactor, ropeOrigContext)));
    }

    /** This config for a run at a context of {@code context} tokens: each layer's RoPE {@link Rope#forContext for that context}. */
    public LlamaConfig forContext(int context) {
        java.util.List<Blocks.LayerAttention> plan = new java.util.ArrayList<>(layers);
        for (Blocks.LayerAttention a : blocks.layers())
            plan.add(new Blocks.LayerAttention(a.window(), a.rope() == null ? null : a.rope().forContext(context)));
        return withBlocks(blocks.withLayers(plan));
    }

    /**
     * Which LongRoPE factors a run at a context of {@code context} tokens uses, as one line for
     * the user ("LongRoPE: the long factors (context 131072 > the original 4096)"), or null when
     * the model has no long factors to choose. The choice is {@link #forContext}'s: llama.cpp's,
     * long factors when the context exceeds the original one. Asked of the file's config.
     */
    public String longRopeChoice(int context) {
        for (Blocks.LayerAttention a : blocks.layers()) {
            Rope r = a.rope();
            if (r == null || r.longFactors() == null) continue;
            boolean isLong = r.forContext(context) != r;
            return "LongRoPE: the " + (isLong ? "long" : "short") + " factors (context " + context
                    + (isLong ? " > " : " <= ") + "the original " + r.originalContext() + ")";
        }
        return null;
    }

    /**
     * The record's usual text, with {@code blocks} only where they are not the plain block the
     * other fields imply: so the text of a llama, qwen2 or qwen3 config (which stored sessions'
     * model fingerprints hash) is what it was before configs carried blocks.
     */
    @Override
    public String toString() {
        String plain = "LlamaConfig[architecture=" + architecture + ", dim=" + dim + ", hiddenDim=" + hiddenDim + ", layers="
                + layers + ", heads=" + heads + ", kvHeads=" + kvHeads + ", headDim=" + headDim + ", vocabSize=" + vocabSize
                + ", contextLength=" + contextLength + ", normEps=" + normEps + ", ropeTheta=" + ropeTheta + ", ropeScaling="
                + ropeScaling + ", ropeScaleFactor=" + ropeScaleFactor + ", ropeOrigContext=" + ropeOrigContext + ", ropeNeox="
                + ropeNeox + ", tiedEmbeddings=" + tiedEmbeddings;
        boolean isPlain = layers > 0 && headDim >= 2 && headDim % 2 == 0
                && blocks.equals(Blocks.plain(layers, headDim, Rope.of(ropeTheta, headDim, ropeScaling, ropeScaleFactor, ropeOrigContext)));
        return plain + (isPlain ? "" : ", blocks=" + blocks) + "]";
    }

    /** This config with other blocks. */
    public LlamaConfig withBlocks(Blocks b) {
        return new LlamaConfig(architecture, dim, hiddenDim, layers, heads, kvHeads, headDim, vocabSize, contextLength,
                normEps, ropeTheta, ropeScaling, ropeScaleFactor, ropeOrigContext, ropeNeox, tiedEmbeddings, b);
    }
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
