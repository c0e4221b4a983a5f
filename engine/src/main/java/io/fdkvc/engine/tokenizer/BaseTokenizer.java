package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Pattern;

/** What both tokenizers share: token table and types, special-token splitting, decoding. */
abstract sealed class BaseTokenizer implements Tokenizer permits SentencePieceTokenizer, ByteLevelBpeTokenizer {
    private static final Pattern BYTE_TOKEN = Pattern.compile("<0x[0-9A-Fa-f]{2}>");

    final String[] tokens;
    final int[] types;
    final int bos;
    final int eos;
    /** Token string to the lowest id with that string. */
    final Map<String, Integer> pieceIds;
    final boolean[] special;
    final boolean addBos;
    final boolean addSpacePrefix;
    private final SpecialTokens specials;
    // Set once, by the end of the subclass constructor (setTables), and never changed after.
    private MergeRules rules;
    private byte[][] tokenBytes;
    private boolean[] dummySpace;
    // Racy but benign: two threads may both build the same table.
    private volatile byte[][] withSpecial;

    BaseTokenizer(Vocabulary v, boolean sentencePiece) {
        String what = sentencePiece ? "SentencePiece (llama)" : "byte-level BPE (gpt2)";
        String[] t = v.tokens();
        if (t == null || t.length == 0) {
            throw new ModelFormatException(what + " tokenizer has no tokens (tokenizer.ggml.tokens)");
        }
        tokens = t.clone();
        int n = tokens.length;
        for (int i = 0; i < n; i++) {
            if (tokens[i] == null) {
                throw new ModelFormatException(what + " tokenizer: token " + i + " is missing (tokenizer.ggml.tokens)");
            }
        }
        bos = checkId(v.bos(), n, "bos", "tokenizer.ggml.bos_token_id");
        addBos = v.addBos();
        addSpacePrefix = v.addSpacePrefix();
        eos = checkId(v.eos(), n, "eos", "tokenizer.ggml.eos_token_id");
        if (v.tokenTypes() != null) {
            if (v.tokenTypes().length != n) {
                throw new ModelFormatException(what + " tokenizer has " + v.tokenTypes().length
                        + " token types for " + n + " tokens (tokenizer.ggml.token_type)");
            }
            types = v.tokenTypes().clone();
        } else {
            types = deriveTypes(tokens, bos, eos, sentencePiece);
        }
        pieceIds = HashMap.newHashMap(n);
        special = new boolean[n];
        for (int i = 0; i < n; i++) {
            pieceIds.putIfAbsent(tokens[i], i);
            special[i] = types[i] == CONTROL || types[i] == USER_DEFINED;
        }
        specials = new SpecialTokens(tokens, types);
    }

    private static int checkId(int id, int n, String name, String key) {
        if (id < -1 || id >= n) {
            throw new ModelFormatException(name + " token id " + id + " lies outside the vocabulary of " + n
                    + " tokens (" + key + ")");
        }
        return id;
    }

    /**
     * Types for a vocabulary that stores none (llama2.c's tokenizer file): BOS and EOS are control
     * tokens; for SentencePiece also "&lt;unk&gt;" is unknown and "&lt;0xXX&gt;" are byte tokens. Everything
     * else is normal.
     */
    static int[] deriveTypes(String[] tokens, int bos, int eos, boolean sentencePiece) {
        int[] types = new int[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            if (i == bos || i == eos) {
                types[i] = CONTROL;
            } else if (sentencePiece && BYTE_TOKEN.matcher(tokens[i]).matches()) {
                types[i] = BYTE;
            } else if (sentencePiece && tokens[i].equals("<unk>")) {
                types[i] = UNKNOWN;
            } else {
                types[i] = NORMAL;
            }
        }
        return types;
    }

    /** The byte of a "&lt;0xXX&gt;" token, or -1. */
    static int byteOf(String token) {
        if (!BYTE_TOKEN.matcher(token).matches()) {
            return -1;
        }
        return Integer.parseInt(token, 3, 5, 16);
    }

    /**
     * The subclass's tables, which need the token table built here first: its merge rules; the
     * decoded bytes by id (empty for control tokens); by id, whether the token's text starts with
     * a SentencePiece dummy-prefix space. Called once, at the end of the subclass constructor.
     */
    final void setTables(MergeRules rules, byte[][] tokenBytes, boolean[] dummySpace) {
        if (this.rules != null) {
            throw new IllegalStateException("tokenizer tables are already set");
        }
        this.rules = rules;
        this.tokenBytes = tokenBytes;
        this.dummySpace = dummySpace;
    }

    final MergeRules rules() {
        return rules;
    }

    /**
     * Encodes {@code text[from, to)}, which contains no special token (or is treated as if it
     * contained none), appending to {@code out}. {@code prefix}: a SentencePiece dummy-prefix
     * space goes in front.
     */
    abstract void encodeText(String text, int from, int to, boolean prefix, Scratch scratch, IntBuffer out);

    /** Per-call working memory, reused across the pieces of one encode call. */
    static final class Scratch {
        final SymbolMerger merger;
        final IntBuffer bounds = new IntBuffer(64);
        final IntBuffer boundsTmp = new IntBuffer(64);
        final StringBuilder chars = new StringBuilder();
        final byte[] utf8 = new byte[4];

        Scratch(MergeRules rules) {
            merger = new SymbolMerger(rules);
        }
    }

    @Override
    public int[] encode(String text) {
        IntBuffer out = new IntBuffer(text.length() / 3 + 4);
        encodeText(text, 0, text.length(), true, new Scratch(rules()), out);
        return out.toArray();
    }

    @Override
    public int[] encodeWithSpecials(String text, boolean startOfText) {
        IntBuffer out = new IntBuffer(text.length() / 3 + 4);
        Scratch scratch = new Scratch(rules());
        boolean prefix = startOfText;
        int pos = 0;
        while (pos < text.length()) {
            long match = specials.isEmpty() ? -1 : specials.find(text, pos);
            int start = match < 0 ? text.length() : (int) (match >>> 32);
            if (start > pos) {
                encodeText(text, pos, start, prefix, scratch, out);
            }
            if (match < 0) {
                break;
            }
            int id = (int) match;
            out.add(id);
            pos = start + tokens[id].length();
            prefix = true;
        }
        return out.toArray();
    }

    @Override
    public String decode(int[] ids) {
        TokenDecoder decoder = decoder(true);
        StringBuilder sb = new StringBuilder(ids.length * 4);
        for (int id : ids) {
            decoder.next(id, sb);
        }
        decoder.flush(sb);
        return sb.toString();
    }

    @Override
    public TokenDecoder decoder(boolean startOfText, boolean renderSpecial) {
        return new TokenDecoder(tokenBytes, dummySpace, special, renderSpecial ? shownWithSpecial() : null, startOfText);
    }

    /**
     * By id, the text a token shows when special tokens are rendered (llama.cpp's
     * {@code special = true}): control and unknown tokens their stored string; null for the rest,
     * which decode as usual (unused tokens stay empty). Built on first use.
     */
    private byte[][] shownWithSpecial() {
        byte[][] shown = withSpecial;
        if (shown == null) {
            shown = new byte[tokens.length][];
            for (int id = 0; id < tokens.length; id++) {
                if (types[id] == CONTROL || types[id] == UNKNOWN) {
                    shown[id] = tokens[id].getBytes(java.nio.charset.StandardCharsets.UTF_8);
                }
            }
            withSpecial = shown;
        }
        return shown;
    }

    @Override
    public boolean addBos() {
        return addBos;
    }

    @Override
    public int bos() {
        return bos;
    }

    @Override
    public int eos() {
        return eos;
    }

    @Override
    public int vocabSize() {
        return tokens.length;
    }

    @Override
    public int tokenType(int id) {
        return types[checked(id)];
    }

    @Override
    public String tokenString(int id) {
        return tokens[checked(id)];
    }

    @Override
    public int tokenId(String piece) {
        Integer id = pieceIds.get(piece);
        return id == null ? -1 : id;
    }

    private int checked(int id) {
        if (id < 0 || id >= tokens.length) {
            throw new IllegalArgumentException("token id " + id + " outside the vocabulary of " + tokens.length);
        }
        return id;
    }

    /** UTF-8 bytes of one code point into {@code buf}; lone surrogates become U+FFFD. Returns the count. */
    static int utf8(int cp, byte[] buf) {
        if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
            cp = 0xFFFD;
        }
        if (cp < 0x80) {
            buf[0] = (byte) cp;
            return 1;
        }
        if (cp < 0x800) {
            buf[0] = (byte) (0xC0 | cp >>> 6);
            buf[1] = (byte) (0x80 | cp & 0x3F);
            return 2;
        }
        if (cp < 0x10000) {
            buf[0] = (byte) (0xE0 | cp >>> 12);
            buf[1] = (byte) (0x80 | cp >>> 6 & 0x3F);
            buf[2] = (byte) (0x80 | cp & 0x3F);
            return 3;
        }
        buf[0] = (byte) (0xF0 | cp >>> 18);
        buf[1] = (byte) (0x80 | cp >>> 12 & 0x3F);
        buf[2] = (byte) (0x80 | cp >>> 6 & 0x3F);
        buf[3] = (byte) (0x80 | cp & 0x3F);
        return 4;
    }
}
