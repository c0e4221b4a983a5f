package io.fdkvc.engine.tensor;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;

/**
 * Splits a range of rows over a fixed pool of worker threads ({@code fdkvc.threads}, default: all
 * cores). Chunks are contiguous so that each thread streams its own slice of a weight matrix.
 */
public final class Parallel {
    /** A body over the half-open range [from, to). */
    @FunctionalInterface
    public interface RangeBody {
        void run(int from, int to);
    }

    private static volatile ForkJoinPool pool = newPool(defaultThreads());

    private Parallel() {}

    static int defaultThreads() {
        String p = System.getProperty("fdkvc.threads");
        return p == null ? Runtime.getRuntime().availableProcessors() : Math.max(1, Integer.parseInt(p));
    }

    private static ForkJoinPool newPool(int threads) {
        return new ForkJoinPool(threads);
    }

    /** Sets the number of worker threads (the CLI's --threads). */
    public static synchronized void setThreads(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be >= 1");
        if (pool.getParallelism() != threads) {
            ForkJoinPool old = pool;
            pool = newPool(threads);
            old.shutdown();
        }
    }

    public static int threads() {
        return pool.getParallelism();
    }

    /** Runs {@code body} over [0, n) in one contiguous chunk per thread; small ranges run inline. */
    public static void forRange(int n, RangeBody body) {
        int t = pool.getParallelism();
        if (t == 1 || n < 64) {
            body.run(0, n);
            return;
        }
        int chunks = Math.min(t, n);
        pool.invoke(new RecursiveAction() {
            @Override
            protected void compute() {
                RecursiveAction[] tasks = new RecursiveAction[chunks];
                for (int c = 0; c < chunks; c++) {
                    int from = (int) ((long) n * c / chunks), to = (int) ((long) n * (c + 1) / chunks);
                    tasks[c] = new RecursiveAction() {
                        @Override
                        protected void compute() {
                            body.run(from, to);
                        }
                    };
                }
                invokeAll(tasks);
            }
        });
    }
}
