package io.fdkvc.engine.tokenizer;

import java.util.Locale;

/**
 * A tokenizer's data as a model file stores it (GGUF {@code tokenizer.ggml.*} or llama2.c's
 * tokenizer file), independent of the file format.
 *
 * @param model      "llama" (SentencePiece-style scores, byte fallback) or "gpt2" (byte-level BPE)
 * @param preTokenizer GGUF {@code tokenizer.ggml.pre} ("llama-bpe", "qwen2", "smollm", "default", ...), or null
 * @param tokens     token strings by id
 * @param scores     SentencePiece scores by id (null for gpt2)
 * @param tokenTypes GGUF token types by id (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte), or null
 * @param merges     BPE merges "a b" in priority order (null for llama)
 * @param bos        beginning-of-sequence id, or -1
 * @param eos        end-of-sequence id, or -1
 * @param chatTemplate the Jinja chat template from the metadata, or null
 * @param addBos     whether a sequence starts with BOS ({@code tokenizer.ggml.add_bos_token}; see {@link #defaultAddBos})
 * @param addSpacePrefix whether SentencePiece puts its dummy-prefix space in front of a text
 *                   ({@code tokenizer.ggml.add_space_prefix}, default true; byte-level BPE ignores it)
 */
public record Vocabulary(String model, String preTokenizer, String[] tokens, float[] scores, int[] tokenTypes,
                         String[] merges, int bos, int eos, String chatTemplate, boolean addBos,
                         boolean addSpacePrefix) {

    /** A vocabulary with llama.cpp's defaults for add_bos and add_space_prefix (a file that stores neither). */
    public Vocabulary(String model, String preTokenizer, String[] tokens, float[] scores, int[] tokenTypes,
                      String[] merges, int bos, int eos, String chatTemplate) {
        this(model, preTokenizer, tokens, scores, tokenTypes, merges, bos, eos, chatTemplate,
                defaultAddBos(model, preTokenizer), true);
    }

    /**
     * llama.cpp's default when the file does not say: SentencePiece adds BOS; byte-level BPE adds it
     * only for the Llama 3 family of pre-tokenizers (and a few others llama.cpp lists), not for
     * GPT-2, Qwen2 or SmolLM.
     */
    public static boolean defaultAddBos(String model, String preTokenizer) {
        if (!"gpt2".equals(model)) {
            return true;
        }
        String pre = preTokenizer == null ? "" : preTokenizer.toLowerCase(Locale.ROOT);
        return switch (pre) {
            case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                 "tekken", "chameleon" -> true;
            default -> false;
        };
    }

    /** This vocabulary with the given flags (null: keep the current value). */
    public Vocabulary withFlags(Boolean addBos, Boolean addSpacePrefix) {
        return new Vocabulary(model, preTokenizer, tokens, scores, tokenTypes, merges, bos, eos, chatTemplate,
                addBos == null ? this.addBos : addBos, addSpacePrefix == null ? this.addSpacePrefix : addSpacePrefix);
    }

    /** This vocabulary with another chat template (null: none). */
    public Vocabulary withChatTemplate(String template) {
        return new Vocabulary(model, preTokenizer, tokens, scores, tokenTypes, merges, bos, eos, template, addBos,
                addSpacePrefix);
    }
}
