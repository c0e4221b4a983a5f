package io.fdkvc.cli.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tokenizer.Tokenizer;
import io.fdkvc.engine.tokenizer.Tokenizers;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The synthetic shapes' tensor types per preset, against what llama-quantize produces for the same shapes. */
class SyntheticModelsTest {
    private static Map<GgmlType, Integer> histogram(String shape, String quant) {
        Map<GgmlType, Integer> h = new EnumMap<>(GgmlType.class);
        for (SyntheticModels.Matrix m : SyntheticModels.matrices(SyntheticModels.model(shape, quant)))
            h.merge(m.type() == null ? GgmlType.F32 : m.type(), 1, Integer::sum);
        return h;
    }

    @Test
    void q4KmOnSmolLm2FallsBackAsLlamaQuantizeDoes() {
        // 30 layers; width 576 is not a multiple of 256, so Q4_K -> Q5_0 and Q6_K -> Q8_0 on rows of 576:
        // q, k, o, gate, up (150) and attn_v of the 16 layers without extra bits -> 166 Q5_0 (llama-quantize's
        // count on this shape); attn_v of the 14 layers with more bits (0-2, 26-29, and 5, 8, ..., 23) and the
        // tied embedding -> 15 Q8_0; ffn_down (rows of 1536 = 6 x 256) Q6_K in those 14 layers, Q4_K in 16;
        // 61 norm vectors in F32: 272 tensors
        assertThat(histogram("smollm2-135m", "Q4_K_M")).containsExactlyInAnyOrderEntriesOf(Map.of(
                GgmlType.Q5_0, 166, GgmlType.Q8_0, 15, GgmlType.Q6_K, 14, GgmlType.Q4_K, 16, GgmlType.F32, 61));
    }

    @Test
    void q4KmOnLlama1B() {
        // 16 layers, more bits in layers 0, 1, 4, 7, 10, 13, 14, 15: attn_v and ffn_down Q6_K there (16),
        // the tied embedding Q6_K (2048 = 8 x 256); the other 7 x 16 - 16 = 96 matrices Q4_K; 33 norms
        assertThat(histogram("llama-3.2-1b", "q4_k_m")).containsExactlyInAnyOrderEntriesOf(Map.of(
                GgmlType.Q6_K, 17, GgmlType.Q4_K, 96, GgmlType.F32, 33));
    }

    @Test
    void plainPresetsAndTheOldLabels() {
        assertThat(histogram("smollm2-135m-q8", null)).containsExactlyInAnyOrderEntriesOf(Map.of(GgmlType.Q8_0, 211, GgmlType.F32, 61));
        assertThat(histogram("smollm2-135m", null)).isEqualTo(histogram("smollm2-135m-q8", null));
        assertThat(histogram("smollm2-135m-f32", null)).containsExactlyInAnyOrderEntriesOf(Map.of(GgmlType.F32, 272));
        // Q6_K everywhere: rows of 576 fall back to Q8_0, ffn_down (1536) stays Q6_K
        assertThat(histogram("smollm2-135m", "Q6_K")).containsExactlyInAnyOrderEntriesOf(Map.of(
                GgmlType.Q8_0, 181, GgmlType.Q6_K, 30, GgmlType.F32, 61));
        assertThat(SyntheticModels.Quant.of("Q4_K_M").fileType()).isEqualTo(15);
        assertThat(SyntheticModels.Quant.of("q5_0").fileType()).isEqualTo(8);
    }

    @Test
    void theVocabularyRoundTripsRepliesAndSpellsAnyTextInBytes(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("smollm2.gguf");
        SyntheticModels.writeGguf(SyntheticModels.model("smollm2-135m-q8", null), file);
        try (LoadedModel m = GgufModelLoader.load(file)) {
            String[] tokens = m.vocabulary().tokens();
            assertThat(tokens).hasSize(49152);
            assertThat(tokens[3]).isEqualTo("<0x00>");
            assertThat(tokens[3 + 0x0A]).isEqualTo("<0x0A>");   // llama.cpp looks up the newline's byte token
            assertThat(tokens[258]).isEqualTo("<0xFF>");
            assertThat(tokens[259]).isEqualTo("\u4e00");
            // each placeholder is one code point, none a surrogate or a noncharacter, all distinct
            assertThat(java.util.Arrays.stream(tokens, 259, tokens.length).allMatch(t -> t.equals(Character.toString(t.codePointAt(0)))))
                    .isTrue();
            assertThat(java.util.Arrays.stream(tokens, 259, tokens.length).mapToInt(t -> t.codePointAt(0)).noneMatch(
                    cp -> cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE || (cp & 0xFFFE) == 0xFFFE || cp >= 0xFDD0 && cp <= 0xFDEF))
                    .isTrue();
            assertThat(java.util.Arrays.stream(tokens).distinct().count()).isEqualTo(tokens.length);
            Tokenizer tok = Tokenizers.from(m.vocabulary());
            // a generated reply, detokenised and tokenised again, is the same ids (a prefix cache depends on it)
            SplittableRandom rnd = new SplittableRandom(7);
            int[] reply = rnd.ints(64, 259, tokens.length).toArray();
            assertThat(tok.encode(tok.decode(reply))).containsExactly(reply);
            // plain text has no placeholder: its bytes
            int[] text = tok.encode("go on.");
            assertThat(java.util.Arrays.stream(text).allMatch(id -> id >= 3 && id < 259)).as(java.util.Arrays.toString(text)).isTrue();
            assertThat(tok.decode(text)).contains("go on.");
        }
    }

    @Test
    void refusesUnknownNamesAndContradictions() {
        assertThatThrownBy(() -> SyntheticModels.model("smollm2-135m", "Q7")).isInstanceOf(InputException.class)
                .hasMessageContaining("--quant").hasMessageContaining("Q4_K_M");
        assertThatThrownBy(() -> SyntheticModels.model("smollm2-135m-q8", "Q4_0")).isInstanceOf(InputException.class)
                .hasMessageContaining("contradicts");
        assertThatThrownBy(() -> SyntheticModels.model("gpt5", null)).isInstanceOf(InputException.class)
                .hasMessageContaining("llama-3.2-1b");
    }
}
