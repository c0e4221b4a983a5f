package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;

/** Builds the tokenizer a vocabulary asks for. */
public final class Tokenizers {
    private Tokenizers() {}

    /**
     * "llama" and "gemma4" → {@link SentencePieceTokenizer}, "gpt2" → {@link ByteLevelBpeTokenizer}.
     *
     * @throws ModelFormatException for another or a missing model name, or inconsistent data
     */
    public static Tokenizer from(Vocabulary vocabulary) {
        if (vocabulary == null) {
            throw new ModelFormatException("no tokenizer data");
        }
        String model = vocabulary.model();
        if (model == null) {
            throw new ModelFormatException("tokenizer model is missing (tokenizer.ggml.model); supported: llama, gemma4, gpt2");
        }
        return switch (model) {
            case "llama", "gemma4" -> new SentencePieceTokenizer(vocabulary);
            case "gpt2" -> new ByteLevelBpeTokenizer(vocabulary);
            default -> throw new ModelFormatException("unsupported tokenizer model '" + model
                    + "' (tokenizer.ggml.model); supported: llama (SentencePiece), gemma4 (Gemma 4 BPE), gpt2 (byte-level BPE)");
        };
    }
}
