package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.modelwriter.LlamaCppChecks;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.GgmlType;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Each architecture's forward pass against {@link NaiveLlama}, independently of llama.cpp: the
 * small real-shape files of the llama.cpp side-by-side ({@link LlamaCppChecks}: Gemma 3's
 * sliding windows of 8 with their own RoPE base, post-block norms, gelu and scaled embeddings;
 * Phi-3's fused q/k/v and gate/up, RoPE over 12 of 16 dimensions with LongRoPE's short or long
 * factors and attention factor; Ministral 3's YaRN and attention temperature from position 16;
 * SmolLM3's layer without RoPE), written in F32, loaded by the engine's loader, run for 40 tokens
 * (a prompt in chunks, then one at a time, past every window and the temperature's first step),
 * every logit within float rounding of the double-precision reference.
 */
class ArchitectureReferenceTest {
    @TempDir
    Path dir;

    private LoadedModel load(String name) {
        LlamaCppChecks.Check check = LlamaCppChecks.check(name);
        Path file = dir.resolve(LlamaCppChecks.fileName(check, GgmlType.F32, 1));
        LlamaCppChecks.write(check, GgmlType.F32, 1, file);
        return GgufModelLoader.load(file);
    }

    @ParameterizedTest(name = "{0} context {1} positions {2} batch {3} threads {4}")
    @CsvSource({
            "gemma3,   512, original, 8,  1",
            "gemma3,   512, cache,    5,  2",
            "phi3,     256, original, 8,  1",
            "phi3,     512, cache,    3,  2",
            "mistral3, 256, original, 8,  2",
            "mistral3, 256, cache,    1,  1",
            "smollm3,  512, original, 8,  1",
            "smollm3,  512, cache,    16, 2",
    })
    void logitsMatchTheNaiveReference(String name, int context, String positions, int batch, int threads) {
        try (LoadedModel m = load(name)) {
            LlamaConfig c = m.config().forContext(context);
            NaiveLlama ref = new NaiveLlama(c, m.weights());
            int[] tokens = LlamaForwardTest.randomTokens(40, c.vocabSize(), 17);
            try (Llama llama = new Llama(c, m.weights(), batch, threads)) {
                Session s = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 8), 64, PositionMode.parse(positions)));
                double[] want = null;
                for (int i = 0; i < 24; i++) want = ref.next(tokens[i]);
                float[] got = s.feed(tokens, 0, 24);
                assertThat(LlamaForwardTest.maxRelativeError(got, want)).isLessThan(2e-5);
                for (int i = 24; i < tokens.length; i++) {
                    want = ref.next(tokens[i]);
                    got = s.feed(tokens[i]);
                    assertThat(LlamaForwardTest.maxRelativeError(got, want)).as("token %d", i).isLessThan(2e-5);
                }
            }
        }
    }

    /** What the loader reads from each file: the blocks that make the architecture. */
    @Test
    void theFilesDescribeTheirBlocks() {
        try (LoadedModel g = load("gemma3"); LoadedModel p = load("phi3"); LoadedModel mi = load("mistral3");
             LoadedModel sm = load("smollm3")) {
            Blocks gb = g.config().blocks();
            assertThat(gb.norms()).isEqualTo(Blocks.Norms.PRE_AND_POST);
            assertThat(gb.activation()).isEqualTo(Blocks.Activation.GELU);
            assertThat(gb.embeddingScale()).isEqualTo((float) Math.sqrt(64));
            // seven layers, five of every six sliding: 0-4 and 6
            assertThat(gb.windows()).containsExactly(8, 8, 8, 8, 8, 0, 8);
            assertThat(gb.layers().get(0).rope().theta()).isEqualTo(10000f);
            assertThat(gb.layers().get(5).rope().theta()).isEqualTo(1_000_000f);

            Rope pr = p.config().blocks().layers().get(0).rope();
            assertThat(pr.dims()).isEqualTo(12);
            assertThat(pr.originalContext()).isEqualTo(256);
            assertThat(pr.frequencyFactors()).containsExactly(1f, 1.02f, 1.05f, 1.1f, 1.2f, 1.3f);
            assertThat(pr.forContext(257).frequencyFactors()).containsExactly(1f, 1.5f, 2.5f, 4f, 6f, 9f);
            // sqrt(1 + ln(4096 / 256) / ln(256)), the converter's attention factor, on cos and sin
            assertThat((double) pr.magnitude()).isCloseTo(Math.sqrt(1.5), org.assertj.core.data.Offset.offset(1e-6));

            Blocks mb = mi.config().blocks();
            Rope mr = mb.layers().get(0).rope();
            assertThat(mr.scaling()).isEqualTo(Rope.Scaling.YARN);
            assertThat(mr.factor()).isEqualTo(16f);
            assertThat(mr.originalContext()).isEqualTo(16);
            assertThat(mb.temperature()).isEqualTo(new Blocks.AttentionTemperature(0.1f, 16));
            // 1 at positions 0-15, 1 + 0.1 ln 2 at 16-31
            assertThat(mb.temperature().at(15)).isEqualTo(1f);
            assertThat((double) mb.temperature().at(16)).isCloseTo(1 + 0.1 * Math.log(2), org.assertj.core.data.Offset.offset(1e-6));

            Blocks sb = sm.config().blocks();
            assertThat(sb.layers().get(3).rope()).isNull();
            assertThat(sb.layers().get(0).rope()).isNotNull();
            assertThat(sb.layers().get(2).rope()).isNotNull();
        }
    }

    /**
     * Sliding-window layers keep exactly their window whatever the policy, and the policy bounds
     * only the global layers; the logits are still the reference's over the entries kept.
     */
    @ParameterizedTest(name = "gemma3 {0}({1}) positions {2}")
    @CsvSource({"h2o, 12, original", "window, 5, cache", "full, 8, original"})
    void slidingLayersKeepTheirWindowAndThePolicyRunsOnTheGlobalOnes(String policy, int budget, String positions) {
        try (LoadedModel m = load("gemma3")) {
            LlamaConfig c = m.config();
            NaiveLlama ref = new NaiveLlama(c, m.weights());
            PolicySpec spec = PolicyRegistry.spec(policy, budget);
            int[] tokens = LlamaForwardTest.randomTokens(60, c.vocabSize(), 23);
            try (Llama llama = new Llama(c, m.weights(), 4, 1)) {
                KvCache cache = llama.newCache(spec, 4, PositionMode.parse(positions));
                assertThat(cache.slidingLayers()).isEqualTo(6);
                Session s = new Session(llama, cache);
                for (int i = 0; i < tokens.length; i++) {
                    if (cache.headroom() == 0) s.endTurn();
                    float[] got = s.feed(tokens[i]);
                    double[] want = ref.next(tokens[i], cache);
                    assertThat(LlamaForwardTest.maxRelativeError(got, want)).as("token %d", i).isLessThan(2e-5);
                }
                s.endTurn();
                for (int l = 0; l < c.layers(); l++) {
                    int held = cache.stream(l, 0).size();
                    if (cache.window(l) > 0) assertThat(held).as("sliding layer %d", l).isEqualTo(cache.window(l) - 1);
                    else if (!policy.equals("full")) assertThat(held).as("global layer %d", l).isEqualTo(budget);
                    else assertThat(held).as("global layer %d", l).isEqualTo(tokens.length);
                }
            }
        }
    }
}
