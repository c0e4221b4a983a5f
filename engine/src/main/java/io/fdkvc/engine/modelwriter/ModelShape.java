package io.fdkvc.engine.modelwriter;

import java.util.Objects;

/**
 * The shape of a model file to write: the architecture's {@link Layout} and the hyper-parameters
 * every architecture has, as llama.cpp reads them ({@code {arch}.embedding_length}, ...).
 *
 * @param dim            embedding length
 * @param hiddenDim      feed-forward length
 * @param headDim        per-head key/value length ({@code attention.key_length} where it is not dim / heads)
 * @param contextLength  the trained context ({@code context_length})
 * @param tiedEmbeddings no {@code output.weight}: the classifier is the token embedding
 */
public record ModelShape(Layout layout, int dim, int hiddenDim, int layers, int heads, int kvHeads, int headDim,
                         int vocabSize, int contextLength, float normEps, float ropeTheta, boolean tiedEmbeddings) {
    public ModelShape {
        Objects.requireNonNull(layout, "layout");
        positive("dim", dim);
        positive("hiddenDim", hiddenDim);
        positive("layers", layers);
        positive("heads", heads);
        positive("kvHeads", kvHeads);
        positive("headDim", headDim);
        positive("vocabSize", vocabSize);
        positive("contextLength", contextLength);
        if (heads % kvHeads != 0) throw new IllegalArgumentException(heads + " heads are not a multiple of " + kvHeads + " KV heads");
        if (!(normEps > 0 && normEps < 1)) throw new IllegalArgumentException("normEps must be in (0, 1), not " + normEps);
        if (!(ropeTheta > 1)) throw new IllegalArgumentException("ropeTheta must be above 1, not " + ropeTheta);
        if (layout instanceof Layout.Phi3 p) {
            if (heads * headDim != dim) throw new IllegalArgumentException("phi3 needs heads x headDim = dim (llama.cpp's attn_output is dim x dim)");
            if (p.ropeDims() > headDim) throw new IllegalArgumentException("phi3 rotates at most headDim dimensions, not " + p.ropeDims());
        }
    }

    private static void positive(String name, int v) {
        if (v < 1) throw new IllegalArgumentException(name + " must be positive, not " + v);
    }

    public String architecture() {
        return layout.name();
    }

    /** Width of the q projection: heads x headDim. */
    public int qDim() {
        return heads * headDim;
    }

    /** Width of the k and v projections: kvHeads x headDim. */
    public int kvDim() {
        return kvHeads * headDim;
    }

    /** The same shape with another layer count (a short model of a real shape). */
    public ModelShape withLayers(int n) {
        return new ModelShape(layout, dim, hiddenDim, n, heads, kvHeads, headDim, vocabSize, contextLength, normEps, ropeTheta, tiedEmbeddings);
    }
}
