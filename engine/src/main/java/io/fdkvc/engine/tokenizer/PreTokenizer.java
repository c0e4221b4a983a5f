package io.fdkvc.engine.tokenizer;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How byte-level BPE splits text into words before merging (GGUF {@code tokenizer.ggml.pre}).
 * Each kind is a list of regex stages: a stage splits every current piece into its matches and
 * the unmatched stretches between them (kept as pieces of their own, so no text is ever lost);
 * the next stage splits those pieces further. Regexes run with Java's Unicode character classes
 * ({@code \s} is Unicode White_Space, {@code \p{L}} letters, {@code \p{N}} numbers), and a
 * lookahead stops at the end of its piece, as in llama.cpp.
 */
public enum PreTokenizer {
    /** GPT-2: contractions, letters, numbers and other symbols each with an optional leading space, whitespace. */
    GPT2(Regex.GPT2),
    /**
     * Llama 3: contractions in either case, letters with an optional leading non-letter/non-digit,
     * digits in groups of 1 to 3, symbol runs with trailing newlines, newline runs, whitespace.
     * Llama 3 also looks a whole word up before merging (HF {@code ignore_merges}).
     */
    LLAMA3(Regex.LLAMA3),
    /**
     * Qwen2 (Qwen2, 2.5, 3): Llama 3's pattern with single digits. Qwen's tokenizer normalises
     * text to Unicode NFC before splitting it (HF {@code normalizer: NFC}).
     */
    QWEN2(Regex.QWEN2),
    /** SmolLM: every digit on its own first, then GPT-2's pattern (HF: Digits(individual) + ByteLevel). */
    SMOLLM("\\p{N}", Regex.GPT2);

    private static final class Regex {
        static final String GPT2 =
                "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
        static final String CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
        static final String LLAMA3 = CONTRACTIONS
                + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
        static final String QWEN2 = CONTRACTIONS
                + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    }

    private final Pattern[] stages;

    PreTokenizer(String... regexes) {
        stages = new Pattern[regexes.length];
        for (int i = 0; i < regexes.length; i++) {
            stages[i] = Pattern.compile(regexes[i], Pattern.UNICODE_CHARACTER_CLASS);
        }
    }

    /** Whether the model's tokenizer normalises text to Unicode NFC before this split (Qwen2's does). */
    public boolean nfc() {
        return this == QWEN2;
    }

    /**
     * The pre-tokenizer for a GGUF {@code tokenizer.ggml.pre} name: "llama3", "llama-v3",
     * "llama-bpe" → {@link #LLAMA3}; "qwen2", "deepseek-r1-qwen" → {@link #QWEN2}; "smollm" →
     * {@link #SMOLLM}; null, "default", "gpt2", "gpt-2" → {@link #GPT2}.
     *
     * <p>Unknown names fall back to {@link #GPT2} rather than failing: the other byte-level patterns
     * all descend from it and split words, spaces and punctuation the same way, differing in digit
     * grouping, contractions and newlines. A model with an unknown pre-tokenizer therefore still
     * round-trips every text and mostly tokenizes as trained; {@link #isKnown} lets a caller warn.
     */
    public static PreTokenizer forName(String pre) {
        if (pre == null) {
            return GPT2;
        }
        return switch (pre.toLowerCase(Locale.ROOT)) {
            case "llama3", "llama-v3", "llama-bpe" -> LLAMA3;
            case "qwen2", "deepseek-r1-qwen" -> QWEN2;
            case "smollm" -> SMOLLM;
            default -> GPT2;
        };
    }

    /** Whether {@link #forName} knows the name (rather than falling back to GPT-2). */
    public static boolean isKnown(String pre) {
        if (pre == null) {
            return true;
        }
        return switch (pre.toLowerCase(Locale.ROOT)) {
            case "llama3", "llama-v3", "llama-bpe", "qwen2", "deepseek-r1-qwen", "smollm", "default", "gpt2", "gpt-2" -> true;
            default -> false;
        };
    }

    /** The words of {@code text}, in order; their concatenation is {@code text}. */
    public List<String> split(String text) {
        IntBuffer bounds = new IntBuffer(16);
        split(text, 0, text.length(), bounds, new IntBuffer(16));
        List<String> words = new ArrayList<>(bounds.size() / 2);
        for (int i = 0; i < bounds.size(); i += 2) {
            words.add(text.substring(bounds.get(i), bounds.get(i + 1)));
        }
        return words;
    }

    /** Splits {@code text[from, to)} into words, written to {@code out} as start, end pairs. */
    void split(String text, int from, int to, IntBuffer out, IntBuffer tmp) {
        out.clear();
        if (from >= to) {
            return;
        }
        out.add(from);
        out.add(to);
        for (Pattern stage : stages) {
            tmp.clear();
            Matcher m = stage.matcher(text);
            for (int i = 0; i < out.size(); i += 2) {
                int start = out.get(i);
                int end = out.get(i + 1);
                m.region(start, end);
                int pos = start;
                while (m.find()) {
                    if (m.end() == m.start()) {
                        continue;
                    }
                    if (m.start() > pos) {
                        tmp.add(pos);
                        tmp.add(m.start());
                    }
                    tmp.add(m.start());
                    tmp.add(m.end());
                    pos = m.end();
                }
                if (pos < end) {
                    tmp.add(pos);
                    tmp.add(end);
                }
            }
            out.clear();
            for (int i = 0; i < tmp.size(); i++) {
                out.add(tmp.get(i));
            }
        }
    }
}
