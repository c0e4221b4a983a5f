package io.fdkvc.memory;

import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.HuggingFaceTokenCountEstimator;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import java.util.function.ToIntFunction;

/**
 * The memories' defaults, shared by every memory and loaded on first use: the in-process
 * all-MiniLM-L6-v2 (the evaluation's embedding model, ONNX, no network) and its WordPiece
 * tokenizer as the token count (the evaluation's utterance cost).
 */
public final class MiniLm {
    private MiniLm() {}

    private static final class Embeddings {
        static final AllMiniLmL6V2EmbeddingModel MODEL = new AllMiniLmL6V2EmbeddingModel();
    }

    private static final class Tokens {
        static final HuggingFaceTokenCountEstimator ESTIMATOR = new HuggingFaceTokenCountEstimator();
    }

    /** The shared all-MiniLM-L6-v2 model. */
    public static EmbeddingModel embeddingModel() {
        return Embeddings.MODEL;
    }

    /** The shared WordPiece token counter (bert-base-uncased, as all-MiniLM-L6-v2 tokenizes). */
    public static HuggingFaceTokenCountEstimator tokenCountEstimator() {
        return Tokens.ESTIMATOR;
    }

    /** all-MiniLM-L6-v2 as a {@link TextEmbedder}. */
    public static TextEmbedder embedder() {
        return text -> embeddingModel().embed(text).content().vector();
    }

    /** WordPiece tokens of a text (0 for null). */
    public static ToIntFunction<String> tokenCounter() {
        return text -> text == null ? 0 : tokenCountEstimator().estimateTokenCountInText(text);
    }
}
