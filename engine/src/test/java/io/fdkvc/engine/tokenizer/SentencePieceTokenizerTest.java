package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SentencePieceTokenizerTest {
    private static final Tokenizer TOK512 = Tokenizers.from(TestVocabularies.tok512());
    private static final Tokenizer GGUF = Tokenizers.from(TestVocabularies.stories260KGguf());

    /*
     * "Once upon a time" with tok512 (scores: " t" -0, " a" -2, "im" -29, "on" -30, " u" -59,
     * " O" -60, " On" -62, "ce" -72, " up" -91, "ime" -110, " time" -119, " Once" -144,
     * " upon" -148; a merge's token must exist, e.g. "On", "up", "nc", "ti" do not):
     *   chars with dummy prefix: ' ' O n c e ' ' u p o n ' ' a ' ' t i m e
     *   pairs that are tokens: " O" -60, "ce" -72, " u" -59, "on" -30, " a" -2, " t" -0, "im" -29
     *   1. " t" (-0)              -> ... ' ' a " t" i m e
     *   2. " a" (-2)              -> ... " a" " t" i m e      (" a t" is no token)
     *   3. "im" (-29)             -> " t" "im" e; new pair "ime" -110 (" tim" is no token)
     *   4. "on" (-30)             -> ' ' u p "on"; "pon" is no token
     *   5. " u" (-59)             -> " u" p "on"; new pair " up" -91
     *   6. " O" (-60)             -> " O" n c e; new pair " On" -62
     *   7. " On" (-62)            -> " On" c e
     *   8. "ce" (-72)             -> " On" "ce"; new pair " Once" -144
     *   9. " up" (-91)            -> " up" "on"; new pair " upon" -148
     *  10. "ime" (-110)           -> " t" "ime"; new pair " time" -119
     *  11. " time", 12. " Once", 13. " upon"; no pair of the four words is a token.
     * Ids: " Once" 403, " upon" 407, " a" 261, " time" 378.
     */
    @Test
    void encodesOnceUponATimeAsRunCDoes() {
        assertThat(TOK512.encode("Once upon a time")).containsExactly(403, 407, 261, 378);
    }

    @Test
    void ggufVocabularyWritesSpacesAsU2581AndEncodesTheSame() {
        assertThat(GGUF.tokenString(403)).isEqualTo("\u2581Once");
        assertThat(TOK512.tokenString(403)).isEqualTo(" Once");
        assertThat(((SentencePieceTokenizer) GGUF).spaceSymbol()).isEqualTo('\u2581');
        assertThat(((SentencePieceTokenizer) TOK512).spaceSymbol()).isEqualTo(' ');
        assertThat(GGUF.encode("Once upon a time")).containsExactly(403, 407, 261, 378);
    }

    @Test
    void emptyTextHasNoDummyPrefix() {
        assertThat(TOK512.encode("")).isEmpty();
        assertThat(TOK512.encodeWithSpecials("")).isEmpty();
    }

    /* Characters missing from the vocabulary fall back to byte tokens, id = byte + 3 in llama2.c's layout. */
    @Test
    void unknownCharactersBecomeByteTokens() {
        // "\n" is no token: dummy prefix ' ' (410) then <0x0A> = 10 + 3; ' ' + "<0x0A>" is no token.
        assertThat(TOK512.encode("\n")).containsExactly(410, 13);
        // U+1F600 is F0 9F 98 80 in UTF-8 -> 0xF0+3, 0x9F+3, 0x98+3, 0x80+3.
        assertThat(TOK512.encode("\uD83D\uDE00")).containsExactly(410, 0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3);
        assertThat(GGUF.encode("\uD83D\uDE00")).containsExactly(410, 0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3);
        // "é" is token 485 itself.
        assertThat(TOK512.encode("é")).containsExactly(410, 485);
        for (int b = 0; b < 256; b++) {
            assertThat(TOK512.tokenType(b + 3)).isEqualTo(Tokenizer.BYTE);
            assertThat(TOK512.tokenString(b + 3)).isEqualTo(String.format("<0x%02X>", b));
        }
    }

    @Test
    void decodesAsRunCPrintsIt() {
        int[] ids = {403, 407, 261, 378};
        assertThat(TOK512.decode(ids)).isEqualTo("Once upon a time");
        assertThat(GGUF.decode(ids)).isEqualTo("Once upon a time");
        // After BOS the leading space goes (run.c); BOS itself is a control token without text.
        assertThat(TOK512.decode(new int[] {1, 403, 407})).isEqualTo("Once upon");
        assertThat(GGUF.decode(new int[] {1, 403, 407})).isEqualTo("Once upon");
        // A continuing decoder keeps the space of a word that follows earlier text.
        TokenDecoder d = TOK512.decoder(false);
        assertThat(d.next(403)).isEqualTo(" Once");
        assertThat(d.next(432)).isEqualTo(",");
        // Byte tokens are raw bytes.
        assertThat(TOK512.decode(new int[] {243, 162, 155, 131})).isEqualTo("\uD83D\uDE00");
        assertThat(TOK512.decode(new int[] {1, 2})).isEmpty();
        assertThat(TOK512.isControl(1)).isTrue();
        assertThat(TOK512.isControl(0)).isFalse();
        assertThat(TOK512.tokenType(0)).isEqualTo(Tokenizer.UNKNOWN);
    }

    @Test
    void decodesTheReferenceGreedyOutputText() throws Exception {
        // The reference text is what run.c printed; re-encoding it and decoding must give it back.
        String text = java.nio.file.Files.readString(TestVocabularies.stories260K("runc_greedy_once_upon_a_time_64.txt"))
                .strip();
        assertThat(TOK512.decode(TOK512.encode(text))).isEqualTo(text);
        assertThat(GGUF.encode(text)).containsExactly(TOK512.encode(text));
    }

    @Test
    void specialTokensInText() {
        // "<s>" is a control token in the GGUF vocabulary; the text after it gets the dummy prefix.
        assertThat(GGUF.encodeWithSpecials("<s>Once")).containsExactly(1, 403);
        // Without special handling "<s>" is three characters and no pair of them is a token.
        assertThat(GGUF.encode("<s>")).containsExactly(410, 504, 419, 505);
        // A continuation gets no dummy prefix in front of its first piece.
        assertThat(GGUF.encodeWithSpecials("Once", false)).containsExactly(441, 416, 331);
        assertThat(GGUF.encodeWithSpecials("Once</s>Once", false)).containsExactly(441, 416, 331, 2, 403);
    }

    private static final Tokenizer NO_PREFIX = Tokenizers.from(TestVocabularies.stories260KGguf().withFlags(null, false));

    /**
     * {@code tokenizer.ggml.add_space_prefix = false}: no dummy space. "Once upon a time" then
     * starts with "Once" as a continuation does (441 416 331, see specialTokensInText), and the
     * decoded text keeps every space it has.
     */
    @Test
    void withoutTheSpacePrefixNoDummySpaceIsAddedOrDropped() {
        assertThat(NO_PREFIX.encode("Once upon a time")).containsExactly(441, 416, 331, 407, 261, 378);
        assertThat(NO_PREFIX.encodeWithSpecials("<s>Once")).containsExactly(1, 441, 416, 331);
        assertThat(NO_PREFIX.decode(new int[] {403, 407})).isEqualTo(" Once upon");
        assertThat(NO_PREFIX.decode(new int[] {1, 403})).isEqualTo(" Once");
        assertThat(NO_PREFIX.encode("")).isEmpty();
        assertThat(GGUF.addBos()).isTrue();
    }

    /** With the prefix, encode(s) is the prefix-less encoding of " " + s: the dummy space is the only difference. */
    @Property(tries = 200)
    void theSpacePrefixIsOneLeadingSpace(@ForAll("ascii") String s) {
        if (s.isEmpty()) return;
        assertThat(GGUF.encode(s)).containsExactly(NO_PREFIX.encode(" " + s));
        assertThat(NO_PREFIX.decode(NO_PREFIX.encode(s))).isEqualTo(s);
    }

    /* Hand-made vocabularies for the merge order. */
    private static Tokenizer spm(String[] tokens, float[] scores) {
        return Tokenizers.from(new Vocabulary("llama", null, tokens, scores, null, null, -1, -1, null));
    }

    @Test
    void mergesTheHighestScoreFirstAndTheLeftmostOnTies() {
        String[] tokens = {"<unk>", "\u2581", "a", "b", "ab", "ba"};
        // "▁aba": pairs "ab" and "ba" tie at -1 -> leftmost "ab" wins -> ▁ ab a
        assertThat(spm(tokens, new float[] {0, 0, 0, 0, -1, -1}).encode("aba")).containsExactly(1, 4, 2);
        // "ba" scores higher -> ▁ a ba
        assertThat(spm(tokens, new float[] {0, 0, 0, 0, -2, -1}).encode("aba")).containsExactly(1, 2, 5);
        // 0.0 and -0.0 tie (C's '>' in run.c): still the leftmost
        assertThat(spm(tokens, new float[] {0, 0, 0, 0, -0.0f, 0.0f}).encode("aba")).containsExactly(1, 4, 2);
        // run.c never merges a pair scoring at or below its start value of -1e10
        assertThat(spm(tokens, new float[] {0, 0, 0, 0, -1e10f, -2e10f}).encode("aba")).containsExactly(1, 2, 3, 2);
    }

    @Test
    void rejectsBrokenVocabularies() {
        assertThatThrownBy(() -> spm(new String[] {"a", "b"}, new float[] {0}))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("tokenizer.ggml.scores");
        assertThatThrownBy(() -> spm(new String[] {"a", "b"}, null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("scores");
        assertThatThrownBy(() -> Tokenizers.from(new Vocabulary("llama", null, new String[] {"a"}, new float[] {0}, null,
                null, 5, -1, null))).isInstanceOf(ModelFormatException.class).hasMessageContaining("bos");
        // No byte token and no unknown token: a character outside the vocabulary can't be encoded.
        assertThatThrownBy(() -> spm(new String[] {"\u2581", "a"}, new float[] {0, 0}).encode("z"))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("U+007A");
    }

    // ---- properties ----

    @Property(tries = 300)
    void asciiRoundTrips(@ForAll("ascii") String s) {
        assertThat(TOK512.decode(TOK512.encode(s))).isEqualTo(s);
        assertThat(GGUF.decode(GGUF.encode(s))).isEqualTo(s);
    }

    @Property(tries = 200)
    void unicodeRoundTripsThroughByteFallback(@ForAll("unicode") String s) {
        assertThat(TOK512.decode(TOK512.encode(s))).isEqualTo(s);
        if (s.indexOf('\u2581') < 0) { // GGUF's vocabulary reads a literal U+2581 as a space
            assertThat(GGUF.decode(GGUF.encode(s))).isEqualTo(s);
        }
    }

    /** The fast merge (heap, id pairs) against a literal transcription of run.c's loop. */
    @Property(tries = 300)
    void agreesWithRunCsQuadraticLoop(@ForAll("ascii") String s) {
        Vocabulary v = TestVocabularies.tok512();
        assertThat(TOK512.encode(s)).containsExactly(runCEncode(v.tokens(), v.scores(), s));
    }

    /**
     * run.c's encode transcribed: dummy prefix " ", per-character lookup with byte + 3 fallback,
     * then repeatedly scan all adjacent pairs, concatenate their strings, look the result up, and
     * merge the first pair with the strictly highest score above -1e10.
     */
    static int[] runCEncode(String[] vocab, float[] scores, String text) {
        Map<String, Integer> lookup = new HashMap<>();
        for (int i = 0; i < vocab.length; i++) {
            lookup.putIfAbsent(vocab[i], i);
        }
        List<Integer> tokens = new ArrayList<>();
        if (!text.isEmpty()) {
            tokens.add(lookup.get(" "));
        }
        text.codePoints().forEach(cp -> {
            Integer id = lookup.get(Character.toString(cp));
            if (id != null) {
                tokens.add(id);
            } else {
                for (byte b : Character.toString(cp).getBytes(StandardCharsets.UTF_8)) {
                    tokens.add((b & 0xFF) + 3);
                }
            }
        });
        while (true) {
            float best = -1e10f;
            int bestId = -1;
            int bestIdx = -1;
            for (int i = 0; i + 1 < tokens.size(); i++) {
                Integer id = lookup.get(vocab[tokens.get(i)] + vocab[tokens.get(i + 1)]);
                if (id != null && scores[id] > best) {
                    best = scores[id];
                    bestId = id;
                    bestIdx = i;
                }
            }
            if (bestIdx < 0) {
                break;
            }
            tokens.set(bestIdx, bestId);
            tokens.remove(bestIdx + 1);
        }
        return tokens.stream().mapToInt(Integer::intValue).toArray();
    }

    @Provide
    Arbitrary<String> ascii() {
        Arbitrary<String> words = Arbitraries.of("Once", "upon", "a", "time", "there", "was", "little", "girl", "named",
                "Lily", "Timmy", "happy", "friend", "the", "The", "said", "!", ",", ".", "\"", "'s", "\n", "\t", " ", "  ");
        Arbitrary<String> chars = Arbitraries.strings().withCharRange(' ', '~').withChars('\n', '\t').ofMaxLength(12);
        return Arbitraries.oneOf(words, chars, words.map(w -> " " + w)).list().ofMaxSize(12).map(l -> String.join("", l));
    }

    @Provide
    Arbitrary<String> unicode() {
        Arbitrary<Integer> cp = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, Arbitraries.integers().between(0x20, 0x7E)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 0x1F)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x80, 0x7FF)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x800, 0xFFFF)
                        .filter(c -> c < Character.MIN_SURROGATE || c > Character.MAX_SURROGATE)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x10000, 0x10FFFF)));
        return cp.list().ofMaxSize(20).map(l -> {
            StringBuilder sb = new StringBuilder();
            l.forEach(sb::appendCodePoint);
            return sb.toString();
        });
    }
}
