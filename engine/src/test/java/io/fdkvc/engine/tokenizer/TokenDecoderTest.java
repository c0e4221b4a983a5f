package io.fdkvc.engine.tokenizer;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TokenDecoderTest {
    private static final Tokenizer TOK512 = Tokenizers.from(TestVocabularies.tok512());
    private static final Tokenizer BYTES = Tokenizers.from(TestVocabularies.byteLevel("llama-bpe",
            List.of("Ġthe", "<|eot_id|>"), new int[] {1, 3}, List.of(), -1, 257));

    /** tok512's byte token for byte b is b + 3. */
    private static int byteToken(int b) {
        return b + 3;
    }

    @Test
    void holdsAnUnfinishedCharacterUntilItsLastByte() {
        // U+1F600 = F0 9F 98 80
        TokenDecoder d = TOK512.decoder(false);
        assertThat(d.next(byteToken(0xF0))).isEmpty();
        assertThat(d.hasPending()).isTrue();
        assertThat(d.next(byteToken(0x9F))).isEmpty();
        assertThat(d.next(byteToken(0x98))).isEmpty();
        assertThat(d.next(byteToken(0x80))).isEqualTo("\uD83D\uDE00");
        assertThat(d.hasPending()).isFalse();
        // "é" = C3 A9 in byte-level BPE: byte tokens 0xC3, 0xA9 (ids == bytes)
        TokenDecoder b = BYTES.decoder(true);
        StringBuilder sb = new StringBuilder();
        b.next(0xC3, sb);
        assertThat(sb).isEmpty();
        b.next(0xA9, sb);
        assertThat(sb.toString()).isEqualTo("é");
    }

    @Test
    void malformedBytesBecomeReplacementCharacters() {
        TokenDecoder d = TOK512.decoder(false);
        // a lone continuation byte cannot start anything: replaced at once
        assertThat(d.next(byteToken(0x80))).isEqualTo("\uFFFD");
        // a lead byte of a 3-byte sequence, then 'A' (token 447): the lead is replaced, 'A' kept
        assertThat(d.next(byteToken(0xE2))).isEmpty();
        assertThat(d.next(447)).isEqualTo("\uFFFDA");
        // an unfinished sequence at the end is replaced by flush
        assertThat(d.next(byteToken(0xF0))).isEmpty();
        assertThat(d.flush()).isEqualTo("\uFFFD");
        assertThat(d.flush()).isEmpty();
        // the batch decoder does the same
        assertThat(TOK512.decode(new int[] {byteToken(0xE2), byteToken(0x82)})).isEqualTo("\uFFFD");
    }

    @Test
    void completeLengthLooksBackForAnUnfinishedSequence() {
        assertThat(TokenDecoder.completeLength(bytes(0x41, 0xE2, 0x82), 3)).isEqualTo(1);
        assertThat(TokenDecoder.completeLength(bytes(0x41, 0xE2, 0x82, 0xAC), 4)).isEqualTo(4);
        assertThat(TokenDecoder.completeLength(bytes(0xF0, 0x9F, 0x98), 3)).isEqualTo(0);
        assertThat(TokenDecoder.completeLength(bytes(0xF0, 0x9F, 0x98, 0x80), 4)).isEqualTo(4);
        assertThat(TokenDecoder.completeLength(bytes(0xC3), 1)).isEqualTo(0);
        assertThat(TokenDecoder.completeLength(bytes(0xC3, 0xA9, 0xA9), 3)).isEqualTo(3); // malformed: emit
        assertThat(TokenDecoder.completeLength(bytes(0xFF), 1)).isEqualTo(1);             // invalid lead: emit
        assertThat(TokenDecoder.completeLength(bytes(), 0)).isEqualTo(0);
    }

    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    @Test
    void dummyPrefixIsDroppedAtTheStartAndAfterSpecialTokensOnly() {
        int once = 403; // " Once"
        assertThat(TOK512.decoder(true).next(once)).isEqualTo("Once");
        assertThat(TOK512.decoder(false).next(once)).isEqualTo(" Once");
        TokenDecoder d = TOK512.decoder(false);
        assertThat(d.next(1)).isEmpty();           // BOS: control, no text
        assertThat(d.next(once)).isEqualTo("Once"); // after BOS: stripped, as run.c does
        assertThat(d.next(once)).isEqualTo(" Once");
        d.reset(true);
        assertThat(d.next(once)).isEqualTo("Once");
        // byte-level BPE has no dummy prefix
        assertThat(BYTES.decoder(true).next(256)).isEqualTo(" the");
        assertThat(BYTES.decode(new int[] {257, 256})).isEqualTo(" the");
    }

    /**
     * As llama.cpp's token_to_piece: without special, control and unknown tokens give nothing;
     * with special, their strings; user-defined tokens always their text; a dummy space after a
     * rendered control token is still dropped (run.c's rule after BOS).
     */
    @Test
    void specialTokensAreRenderedOnlyWhenAsked() {
        int unk = 0, bos = 1, eos = 2, once = 403;
        Tokenizer gguf = Tokenizers.from(TestVocabularies.stories260KGguf()); // tok512.bin writes BOS as "\n<s>\n"
        assertThat(gguf.decode(new int[] {unk, bos, once, eos})).isEqualTo("Once");
        TokenDecoder d = gguf.decoder(true, true);
        StringBuilder sb = new StringBuilder();
        for (int id : new int[] {unk, bos, once, eos}) d.next(id, sb);
        assertThat(sb).hasToString("<unk><s>Once</s>");
        // byte-level: "<|eot_id|>" (257) is a control token
        assertThat(BYTES.decode(new int[] {256, 257})).isEqualTo(" the");
        assertThat(BYTES.decoder(true, true).next(257)).isEqualTo("<|eot_id|>");
    }

    @Test
    void rejectsIdsOutsideTheVocabulary() {
        assertThatThrownBy(() -> TOK512.decoder(true).next(512)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("512");
        assertThatThrownBy(() -> TOK512.decode(new int[] {-1})).isInstanceOf(IllegalArgumentException.class);
    }

    /** Streaming the ids of any text gives the text back in valid pieces, whatever the byte splits. */
    @Property(tries = 200)
    void streamedPiecesAreValidAndConcatenateToTheText(@ForAll("unicode") String s) {
        for (Tokenizer t : List.of(TOK512, BYTES)) {
            TokenDecoder d = t.decoder(true);
            List<String> pieces = new ArrayList<>();
            for (int id : t.encode(s)) {
                pieces.add(d.next(id));
            }
            pieces.add(d.flush());
            assertThat(String.join("", pieces)).isEqualTo(s);
            for (String p : pieces) {
                assertThat(p).doesNotContain("\uFFFD");
                assertThat(p.isEmpty() || !Character.isLowSurrogate(p.charAt(0))).isTrue();
                assertThat(p.isEmpty() || !Character.isHighSurrogate(p.charAt(p.length() - 1))).isTrue();
            }
        }
    }

    /** Whatever the ids (valid or not as UTF-8), streaming and batch decoding agree. */
    @Property(tries = 200)
    void streamingEqualsBatch(@ForAll("ids") List<Integer> ids) {
        int[] a = ids.stream().mapToInt(Integer::intValue).toArray();
        TokenDecoder d = TOK512.decoder(true);
        StringBuilder sb = new StringBuilder();
        for (int id : a) {
            sb.append(d.next(id));
        }
        sb.append(d.flush());
        assertThat(sb.toString()).isEqualTo(TOK512.decode(a));
    }

    /** Any byte sequence, streamed as byte tokens, reads as the JDK decodes it at once. */
    @Property(tries = 500)
    void bytesStreamedAsTheJdkDecodesThem(@ForAll("rawBytes") List<Integer> bytes) {
        byte[] raw = new byte[bytes.size()];
        TokenDecoder d = TOK512.decoder(false);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < raw.length; i++) {
            raw[i] = (byte) (int) bytes.get(i);
            d.next(byteToken(bytes.get(i)), sb);
        }
        d.flush(sb);
        assertThat(sb.toString()).isEqualTo(new String(raw, java.nio.charset.StandardCharsets.UTF_8));
    }

    @Provide
    Arbitrary<List<Integer>> rawBytes() {
        // biased towards the interesting region: leads, continuations, and the Table 3-7 edges
        Arbitrary<Integer> b = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.integers().between(0, 0x7F)),
                Tuple.of(3, Arbitraries.integers().between(0x80, 0xBF)),
                Tuple.of(3, Arbitraries.of(0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF)));
        return b.list().ofMaxSize(12);
    }

    @Provide
    Arbitrary<List<Integer>> ids() {
        return Arbitraries.integers().between(0, 511).list().ofMaxSize(30);
    }

    @Provide
    Arbitrary<String> unicode() {
        Arbitrary<Integer> cp = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.integers().between(0x20, 0x7E)),
                Tuple.of(2, Arbitraries.integers().between(0x80, 0x7FF)),
                Tuple.of(2, Arbitraries.integers().between(0x800, 0xFFFC)
                        .filter(c -> c < Character.MIN_SURROGATE || c > Character.MAX_SURROGATE)),
                Tuple.of(2, Arbitraries.integers().between(0x10000, 0x10FFFF)));
        return cp.list().ofMaxSize(16).map(l -> {
            StringBuilder sb = new StringBuilder();
            l.forEach(sb::appendCodePoint);
            return sb.toString();
        });
    }
}
