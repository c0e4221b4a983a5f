package io.fdkvc.examples.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.param.ParameterException;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.Turn;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The example policy as a user reaches it: by name through the registry, which found it through
 * this jar's service file, driven over a stream turn by turn as every caller drives a policy.
 */
class KeepOldestPoliciesTest {
    /** One entry per turn at positions 0, 1, 2, ...; the positions held after each turn. */
    private static List<List<Long>> play(Policy policy, int turns) {
        KvStream stream = new KvStream(2, 0, 0, policy.budget() + 1, false);
        Turn turn = Turn.of(new float[] {1, 0}, 1, 2, null);
        List<List<Long>> held = new ArrayList<>();
        for (int p = 0; p < turns; p++) {
            stream.append(p, new float[] {p % 2, 1 - p % 2}, 0, null, 0);
            policy.endTurn(stream, turn);
            List<Long> positions = new ArrayList<>();
            for (int i = 0; i < stream.size(); i++) positions.add(stream.position(i));
            held.add(positions);
        }
        return held;
    }

    @Test
    void keepsTheOldestAndTheMostRecent() {
        // budget 4, recent 1: entries 0, 1, 2 (the oldest three) stay, and the newest takes the last place
        Policy policy = PolicyRegistry.spec(KeepOldestPolicies.NAME, 4, Map.of("recent", 1)).newPolicy();
        List<List<Long>> held = play(policy, 7);
        assertThat(held.get(3)).containsExactly(0L, 1L, 2L, 3L);
        assertThat(held.get(4)).containsExactly(0L, 1L, 2L, 4L);
        assertThat(held.get(6)).containsExactly(0L, 1L, 2L, 6L);
    }

    @Test
    void recentZeroKeepsOnlyTheOldest() {
        Policy policy = PolicyRegistry.spec(KeepOldestPolicies.NAME, 3, Map.of("recent", 0)).newPolicy();
        assertThat(play(policy, 6).get(5)).containsExactly(0L, 1L, 2L);
    }

    @Test
    void itsDefaultsAndChecksAreThoseOfItsRecord() {
        assertThat(PolicyRegistry.names()).contains(KeepOldestPolicies.NAME);
        assertThat(PolicyRegistry.names().indexOf(KeepOldestPolicies.NAME)).isGreaterThan(PolicyRegistry.names().indexOf("fdkvc"));
        assertThatThrownBy(() -> PolicyRegistry.spec(KeepOldestPolicies.NAME, 4, Map.of("recent", -1)))
                .isInstanceOf(ParameterException.class).hasMessageContaining("recent");
        assertThatThrownBy(() -> PolicyRegistry.spec(KeepOldestPolicies.NAME, 4, Map.of("recent", 4)).newPolicy())
                .isInstanceOf(ParameterException.class).hasMessageContaining("must be < budget 4");
    }
}
