package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.session.Session;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The path of {@code fdkvc fidelity}: a conversation fed turn by turn through
 * {@link Session#feedEveryPosition} (chunks of the model's batch, the policy run whenever a turn
 * fills its headroom: turns longer than it are fed here) and ended with {@link Session#endTurn()} as {@code chat} does. Every row of
 * every chunk must equal {@link NaiveLlama}'s prediction over the whole sequence with each position
 * attending exactly to the entries the bounded cache held, at their true positions (or slots).
 * Budgets are small, so that every turn evicts.
 */
class TeacherForcedReferenceTest {
    @ParameterizedTest(name = "{0} {1}({2}) {3} positions, batch {4}, headroom {5}")
    @CsvSource({
            "llama, window,    7, original, 4, 16",
            "qwen2, window,    6, original, 9, 16",
            "llama, streaming, 8, original, 5, 16",
            "qwen3, streaming, 7, original, 3, 6",
            "llama, h2o,       8, original, 4, 16",
            "qwen2, h2o,       6, original, 16, 5",
            "llama, h2o,       6, cache,    4, 16",
    })
    void everyRowEqualsAMaskedPassOverTheEntriesTheCacheHeld(String arch, String policy, int budget, String positions, int batch,
                                                            int headroom) {
        LlamaConfig c = EvictionReferenceTest.config(arch);
        LlamaWeights w = NaiveLlama.randomWeights(c, 11, arch.equals("qwen2"));
        NaiveLlama ref = new NaiveLlama(c, w);
        PolicySpec spec = policy.equals("streaming") ? PolicyRegistry.spec(policy, budget, Map.of("sinks", "2"))
                : PolicyRegistry.spec(policy, budget);
        int[] turnLengths = {9, 5, 11, 3, 8, 12, 6, 10};
        int total = Arrays.stream(turnLengths).sum();
        int[] tokens = LlamaForwardTest.randomTokens(total, c.vocabSize(), 13);
        int vocab = c.vocabSize();
        long evicted = 0;
        try (Llama llama = new Llama(c, w, batch, 2)) {
            KvCache cache = llama.newCache(spec, headroom, PositionMode.parse(positions));
            Session s = new Session(llama, cache);
            float[] out = new float[batch * vocab];
            int from = 0;
            for (int turn = 0; turn < turnLengths.length; turn++) {
                int end = from + turnLengths[turn];
                for (int off = from, n; off < end; off += n) {
                    // up to the turn's headroom, so that the reference can be stepped right after the chunk; at
                    // headroom 0 the session runs the policy first (a long turn's chunk update)
                    n = Math.min(Math.min(batch, end - off), cache.headroom() == 0 ? headroom : cache.headroom());
                    s.feedEveryPosition(tokens, off, n, out);
                    // the reference attends, per stream, to what the cache holds now, up to each position
                    for (int t = 0; t < n; t++) {
                        double[] want = ref.next(tokens[off + t], cache);
                        float[] got = Arrays.copyOfRange(out, t * vocab, (t + 1) * vocab);
                        assertThat(LlamaForwardTest.maxRelativeError(got, want)).as("turn %d token %d", turn, off + t).isLessThan(2e-5);
                    }
                }
                Session.TurnStats st = s.endTurn();
                evicted += st.evicted();
                assertThat(st.cacheEntries()).isLessThanOrEqualTo(budget);
                from = end;
            }
        }
        assertThat(evicted).isGreaterThan(4L * c.layers() * c.kvHeads());
    }
}
