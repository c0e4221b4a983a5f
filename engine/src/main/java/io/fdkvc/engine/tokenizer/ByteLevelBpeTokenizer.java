package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;

import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.Arrays;

/**
 * Byte-level BPE as in GPT-2, Llama 3, Qwen2 and SmolLM (GGUF model "gpt2"). Text is split into
 * words by the vocabulary's {@link PreTokenizer}; each word's UTF-8 bytes become the tokens of
 * their GPT-2 byte characters (printable Latin-1 bytes stand for themselves, the other 68 bytes
 * for U+0100 onwards: space is "Ġ", newline "Ċ"); then merges apply by rank, lowest first,
 * leftmost on ties, as long as any adjacent pair has one. With {@link PreTokenizer#LLAMA3} a word
 * that is itself a token is taken whole first (Llama 3's {@code ignore_merges}).
 *
 * <p>Merges ("a b", in priority order) whose parts or result are not tokens can never apply and
 * are skipped; a repeated pair keeps its first rank. Decoding maps the byte characters back to
 * bytes; user-defined tokens are their raw text; control, unknown and unused tokens nothing (as
 * llama.cpp's {@code llama_token_to_piece} without {@code special}).
 *
 * <p>Where the pre-tokenizer says so ({@link PreTokenizer#nfc()}: Qwen2), text is normalised to
 * Unicode NFC first, as Hugging Face's tokenizer does; special-token strings are split out before
 * that, so only the text between them is normalised.
 */
public final class ByteLevelBpeTokenizer extends BaseTokenizer {
    private static final int[] BYTE_TO_CHAR = new int[256];
    private static final int[] CHAR_TO_BYTE = new int[324];

    static {
        Arrays.fill(CHAR_TO_BYTE, -1);
        int extra = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            BYTE_TO_CHAR[b] = printable ? b : 256 + extra++;
            CHAR_TO_BYTE[BYTE_TO_CHAR[b]] = b;
        }
    }

    private final PreTokenizer preTokenizer;
    private final boolean wholeWordsFirst;
    private final int[] byteIds = new int[256];

    public ByteLevelBpeTokenizer(Vocabulary v) {
        super(v, false);
        if (v.merges() == null) {
            throw new ModelFormatException("byte-level BPE (gpt2) tokenizer has no merges (tokenizer.ggml.merges)");
        }
        preTokenizer = PreTokenizer.forName(v.preTokenizer());
        wholeWordsFirst = preTokenizer == PreTokenizer.LLAMA3;
        for (int b = 0; b < 256; b++) {
            byteIds[b] = tokenId(String.valueOf((char) BYTE_TO_CHAR[b]));
        }
        MergeRules rules = MergeRules.ranked(v.merges(), this::tokenId, "byte-level BPE");
        int n = tokens.length;
        byte[][] tokenBytes = new byte[n][];
        for (int id = 0; id < n; id++) {
            tokenBytes[id] = switch (types[id]) {
                case CONTROL, UNKNOWN, UNUSED -> new byte[0];
                case USER_DEFINED -> tokens[id].getBytes(StandardCharsets.UTF_8);
                default -> unmap(tokens[id]);
            };
        }
        setTables(rules, tokenBytes, new boolean[n]);
    }

    /** The bytes a token's byte characters stand for; a character outside the mapping is its own UTF-8. */
    private static byte[] unmap(String token) {
        byte[] out = new byte[token.length() * 4];
        byte[] buf = new byte[4];
        int n = 0;
        for (int i = 0; i < token.length(); ) {
            int cp = token.codePointAt(i);
            i += Character.charCount(cp);
            if (cp < CHAR_TO_BYTE.length && CHAR_TO_BYTE[cp] >= 0) {
                out[n++] = (byte) CHAR_TO_BYTE[cp];
            } else {
                int len = utf8(cp, buf);
                System.arraycopy(buf, 0, out, n, len);
                n += len;
            }
        }
        return Arrays.copyOf(out, n);
    }

    /** GPT-2's character for a byte ('Ġ' for space). */
    public static char byteChar(int b) {
        return (char) BYTE_TO_CHAR[b & 0xFF];
    }

    public PreTokenizer preTokenizer() {
        return preTokenizer;
    }

    @Override
    void encodeText(String text, int from, int to, boolean prefix, Scratch scratch, IntBuffer out) {
        if (preTokenizer.nfc() && mayChangeUnderNfc(text, from, to)) {
            String piece = text.substring(from, to);
            if (!Normalizer.isNormalized(piece, Normalizer.Form.NFC)) {
                text = Normalizer.normalize(piece, Normalizer.Form.NFC);
                from = 0;
                to = text.length();
            }
        }
        IntBuffer bounds = scratch.bounds;
        preTokenizer.split(text, from, to, bounds, scratch.boundsTmp);
        for (int i = 0; i < bounds.size(); i += 2) {
            encodeWord(text, bounds.get(i), bounds.get(i + 1), scratch, out);
        }
    }

    /**
     * False when NFC certainly leaves {@code text[from, to)} alone: every character below U+0300
     * (the first combining mark) is its own NFC form and composes with nothing that follows, so
     * Latin-1 text, the common case, skips the normaliser.
     */
    private static boolean mayChangeUnderNfc(String text, int from, int to) {
        for (int i = from; i < to; i++) {
            if (text.charAt(i) >= '\u0300') {
                return true;
            }
        }
        return false;
    }

    private void encodeWord(String text, int from, int to, Scratch scratch, IntBuffer out) {
        byte[] buf = scratch.utf8;
        if (wholeWordsFirst) {
            StringBuilder chars = scratch.chars;
            chars.setLength(0);
            for (int i = from; i < to; ) {
                int cp = text.codePointAt(i);
                i += Character.charCount(cp);
                int len = utf8(cp, buf);
                for (int j = 0; j < len; j++) {
                    chars.append((char) BYTE_TO_CHAR[buf[j] & 0xFF]);
                }
            }
            // One string per word (not per token) for the map lookup; encoding is not the per-token hot path.
            int id = tokenId(chars.toString());
            if (id >= 0 && !special[id]) {
                out.add(id);
                return;
            }
        }
        SymbolMerger merger = scratch.merger;
        merger.reset();
        for (int i = from; i < to; ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            int len = utf8(cp, buf);
            for (int j = 0; j < len; j++) {
                int b = buf[j] & 0xFF;
                int id = byteIds[b];
                if (id < 0) {
                    throw new ModelFormatException(String.format(
                            "byte-level BPE vocabulary has no token for byte 0x%02X ('%c')", b, (char) BYTE_TO_CHAR[b]));
                }
                merger.add(id);
            }
        }
        merger.mergeInto(out);
    }
}
