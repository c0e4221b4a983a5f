package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.gguf.GgufFile;
import io.fdkvc.engine.gguf.WeightMemory;

import java.nio.file.Path;

/**
 * The tokenizer of a GGUF file ({@code tokenizer.ggml.*}, {@code tokenizer.chat_template}) without
 * its weights: what {@code fdkvc tokenize} needs, and what a tokenizer-only GGUF holds.
 */
public final class GgufVocabulary {
    static final String ADD_BOS = "tokenizer.ggml.add_bos_token";
    static final String ADD_SPACE_PREFIX = "tokenizer.ggml.add_space_prefix";

    private GgufVocabulary() {}

    /** Opens {@code path} (mapped: only its metadata is read), reads its tokenizer and closes it again. */
    public static Vocabulary load(Path path) {
        try (GgufFile f = GgufFile.open(path, WeightMemory.MAPPED)) {
            return read(f);
        }
    }

    /** The tokenizer metadata of an open file; every problem names the file and the key. */
    public static Vocabulary read(GgufFile f) {
        String model = f.get("tokenizer.ggml.model", String.class);
        if (model == null) throw fail(f, "missing metadata 'tokenizer.ggml.model'");
        String pre = f.get("tokenizer.ggml.pre", String.class);
        String[] tokens = f.get("tokenizer.ggml.tokens", String[].class);
        if (tokens == null) throw fail(f, "missing metadata 'tokenizer.ggml.tokens'");
        int n = tokens.length;
        float[] scores = f.get("tokenizer.ggml.scores", float[].class);
        if (scores != null && scores.length != n)
            throw fail(f, "tokenizer.ggml.scores has " + scores.length + " values for " + n + " tokens");
        int[] types = f.get("tokenizer.ggml.token_type", int[].class);
        if (types != null && types.length != n)
            throw fail(f, "tokenizer.ggml.token_type has " + types.length + " values for " + n + " tokens");
        String[] merges = f.get("tokenizer.ggml.merges", String[].class);
        int bos = tokenId(f, "tokenizer.ggml.bos_token_id", n);
        int eos = tokenId(f, "tokenizer.ggml.eos_token_id", n);
        String template = f.get("tokenizer.chat_template", String.class);
        return withFlags(new Vocabulary(model, pre, tokens, scores, types, merges, bos, eos, template), f);
    }

    /**
     * {@code v} with the flags {@code f} stores: {@code tokenizer.ggml.add_bos_token} and
     * {@code tokenizer.ggml.add_space_prefix}; absent keys keep llama.cpp's defaults. For a
     * vocabulary that a model loader read from the same file.
     */
    public static Vocabulary withFlags(Vocabulary v, GgufFile f) {
        return v.withFlags(f.get(ADD_BOS, Boolean.class), f.get(ADD_SPACE_PREFIX, Boolean.class));
    }

    /** A token id, or -1 when absent or stored as uint32/int -1 ("none"). */
    private static int tokenId(GgufFile f, String key, int n) {
        Long v = f.get(key, Long.class);
        if (v == null || v == -1 || v == 0xFFFF_FFFFL) return -1;
        if (v < 0 || v >= n) throw fail(f, "metadata '" + key + "' = " + v + " is not a token id (vocabulary of " + n + ")");
        return (int) (long) v;
    }

    private static ModelFormatException fail(GgufFile f, String problem) {
        return new ModelFormatException("GGUF file " + f.path() + ": " + problem);
    }
}
