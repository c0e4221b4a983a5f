package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.engine.modelwriter.LlamaCppChecks;
import io.fdkvc.engine.tensor.GgmlType;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LongRoPE's short or long factors, chosen by the run's context as llama.cpp chooses them: the
 * long ones only when the context exceeds the original one. On the phi3 check file (original
 * context 256, short factors 1 .. 1.3, long ones 1 .. 9, written by the writer and read back).
 */
class LongRopeChoiceTest {
    static final float[] SHORT = {1f, 1.02f, 1.05f, 1.1f, 1.2f, 1.3f}, LONG = {1f, 1.5f, 2.5f, 4f, 6f, 9f};

    @Test
    void theLongFactorsOnlyBeyondTheOriginalContext(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("phi3.gguf");
        LlamaCppChecks.write(LlamaCppChecks.check("phi3"), GgmlType.F32, 1, file);
        try (LoadedModel m = GgufModelLoader.load(file)) {
            LlamaConfig c = m.config();
            assertThat(c.longRopeChoice(256)).isEqualTo("LongRoPE: the short factors (context 256 <= the original 256)");
            assertThat(c.longRopeChoice(257)).isEqualTo("LongRoPE: the long factors (context 257 > the original 256)");
            assertThat(c.longRopeChoice(4096)).isEqualTo("LongRoPE: the long factors (context 4096 > the original 256)");
            for (int context : new int[] {1, 256, 257, 4096}) {
                LlamaConfig run = c.forContext(context);
                for (Blocks.LayerAttention a : run.blocks().layers()) {
                    assertThat(a.rope().frequencyFactors()).as("context %d", context).containsExactly(context > 256 ? LONG : SHORT);
                }
            }
        }
    }

    @Test
    void aModelWithoutLongFactorsHasNoChoice(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("llama.gguf");
        LlamaCppChecks.write(LlamaCppChecks.check("llama"), GgmlType.F32, 1, file);
        try (LoadedModel m = GgufModelLoader.load(file)) {
            assertThat(m.config().longRopeChoice(1 << 20)).isNull();
            assertThat(m.config().forContext(1 << 20)).isEqualTo(m.config());
        }
    }
}
