package io.fdkvc.core.policy.fidelity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.Turn;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** fdkvc-fidelity on observed attention chosen by hand; scores and evictions worked out by hand. */
class FidelityPolicyTest {
    private final KvStream s = new KvStream(2, 0, 0, 16, false);
    private final ObservedAttention o = new ObservedAttention(16);
    private final Turn turn = Turn.of(new float[] {1, 0, 0, 1}, 2, 2, null);
    private long next;

    {
        turn.setObserved(o);
    }

    private void append(int n) {
        for (int i = 0; i < n; i++) s.append(next++, new float[] {next, -next}, 0, null, 0);
    }

    private void observe(double[] sum, double[] recent, int recentRows) {
        for (int i = 0; i < sum.length; i++) o.sum()[i] = (float) sum[i];
        for (int i = 0; i < recent.length; i++) o.recent()[i] = (float) recent[i];
        o.set(sum.length, 2, recentRows);
    }

    @Test
    void longTermAndWindowChannelsWithSinksAndARecentShare() {
        // budget 4: one sink, recent share 0.25 (the newest entry), kernel 1 (no pooling), gamma 0.5, wc = wrho = 1
        Policy p = PolicyRegistry.spec("fdkvc-fidelity", 4, Map.of("sinks", 1, "recent", 0.25, "gamma", 0.5, "kernel", 1, "window", 2, "delta", 0.0, "ranks", 0))
                .newPolicy();
        assertThat(p.readsAttention()).isTrue();
        assertThat(p.recentAttentionRows()).isEqualTo(2);
        append(4);
        observe(new double[] {0.8, 0.4, 0.6, 0.2}, new double[] {0.8, 0.4, 0.6, 0.2}, 2);
        p.endTurn(s, turn); // at the budget: nothing evicted; c = sum / 2 rows
        assertThat(Arrays.copyOf(s.c(), 4)).containsExactly(new double[] {0.4, 0.2, 0.3, 0.1}, within(1e-7));
        append(2);
        observe(new double[] {0.2, 1.0, 0.2, 0.0, 0.4, 0.2}, new double[] {0.0, 0.2, 0.6, 0.0, 0.2, 0.2}, 2);
        p.endTurn(s, turn);
        // c = 0.5 c + sum / 2 = 0.3, 0.6, 0.25, 0.05, 0.2, 0.1 ; rho = 0, 0.2, 0.6, 0, 0.2, 0.2
        // score = c / 0.6 + rho / 0.6: 0.5, 1.333, 1.417, 0.083, 0.667, 0.5
        // kept: position 0 (sink), position 5 (recent share), then the best two others: 2 and 1
        assertThat(Arrays.copyOf(s.positions(), s.size())).containsExactly(0, 1, 2, 5);
        assertThat(Arrays.copyOf(s.c(), 4)).containsExactly(new double[] {0.3, 0.6, 0.25, 0.1}, within(1e-7));
        assertThat(Arrays.copyOf(s.rho(), 4)).containsExactly(new double[] {0.0, 0.2, 0.6, 0.2}, within(1e-7));
    }

    /** The same two turns with the relevance channel replaced (delta 0) and decaying (delta 0.5): an entry read last turn survives only with decay. */
    @Test
    void decayingRelevanceKeepsWhatTheLastTurnRead() {
        assertThat(twoTurns(0.0)).containsExactly(0, 1, 2, 5);
        // delta 0.5: rho = max(0.5 rho, window) = 0.1, 0.2, 0.6, 0.7, 0.2, 0.2 ; c = 0.15, 0.55, 0.15, 0.35, 0.2, 0.1
        // score = c / 0.55 + rho / 0.7 for positions 1..4: 1.286, 1.130, 1.636, 0.649: 3 and 1 join the sink and the recent entry
        assertThat(twoTurns(0.5)).containsExactly(0, 1, 3, 5);
        assertThat(Arrays.copyOf(s.rho(), 4)).containsExactly(new double[] {0.1, 0.2, 0.7, 0.2}, within(1e-7));
    }

    /** The same two turns with a heavy share of one entry: the entry of highest undecayed H (position 3) is kept although its score is low. */
    @Test
    void heavyShareKeepsTheEntryOfHighestLongTermImportance() {
        // H (eta 1) = 0.1 + 0.1, 0.1 + 0.5, 0.1 + 0.1, 0.7 + 0, 0.2, 0.1: position 3 (0.7) is the heavy entry; then the
        // best score of positions 1, 2, 4 (1.333, 1.273, 0.697, as with delta 0) is position 1
        assertThat(twoTurns(0.0, Map.of("heavy", 0.25))).containsExactly(0, 1, 3, 5);
        assertThat(Arrays.copyOf(s.h(), 4)).containsExactly(new double[] {0.2, 0.6, 0.7, 0.1}, within(1e-7));
        // decayed by eta 0.5: H = 0.15, 0.55, 0.15, 0.35: position 1 is the heavy entry, position 2 the best score left
        assertThat(twoTurns(0.0, Map.of("heavy", 0.25, "eta", 0.5))).containsExactly(0, 1, 2, 5);
    }

    /**
     * One turn over the budget where mixing by value and by rank disagree. Competitors (positions 1..4):
     * c = 1.0, 0.3, 0.2, 0.1 and rho = 0, 0.3, 1.0, 0.1 (the sink's are 1.0 and 1.0, so max c = max rho = 1).
     */
    @Test
    void ranksPutTheChannelsOnOneScale() {
        // by value: 1.0, 0.6, 1.2, 0.2: positions 3 and 1 join the sink and the recent entry
        assertThat(oneTurn(0)).containsExactly(0, 1, 3, 5);
        // by rank (of 4): c ranks 3, 2, 1, 0 and rho ranks 0, 2, 3, 1: scores 3/4, 4/4, 4/4, 1/4: positions 2 and 3
        assertThat(oneTurn(1)).containsExactly(0, 2, 3, 5);
    }

    /** Equal values share the lowest rank of their group. */
    @Test
    void equalValuesShareARank() {
        // c of positions 1..4: 0.1 each (all rank 0); rho 0.2, 0.2, 0.5, 0.1: ranks 1, 1, 3, 0: position 3 and then,
        // of the tie between 1 and 2, the higher position (the ranker evicts the lower position first)
        assertThat(run(1, new double[] {2.0, 0.2, 0.2, 0.2, 0.2, 0.2}, new double[] {1.0, 0.2, 0.2, 0.5, 0.1, 0.2}))
                .containsExactly(0, 2, 3, 5);
    }

    private long[] oneTurn(int ranks) {
        return run(ranks, new double[] {2.0, 2.0, 0.6, 0.4, 0.2, 0.2}, new double[] {1.0, 0.0, 0.3, 1.0, 0.1, 0.2});
    }

    private long[] run(int ranks, double[] sum, double[] recent) {
        s.clear();
        next = 0;
        Policy p = PolicyRegistry.spec("fdkvc-fidelity", 4,
                Map.of("sinks", 1, "recent", 0.25, "kernel", 1, "window", 2, "delta", 0.0, "ranks", ranks)).newPolicy();
        append(6);
        observe(sum, recent, 2);
        p.endTurn(s, turn);
        return Arrays.copyOf(s.positions(), s.size());
    }

    private long[] twoTurns(double delta) {
        return twoTurns(delta, Map.of());
    }

    private long[] twoTurns(double delta, Map<String, Object> more) {
        s.clear();
        next = 0;
        Map<String, Object> params = new java.util.HashMap<>(Map.of("sinks", 1, "recent", 0.25, "gamma", 0.5, "kernel", 1, "window", 2, "delta", delta, "ranks", 0));
        params.putAll(more);
        Policy p = PolicyRegistry.spec("fdkvc-fidelity", 4, params).newPolicy();
        append(4);
        observe(new double[] {0.2, 0.2, 0.2, 1.4}, new double[] {0.2, 0.2, 0.2, 1.4}, 2);
        p.endTurn(s, turn);
        append(2);
        // delta 0: rho = 0, 0.2, 0.6, 0, 0.2, 0.2 ; score = c / 0.55 + rho / 0.6: 1.333, 1.273, 0.636, 0.697 for positions 1..4
        observe(new double[] {0.2, 1.0, 0.2, 0.0, 0.4, 0.2}, new double[] {0.0, 0.2, 0.6, 0.0, 0.2, 0.2}, 2);
        p.endTurn(s, turn);
        return Arrays.copyOf(s.positions(), s.size());
    }

    @Test
    void parametersAreValidated() {
        assertRefused("kernel", 2);
        assertRefused("sinks", 4);
        assertRefused("recent", 1.5);
        assertRefused("delta", 1.5);
        assertRefused("ranks", 2);
        assertRefused("heavy", 0.9);
        assertRefused("eta", 0.0);
    }

    /** A spec with {@code name = value} is refused by a ParameterException naming the parameter. */
    private static void assertRefused(String name, Object value) {
        assertThatThrownBy(() -> PolicyRegistry.spec("fdkvc-fidelity", 4, Map.of(name, value))).isInstanceOf(ParameterException.class)
                .hasMessageContaining(name);
    }
}
