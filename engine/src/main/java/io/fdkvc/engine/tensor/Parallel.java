package io.fdkvc.engine.tensor;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.RejectedExecutionException;

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

    /**
     * Sets the number of worker threads (the CLI's --threads). A call in progress keeps the pool it
     * started on: {@link #forRange} reads the pool once, and the old pool's {@code shutdown} lets the
     * tasks it already holds finish (it only refuses new ones).
     */
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
        while (true) {
            ForkJoinPool p = pool; // one read: setThreads may publish a new pool meanwhile, this call keeps its own
            int t = p.getParallelism();
            if (t == 1 || n < 64) {
                body.run(0, n);
                return;
            }
            try {
                p.invoke(split(n, Math.min(t, n), body));
                return;
            } catch (RejectedExecutionException e) {
                // the pool was shut down between the read and the submission, before anything ran:
                // run on the pool that replaced it
                if (p == pool) throw e;
            }
        }
    }

    private static RecursiveAction split(int n, int chunks, RangeBody body) {
        return new RecursiveAction() {
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
        };
    }
}
