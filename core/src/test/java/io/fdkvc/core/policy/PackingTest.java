package io.fdkvc.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fdkvc.core.cache.KvStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Packing ({@link Ranker#evictToBudget} with packing on): the budget is never exceeded, nothing
 * the ranking alone keeps is evicted, and the readmitted entries are exactly the greedy first fit
 * over the evicted ones from the best-ranked down.
 */
class PackingTest {

    record Case(int[] tiers, double[] scores, int[] costs, int budget) {}

    @Provide
    Arbitrary<Case> cases() {
        return Arbitraries.integers().between(1, 120).flatMap(n -> Combinators.combine(
                Arbitraries.integers().between(0, 2).array(int[].class).ofSize(n),
                Arbitraries.integers().between(0, 5).map(i -> i / 2.0).list().ofSize(n),
                Arbitraries.integers().between(1, 9).array(int[].class).ofSize(n),
                Arbitraries.integers().between(0, 6 * n)
        ).as((tiers, scores, costs, budget) -> {
            double[] s = new double[n];
            for (int i = 0; i < n; i++) s[i] = scores.get(i);
            return new Case(tiers, s, costs, budget);
        }));
    }

    private static KvStream stream(int[] costs) {
        KvStream s = new KvStream(1, 0, 0, costs.length, false);
        float[] key = {1f};
        for (int i = 0; i < costs.length; i++) s.append(i, key, 0, null, 0, null, 0, costs[i]);
        return s;
    }

    private static Set<Long> evict(Case k, boolean packing) {
        int n = k.costs().length;
        KvStream s = stream(k.costs());
        Ranker r = new Ranker();
        r.setPacking(packing);
        r.ensure(n);
        System.arraycopy(k.tiers(), 0, r.tier(), 0, n);
        System.arraycopy(k.scores(), 0, r.score(), 0, n);
        r.evictToBudget(s, k.budget(), false);
        assertThat(s.totalCost()).as("budget").isLessThanOrEqualTo(Math.max(k.budget(), 0));
        Set<Long> kept = new HashSet<>();
        for (int i = 0; i < s.size(); i++) kept.add(s.position(i));
        long sum = 0;
        for (long p : kept) sum += k.costs()[(int) p];
        assertThat(s.totalCost()).isEqualTo(sum);
        // every entry is either kept or logged as evicted, once
        assertThat(s.evicted().size() + s.size()).isEqualTo(n);
        return kept;
    }

    @Property(tries = 400)
    void neverExceedsTheBudgetAndKeepsWhatTheRankingKept(@ForAll("cases") Case k) {
        long total = 0;
        for (int c : k.costs()) total += c;
        Set<Long> plain = evict(k, false);
        Set<Long> packed = evict(k, true);
        assertThat(packed).containsAll(plain);
        if (total <= k.budget()) assertThat(packed).hasSize(k.costs().length);
    }

    @Property(tries = 400)
    void readmitsTheGreedyFirstFitFromTheBestRankedDown(@ForAll("cases") Case k) {
        int n = k.costs().length;
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) order.add(i);
        order.sort(Comparator.<Integer>comparingInt(i -> k.tiers()[i]).thenComparingDouble(i -> k.scores()[i]).thenComparingInt(i -> i));
        long total = 0;
        for (int c : k.costs()) total += c;
        List<Integer> evicted = new ArrayList<>();
        for (int i : order) {
            if (total <= k.budget()) break;
            evicted.add(i);
            total -= k.costs()[i];
        }
        long room = k.budget() - total;
        Set<Long> expected = new HashSet<>();
        for (int i = 0; i < n; i++) if (!evicted.contains(i)) expected.add((long) i);
        for (int j = evicted.size() - 1; j >= 0; j--) {
            int i = evicted.get(j);
            if (k.costs()[i] <= room) {
                expected.add((long) i);
                room -= k.costs()[i];
            }
        }
        assertThat(evict(k, true)).isEqualTo(expected);
    }

    @Test
    void fillsTheGapWithTheBestRankedEntryThatFits() {
        // costs 2, 4, 3 at positions 0, 1, 2; budget 6; window ranks by position. Evicting the
        // oldest until it fits removes 0 and 1 (cost 3 left, room 3); 1 (cost 4) cannot come back,
        // 0 (cost 2) can: {0, 2}, cost 5.
        KvStream s = stream(new int[] {2, 4, 3});
        Ranker r = new Ranker();
        r.ensure(3);
        for (int i = 0; i < 3; i++) {
            r.tier()[i] = 0;
            r.score()[i] = i;
        }
        r.evictToBudget(s, 6, false);
        assertThat(s.size()).isEqualTo(2);
        assertThat(s.position(0)).isEqualTo(0);
        assertThat(s.position(1)).isEqualTo(2);
        assertThat(s.totalCost()).isEqualTo(5);
        assertThat(s.evicted().size()).isEqualTo(1);
        assertThat(s.evicted().get(0)).isEqualTo(1);
    }

    @Test
    void unitCostsNeverReadmit() {
        KvStream s = stream(new int[] {1, 1, 1, 1, 1});
        Ranker r = new Ranker();
        r.ensure(5);
        for (int i = 0; i < 5; i++) r.score()[i] = 5 - i;
        r.evictToBudget(s, 3, false);
        assertThat(s.size()).isEqualTo(3);
        assertThat(s.position(0)).isEqualTo(0);
        assertThat(s.position(2)).isEqualTo(2);
    }

    /**
     * Turn by turn, a packed window holds every entry the plain window holds (the newest entries
     * that fit), whatever the costs: packing only adds older entries into the gap.
     */
    @Property(tries = 200)
    void aPackedWindowHoldsWhatThePlainWindowHolds(@ForAll @Size(min = 1, max = 60) List<@IntRange(min = 1, max = 12) Integer> costs,
                                                    @ForAll @IntRange(min = 12, max = 60) int budget) {
        Policy plain = PolicyRegistry.spec("window", budget).newPolicy();
        Policy packed = PolicyRegistry.spec("window", budget).newPolicy();
        plain.setPacking(false);
        assertThat(packed.packing()).isTrue();
        KvStream a = new KvStream(1, 0, 0, budget + 1, false);
        KvStream b = new KvStream(1, 0, 0, budget + 1, false);
        float[] key = {1f};
        Turn t = Turn.of(new float[] {1f}, 1, 1, null);
        for (int p = 0; p < costs.size(); p++) {
            a.append(p, key, 0, null, 0, null, 0, costs.get(p));
            b.append(p, key, 0, null, 0, null, 0, costs.get(p));
            plain.endTurn(a, t);
            packed.endTurn(b, t);
            assertThat(b.totalCost()).isLessThanOrEqualTo(budget).isGreaterThanOrEqualTo(a.totalCost());
            Set<Long> pa = new HashSet<>(), pb = new HashSet<>();
            for (int i = 0; i < a.size(); i++) pa.add(a.position(i));
            for (int i = 0; i < b.size(); i++) pb.add(b.position(i));
            assertThat(pb).containsAll(pa);
        }
    }
}
