package io.fdkvc.engine.tokenizer;

import io.fdkvc.engine.ModelFormatException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

import java.text.Normalizer;
import java.util.List;

import static io.fdkvc.engine.tokenizer.TestVocabularies.byteLevel;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Hand-made vocabularies: ids 0..255 are the byte tokens (id == byte), extra tokens from 256. */
class ByteLevelBpeTokenizerTest {

    @Test
    void gpt2ByteCharacters() {
        // printable ASCII stands for itself; the 33 bytes 0..32 map to U+0100.., so space is U+0120 'Ġ'
        // and newline U+010A 'Ċ'; 127..160 continue at U+0121; soft hyphen 0xAD is the last, U+0143.
        assertThat(ByteLevelBpeTokenizer.byteChar('A')).isEqualTo('A');
        assertThat(ByteLevelBpeTokenizer.byteChar(' ')).isEqualTo('\u0120');
        assertThat(ByteLevelBpeTokenizer.byteChar('\n')).isEqualTo('\u010A');
        assertThat(ByteLevelBpeTokenizer.byteChar(0)).isEqualTo('\u0100');
        assertThat(ByteLevelBpeTokenizer.byteChar(0x7F)).isEqualTo('\u0121');
        assertThat(ByteLevelBpeTokenizer.byteChar(0xA0)).isEqualTo('\u0142');
        assertThat(ByteLevelBpeTokenizer.byteChar(0xAD)).isEqualTo('\u0143');
        assertThat(ByteLevelBpeTokenizer.byteChar(0xE9)).isEqualTo('é');
    }

    private static final List<String> WORDS = List.of("Ġt", "he", "Ġthe", "in", "Ġa", "nd", "Ġand");
    private static final List<String> WORD_MERGES = List.of("Ġ t", "h e", "Ġt he", "i n", "Ġ a", "n d", "Ġa nd");

    /*
     * Tokens 256.. = Ġt he Ġthe in Ġa nd Ġand, merges in that order (ranks 0..6).
     * GPT-2 words of "the cat and the hen": "the", " cat", " and", " the", " hen".
     *   "the":  t h e  -> only (h,e) has a rule           -> t(116) he(257)
     *   " cat": Ġ c a t -> no pair has a rule             -> 32 99 97 116
     *   " and": Ġ a n d -> (Ġ,a) rank 4, then (n,d) rank 5, then (Ġa,nd) rank 6 -> Ġand(262)
     *   " the": Ġ t h e -> (Ġ,t) rank 0, (h,e) rank 1, (Ġt,he) rank 2 -> Ġthe(258)
     *   " hen": Ġ h e n -> (h,e) -> Ġ he n; (Ġ,he) and (he,n) have none -> 32 257 110
     */
    @Test
    void mergesByRankWithinWords() {
        Tokenizer t = Tokenizers.from(byteLevel("gpt2", WORDS, null, WORD_MERGES, -1, -1));
        assertThat(t.encode("the cat and the hen")).containsExactly(116, 257, 32, 99, 97, 116, 262, 258, 32, 257, 110);
        assertThat(t.decode(new int[] {116, 257, 32, 99, 97, 116, 262, 258, 32, 257, 110})).isEqualTo("the cat and the hen");
        // BPE adds no dummy prefix
        assertThat(t.encode("")).isEmpty();
        assertThat(t.encode("x")).containsExactly((int) 'x');
    }

    @Test
    void lowerRankMergesFirstNotLeftmost() {
        // "abc" with "b c" rank 0, "a b" rank 1: (b,c) merges first, then (a,bc) has no rule.
        Tokenizer t = Tokenizers.from(byteLevel("gpt2", List.of("bc", "ab"), null, List.of("b c", "a b"), -1, -1));
        assertThat(t.encode("abc")).containsExactly(97, 256);
        // "aaa" with "a a": leftmost pair first -> aa a
        Tokenizer aa = Tokenizers.from(byteLevel("gpt2", List.of("aa"), null, List.of("a a"), -1, -1));
        assertThat(aa.encode("aaa")).containsExactly(256, 97);
        assertThat(aa.encode("aaaa")).containsExactly(256, 256);
    }

    @Test
    void mergesThatCannotApplyAreSkippedAndMalformedOnesRejected() {
        // "x y" -> "xy" is no token: skipped; the repeated "a b" keeps rank 1 behind "b c".
        Tokenizer t = Tokenizers.from(byteLevel("gpt2", List.of("bc", "ab"), null,
                List.of("x y", "b c", "a b", "a b"), -1, -1));
        assertThat(t.encode("abc")).containsExactly(97, 256);
        assertThat(t.encode("xy")).containsExactly(120, 121);
        assertThatThrownBy(() -> Tokenizers.from(byteLevel("gpt2", List.of(), null, List.of("ab"), -1, -1)))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("merge 0").hasMessageContaining("'ab'");
        assertThatThrownBy(() -> Tokenizers.from(new Vocabulary("gpt2", null, new String[] {"a"}, null, null, null, -1, -1, null)))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("tokenizer.ggml.merges");
    }

    @Test
    void llama3TakesWholeWordsThatAreTokens() {
        // "Ġthe" is a token but no merge leads to it: Llama 3 (ignore_merges) finds it whole, GPT-2 can't.
        Vocabulary llama3 = byteLevel("llama-bpe", List.of("Ġthe"), null, List.of(), -1, -1);
        Vocabulary gpt2 = byteLevel("gpt2", List.of("Ġthe"), null, List.of(), -1, -1);
        assertThat(Tokenizers.from(llama3).encode(" the")).containsExactly(256);
        assertThat(Tokenizers.from(gpt2).encode(" the")).containsExactly(32, 116, 104, 101);
        assertThat(((ByteLevelBpeTokenizer) Tokenizers.from(llama3)).preTokenizer()).isEqualTo(PreTokenizer.LLAMA3);
    }

    @Test
    void qwen2DigitsStaySingle() {
        // "1 2" -> "12" exists, but Qwen2 splits digits apart before merging; GPT-2 keeps "12" one word.
        Vocabulary qwen = byteLevel("qwen2", List.of("12"), null, List.of("1 2"), -1, -1);
        Vocabulary gpt2 = byteLevel("gpt2", List.of("12"), null, List.of("1 2"), -1, -1);
        assertThat(Tokenizers.from(qwen).encode("12")).containsExactly(49, 50);
        assertThat(Tokenizers.from(gpt2).encode("12")).containsExactly(256);
    }

    private static Tokenizer chatVocabulary() {
        // 256 <|im_start|> (control), 257 <|im_end|> (control), 258 <|im (user-defined), 259 "hi"
        return Tokenizers.from(byteLevel("qwen2", List.of("<|im_start|>", "<|im_end|>", "<|im", "hi"),
                new int[] {3, 3, 4, 1}, List.of("h i"), 256, 257));
    }

    @Test
    void specialTokensSplitOutFirst() {
        Tokenizer t = chatVocabulary();
        // "user\nhi" between them: "user" bytes, "\n" (byte 10), then the word "hi" merged (259)
        assertThat(t.encodeWithSpecials("<|im_start|>user\nhi<|im_end|>"))
                .containsExactly(256, 117, 115, 101, 114, 10, 259, 257);
        // the longest special wins over its prefix "<|im"; the prefix alone is user-defined
        assertThat(t.encodeWithSpecials("<|im<|im_end|>")).containsExactly(258, 257);
        // plain encode treats them as text: "<|" "im" "_" "start" "|>" bytes
        assertThat(t.encode("<|im_start|>")).containsExactly(60, 124, 105, 109, 95, 115, 116, 97, 114, 116, 124, 62);
        // control tokens decode to nothing, user-defined ones to their text
        assertThat(t.decode(new int[] {256, 259, 257})).isEqualTo("hi");
        assertThat(t.decode(new int[] {258, 259})).isEqualTo("<|imhi");
        assertThat(t.isControl(256)).isTrue();
        assertThat(t.isControl(258)).isFalse();
        assertThat(t.tokenId("<|im_end|>")).isEqualTo(257);
        assertThat(t.tokenId("nope")).isEqualTo(-1);
        assertThat(t.bos()).isEqualTo(256);
        assertThat(t.eos()).isEqualTo(257);
        assertThat(t.vocabSize()).isEqualTo(260);
    }

    @Test
    void vocabularyWithoutAByteTokenRefusesThatByte() {
        Vocabulary v = new Vocabulary("gpt2", "gpt2", new String[] {"a", "b"}, null, null, new String[0], -1, -1, null);
        Tokenizer t = Tokenizers.from(v);
        assertThat(t.encode("ab")).containsExactly(0, 1);
        assertThatThrownBy(() -> t.encode("c")).isInstanceOf(ModelFormatException.class).hasMessageContaining("0x63");
    }

    @Test
    void factoryRefusesUnknownModels() {
        assertThatThrownBy(() -> Tokenizers.from(new Vocabulary("bert", null, new String[] {"a"}, null, null, null, -1, -1, null)))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("'bert'").hasMessageContaining("tokenizer.ggml.model");
        assertThatThrownBy(() -> Tokenizers.from(new Vocabulary(null, null, new String[] {"a"}, null, null, null, -1, -1, null)))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("missing");
        assertThat(Tokenizers.from(byteLevel("gpt2", List.of(), null, List.of(), -1, -1)))
                .isInstanceOf(ByteLevelBpeTokenizer.class);
    }

    // ---- properties: every text survives, whatever the pre-tokenizer and merges ----

    private static final List<String> MERGE_TOKENS = List.of("Ġt", "he", "Ġthe", "in", "Ġa", "nd", "Ġand", "ĠĠ",
            "ĊĊ", "Ã©", "12", "Ġ1");
    private static final List<String> MERGES = List.of("Ġ t", "h e", "Ġt he", "i n", "Ġ a", "n d", "Ġa nd", "Ġ Ġ",
            "Ċ Ċ", "Ã ©", "1 2", "Ġ 1");

    @Property(tries = 200)
    void roundTripsAnyText(@ForAll("unicode") String s) {
        for (String pre : List.of("gpt2", "llama-bpe", "qwen2", "smollm", "unknown-pre")) {
            Tokenizer t = Tokenizers.from(byteLevel(pre, MERGE_TOKENS, null, MERGES, -1, -1));
            // Qwen2 normalises to NFC first, so its text comes back composed
            String expected = pre.equals("qwen2") ? Normalizer.normalize(s, Normalizer.Form.NFC) : s;
            int[] ids = t.encode(s);
            assertThat(t.decode(ids)).isEqualTo(expected);
            assertThat(t.decode(t.encodeWithSpecials(s))).isEqualTo(expected);
        }
    }

    @Provide
    Arbitrary<String> unicode() {
        Arbitrary<Integer> cp = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.integers().between(0x20, 0x7E)),
                Tuple.of(2, Arbitraries.of((int) ' ', (int) '\n', (int) '\t', 0x3000, 0xA0, 0x2028)),
                Tuple.of(1, Arbitraries.integers().between(0, 0x1F)),
                Tuple.of(2, Arbitraries.integers().between(0x80, 0x7FF)),
                Tuple.of(2, Arbitraries.integers().between(0x800, 0xFFFF)
                        .filter(c -> c < Character.MIN_SURROGATE || c > Character.MAX_SURROGATE)),
                Tuple.of(1, Arbitraries.integers().between(0x10000, 0x10FFFF)));
        return cp.list().ofMaxSize(24).map(l -> {
            StringBuilder sb = new StringBuilder();
            l.forEach(sb::appendCodePoint);
            return sb.toString();
        });
    }
}
