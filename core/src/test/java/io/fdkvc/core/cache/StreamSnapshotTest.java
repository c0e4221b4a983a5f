package io.fdkvc.core.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * A stream and its policy exported after some turns and restored into fresh instances go on
 * exactly as the originals: same entries, same scores, same evictions, bit for bit.
 */
class StreamSnapshotTest {
    private static final int D = 4, BUDGET = 6, TURN = 3;

    @Property(tries = 60)
    void restoredStreamAndPolicyContinueIdentically(@ForAll("names") String name, @ForAll @IntRange(min = 0, max = 8) int before,
                                                     @ForAll @IntRange(min = 1, max = 6) int after, @ForAll long seed) {
        PolicySpec spec = PolicyRegistry.spec(name, BUDGET);
        KvStream a = new KvStream(D, D, 0, BUDGET + TURN, spec.newPolicy().unbounded());
        Policy pa = spec.newPolicy();
        SplittableRandom rnd = new SplittableRandom(seed);
        long pos = 0;
        for (int t = 0; t < before; t++) pos = turn(a, pa, rnd, pos);
        StreamSnapshot snap = a.snapshot();
        double[] state = pa.exportState();

        KvStream b = new KvStream(D, D, 0, BUDGET + TURN, spec.newPolicy().unbounded());
        Policy pb = spec.newPolicy();
        b.restore(snap);
        pb.restoreState(state);
        assertSame(a, b);
        long seed2 = rnd.nextLong();
        SplittableRandom ra = new SplittableRandom(seed2), rb = new SplittableRandom(seed2);
        long posA = pos, posB = pos;
        for (int t = 0; t < after; t++) {
            posA = turn(a, pa, ra, posA);
            posB = turn(b, pb, rb, posB);
            assertSame(a, b);
            assertThat(b.evicted().size()).isEqualTo(a.evicted().size());
        }
        assertThat(pb.exportState()).containsExactly(pa.exportState());
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<String> names() {
        return net.jqwik.api.Arbitraries.of("fdkvc", "h2o", "tova", "snapkv", "random", "window", "streaming", "full");
    }

    @Test
    void truncateDropsOnlyTheTurnInProgress() {
        PolicySpec spec = PolicyRegistry.spec("fdkvc", BUDGET);
        KvStream s = new KvStream(D, D, 0, BUDGET + TURN, false);
        Policy p = spec.newPolicy();
        SplittableRandom rnd = new SplittableRandom(7);
        long pos = turn(s, p, rnd, 0);
        pos = turn(s, p, rnd, pos);
        StreamSnapshot before = s.snapshot();
        float[] k = {1, 2, 3, 4};
        s.append(pos, k, 0, k, 0);
        s.append(pos + 1, k, 0, k, 0);
        assertThatThrownBy(() -> s.truncate(s.scored() - 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("only unscored entries");
        s.truncate(s.scored());
        assertThat(s.size()).isEqualTo(before.size());
        assertThat(s.totalCost()).isEqualTo(before.size());
        assertSame(s, restored(before));
    }

    @Test
    void restoreRefusesAnotherShape() {
        KvStream s = new KvStream(D, D, 0, 4, false);
        StreamSnapshot other = new KvStream(D + 2, D, 0, 4, false).snapshot();
        assertThatThrownBy(() -> s.restore(other)).hasMessageContaining("6/4/0 stream restored into a 4/4/0");
        assertThatThrownBy(() -> new StreamSnapshot(D, D, 0, 1, 0, new float[D], new float[D], new float[0], new double[1],
                new long[1], new double[1], new double[1], new double[1], new float[1], new int[] {0}))
                .hasMessageContaining("cost 0");
        assertThatThrownBy(() -> new StreamSnapshot(D, D, 0, 2, 0, new float[D], new float[2 * D], new float[0], new double[2],
                new long[2], new double[2], new double[2], new double[2], new float[2], new int[] {1, 1}))
                .hasMessageContaining("keys has 4 values, expected 8");
    }

    private static KvStream restored(StreamSnapshot s) {
        KvStream k = new KvStream(D, D, 0, BUDGET + TURN, false);
        k.restore(s);
        return k;
    }

    /** Appends TURN random entries and ends the turn; returns the next position. */
    private static long turn(KvStream s, Policy p, SplittableRandom rnd, long pos) {
        float[] q = new float[TURN * D];
        float[] kv = new float[D];
        for (int i = 0; i < TURN; i++) {
            for (int d = 0; d < D; d++) kv[d] = (float) rnd.nextGaussian();
            s.append(pos++, kv, 0, kv, 0);
            for (int d = 0; d < D; d++) q[i * D + d] = (float) rnd.nextGaussian();
        }
        p.endTurn(s, Turn.of(q, TURN, D, null));
        return pos;
    }

    private static void assertSame(KvStream a, KvStream b) {
        StreamSnapshot x = a.snapshot(), y = b.snapshot();
        assertThat(y.size()).isEqualTo(x.size());
        assertThat(y.scored()).isEqualTo(x.scored());
        assertThat(y.keys()).containsExactly(x.keys());
        assertThat(y.values()).containsExactly(x.values());
        assertThat(y.embeddingNorms()).containsExactly(x.embeddingNorms());
        assertThat(y.positions()).containsExactly(x.positions());
        assertThat(y.c()).containsExactly(x.c());
        assertThat(y.rho()).containsExactly(x.rho());
        assertThat(y.h()).containsExactly(x.h());
        assertThat(y.logitBias()).containsExactly(x.logitBias());
        assertThat(y.costs()).containsExactly(x.costs());
        assertThat(b.totalCost()).isEqualTo(a.totalCost());
    }
}
