package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicIntegerArray;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The phases' chunks: whatever the threads and chunk count, every index of a phase runs exactly
 * once, on a worker id below the thread count, and a chunk that throws ends the phase with that
 * exception while the team stays usable.
 */
class LlamaWorkersTest {
    @Property(tries = 60)
    void everyIndexRunsOnce(@ForAll @IntRange(min = 1, max = 4) int threads,
                            @ForAll @IntRange(min = 0, max = 700) int n,
                            @ForAll @IntRange(min = 1, max = 40) int chunks) {
        try (LlamaWorkers workers = new LlamaWorkers(threads)) {
            for (int phase = 0; phase < 3; phase++) {
                AtomicIntegerArray seen = new AtomicIntegerArray(Math.max(n, 1));
                AtomicIntegerArray badWorker = new AtomicIntegerArray(1);
                workers.run(n, chunks, (worker, from, to) -> {
                    if (worker < 0 || worker >= threads) badWorker.incrementAndGet(0);
                    for (int i = from; i < to; i++) seen.incrementAndGet(i);
                });
                assertThat(badWorker.get(0)).isZero();
                for (int i = 0; i < n; i++) assertThat(seen.get(i)).as("index %d of %d, %d chunks", i, n, chunks).isEqualTo(1);
            }
        }
    }

    /** With a grain, the same, and every chunk starts on a multiple of it and ends on one or at n. */
    @Property(tries = 60)
    void grainedChunksCutOnlyAtMultiplesOfTheGrain(@ForAll @IntRange(min = 1, max = 4) int threads,
                                                   @ForAll @IntRange(min = 0, max = 700) int n,
                                                   @ForAll @IntRange(min = 1, max = 40) int chunks,
                                                   @ForAll @IntRange(min = 1, max = 64) int grain) {
        try (LlamaWorkers workers = new LlamaWorkers(threads)) {
            AtomicIntegerArray seen = new AtomicIntegerArray(Math.max(n, 1));
            AtomicIntegerArray badCut = new AtomicIntegerArray(1);
            workers.run(n, chunks, grain, (worker, from, to) -> {
                if (from % grain != 0 || (to % grain != 0 && to != n) || (from >= to && n > 0)) badCut.incrementAndGet(0);
                for (int i = from; i < to; i++) seen.incrementAndGet(i);
            });
            assertThat(badCut.get(0)).isZero();
            for (int i = 0; i < n; i++) assertThat(seen.get(i)).as("index %d of %d, %d chunks, grain %d", i, n, chunks, grain).isEqualTo(1);
        }
    }

    @Test
    void theCutsOfSmolLM2sRowsInEightChunksFallOnGroupsOfSixteen() {
        // 576 rows: 72, 144, ... without a grain; 64, 144, 208, 288, 352, 432, 496 with one
        int[] cuts = new int[9];
        for (int c = 0; c <= 8; c++) cuts[c] = LlamaWorkers.chunkEnd(576, c, 8, 16);
        assertThat(cuts).containsExactly(0, 64, 144, 208, 288, 352, 432, 496, 576);
        assertThat(LlamaWorkers.chunkEnd(576, 1, 8, 1)).isEqualTo(72);
        assertThatThrownBy(() -> new LlamaWorkers(1).run(10, 2, 0, (w, f, t) -> {})).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("grain");
    }

    @Property(tries = 10)
    void aFailingChunkEndsThePhaseWithItsException(@ForAll @IntRange(min = 2, max = 3) int threads,
                                                   @ForAll @IntRange(min = 0, max = 99) int failAt) {
        try (LlamaWorkers workers = new LlamaWorkers(threads)) {
            assertThatThrownBy(() -> workers.run(100, 8, (worker, from, to) -> {
                if (failAt >= from && failAt < to) throw new IllegalStateException("chunk with " + failAt);
            })).isInstanceOf(IllegalStateException.class).hasMessage("chunk with " + failAt);
            AtomicIntegerArray seen = new AtomicIntegerArray(100);
            workers.run(100, 8, (worker, from, to) -> { for (int i = from; i < to; i++) seen.incrementAndGet(i); });
            for (int i = 0; i < 100; i++) assertThat(seen.get(i)).isEqualTo(1);
        }
    }

    /** Both threads fail in one phase: the next phase must not see the worker's old failure. */
    @Property(tries = 10)
    void aFailedPhaseLeavesNoFailureForTheNext(@ForAll @IntRange(min = 2, max = 40) int n) {
        try (LlamaWorkers workers = new LlamaWorkers(2)) {
            // one chunk a thread: the caller takes chunk 0 and waits, at the latch, for the worker
            // to take chunk 1, so that both run and both throw
            java.util.concurrent.CountDownLatch both = new java.util.concurrent.CountDownLatch(2);
            assertThatThrownBy(() -> workers.run(n, 2, (worker, from, to) -> {
                both.countDown();
                try {
                    both.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                throw new IllegalStateException("chunk from " + from);
            })).isInstanceOf(IllegalStateException.class).hasMessageStartingWith("chunk from");
            AtomicIntegerArray seen = new AtomicIntegerArray(n);
            workers.run(n, 2, (worker, from, to) -> { for (int i = from; i < to; i++) seen.incrementAndGet(i); });
            for (int i = 0; i < n; i++) assertThat(seen.get(i)).isEqualTo(1);
        }
    }

    @Property(tries = 5)
    void refusesNoChunks(@ForAll @IntRange(min = -3, max = 0) int chunks) {
        try (LlamaWorkers workers = new LlamaWorkers(2)) {
            assertThatThrownBy(() -> workers.run(10, chunks, (worker, from, to) -> {}))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chunks");
        }
    }
}
