package io.fdkvc.core.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.cache.KvStream;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The policies read observed attention (what an engine's forward pass computed) instead of
 * recomputing it, with numbers chosen by hand and the expected scores and evictions worked out by
 * hand from the spec's rules.
 */
class ObservedAttentionPolicyTest {
    private final KvStream s = new KvStream(2, 0, 0, 16, false);
    private final ObservedAttention o = new ObservedAttention(16);
    private final Turn turn = Turn.of(new float[] {1, 0, 0, 1, 1, 1}, 3, 2, null);
    private long next;

    {
        turn.setObserved(o);
    }

    /** Appends {@code n} entries (keys that would give very different attention than the observed one). */
    private void append(int n) {
        for (int i = 0; i < n; i++) s.append(next++, new float[] {next, -next}, 0, null, 0);
    }

    private void observe(int rows, double[] sum, double[] recent, int recentRows) {
        for (int i = 0; i < sum.length; i++) o.sum()[i] = (float) sum[i];
        for (int i = 0; i < recent.length; i++) o.recent()[i] = (float) recent[i];
        o.set(sum.length, rows, recentRows);
    }

    private long[] positions() {
        return Arrays.copyOf(s.positions(), s.size());
    }

    @Test
    void h2oAccumulatesTheObservedSumsOfEveryEntry() {
        Policy p = PolicyRegistry.spec("h2o", 4).newPolicy();
        assertThat(p.readsAttention()).isTrue();
        assertThat(p.recentAttentionRows()).isZero();
        append(4);
        observe(2, new double[] {1.0, 0.6, 0.3, 0.1}, new double[0], 0);
        p.endTurn(s, turn);
        assertThat(Arrays.copyOf(s.c(), 4)).containsExactly(new double[] {1.0, 0.6, 0.3, 0.1}, within(1e-6));
        append(2);
        observe(2, new double[] {0.2, 0.9, 0.05, 0.3, 0.4, 0.15}, new double[0], 0);
        p.endTurn(s, turn);
        // c = 1.2, 1.5, 0.35, 0.4 | 0.4, 0.15: the 2 most recent kept, then the 2 highest others (positions 1, 0)
        assertThat(positions()).containsExactly(0, 1, 4, 5);
        assertThat(Arrays.copyOf(s.c(), 4)).containsExactly(new double[] {1.2, 1.5, 0.4, 0.15}, within(1e-6));
    }

    @Test
    void tovaRanksTheOlderEntriesByTheLastRow() {
        Policy p = PolicyRegistry.spec("tova", 3).newPolicy();
        assertThat(p.recentAttentionRows()).isEqualTo(1);
        append(3);
        observe(1, new double[] {1, 1, 1}, new double[] {0.5, 0.3, 0.2}, 1);
        p.endTurn(s, turn);
        append(2);
        observe(3, new double[] {9, 9, 9, 9, 9}, new double[] {0.1, 0.5, 0.2, 0.15, 0.05}, 1);
        p.endTurn(s, turn);
        // the turn's entries 3, 4 first, then the older entry of highest last-row weight: 1
        assertThat(positions()).containsExactly(1, 3, 4);
        assertThat(s.c()[0]).isCloseTo(0.5, within(1e-6));
    }

    @Test
    void snapKvPoolsTheObservedWindow() {
        Policy p = PolicyRegistry.spec("snapkv", 4, Map.of("window", 2, "kernel", 3)).newPolicy();
        assertThat(p.recentAttentionRows()).isEqualTo(2);
        append(4);
        observe(2, new double[] {1, 1, 1, 1}, new double[] {1, 1, 1, 1}, 2);
        p.endTurn(s, turn);
        assertThat(positions()).containsExactly(0, 1, 2, 3);
        append(2);
        // window sums 0.3, 0, 0.1, 0.6 pool (kernel 3) to 0.3, 0.3, 0.6, 0.6: the turn's entries 4, 5
        // stay, then the older entries 2 and 3
        observe(5, new double[] {7, 7, 7, 7, 7, 7}, new double[] {0.3, 0.0, 0.1, 0.6, 0.2, 0.1}, 2);
        p.endTurn(s, turn);
        assertThat(positions()).containsExactly(2, 3, 4, 5);
        assertThat(Arrays.copyOf(s.c(), 2)).containsExactly(new double[] {0.6, 0.6}, within(1e-6));
    }

    @Test
    void fdkvcAddsTheMeanObservedWeightToItsCumulativeChannel() {
        Policy p = PolicyRegistry.spec("fdkvc", 10, Map.of("tau", 0)).newPolicy();
        assertThat(p.readsAttention()).isTrue();
        append(2);
        observe(2, new double[] {0.7, 0.3}, new double[0], 0);
        p.endTurn(s, turn);
        assertThat(Arrays.copyOf(s.c(), 2)).containsExactly(1.0, 1.0); // step 6: new entries enter at 1
        append(1);
        observe(3, new double[] {0.6, 0.9, 0.5}, new double[0], 0);
        p.endTurn(s, turn);
        // eq. 1 with the model's attention: c += sum / rows for the entries scored before
        assertThat(Arrays.copyOf(s.c(), 3)).containsExactly(new double[] {1.2, 1.3, 1.0}, within(1e-6));
    }

    @Test
    void policiesThatReadNoAttentionSayso() {
        for (String name : new String[] {"full", "window", "streaming", "random"}) {
            assertThat(PolicyRegistry.spec(name, 8).newPolicy().readsAttention()).as(name).isFalse();
        }
    }
}
