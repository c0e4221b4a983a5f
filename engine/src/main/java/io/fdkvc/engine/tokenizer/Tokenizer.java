package io.fdkvc.engine.tokenizer;

/**
 * Text to token ids and back for one model's vocabulary. Build one with {@link Tokenizers#from}.
 *
 * <p>Encoding never adds BOS or EOS: callers put {@link #bos()} in front where the model wants it.
 * Implementations are immutable and safe to share between threads; each encode call and each
 * {@link TokenDecoder} keeps its own scratch state.
 */
public interface Tokenizer {

    /** GGUF token types ({@code tokenizer.ggml.token_type}). */
    int NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6;

    /**
     * Encodes plain text; strings that look like special tokens ("&lt;|im_start|&gt;") are ordinary text
     * here. A SentencePiece vocabulary adds its dummy-prefix space in front of non-empty text, as
     * llama2.c's run.c does for a prompt (unless {@link Vocabulary#addSpacePrefix()} is false); a
     * Qwen2 vocabulary normalises the text to Unicode NFC first.
     */
    int[] encode(String text);

    /** {@link #encodeWithSpecials(String, boolean)} for text that starts a new sequence. */
    default int[] encodeWithSpecials(String text) {
        return encodeWithSpecials(text, true);
    }

    /**
     * Encodes text in which the strings of control and user-defined tokens (types 3 and 4, e.g.
     * "&lt;|im_start|&gt;", "&lt;s&gt;") become those single tokens; the longest one wins where several
     * start at the same place. The text between them is encoded as by {@link #encode}, except that
     * a SentencePiece vocabulary adds its dummy-prefix space only to a piece that starts the
     * sequence ({@code startOfText}) or follows a special token, as llama.cpp does. Pass
     * {@code startOfText = false} when the text continues an existing context (a chat's next turn).
     * Byte-level BPE vocabularies ignore the flag.
     */
    int[] encodeWithSpecials(String text, boolean startOfText);

    /**
     * The text of a token sequence: control, unknown and unused tokens (types 3, 2, 5: BOS, EOS,
     * "&lt;|im_end|&gt;", ...) produce no text; byte tokens are raw bytes; the result is decoded as UTF-8 with U+FFFD for malformed or
     * unfinished sequences. Same as feeding the ids to {@link #decoder(boolean) decoder(true)} and
     * flushing it.
     */
    String decode(int[] ids);

    /**
     * A streaming decoder that turns ids into text one at a time and holds back an unfinished UTF-8
     * character until its last byte arrives. {@code startOfText}: the first id starts the text, so
     * a SentencePiece dummy-prefix space on it is dropped (as {@link #decode} does); pass false for a
     * decoder that continues after a prompt whose text was not decoded with it.
     */
    default TokenDecoder decoder(boolean startOfText) {
        return decoder(startOfText, false);
    }

    /**
     * {@link #decoder(boolean)}, where {@code renderSpecial} shows control and unknown tokens as
     * their stored strings ("&lt;|im_end|&gt;", "&lt;s&gt;"), as llama.cpp's
     * {@code llama_token_to_piece(..., special = true)} and {@code llama-cli --special} do.
     */
    TokenDecoder decoder(boolean startOfText, boolean renderSpecial);

    /**
     * Whether a sequence starts with {@link #bos()}: the file's {@code tokenizer.ggml.add_bos_token},
     * or llama.cpp's default for the vocabulary ({@link Vocabulary#defaultAddBos}).
     */
    boolean addBos();

    /** Beginning-of-sequence id, or -1 when the vocabulary has none. */
    int bos();

    /** End-of-sequence id, or -1 when the vocabulary has none. */
    int eos();

    int vocabSize();

    /** The GGUF type of a token (see the constants); derived when the file stores none. */
    int tokenType(int id);

    /** Whether the token is a control token (type 3), which produces no text when decoded. */
    default boolean isControl(int id) {
        return tokenType(id) == CONTROL;
    }

    /** The token's string as the vocabulary stores it ("▁the", "Ġthe", "&lt;0x0A&gt;", "&lt;|im_end|&gt;"). */
    String tokenString(int id);

    /** The id of the token whose stored string is exactly {@code piece}, or -1. */
    int tokenId(String piece);
}
