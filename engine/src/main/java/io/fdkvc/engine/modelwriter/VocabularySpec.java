package io.fdkvc.engine.modelwriter;

import java.util.Locale;
import java.util.Objects;

/**
 * The {@code tokenizer.ggml.*} metadata of a model file. Null arrays and template, and ids below
 * zero, are not written.
 */
public record VocabularySpec(String model, String pre, String[] tokens, float[] scores, int[] types, String[] merges,
                             int bos, int eos, String chatTemplate) {
    public VocabularySpec {
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(tokens, "tokens");
        if (scores != null && scores.length != tokens.length) throw new IllegalArgumentException("one score per token");
        if (types != null && types.length != tokens.length) throw new IllegalArgumentException("one type per token");
        if (bos >= tokens.length || eos >= tokens.length) throw new IllegalArgumentException("bos/eos beyond the vocabulary");
    }

    public int size() {
        return tokens.length;
    }

    /**
     * A SentencePiece vocabulary of {@code size} placeholders, for models that are measured, not
     * read: {@code <unk>}, {@code <s>}, {@code </s>}, the 256 byte tokens (so that any text has a
     * tokenisation, as llama.cpp requires: it looks up the newline's byte token), then one token per
     * code point from the CJK ideographs on. A token is a single code point that no other token's
     * text contains, so every engine detokenises a reply and tokenises it back into the same ids,
     * which a server's prefix cache depends on when a client resends the history.
     */
    public static VocabularySpec sentencePiecePlaceholders(int size) {
        if (size < 3 + 256) throw new IllegalArgumentException("a SentencePiece placeholder vocabulary needs at least 259 tokens, not " + size);
        String[] tokens = new String[size];
        float[] scores = new float[size];
        int[] types = new int[size];
        int codePoint = FIRST_PLACEHOLDER;
        for (int i = 0; i < size; i++) {
            if (i < 3) {
                tokens[i] = i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>";
                types[i] = i == 0 ? 2 : 3;
            } else if (i < 3 + 256) {
                tokens[i] = String.format(Locale.ROOT, "<0x%02X>", i - 3);
                types[i] = 6;
            } else {
                codePoint = nextPlaceholder(codePoint);
                tokens[i] = Character.toString(codePoint++);
                types[i] = 1;
            }
            scores[i] = -i;
        }
        return new VocabularySpec("llama", null, tokens, scores, types, null, 1, 2, null);
    }

    private static final int FIRST_PLACEHOLDER = 0x4E00;

    /**
     * {@code cp}, or the next code point after it that UTF-8 can carry in text: no surrogate, no
     * noncharacter. Unassigned code points are kept, so that the file does not depend on the JDK's
     * Unicode version.
     */
    static int nextPlaceholder(int cp) {
        while (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE || cp >= 0xFDD0 && cp <= 0xFDEF || (cp & 0xFFFE) == 0xFFFE) {
            cp++;
        }
        return cp;
    }
}
