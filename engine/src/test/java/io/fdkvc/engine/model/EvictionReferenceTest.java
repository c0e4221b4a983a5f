package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.session.Session;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Logits after evictions against {@link NaiveLlama} attending to exactly the entries the cache
 * retained, at their true positions ({@code original}) or at their slots ({@code cache}), with the
 * cache's eq. 9 bias. Budgets are a few entries, so that every turn evicts, the survivors close
 * ranks (their slots change: the engine must re-rotate them, or, with original positions, move
 * their rotated keys) and FD-KVC's bias is non-zero. Turns are fed as a prefill chunk and then
 * single tokens, so that both paths see evicted caches.
 */
class EvictionReferenceTest {

    static LlamaConfig config(String arch) {
        boolean neox = !arch.equals("llama");
        int heads = 4, kvHeads = 2, hd = arch.equals("qwen3") ? 12 : 8;
        return new LlamaConfig(arch, 32, 48, 2, heads, kvHeads, hd, 60, 256, 1e-5f, neox ? 1_000_000f : 10000f,
                "none", 1f, 0, neox, true);
    }

    @ParameterizedTest(name = "{0} {1}({2}) {3} positions, batch {4}")
    @CsvSource({
            "llama, window,    6,  cache,    3",
            "llama, window,    6,  original, 3",
            "qwen2, streaming, 7,  cache,    4",
            "qwen2, streaming, 7,  original, 1",
            "llama, fdkvc,     6,  cache,    4",
            "qwen3, fdkvc,     5,  original, 4",
            "qwen3, fdkvc,     8,  cache,    2",
            "llama, h2o,       6,  cache,    3",
            "qwen2, snapkv,    6,  original, 3",
            "llama, tova,      5,  cache,    2",
    })
    void logitsAfterEvictionMatchANaivePassOverTheRetainedEntries(String arch, String policy, int budget, String positions,
                                                                  int batch) {
        LlamaConfig c = config(arch);
        LlamaWeights w = NaiveLlama.randomWeights(c, 5, arch.equals("qwen2"));
        NaiveLlama ref = new NaiveLlama(c, w);
        PolicySpec spec = policy.equals("streaming") ? PolicyRegistry.spec(policy, budget, Map.of("sinks", "2"))
                : PolicyRegistry.spec(policy, budget);
        int[] tokens = LlamaForwardTest.randomTokens(80, c.vocabSize(), 9);
        long evicted = 0;
        try (Llama llama = new Llama(c, w, batch, 2)) {
            KvCache cache = llama.newCache(spec, 5, PositionMode.parse(positions));
            Session s = new Session(llama, cache);
            int next = 0;
            for (int turn = 0; turn < 12; turn++) {
                // a prompt of up to `batch` tokens in one forward pass, then single tokens, 5 in all
                int prompt = Math.min(batch, 3);
                float[] got = s.feed(tokens, next, prompt);
                double[] want = null;
                for (int i = next; i < next + prompt; i++) want = ref.next(tokens[i], cache);
                assertThat(LlamaForwardTest.maxRelativeError(got, want)).as("turn %d prompt", turn).isLessThan(2e-5);
                next += prompt;
                for (int i = prompt; i < 5; i++, next++) {
                    got = s.feed(tokens[next]);
                    want = ref.next(tokens[next], cache);
                    assertThat(LlamaForwardTest.maxRelativeError(got, want)).as("turn %d token %d", turn, next).isLessThan(2e-5);
                }
                Session.TurnStats st = s.endTurn();
                evicted += st.evicted();
                assertThat(st.cacheEntries()).isLessThanOrEqualTo(budget);
            }
        }
        // the cache ran full: every later turn evicted in every stream
        assertThat(evicted).isGreaterThan(8L * c.layers() * c.kvHeads());
    }
}
