package io.fdkvc.engine.model;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A small fixed team of threads for the forward pass. A token's forward pass is a few hundred
 * short parallel phases (one per matrix product or attention step, tens of microseconds each),
 * so the cost of starting a phase matters: here the caller publishes the phase in a volatile
 * field and the workers, which spin briefly before parking, pick it up without a queue or a
 * task object. Phase bodies are preallocated by the model, so dispatching allocates nothing.
 *
 * <p>A phase's range is cut into a given number of contiguous chunks, which the threads, the
 * caller first, take from a shared counter until none is left. Decode's phases are cut into one
 * chunk a thread (more cut its products' weight streams short and measured slower,
 * docs/benchmarks-engine.md, "The forward pass's phases, timed"); a prefill chunk's products into
 * several, so that the thread that runs faster at the moment takes more. Bodies must accept any
 * sub-range, any number of times per phase on the same worker.
 */
final class LlamaWorkers implements AutoCloseable {
    /** A phase body: chunk {@code worker} of the work, the half-open range [from, to). */
    @FunctionalInterface
    interface Body {
        void run(int worker, int from, int to);
    }

    // spin iterations before a worker parks: about 50-100 microseconds, longer than the gap
    // between two phases of a token, far shorter than the gap between two user turns
    private static final int SPINS = 20_000;
    // spins before a waiting thread starts yielding its core (a few microseconds)
    private static final int YIELD_AFTER = 2_000;

    private final int threads;
    private final Thread[] workers;
    private final boolean[] parked;
    private volatile long generation;
    private volatile boolean closed;
    private final AtomicInteger remaining = new AtomicInteger();
    // the next chunk to take; reset before each phase is published
    private final AtomicInteger next = new AtomicInteger();
    private Body body;
    private int n, chunks, grain;
    private volatile Throwable failure;

    LlamaWorkers(int threads) {
        if (threads < 1) throw new IllegalArgumentException("threads must be >= 1");
        this.threads = threads;
        this.workers = new Thread[threads - 1];
        this.parked = new boolean[threads];
        for (int i = 1; i < threads; i++) {
            int id = i;
            Thread t = new Thread(() -> loop(id), "fdkvc-llama-" + i);
            t.setDaemon(true);
            workers[i - 1] = t;
            t.start();
        }
    }

    int threads() {
        return threads;
    }

    /**
     * Runs {@code body} over [0, n) cut into {@code chunks} contiguous chunks (at most n), which
     * the threads take in turn as each finishes its last; returns when all are done.
     */
    void run(int n, int chunks, Body body) {
        run(n, chunks, 1, body);
    }

    /**
     * {@link #run(int, int, Body)} with every cut between chunks at a multiple of {@code grain}
     * (the last chunk ends at n): a weight product's row ranges then start on whole groups of
     * its row-lane copy, whose panels and decode kernels serve a range cut inside a group only by
     * the slower paths. A chunk the rounding leaves empty is skipped.
     */
    void run(int n, int chunks, int grain, Body body) {
        if (grain < 1) throw new IllegalArgumentException("grain must be >= 1");
        // after close the workers are gone: waiting for them would spin forever
        if (closed) throw new IllegalStateException("the forward pass was closed");
        if (chunks < 1) throw new IllegalArgumentException("chunks must be >= 1");
        if (threads == 1 || n <= 1) {
            body.run(0, 0, n);
            return;
        }
        this.body = body;
        this.n = n;
        this.chunks = Math.min(chunks, n);
        this.grain = grain;
        next.set(0);
        remaining.set(threads - 1);
        generation++; // volatile write publishes body, n, chunks and the counter's reset
        for (int i = 1; i < threads; i++) {
            if (readParked(i)) LockSupport.unpark(workers[i - 1]);
        }
        Throwable own = null;
        try {
            takeChunks(0);
        } catch (Throwable t) {
            own = t;
        }
        // spin while the other chunks finish; when the machine is oversubscribed a worker may be
        // waiting for a core, so after a while give ours up instead of burning its time slice
        for (int spins = 0; remaining.get() != 0; spins++) {
            if (spins < YIELD_AFTER) Thread.onSpinWait(); else Thread.yield();
            if (closed && spins >= YIELD_AFTER) throw new IllegalStateException("the forward pass was closed during a phase");
        }
        // a worker's failure is cleared even when the caller's own is the one thrown: left set, it
        // would be thrown again by the next phase
        Throwable f = failure;
        failure = null;
        if (own != null) rethrow(own);
        if (f != null) rethrow(f);
    }

    /** Runs the phase's chunks that are still free, one after the other, as worker {@code id}. */
    private void takeChunks(int id) {
        Body b = body;
        int size = n, k = chunks, g = grain;
        for (int c; (c = next.getAndIncrement()) < k; ) {
            int from = chunkEnd(size, c, k, g), to = chunkEnd(size, c + 1, k, g);
            if (from < to) b.run(id, from, to);
        }
    }

    /** Where chunk c of chunks ends: n c / chunks rounded down to a multiple of grain; n for the last. */
    static int chunkEnd(int n, int c, int chunks, int grain) {
        return c >= chunks ? n : (int) ((long) n * c / chunks) / grain * grain;
    }

    private void loop(int id) {
        long seen = 0;
        while (true) {
            long g;
            int spins = 0;
            while ((g = generation) == seen && !closed) {
                if (++spins < YIELD_AFTER) {
                    Thread.onSpinWait();
                } else if (spins < SPINS) {
                    Thread.yield();
                } else {
                    writeParked(id, true);
                    if (generation == seen && !closed) LockSupport.park(this);
                    writeParked(id, false);
                    spins = 0;
                }
            }
            if (closed) return;
            seen = g;
            try {
                takeChunks(id);
            } catch (Throwable t) {
                failure = t;
            }
            remaining.decrementAndGet();
        }
    }

    // the parked flags are read by the dispatcher and written by one worker each; a volatile
    // array element is not available in Java, so the flags go through a VarHandle
    private static final java.lang.invoke.VarHandle PARKED =
            java.lang.invoke.MethodHandles.arrayElementVarHandle(boolean[].class);

    private boolean readParked(int i) {
        return (boolean) PARKED.getVolatile(parked, i);
    }

    private void writeParked(int i, boolean v) {
        PARKED.setVolatile(parked, i, v);
    }

    private static void rethrow(Throwable t) {
        if (t instanceof RuntimeException r) throw r;
        if (t instanceof Error e) throw e;
        throw new IllegalStateException(t);
    }

    @Override
    public void close() {
        closed = true;
        for (Thread t : workers) LockSupport.unpark(t);
    }
}
