package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A batched decode step ({@link Llama#forwardDecodeBatch}) gives each conversation the logits of
 * {@link NaiveLlama} attending to exactly the entries that conversation's cache retained: the
 * conversations differ in policy (observing the attention or not, FD-KVC's eq. 9 bias or not),
 * in position mode (slots or true positions, both in one batch), in length and in how often they
 * have evicted, so that the batched attention phases must pick each unit's own cache, query row,
 * entry count and rotation. One conversation is long enough for the phases to split over two
 * threads.
 */
class BatchedDecodeReferenceTest {

    static final String[][] CONVERSATIONS = {
            {"fdkvc", "6", "cache"}, {"window", "7", "original"}, {"h2o", "5", "cache"},
            {"fdkvc", "9", "original"}, {"tova", "6", "original"}, {"full", "1000", "cache"},
    };

    @ParameterizedTest(name = "{0}, heads of {1}")
    @CsvSource({"llama, 16", "qwen3, 16", "llama, 64"})
    void eachRowOfABatchedStepMatchesANaivePassOverItsOwnCache(String arch, int hd) {
        boolean neox = !arch.equals("llama");
        // 4 heads over 2 KV heads; 6 conversations x 4 heads = 24 units per phase. Heads of 64
        // floats (wider than the model) share their group's pass over the values in pairs
        LlamaConfig c = new LlamaConfig(arch, 64, 96, 2, 4, 2, hd, 60, 256, 1e-5f, neox ? 1_000_000f : 10000f,
                "none", 1f, 0, neox, true);
        LlamaWeights w = NaiveLlama.randomWeights(c, 11, false);
        int n = CONVERSATIONS.length;
        try (Llama llama = new Llama(c, w, 8, 2)) {
            KvCache[] caches = new KvCache[n];
            NaiveLlama[] refs = new NaiveLlama[n];
            int[][] streams = new int[n][];
            int[] next = new int[n];
            for (int b = 0; b < n; b++) {
                String[] cv = CONVERSATIONS[b];
                var spec = PolicyRegistry.spec(cv[0], Integer.parseInt(cv[1]));
                caches[b] = llama.newCache(spec, 6, PositionMode.parse(cv[2]));
                refs[b] = new NaiveLlama(c, w);
                streams[b] = LlamaForwardTest.randomTokens(700, c.vocabSize(), 20 + b);
                // histories of different lengths: b + 1 prompt tokens, the full cache's long enough
                // (1,200 entries a layer) for the attention phases to run on both threads
                int prompt = cv[0].equals("full") ? 600 : b + 1;
                for (int i = 0; i < prompt; i++) refs[b].next(streams[b][i], null);
                while (next[b] < prompt) {
                    if (caches[b].headroom() == 0) caches[b].endTurn();
                    int len = Math.min(prompt - next[b], caches[b].headroom());
                    llama.forward(caches[b], streams[b], next[b], len, false);
                    next[b] += len;
                }
            }
            int[] tokens = new int[n];
            long evicted = 0;
            for (int step = 0; step < 40; step++) {
                for (int b = 0; b < n; b++) {
                    // turns of different lengths: a conversation ends its turn when its headroom is gone
                    if (caches[b].headroom() == 0 || (step + b) % (3 + b) == 0) evicted += caches[b].endTurn().evicted();
                    tokens[b] = streams[b][next[b]++];
                }
                float[] got = llama.forwardDecodeBatch(caches, tokens, n).clone();
                for (int b = 0; b < n; b++) {
                    double[] want = refs[b].next(tokens[b], caches[b]);
                    float[] row = Arrays.copyOfRange(got, b * c.vocabSize(), (b + 1) * c.vocabSize());
                    assertThat(LlamaForwardTest.maxRelativeError(row, want))
                            .as("step %d, conversation %d (%s)", step, b, String.join(" ", CONVERSATIONS[b])).isLessThan(2e-5);
                }
            }
            assertThat(evicted).as("the budgets were reached").isGreaterThan(0);
        }
    }
}
