package io.fdkvc.langchain4j;

import dev.langchain4j.model.TokenCountEstimator;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.HuggingFaceTokenCountEstimator;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;

/**
 * The memory's defaults, shared by every memory and loaded on first use: the in-process
 * all-MiniLM-L6-v2 (the evaluation's embedding model) and its WordPiece tokenizer as the token
 * count (the evaluation's utterance cost).
 */
final class DefaultModels {
    private DefaultModels() {}

    private static final class Embeddings {
        static final EmbeddingModel MODEL = new AllMiniLmL6V2EmbeddingModel();
    }

    private static final class Tokens {
        static final TokenCountEstimator ESTIMATOR = new HuggingFaceTokenCountEstimator();
    }

    static EmbeddingModel embeddingModel() {
        return Embeddings.MODEL;
    }

    static TokenCountEstimator tokenCountEstimator() {
        return Tokens.ESTIMATOR;
    }
}
