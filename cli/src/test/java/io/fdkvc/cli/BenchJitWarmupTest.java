package io.fdkvc.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * When {@code bench}'s JIT warm-up stops: never before --jit-warmup turns; after them, as soon as
 * a turn spent less than 2% of its time compiling; never after four times as many. Times in
 * nanoseconds, worked out by hand.
 */
class BenchJitWarmupTest {
    static final long MS = 1_000_000;

    @Test
    void theMinimumRunsWhateverTheJitDoes() {
        for (int done = 0; done < 4; done++) {
            assertThat(BenchCommand.moreJitWarmup(done, 4, 0, 100 * MS)).as("turn %d of at least 4", done).isTrue();
        }
    }

    @Test
    void afterTheMinimumItRunsOnWhileATurnCompilesForTwoPercentOrMore() {
        assertThat(BenchCommand.moreJitWarmup(4, 4, 3 * MS, 100 * MS)).as("3 ms of 100").isTrue();
        assertThat(BenchCommand.moreJitWarmup(4, 4, 2 * MS, 100 * MS)).as("2 ms of 100, the bound").isTrue();
        assertThat(BenchCommand.moreJitWarmup(4, 4, 2 * MS - 1, 100 * MS)).as("just under 2 ms of 100").isFalse();
        assertThat(BenchCommand.moreJitWarmup(7, 4, 0, 100 * MS)).as("nothing compiled").isFalse();
    }

    @Test
    void itStopsAtFourTimesTheMinimum() {
        assertThat(BenchCommand.moreJitWarmup(15, 4, 50 * MS, 100 * MS)).as("turn 15 of at most 16").isTrue();
        assertThat(BenchCommand.moreJitWarmup(16, 4, 50 * MS, 100 * MS)).as("turn 16 of at most 16").isFalse();
        assertThat(BenchCommand.moreJitWarmup(1, 1, 90 * MS, 100 * MS)).as("--jit-warmup 1: at most 4").isTrue();
        assertThat(BenchCommand.moreJitWarmup(4, 1, 90 * MS, 100 * MS)).isFalse();
        // the cap in long arithmetic: four times a huge --jit-warmup does not wrap to a negative cap
        assertThat(BenchCommand.moreJitWarmup(Integer.MAX_VALUE, Integer.MAX_VALUE, 50 * MS, 100 * MS)).isTrue();
    }
}
