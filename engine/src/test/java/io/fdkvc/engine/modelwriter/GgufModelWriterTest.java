package io.fdkvc.engine.modelwriter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.engine.gguf.GgufFile;
import io.fdkvc.engine.modelwriter.TensorSpec.Role;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys and tensors each layout writes, as llama.cpp's converter writes them, and the streamed tensor data. */
class GgufModelWriterTest {
    @TempDir
    Path dir;

    private GgufFile written(ModelShape s, GgmlType type) {
        Path f = dir.resolve(s.architecture() + "-" + type + ".gguf");
        GgufModelWriter.write(f, s, VocabularySpec.sentencePiecePlaceholders(s.vocabSize()), Weights.random(5), TensorTypes.uniform(type));
        return GgufFile.open(f);
    }

    private static long number(GgufFile f, String key) {
        return f.get(key, Long.class);
    }

    private static double real(GgufFile f, String key) {
        return ((Number) f.metadata().get(key)).doubleValue();
    }

    @Test
    void phi3FusesProjectionsAndCarriesLongRope() {
        float[] lng = {1, 2, 3, 4, 5, 6}, shrt = {1, 1.1f, 1.2f, 1.3f, 1.4f, 1.5f};
        ModelShape s = new ModelShape(new Layout.Phi3(12, 256, lng, shrt, 262144), 64, 128, 2, 4, 2, 16, 300, 4096, 1e-5f, 10000f, true);
        try (GgufFile f = written(s, GgmlType.Q8_0)) {
            assertThat(f.get("general.architecture", String.class)).isEqualTo("phi3");
            assertThat(number(f, "phi3.rope.dimension_count")).isEqualTo(12);
            assertThat(number(f, "phi3.rope.scaling.original_context_length")).isEqualTo(256);
            assertThat(number(f, "phi3.attention.sliding_window")).isEqualTo(262144);
            // sqrt(1 + ln(4096 / 256) / ln(256)) = sqrt(1 + 4/8)
            assertThat(real(f, "phi3.rope.scaling.attn_factor")).isCloseTo(Math.sqrt(1.5), within(1e-6));
            assertThat(f.metadata()).doesNotContainKeys("phi3.attention.key_length", "phi3.rope.scaling.type");
            // q (4 x 16) + k + v (2 x 16 each) = 128 rows; gate and up: 2 x 128 rows
            assertThat(f.tensorInfo("blk.1.attn_qkv.weight").dims()).containsExactly(64, 128);
            assertThat(f.tensorInfo("blk.1.ffn_up.weight").dims()).containsExactly(64, 256);
            assertThat(f.tensorInfo("blk.1.ffn_down.weight").dims()).containsExactly(128, 64);
            assertThat(f.hasTensor("blk.0.attn_q.weight")).isFalse();
            assertThat(f.hasTensor("blk.0.ffn_gate.weight")).isFalse();
            assertThat(f.hasTensor("output.weight")).isFalse();
            assertThat(f.floats("rope_factors_long.weight")).containsExactly(lng);
            assertThat(f.floats("rope_factors_short.weight")).containsExactly(shrt);
            assertThat(f.tensorInfo("blk.0.attn_qkv.weight").type()).isEqualTo(GgmlType.Q8_0);
            assertThat(f.tensorInfo("blk.0.attn_norm.weight").type()).isEqualTo(GgmlType.F32);
        }
    }

    @Test
    void gemma3HasPostNormsQkNormsAndTheSlidingWindowKeys() {
        ModelShape s = new ModelShape(new Layout.Gemma3(8, 10000f), 64, 128, 7, 4, 1, 32, 300, 4096, 1e-6f, 1_000_000f, true);
        try (GgufFile f = written(s, GgmlType.F32)) {
            assertThat(number(f, "gemma3.attention.key_length")).isEqualTo(32);
            assertThat(number(f, "gemma3.attention.value_length")).isEqualTo(32);
            assertThat(number(f, "gemma3.attention.sliding_window")).isEqualTo(8);
            assertThat(real(f, "gemma3.rope.freq_base_swa")).isEqualTo(10000);
            assertThat(real(f, "gemma3.rope.freq_base")).isEqualTo(1_000_000);
            assertThat(f.metadata()).doesNotContainKey("gemma3.attention.sliding_window_pattern");
            for (int l = 0; l < 7; l++) {
                assertThat(f.tensorInfo("blk." + l + ".post_attention_norm.weight").dims()).containsExactly(64);
                assertThat(f.tensorInfo("blk." + l + ".post_ffw_norm.weight").dims()).containsExactly(64);
                assertThat(f.tensorInfo("blk." + l + ".attn_q_norm.weight").dims()).containsExactly(32);
                assertThat(f.tensorInfo("blk." + l + ".attn_q.weight").dims()).containsExactly(64, 128);
                assertThat(f.tensorInfo("blk." + l + ".attn_k.weight").dims()).containsExactly(64, 32);
                assertThat(f.tensorInfo("blk." + l + ".attn_output.weight").dims()).containsExactly(128, 64);
            }
            // 1 embedding + 7 x 13 per layer + output norm
            assertThat(f.tensorNames()).hasSize(1 + 7 * 13 + 1);
        }
    }

    @Test
    void mistral3WritesYarnAndTheAttentionTemperature() {
        ModelShape s = new ModelShape(new Layout.Mistral3(16f, 16384, 32f, 1f, 1f, 0.1f), 64, 128, 2, 4, 2, 32, 300, 262144, 1e-5f,
                1_000_000f, false);
        try (GgufFile f = written(s, GgmlType.F16)) {
            assertThat(f.get("mistral3.rope.scaling.type", String.class)).isEqualTo("yarn");
            assertThat(real(f, "mistral3.rope.scaling.factor")).isEqualTo(16);
            assertThat(number(f, "mistral3.rope.scaling.original_context_length")).isEqualTo(16384);
            assertThat(real(f, "mistral3.rope.scaling.yarn_beta_fast")).isEqualTo(32);
            assertThat(real(f, "mistral3.rope.scaling.yarn_beta_slow")).isEqualTo(1);
            assertThat(real(f, "mistral3.rope.scaling.yarn_log_multiplier")).isEqualTo(1);
            assertThat(real(f, "mistral3.attention.temperature_scale")).isCloseTo(0.1, within(1e-7));
            assertThat(number(f, "mistral3.attention.key_length")).isEqualTo(32);
            assertThat(number(f, "mistral3.rope.dimension_count")).isEqualTo(32);
            assertThat(number(f, "mistral3.vocab_size")).isEqualTo(300);
            assertThat(f.tensorInfo("output.weight").dims()).containsExactly(64, 300);
            assertThat(f.tensorInfo("output.weight").type()).isEqualTo(GgmlType.F16);
        }
    }

    @Test
    void llamaWritesKeyLengthOnlyWhereTheHeadIsNotDimOverHeads() {
        ModelShape plain = new ModelShape(new Layout.SmolLM3(), 64, 128, 4, 4, 2, 16, 300, 4096, 1e-6f, 5e6f, true);
        try (GgufFile f = written(plain, GgmlType.F32)) {
            assertThat(f.metadata()).doesNotContainKey("smollm3.attention.key_length");
            assertThat(number(f, "smollm3.rope.dimension_count")).isEqualTo(16);
            assertThat(f.hasTensor("blk.3.attn_q_norm.weight")).isFalse();
            assertThat(f.hasTensor("blk.3.attn_q.bias")).isFalse();
        }
        ModelShape wide = new ModelShape(new Layout.Llama(), 64, 128, 1, 4, 2, 32, 300, 4096, 1e-6f, 1e4f, true);
        try (GgufFile f = written(wide, GgmlType.F32)) {
            assertThat(number(f, "llama.attention.key_length")).isEqualTo(32);
        }
    }

    /** Streamed rows, over more than one chunk, are the bytes of the whole tensor quantised at once. */
    @Test
    void streamedTensorsAreTheWholeTensorQuantised() {
        ModelShape s = new ModelShape(new Layout.Qwen2(), 64, 128, 1, 4, 2, 16, 20000, 4096, 1e-6f, 1e6f, true);
        try (GgufFile f = written(s, GgmlType.Q8_0)) {
            TensorSpec emb = GgufModelWriter.tensors(s).getFirst();
            assertThat(emb.role()).isEqualTo(Role.TOKEN_EMBEDDING);
            assertThat(emb.elements()).isGreaterThan(1 << 20);
            float[] all = new float[(int) emb.elements()];
            Weights.random(5).fill(emb, 0, 20000, all);
            assertThat(f.tensorData("token_embd.weight").toArray(ValueLayout.JAVA_BYTE)).containsExactly(Quantizer.quantize(GgmlType.Q8_0, all));
            assertThat(f.tensorInfo("blk.0.attn_k.bias").dims()).containsExactly(32);
        }
    }

    @Test
    void randomWeightsDoNotDependOnTheChunking() {
        TensorSpec t = new TensorSpec("blk.0.ffn_down.weight", Role.FFN_DOWN, 0, 10, 48);
        Weights w = Weights.random(9);
        float[] whole = new float[480], parts = new float[480], tail = new float[6 * 48];
        w.fill(t, 0, 10, whole);
        w.fill(t, 0, 4, parts);
        w.fill(t, 4, 6, tail);
        System.arraycopy(tail, 0, parts, 4 * 48, tail.length);
        assertThat(parts).containsExactly(whole);
        double bound = Math.sqrt(3.0 / 48);
        for (float v : whole) assertThat(Math.abs(v)).isLessThanOrEqualTo((float) bound);
        float[] norm = new float[48];
        w.fill(new TensorSpec("output_norm.weight", Role.OUTPUT_NORM, -1, 1, 48), 0, 1, norm);
        for (float v : norm) assertThat(v).isBetween(0.8f, 1.2f);
        w.withUnitNorms().fill(new TensorSpec("output_norm.weight", Role.OUTPUT_NORM, -1, 1, 48), 0, 1, norm);
        for (float v : norm) assertThat(v).isEqualTo(1f);
    }

    @Test
    void impossibleShapesAreRefused() {
        assertThatThrownBy(() -> new ModelShape(new Layout.Llama(), 64, 128, 2, 6, 4, 16, 300, 4096, 1e-5f, 1e4f, true))
                .hasMessageContaining("6 heads are not a multiple of 4 KV heads");
        assertThatThrownBy(() -> new ModelShape(new Layout.Phi3(12, 256, null, null, 0), 64, 128, 2, 4, 2, 32, 300, 4096, 1e-5f, 1e4f, true))
                .hasMessageContaining("heads x headDim = dim");
        assertThatThrownBy(() -> new Layout.Phi3(12, 256, new float[5], new float[5], 0)).hasMessageContaining("ropeDims / 2 = 6");
        ModelShape s = new ModelShape(new Layout.Llama(), 64, 128, 1, 4, 2, 16, 300, 4096, 1e-5f, 1e4f, true);
        assertThatThrownBy(() -> GgufModelWriter.writer(s, VocabularySpec.sentencePiecePlaceholders(400), Weights.random(1),
                TensorTypes.uniform(GgmlType.F32))).hasMessageContaining("vocabulary of 400 tokens for a shape of 300");
    }
}
