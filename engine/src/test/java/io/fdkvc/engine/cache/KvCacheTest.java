package io.fdkvc.engine.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.core.policy.baseline.NoParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class KvCacheTest {

    /** A policy that records what it is given and evicts nothing. */
    static final class Probe implements Policy {
        final List<float[]> rows = new ArrayList<>();
        final List<float[]> embeddings = new ArrayList<>();
        final List<Integer> sizes = new ArrayList<>();

        @Override public String name() { return "probe"; }
        @Override public int budget() { return 1000; }

        @Override
        public void endTurn(KvStream stream, Turn turn) {
            stream.beginUpdate();
            rows.add(java.util.Arrays.copyOf(turn.queries(), turn.rows() * turn.dim()));
            embeddings.add(turn.queryEmbedding().clone());
            sizes.add(stream.size());
            stream.markScored();
        }
    }

    static PolicySpec probeSpec(List<Probe> made) {
        PolicyRegistry.Kind kind = new PolicyRegistry.Kind("probe", "records turns", NoParams.INSTANCE, Map.of(),
                (n, b, p) -> {
                    Probe pr = new Probe();
                    made.add(pr);
                    return pr;
                });
        PolicySpec spec = new PolicySpec("probe", 1000, NoParams.INSTANCE, kind);
        made.clear(); // the spec's constructor validates by making one policy: count only the cache's
        return spec;
    }

    /**
     * Keys, values and positions go to the stream of their (layer, KV head); the turn's query row
     * for a stream is the mean of its group's queries, and the query embedding the mean row.
     */
    @Test
    void streamsHoldKeysAndValuesAndTurnRowsAreGroupMeans() {
        int layers = 2, kvHeads = 2, group = 3, hd = 4, n = 5;
        List<Probe> probes = new ArrayList<>();
        KvCache cache = new KvCache(layers, kvHeads, hd, group, probeSpec(probes), 8, PositionMode.CACHE);
        Random r = new Random(5);
        float[][][] q = new float[layers][n][kvHeads * group * hd];
        float[][][] k = new float[layers][n][kvHeads * hd], v = new float[layers][n][kvHeads * hd];
        for (int l = 0; l < layers; l++) {
            for (int t = 0; t < n; t++) {
                for (int i = 0; i < q[l][t].length; i++) q[l][t][i] = r.nextFloat() * 2 - 1;
                for (int i = 0; i < k[l][t].length; i++) {
                    k[l][t][i] = r.nextFloat();
                    v[l][t][i] = r.nextFloat();
                }
            }
        }
        // two chunks: tokens 0..2, then 3..4, as the forward pass appends them
        for (int[] chunk : new int[][] {{0, 3}, {3, 2}}) {
            for (int l = 0; l < layers; l++) {
                for (int t = 0; t < chunk[1]; t++) {
                    int tok = chunk[0] + t;
                    cache.append(l, t, k[l][tok], 0, v[l][tok], 0, q[l][tok], 0);
                }
            }
            cache.advance(chunk[1]);
        }
        assertThat(cache.pending()).isEqualTo(5);
        assertThat(cache.nextPosition()).isEqualTo(5);
        KvCache.Update u = cache.endTurn();
        assertThat(u.tokens()).isEqualTo(5);
        assertThat(u.maxEntries()).isEqualTo(5);
        assertThat(cache.pending()).isZero();
        assertThat(probes).hasSize(layers * kvHeads);
        for (int l = 0; l < layers; l++) {
            for (int h = 0; h < kvHeads; h++) {
                KvStream s = cache.stream(l, h);
                Probe p = probes.get(l * kvHeads + h);
                assertThat(p.sizes).containsExactly(5);
                float[] rows = p.rows.get(0);
                double[] mean = new double[hd];
                for (int t = 0; t < n; t++) {
                    assertThat(s.position(t)).isEqualTo(t);
                    for (int d = 0; d < hd; d++) {
                        assertThat(s.keys()[t * hd + d]).isEqualTo(k[l][t][h * hd + d]);
                        assertThat(s.values()[t * hd + d]).isEqualTo(v[l][t][h * hd + d]);
                        double want = 0;
                        for (int j = 0; j < group; j++) want += q[l][t][(h * group + j) * hd + d];
                        want /= group;
                        assertThat((double) rows[t * hd + d]).isCloseTo(want, org.assertj.core.data.Offset.offset(1e-6));
                        mean[d] += want / n;
                    }
                }
                for (int d = 0; d < hd; d++) {
                    assertThat((double) p.embeddings.get(0)[d]).isCloseTo(mean[d], org.assertj.core.data.Offset.offset(1e-6));
                }
            }
        }
    }

    @Test
    void theTurnInProgressCannotOutgrowItsHeadroom() {
        KvCache cache = new KvCache(1, 1, 2, 1, PolicyRegistry.spec("window", 4), 3, PositionMode.CACHE);
        float[] x = {1, 2};
        for (int t = 0; t < 3; t++) cache.append(0, t, x, 0, x, 0, x, 0);
        cache.advance(3);
        assertThat(cache.headroom()).isZero();
        assertThatThrownBy(() -> cache.append(0, 0, x, 0, x, 0, x, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> cache.advance(1)).isInstanceOf(IllegalStateException.class);
        cache.endTurn();
        assertThat(cache.headroom()).isEqualTo(3);
    }

    @Test
    void badMaxTurnTokensIsAnInputError() {
        assertThatThrownBy(() -> new KvCache(1, 1, 2, 1, PolicyRegistry.spec("window", 4), 0, PositionMode.CACHE))
                .isInstanceOf(InputException.class).hasMessageStartingWith("maxTurnTokens: ");
        assertThatThrownBy(() -> PositionMode.parse("slot")).isInstanceOf(InputException.class).hasMessageStartingWith("positions: ");
    }

    /**
     * Whatever the turn lengths, a bounded policy leaves at most the budget in every stream after
     * each update, the streams never grow past budget + maxTurnTokens, and the cache's memory does
     * not change once allocated (only full grows).
     */
    @Property(tries = 60)
    void boundedPoliciesStayWithinBudgetAndMemory(@ForAll @IntRange(min = 1, max = 12) int budget,
                                                  @ForAll @IntRange(min = 1, max = 9) int maxTurnTokens,
                                                  @ForAll @Size(min = 1, max = 12) List<@IntRange(min = 1, max = 30) Integer> turns,
                                                  @ForAll("policies") String policy) {
        Map<String, Object> params = policy.equals("streaming") ? Map.of("sinks", Math.min(4, budget - 1)) : Map.of();
        KvCache cache = new KvCache(2, 2, 4, 2, PolicyRegistry.spec(policy, budget, params), maxTurnTokens, PositionMode.CACHE);
        long bytes = cache.bytes() - evictionLogBytes(cache);
        Random r = new Random(budget * 31L + maxTurnTokens);
        float[] q = new float[16], kv = new float[8];
        for (int len : turns) {
            for (int t = 0; t < len; t++) {
                if (cache.headroom() == 0) checkAfterUpdate(cache, budget);
                for (int i = 0; i < q.length; i++) q[i] = (float) r.nextGaussian();
                for (int i = 0; i < kv.length; i++) kv[i] = (float) r.nextGaussian();
                for (int l = 0; l < 2; l++) cache.append(l, 0, kv, 0, kv, 0, q, 0);
                cache.advance(1);
            }
            checkAfterUpdate(cache, budget);
        }
        assertThat(cache.bytes() - evictionLogBytes(cache)).isEqualTo(bytes);
    }

    private static void checkAfterUpdate(KvCache cache, int budget) {
        cache.endTurn();
        for (int l = 0; l < 2; l++) {
            for (int h = 0; h < 2; h++) {
                KvStream s = cache.stream(l, h);
                assertThat(s.size()).isLessThanOrEqualTo(budget);
                assertThat(s.capacity()).isEqualTo(budget + cache.maxTurnTokens());
                long[] p = s.positions();
                for (int i = 1; i < s.size(); i++) assertThat(p[i]).isGreaterThan(p[i - 1]);
            }
        }
    }

    /** The streams' eviction logs (a list reused from turn to turn) are counted in bytes() too. */
    private static long evictionLogBytes(KvCache cache) {
        long b = 0;
        for (int l = 0; l < 2; l++) for (int h = 0; h < 2; h++) b += cache.stream(l, h).evicted().bytes();
        return b;
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<String> policies() {
        return net.jqwik.api.Arbitraries.of("fdkvc", "window", "streaming", "h2o", "tova", "snapkv", "random", "h2o-paper");
    }
}
