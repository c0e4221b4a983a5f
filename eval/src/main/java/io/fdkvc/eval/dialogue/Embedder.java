package io.fdkvc.eval.dialogue;

import java.util.List;

/**
 * Turns utterances into sentence embeddings and budget costs. The real one is
 * {@link MiniLmEmbedder}; tests use deterministic fakes so they need no ONNX model.
 */
public interface Embedder extends AutoCloseable {

    /** Identifies the model in the embedding cache: a different model never reads another's vectors. */
    String modelName();

    /** Length of every embedding. */
    int dimension();

    /** One unit-norm embedding per text, in order. Texts are never blank. */
    float[][] embed(List<String> texts);

    /** What an utterance costs against a token budget: its token count, at least 1 for a non-blank text. */
    int tokenCount(String text);

    @Override
    default void close() {}
}
