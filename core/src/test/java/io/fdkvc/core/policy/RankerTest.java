package io.fdkvc.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.cache.KvStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The ranker's fast paths (bounded heap for few evictions, full sort otherwise) must evict exactly
 * what a naive sort by (tier, score, position) evicts, in the same order, with unit and non-unit
 * costs and with many ties. Without packing, that is the whole story; with packing (the default)
 * the evicted entries that still fit come back, best-ranked first.
 */
class RankerTest {

    record Case(int[] tiers, double[] scores, int[] costs, int budget) {}

    @Provide
    Arbitrary<Case> cases() {
        return Arbitraries.integers().between(1, 200).flatMap(n -> Combinators.combine(
                Arbitraries.integers().between(0, 2).array(int[].class).ofSize(n),
                Arbitraries.integers().between(0, 5).map(i -> i / 2.0).list().ofSize(n),
                Arbitraries.integers().between(1, 3).array(int[].class).ofSize(n),
                Arbitraries.integers().between(0, 3 * n),
                Arbitraries.of(true, false)
        ).as((tiers, scores, costs, budget, unit) -> {
            double[] s = new double[n];
            for (int i = 0; i < n; i++) s[i] = scores.get(i);
            int[] c = unit ? java.util.Arrays.stream(costs).map(x -> 1).toArray() : costs;
            return new Case(tiers, s, c, budget);
        }));
    }

    @Property(tries = 300)
    void evictsExactlyWhatANaiveSortEvicts(@ForAll("cases") Case k) {
        int n = k.tiers().length;
        KvStream s = new KvStream(1, 0, 0, n, false);
        float[] key = {1f};
        for (int i = 0; i < n; i++) s.append(i, key, 0, null, 0, null, 0, k.costs()[i]);
        Ranker r = new Ranker();
        r.setPacking(false);
        r.ensure(n);
        System.arraycopy(k.tiers(), 0, r.tier(), 0, n);
        System.arraycopy(k.scores(), 0, r.score(), 0, n);
        r.evictToBudget(s, k.budget(), false);

        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) order.add(i);
        order.sort(Comparator.<Integer>comparingInt(i -> k.tiers()[i]).thenComparingDouble(i -> k.scores()[i]).thenComparingInt(i -> i));
        long total = 0;
        for (int c : k.costs()) total += c;
        List<Long> expected = new ArrayList<>();
        for (int i : order) {
            if (total <= k.budget()) break;
            expected.add((long) i);
            total -= k.costs()[i];
        }
        List<Long> actual = new ArrayList<>();
        for (int i = 0; i < s.evicted().size(); i++) actual.add(s.evicted().get(i));
        assertThat(actual).isEqualTo(expected);
        assertThat(s.totalCost()).isEqualTo(total);
        assertThat(s.size()).isEqualTo(n - expected.size());
    }
}
