package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * SentencePiece-style BPE with scores and byte fallback (GGUF model "llama", llama2.c's
 * tokenizer file), encoding exactly as llama2.c's run.c {@code encode} does for a prompt:
 * <ol>
 *   <li>a dummy prefix: the space token goes in front of non-empty text, unless the vocabulary
 *       says otherwise ({@code tokenizer.ggml.add_space_prefix = false}, {@link Vocabulary#addSpacePrefix()});</li>
 *   <li>each UTF-8 character becomes the token with that one character, or, when there is none,
 *       one byte token "&lt;0xXX&gt;" per byte (the unknown token if the vocabulary lacks byte
 *       tokens);</li>
 *   <li>greedy merging: while some adjacent pair concatenates to a token, merge the pair whose
 *       token has the highest score (leftmost on ties; scores at or below -1e10 never merge, as
 *       run.c's start value of -1e10 implies).</li>
 * </ol>
 * Spaces: GGUF vocabularies write the space as "▁" (U+2581), llama2.c's tokenizer file as a
 * literal " "; whichever the vocabulary uses (any token containing "▁" means "▁"), spaces in the
 * text are looked up in that form.
 *
 * <p>Pair rules are precomputed: every token that splits into two tokens yields a rule for that
 * id pair. That finds the same merges as run.c's string concatenation and lookup (the concatenation
 * of two token strings is a token exactly when that token splits into them), without building
 * strings while encoding. Where two tokens share one string the lower id stands for it.
 *
 * <p>Gemma 4 (GGUF model "gemma4") writes text the same way (spaces as "▁", no dummy prefix,
 * byte tokens for characters without a token) but merges as BPE does, by the rank of its merge
 * list ({@code tokenizer.ggml.merges}) rather than by score, within runs of newlines and runs of
 * everything else; a run of newlines that is itself a token is taken whole (as llama.cpp does).
 *
 * <p>Decoding: "▁" becomes a space, byte tokens their byte, control, unknown and unused tokens
 * nothing (llama.cpp's {@code llama_token_to_piece} without {@code special}). The dummy
 * prefix is dropped from the first token of a text and from a token that follows a special token
 * (run.c: "following BOS, sentencepiece strips any leading whitespace"), so that
 * {@code decode(encode(s)).equals(s)}.
 */
public final class SentencePieceTokenizer extends BaseTokenizer {
    private static final char SENTENCEPIECE_SPACE = '\u2581';

    private final float[] scores;
    /** Gemma 4: merges by rank, text split at newline runs. */
    private final boolean mergesByRank;
    private final int spaceSymbol;
    private final int spaceId;
    private final int unknownId;
    private final LongIntTable charIds;
    private final int[] byteIds = new int[256];

    public SentencePieceTokenizer(Vocabulary v) {
        super(v, true);
        int n = tokens.length;
        mergesByRank = "gemma4".equals(v.model());
        if (mergesByRank && v.merges() == null) {
            throw new ModelFormatException("Gemma 4 (gemma4) tokenizer has no merges (tokenizer.ggml.merges)");
        }
        if (v.scores() == null && !mergesByRank) {
            throw new ModelFormatException("SentencePiece (llama) tokenizer has no scores (tokenizer.ggml.scores)");
        }
        if (v.scores() != null && v.scores().length != n) {
            throw new ModelFormatException("SentencePiece (llama) tokenizer has " + v.scores().length + " scores for "
                    + n + " tokens (tokenizer.ggml.scores)");
        }
        scores = v.scores() == null ? new float[n] : v.scores().clone();

        boolean sentencePieceSpace = false;
        for (String t : tokens) {
            if (t.indexOf(SENTENCEPIECE_SPACE) >= 0) {
                sentencePieceSpace = true;
                break;
            }
        }
        spaceSymbol = sentencePieceSpace ? SENTENCEPIECE_SPACE : ' ';

        Arrays.fill(byteIds, -1);
        charIds = new LongIntTable(1024);
        int unknown = -1;
        for (int id = 0; id < n; id++) {
            String t = tokens[id];
            if (!isCanonical(id)) {
                continue;
            }
            if (!t.isEmpty() && t.codePointCount(0, t.length()) == 1) {
                charIds.putIfAbsent(t.codePointAt(0), id);
            }
            if (types[id] == BYTE) {
                int b = byteOf(t);
                if (b >= 0 && byteIds[b] < 0) {
                    byteIds[b] = id;
                }
            }
            if (types[id] == UNKNOWN && unknown < 0) {
                unknown = id;
            }
        }
        unknownId = unknown;
        spaceId = charIds.get(spaceSymbol);
        byte[][] tokenBytes = new byte[n][];
        boolean[] dummySpace = new boolean[n];
        for (int id = 0; id < n; id++) {
            String t = tokens[id];
            int b = types[id] == BYTE ? byteOf(t) : -1;
            if (types[id] == CONTROL || types[id] == UNKNOWN || types[id] == UNUSED) {
                tokenBytes[id] = new byte[0];
            } else if (b >= 0) {
                tokenBytes[id] = new byte[] {(byte) b};
            } else if (types[id] == USER_DEFINED) {
                tokenBytes[id] = t.getBytes(StandardCharsets.UTF_8);
            } else {
                tokenBytes[id] = t.replace((char) spaceSymbol, ' ').getBytes(StandardCharsets.UTF_8);
                dummySpace[id] = addSpacePrefix && spaceId >= 0 && !t.isEmpty() && t.charAt(0) == spaceSymbol;
            }
        }
        setTables(mergesByRank ? MergeRules.ranked(v.merges(), this::tokenId, "Gemma 4 BPE") : buildRules(),
                tokenBytes, dummySpace);
    }

    private boolean isCanonical(int id) {
        return pieceIds.get(tokens[id]) == id;
    }

    private MergeRules buildRules() {
        MergeRules r = new MergeRules(tokens.length * 2);
        for (int id = 0; id < tokens.length; id++) {
            float score = scores[id];
            // run.c starts its search at -1e10 and takes only strictly better scores (NaN never is).
            if (!(score > -1e10f) || !isCanonical(id)) {
                continue;
            }
            String t = tokens[id];
            for (int k = 1; k < t.length(); k++) {
                if (Character.isHighSurrogate(t.charAt(k - 1)) && Character.isLowSurrogate(t.charAt(k))) {
                    continue;
                }
                Integer left = pieceIds.get(t.substring(0, k));
                if (left == null) {
                    continue;
                }
                Integer right = pieceIds.get(t.substring(k));
                if (right != null) {
                    r.add(left, right, id, -score);
                }
            }
        }
        return r;
    }

    @Override
    void encodeText(String text, int from, int to, boolean prefix, Scratch scratch, IntBuffer out) {
        if (from >= to) {
            return;
        }
        if (!mergesByRank) {
            encodeRun(text, from, to, prefix && addSpacePrefix, scratch, out);
            return;
        }
        for (int start = from; start < to; ) {
            boolean newlines = text.charAt(start) == '\n';
            int end = start;
            while (end < to && (text.charAt(end) == '\n') == newlines) {
                end++;
            }
            int whole = newlines ? tokenId(text.substring(start, end)) : -1;
            if (whole >= 0) {
                out.add(whole);
            } else {
                encodeRun(text, start, end, false, scratch, out);
            }
            start = end;
        }
    }

    /** The characters of {@code text[from, to)} (byte tokens where a character has none), merged. */
    private void encodeRun(String text, int from, int to, boolean dummyPrefix, Scratch scratch, IntBuffer out) {
        SymbolMerger merger = scratch.merger;
        merger.reset();
        if (dummyPrefix && spaceId >= 0) {
            merger.add(spaceId);
        }
        byte[] buf = scratch.utf8;
        for (int i = from; i < to; ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            int id = charIds.get(cp == ' ' ? spaceSymbol : cp);
            if (id >= 0) {
                merger.add(id);
                continue;
            }
            int len = utf8(cp, buf);
            for (int j = 0; j < len; j++) {
                int byteId = byteIds[buf[j] & 0xFF];
                if (byteId >= 0) {
                    merger.add(byteId);
                } else if (unknownId >= 0) {
                    merger.add(unknownId);
                    break;
                } else {
                    throw new ModelFormatException(String.format(
                            "SentencePiece tokenizer can't encode U+%04X: no token for it, no byte token <0x%02X>"
                                    + " and no unknown token", cp, buf[j] & 0xFF));
                }
            }
        }
        merger.mergeInto(out);
    }

    /** The space as this vocabulary writes it: '▁' (GGUF) or ' ' (llama2.c's tokenizer file). */
    public char spaceSymbol() {
        return (char) spaceSymbol;
    }

    public float score(int id) {
        return scores[id];
    }
}
