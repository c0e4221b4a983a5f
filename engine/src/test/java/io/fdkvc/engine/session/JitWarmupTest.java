package io.fdkvc.engine.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.model.Llama2cLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.sampling.Sampler;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class JitWarmupTest {
    static final Duration HOUR = Duration.ofHours(1);

    static LoadedModel stories() {
        Path dir = SessionTest.dir();
        return Llama2cLoader.load(dir.resolve("stories260K.bin"), dir.resolve("tok512.bin"));
    }

    /** Logits after a fixed prompt and 24 greedy tokens on a fresh cache, all of them concatenated. */
    static float[] conversation(Llama llama, PolicySpec spec) {
        Session s = new Session(llama, llama.newCache(spec, 32, PositionMode.CACHE));
        int vocab = llama.config().vocabSize();
        int[] prompt = {1, 403, 407, 261, 322, 281, 262, 77, 29, 13};
        float[] all = new float[25 * vocab];
        float[] logits = s.feed(prompt, 0, prompt.length);
        Sampler greedy = Sampler.greedy(vocab);
        for (int t = 0; t < 25; t++) {
            System.arraycopy(logits, 0, all, t * vocab, vocab);
            if (t == 24) break;
            if (s.cache().headroom() == 0) s.endTurn();
            logits = s.feed(greedy.sample(logits));
        }
        return all;
    }

    /**
     * The warm-up leaves nothing behind that changes a result: the same conversation gives the
     * same bits on the model before and after it (thousands of throwaway tokens through the same
     * scratch arrays, the batched path, evictions), here with a budget the warm-up passes.
     */
    @Test
    void aWarmedModelComputesTheBitsOfAColdOne() {
        PolicySpec spec = PolicyRegistry.spec("fdkvc", 24);
        try (LoadedModel m = stories(); Llama llama = new Llama(m.config(), m.weights(), 16, 1)) {
            float[] cold = conversation(llama, spec);
            JitWarmup.Result w = JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 3, HOUR, 12);
            assertThat(w.turns()).isEqualTo(12);
            assertThat(w.batchedSteps()).isPositive();
            assertThat(w.peakEntries()).as("the budget was reached: the policy evicted").isEqualTo(24);
            float[] warm = conversation(llama, spec);
            assertThat(Arrays.equals(cold, warm)).as("logits after the warm-up, bit for bit").isTrue();
        }
    }

    /**
     * What one turn feeds, by hand: turn headroom 32, batch 16, 3 conversations: 8 decode steps
     * (32 / 4) alone in conversation 0, 8 batched steps of all three, and a prompt of
     * min(16, 32 - 8 - 8) = 16 tokens in each, so 3 * 16 + 8 + 8 * 3 = 80 tokens and 8 batched
     * steps a turn. One conversation: no batched steps, a prompt of min(16, 32 - 8) = 16, so 24.
     */
    @Test
    void eachTurnFeedsTheTokensItShould() {
        PolicySpec spec = PolicyRegistry.spec("window", 40);
        try (LoadedModel m = stories(); Llama llama = new Llama(m.config(), m.weights(), 16, 1)) {
            JitWarmup.Result three = JitWarmup.run(llama, spec, 32, PositionMode.ORIGINAL, 3, HOUR, 3);
            assertThat(three.turns()).isEqualTo(3);
            assertThat(three.conversations()).isEqualTo(3);
            assertThat(three.tokens()).isEqualTo(80L * three.turns());
            assertThat(three.batchedSteps()).isEqualTo(8L * three.turns());
            JitWarmup.Result one = JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 1, HOUR, 2);
            assertThat(one.tokens()).isEqualTo(24L * one.turns());
            assertThat(one.batchedSteps()).isZero();
            // more conversations than the model batches at once: as many as it does
            JitWarmup.Result capped = JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 40, HOUR, 1);
            int n = 16, prompt = 16;
            assertThat(capped.conversations()).isEqualTo(n);
            assertThat(capped.tokens()).isEqualTo((long) (n * prompt + 8 + 8 * n) * capped.turns());
            assertThat(JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 2, Duration.ZERO)).isEqualTo(new JitWarmup.Result(0, 0, 0, 0, 0, 0));
            // a positive time runs at least one turn, however short
            assertThat(JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 2, Duration.ofNanos(1)).turns()).isEqualTo(1);
        }
    }

    /** An unbounded cache starts over instead of growing for as long as the warm-up runs. */
    @Test
    void anUnboundedCacheStaysBounded() {
        try (LoadedModel m = stories(); Llama llama = new Llama(m.config(), m.weights(), 64, 1)) {
            // 64 + 16 tokens a turn: 26 turns pass the limit of 2048 entries, 40 would hold 3200
            JitWarmup.Result w = JitWarmup.run(llama, PolicyRegistry.spec("full", 8), 256, PositionMode.CACHE, 1, HOUR, 40);
            assertThat(w.turns()).isEqualTo(40);
            assertThat(w.peakEntries()).isGreaterThan(JitWarmup.UNBOUNDED_LIMIT).isLessThanOrEqualTo(JitWarmup.UNBOUNDED_LIMIT + 80);
        }
    }

    @Test
    void refusesWhatCannotRun() {
        PolicySpec spec = PolicyRegistry.spec("window", 40);
        try (LoadedModel m = stories(); Llama llama = new Llama(m.config(), m.weights(), 16, 1)) {
            assertThatThrownBy(() -> JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 0, Duration.ofMillis(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("conversations");
            assertThatThrownBy(() -> JitWarmup.run(llama, spec, 32, PositionMode.CACHE, 1, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
            assertThatThrownBy(() -> JitWarmup.run(llama, spec, 1, PositionMode.CACHE, 1, Duration.ofMillis(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("headroom");
        }
    }
}
