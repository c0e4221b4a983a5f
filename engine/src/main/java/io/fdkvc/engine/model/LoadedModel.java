package io.fdkvc.engine.model;

import io.fdkvc.engine.tokenizer.Vocabulary;

/**
 * A model read from a file: its config, its weights, its tokenizer data, and what keeps the
 * weights alive (a memory mapping's arena; null when the weights are plain arrays). Closing it
 * releases the mapping, after which the weights must not be used.
 */
public record LoadedModel(LlamaConfig config, LlamaWeights weights, Vocabulary vocabulary, AutoCloseable resource)
        implements AutoCloseable {
    @Override
    public void close() {
        if (resource == null) return;
        try {
            resource.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("closing the model: " + e.getMessage(), e);
        }
    }
}
