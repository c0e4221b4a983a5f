package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.session.Session;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --positions auto}: the same logits as {@code original} while the conversation is within
 * the trained context, the same as {@code cache} from its end on, and no warning. Streaming keeps
 * the same entries in every mode (sinks and the recent window, by position alone), with a gap
 * between them, so the two references really differ and each comparison can fail.
 */
class AutoPositionsTest {
    static final int CONTEXT = 24, TURN = 5, BUDGET = 8, TOKENS = 60;

    @Test
    void originalWithinTheContextThenCachePositions() {
        LlamaConfig c = ContextWarningTest.config(CONTEXT);
        PolicySpec spec = PolicyRegistry.spec("streaming", BUDGET, java.util.Map.of("sinks", 2));
        List<String> warned = new ArrayList<>();
        try (Llama llama = new Llama(c, NaiveLlama.randomWeights(c, 3, false), 4, 1)) {
            llama.onWarning(warned::add);
            float[][] auto = run(llama, spec, PositionMode.AUTO);
            assertThat(warned).isEmpty();
            float[][] original = run(llama, spec, PositionMode.ORIGINAL);
            assertThat(warned).hasSize(1); // original goes past the context
            float[][] cache = run(llama, spec, PositionMode.CACHE);
            boolean differBefore = false, differAfter = false;
            for (int p = 0; p < TOKENS; p++) {
                boolean same = Arrays.equals(original[p], cache[p]);
                if (p < CONTEXT) {
                    assertThat(auto[p]).as("position %d, within the context", p).isEqualTo(original[p]);
                    differBefore |= !same;
                } else {
                    assertThat(auto[p]).as("position %d, past the context", p).isEqualTo(cache[p]);
                    differAfter |= !same;
                }
            }
            assertThat(differBefore).as("original and cache positions differ once entries are evicted").isTrue();
            assertThat(differAfter).isTrue();
        }
    }

    @Test
    void theHeadroomStopsAtTheContextEndAndAResetStartsOverInOriginalPositions() {
        LlamaConfig c = ContextWarningTest.config(CONTEXT);
        try (Llama llama = new Llama(c, NaiveLlama.randomWeights(c, 3, false), 4, 1)) {
            KvCache cache = llama.newCache(PolicyRegistry.spec("window", BUDGET), 10, PositionMode.AUTO);
            assertThat(cache.headroom()).isEqualTo(10);
            Session s = new Session(llama, cache);
            int[] one = new int[1];
            for (int p = 0; p < 22; p++) {
                s.feed(one, 0, 1);
                if (s.turnTokens() == 6) s.endTurn();
            }
            // 22 tokens: 3 turns of 6 ended, 4 pending (room for 6 more), but 2 positions left before the context's end
            assertThat(cache.headroom()).isEqualTo(2);
            assertThat(cache.positionMode()).isEqualTo(PositionMode.ORIGINAL);
            s.feed(new int[] {1, 2, 3}, 0, 3); // split at 24, with no policy run at the split
            assertThat(cache.pending()).isEqualTo(7);
            assertThat(cache.updates()).isEqualTo(3);
            assertThat(cache.headroom()).isEqualTo(3);
            assertThat(cache.positionMode()).isEqualTo(PositionMode.CACHE);
            assertThat(cache.positionSetting()).isEqualTo(PositionMode.AUTO);
            s.reset();
            assertThat(cache.positionMode()).isEqualTo(PositionMode.ORIGINAL);
            assertThat(cache.headroom()).isEqualTo(10);
        }
    }

    /** Every token fed alone (so that the three modes run the same chunks); a turn ends every TURN tokens. */
    private static float[][] run(Llama llama, PolicySpec spec, PositionMode mode) {
        int vocab = llama.config().vocabSize();
        Session s = new Session(llama, llama.newCache(spec, TURN, mode));
        int[] tokens = new int[TOKENS];
        for (int i = 0; i < TOKENS; i++) tokens[i] = (7 * i + 3) % vocab;
        float[][] out = new float[TOKENS][];
        float[] row = new float[vocab];
        for (int p = 0; p < TOKENS; p++) {
            s.feedEveryPosition(tokens, p, 1, row);
            out[p] = row.clone();
            if (s.turnTokens() == TURN) s.endTurn();
        }
        return out;
    }
}
