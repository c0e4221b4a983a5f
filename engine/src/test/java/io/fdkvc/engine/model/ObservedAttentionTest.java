package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.session.Session;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The policies' attention in the engine is the attention the forward pass computed: on a small
 * model, every query row's weights are computed independently ({@link NaiveLlama}: post-RoPE, with
 * the cache's eq. 9 bias, over the entries the row attended to, the turn's own included) and
 * averaged over the KV group, and each policy's scores after the turn must be what its method makes
 * of them:
 * <ul>
 *   <li>H2O: c = the sum over every row of every turn so far of the entry's weight;
 *   <li>TOVA: c = the turn's last row's weight (entries of earlier turns);
 *   <li>SnapKV: c = the weight summed over the turn's last {@code window} rows, max-pooled over
 *       {@code kernel} neighbours in cache order (entries of earlier turns);
 *   <li>FD-KVC: c = 1 at the entry's first turn, plus at every later turn the mean over the
 *       turn's rows of its weight (eq. 1 with the model's attention).
 * </ul>
 */
class ObservedAttentionTest {

    @ParameterizedTest(name = "{0} {1} positions")
    @CsvSource({
            "h2o,    cache",
            "h2o,    original",
            "tova,   cache",
            "snapkv, original",
            "snapkv, cache",
            "fdkvc,  cache",
            "fdkvc,  original",
    })
    void policyScoresAreTheModelsAttention(String policy, String positions) {
        LlamaConfig c = EvictionReferenceTest.config("qwen2");
        LlamaWeights w = NaiveLlama.randomWeights(c, 17, true);
        NaiveLlama ref = new NaiveLlama(c, w);
        int budget = 7, window = 3, kernel = 3;
        PolicySpec spec = policy.equals("snapkv") ? PolicyRegistry.spec(policy, budget, Map.of("window", window, "kernel", kernel))
                : PolicyRegistry.spec(policy, budget);
        int[] tokens = LlamaForwardTest.randomTokens(60, c.vocabSize(), 3);
        int layers = c.layers(), kv = c.kvHeads();
        // per stream: expected c by position (h2o, fdkvc), and this turn's rows of group-mean weights
        List<Map<Long, Double>> expect = new ArrayList<>();
        for (int i = 0; i < layers * kv; i++) expect.add(new HashMap<>());
        try (Llama llama = new Llama(c, w, 4, 1)) {
            KvCache cache = llama.newCache(spec, 6, PositionMode.parse(positions));
            Session s = new Session(llama, cache);
            int next = 0;
            for (int turn = 0; turn < 7; turn++) {
                int len = 3 + turn % 4;
                List<List<double[]>> rows = new ArrayList<>();   // per stream: the turn's rows
                List<List<long[]>> vis = new ArrayList<>();
                for (int i = 0; i < layers * kv; i++) {
                    rows.add(new ArrayList<>());
                    vis.add(new ArrayList<>());
                }
                // the first two tokens as one chunk, then one at a time
                s.feed(tokens, next, 2);
                for (int t = 0; t < len; t++) {
                    if (t >= 2) s.feed(tokens[next + t]);
                    ref.next(tokens[next + t], cache);
                    for (int l = 0; l < layers; l++) {
                        for (int h = 0; h < kv; h++) {
                            rows.get(l * kv + h).add(ref.groupMean(l, h));
                            vis.get(l * kv + h).add(ref.visible[l][h]);
                        }
                    }
                }
                next += len;
                // what each stream held before the update: positions and which were scored
                long[][] before = new long[layers * kv][];
                int[] scored = new int[layers * kv];
                for (int l = 0; l < layers; l++) {
                    for (int h = 0; h < kv; h++) {
                        KvStream st = cache.stream(l, h);
                        before[l * kv + h] = java.util.Arrays.copyOf(st.positions(), st.size());
                        scored[l * kv + h] = st.scored();
                    }
                }
                s.endTurn();
                for (int l = 0; l < layers; l++) {
                    for (int h = 0; h < kv; h++) {
                        int si = l * kv + h;
                        Map<Long, Double> want = expected(policy, expect.get(si), rows.get(si), vis.get(si), before[si],
                                scored[si], window, kernel);
                        KvStream st = cache.stream(l, h);
                        int checked = 0;
                        for (int i = 0; i < st.size(); i++) {
                            Double e = want.get(st.position(i));
                            if (e == null) continue;
                            assertThat(st.c()[i]).as("%s turn %d layer %d head %d position %d", policy, turn, l, h, st.position(i))
                                    .isCloseTo(e, within(2e-5));
                            checked++;
                        }
                        if (turn > 1) assertThat(checked).isGreaterThan(0);
                    }
                }
            }
        }
    }

    /** The scores the policy's method makes of the rows' weights; updates {@code acc} for the accumulating ones. */
    private static Map<Long, Double> expected(String policy, Map<Long, Double> acc, List<double[]> rows, List<long[]> vis,
                                              long[] before, int scored, int window, int kernel) {
        Map<Long, Double> want = new HashMap<>();
        int n = rows.size();
        switch (policy) {
            case "h2o" -> {
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < vis.get(r).length; i++) acc.merge(vis.get(r)[i], rows.get(r)[i], Double::sum);
                }
                want.putAll(acc);
            }
            case "fdkvc" -> {
                for (int r = 0; r < n; r++) {
                    for (int i = 0; i < scored; i++) acc.merge(before[i], rows.get(r)[i] / n, Double::sum);
                }
                for (int i = scored; i < before.length; i++) acc.put(before[i], 1.0);
                want.putAll(acc);
            }
            case "tova" -> {
                for (int i = 0; i < scored; i++) want.put(before[i], rows.get(n - 1)[i]);
            }
            case "snapkv" -> {
                if (scored == 0) break;
                double[] summed = new double[scored];
                for (int r = Math.max(0, n - window); r < n; r++) {
                    for (int i = 0; i < scored; i++) summed[i] += rows.get(r)[i];
                }
                for (int i = 0; i < scored; i++) {
                    double best = Double.NEGATIVE_INFINITY;
                    for (int j = Math.max(0, i - kernel / 2); j <= Math.min(scored - 1, i + kernel / 2); j++) best = Math.max(best, summed[j]);
                    want.put(before[i], best);
                }
            }
            default -> throw new IllegalArgumentException(policy);
        }
        return want;
    }
}
