package io.fdkvc.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The benchmark reaches the engine's kernels through a private lookup, which a rename in the
 * engine breaks only when the benchmark runs: this runs both arms once. The heads in pairs must
 * give each head the bits it gets alone (each output the same FMA chain over the entries), so
 * the two arms time the same arithmetic.
 */
class AttentionValuesBenchmarkTest {
    @ParameterizedTest
    @ValueSource(ints = {1, 7, 320, 2048})
    void headPairsGiveEachHeadItsOwnBits(int entries) throws Throwable {
        AttentionValuesBenchmark b = new AttentionValuesBenchmark();
        b.entries = entries;
        b.setUp();
        float[] alone = b.headByHead().clone();
        float[] paired = b.headPairs().clone();
        assertThat(alone).hasSize(AttentionValuesBenchmark.HEADS * AttentionValuesBenchmark.HD);
        assertThat(paired).isEqualTo(alone);
        assertThat(alone).as("the kernels wrote the outputs").isNotEqualTo(new float[alone.length]);
    }
}
