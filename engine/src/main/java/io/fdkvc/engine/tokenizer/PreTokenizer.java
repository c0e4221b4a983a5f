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
    /**
     * Qwen3.5: Qwen2's pattern with combining marks ({@code \p{M}}) counted as part of a word,
     * so a letter keeps its accents and scripts such as Khmer stay whole. No NFC normalisation.
     */
    QWEN35(Regex.QWEN35),
    /**
     * StarCoder, SmolLM (and llama.cpp's refact, command-r, codeshell, exaone, minerva): every
     * digit on its own first, then GPT-2's pattern (HF: Digits(individual) + ByteLevel).
     */
    STARCODER("\\p{N}", Regex.GPT2),
    /**
     * DeepSeek LLM: newlines alone; runs of (Latin, Greek, Cyrillic, ... as listed) letters, then of
     * ASCII and full-width punctuation, each with an optional leading space; trailing whitespace;
     * CJK runs; digit runs. Unlike GPT-2, a space before a digit stays a piece of its own.
     */
    DEEPSEEK_LLM("[\\r\\n]", "\\s?[" + Regex.DEEPSEEK_LETTERS + "]+", "\\s?[!-/:-~\\uFF01-\\uFF0F\\uFF1A-\\uFF5E\\u2018-\\u201F\\u3001\\u3002]+", "\\s+$",
            Regex.CJK, "\\p{N}+"),
    /** DeepSeek Coder: newlines alone, letter runs and punctuation runs with an optional leading space, CJK runs, single digits. */
    DEEPSEEK_CODER("[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", Regex.CJK, "\\p{N}"),
    /** Falcon: punctuation and ASCII symbol runs first, then GPT-2's pattern, then ASCII digits in threes. */
    FALCON("[\\p{P}\\$\\+<=>\\^~\\|`]+", Regex.GPT2, "[0-9][0-9][0-9]");

    /**
     * The stages as llama.cpp writes them ({@code llama-vocab.cpp}), in Java's syntax. Where
     * llama.cpp matches a stage without Unicode classes on the raw text it first turns every
     * non-ASCII whitespace character into U+000B, so explicit ranges never match such a
     * character: the ranges below that span one are intersected with {@code \S}.
     */
    private static final class Regex {
        static final String GPT2 =
                "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
        static final String CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
        static final String LLAMA3 = CONTRACTIONS
                + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
        static final String QWEN2 = CONTRACTIONS
                + "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
        static final String QWEN35 = CONTRACTIONS
                + "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
        /** DeepSeek LLM's letters: the cased scripts its tokenizer lists (Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, ...). */
        static final String DEEPSEEK_LETTERS = "A-Za-z\\u00B5\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u01BA\\u01BC-\\u01BF\\u01C4-\\u0293\\u0295-\\u02AF\\u0370-\\u0373\\u0376\\u0377\\u037B-\\u037D\\u037F\\u0386\\u0388-\\u038A\\u038C\\u038E-\\u03A1\\u03A3-\\u03F5\\u03F7-\\u0481\\u048A-\\u052F\\u0531-\\u0556\\u10A0-\\u10C5\\u13A0-\\u13F5\\u13F8-\\u13FD\\u1C90-\\u1CBA\\u1CBD-\\u1CBF\\u1D00-\\u1D2B\\u1D6B-\\u1D77\\u1D79-\\u1D9A\\u1E00-\\u1F15\\u1F18-\\u1F1D\\u1F20-\\u1F45\\u1F48-\\u1F4D\\u1F50-\\u1F57\\u1F59\\u1F5B\\u1F5D\\u1F5F-\\u1F7D\\u1F80-\\u1FB4\\u1FB6-\\u1FBC\\u1FBE\\u1FC2-\\u1FC4\\u1FC6-\\u1FCC\\u1FD0-\\u1FD3\\u1FD6-\\u1FDB\\u1FE0-\\u1FEC\\u1FF2-\\u1FF4\\u1FF6-\\u1FFC\\u2102\\u2107\\u210A-\\u2113\\u2115\\u2119-\\u211D\\u2124\\u2126\\u2128\\u212A-\\u212D\\u212F-\\u2134\\u2139\\u213C-\\u213F\\u2145-\\u2149\\u214E\\u2183\\u2184\\u2C00-\\u2C7B\\u2C7E-\\u2CE4\\u2CEB-\\u2CEE\\u2CF2\\u2CF3\\uA640-\\uA66D\\uA680-\\uA69B\\uA722-\\uA76F\\uA771-\\uA787\\uA78B-\\uA78E\\uAB70-\\uABBF\\uFB00-\\uFB06\\uFB13-\\uFB17\\uFF21-\\uFF3A\\uFF41-\\uFF5A\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}";
        /** DeepSeek's CJK runs: CJK ideographs, U+0800 to U+4E00 (most of the BMP's scripts), Hangul. */
        static final String CJK = "[[\\u4E00-\\u9FA5\\u0800-\\u4E00\\uAC00-\\uD7FF]&&\\S]+";
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
     * The pre-tokenizer for a GGUF {@code tokenizer.ggml.pre} name, as llama.cpp maps the names:
     * "llama3", "llama-v3", "llama-bpe" → {@link #LLAMA3}; "qwen2", "deepseek-r1-qwen" →
     * {@link #QWEN2}; "qwen35" → {@link #QWEN35}; "starcoder", "smollm", "refact", "command-r",
     * "codeshell", "exaone", "minerva" → {@link #STARCODER}; "deepseek-llm", "deepseek-coder",
     * "falcon" → theirs; null, "default", "gpt2", "gpt-2" → {@link #GPT2}.
     *
     * <p>Unknown names fall back to {@link #GPT2} rather than failing: the other byte-level patterns
     * all descend from it and split words, spaces and punctuation the same way, differing in digit
     * grouping, contractions and newlines. A model with an unknown pre-tokenizer therefore still
     * round-trips every text and mostly tokenizes as trained; {@link #isKnown} lets a caller warn.
     */
    public static PreTokenizer forName(String pre) {
        PreTokenizer known = known(pre);
        return known == null ? GPT2 : known;
    }

    /** Whether {@link #forName} knows the name (rather than falling back to GPT-2). */
    public static boolean isKnown(String pre) {
        return known(pre) != null;
    }

    private static PreTokenizer known(String pre) {
        if (pre == null) {
            return GPT2;
        }
        return switch (pre.toLowerCase(Locale.ROOT)) {
            case "default", "gpt2", "gpt-2" -> GPT2;
            case "llama3", "llama-v3", "llama-bpe" -> LLAMA3;
            case "qwen2", "deepseek-r1-qwen" -> QWEN2;
            case "qwen35" -> QWEN35;
            case "starcoder", "smollm", "refact", "command-r", "codeshell", "exaone", "minerva" -> STARCODER;
            case "deepseek-llm" -> DEEPSEEK_LLM;
            case "deepseek-coder" -> DEEPSEEK_CODER;
            case "falcon" -> FALCON;
            default -> null;
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
