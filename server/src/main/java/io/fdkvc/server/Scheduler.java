package io.fdkvc.server;

import io.fdkvc.engine.chat.DecodeBatch;
import io.fdkvc.engine.chat.Reply;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The one thread that runs the model. Requests wait in a bounded queue; up to {@code parallel}
 * are active at once. Each loop iteration feeds one prefill chunk of one active request (round
 * robin, so a long prompt is interleaved with the others' streams instead of stalling them) and
 * then one decode step for every active reply that has a token to feed, batched into one pass
 * over the weights ({@link DecodeBatch}). A finished reply is committed here (the policy runs at
 * the end of its turn); a cancelled or failed one is rolled back.
 */
final class Scheduler implements AutoCloseable {
    private final ServedModel model;
    private final DecodeBatch batch;
    private final int parallel;
    private final int queueCapacity;
    private final int prefillChunk;
    private final boolean persist;
    private final Metrics metrics;
    private final Object lock = new Object();
    private final ArrayDeque<Job> waiting = new ArrayDeque<>();
    private final List<Job> active = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;
    private boolean paused; // tests: hold the model thread between iterations
    private int prefillTurn;

    Scheduler(ServedModel model, int parallel, int queueCapacity, boolean persist, Metrics metrics) {
        this.model = model;
        this.batch = new DecodeBatch(model.llama());
        this.parallel = Math.min(parallel, batch.limit());
        this.queueCapacity = queueCapacity;
        this.prefillChunk = model.llama().maxBatch();
        this.persist = persist;
        this.metrics = metrics;
        this.thread = Thread.ofPlatform().name("fdkvc-model").daemon().unstarted(this::loop);
        thread.start();
    }

    /** Queues a job; false when {@code parallel} requests are in progress and {@code queue} more wait. */
    boolean submit(Job job) {
        synchronized (lock) {
            if (closed || active.size() + waiting.size() >= parallel + queueCapacity) return false;
            job.queuedAt = System.nanoTime();
            waiting.add(job);
            lock.notifyAll();
            return true;
        }
    }

    /** Holds (true) or releases the model thread between loop iterations; for tests that need a request to stay queued. */
    void pause(boolean hold) {
        synchronized (lock) {
            paused = hold;
            lock.notifyAll();
        }
    }

    /** Requests waiting for a slot. */
    int queueDepth() {
        synchronized (lock) {
            return waiting.size();
        }
    }

    /** Requests being processed. */
    int activeCount() {
        synchronized (lock) {
            return active.size();
        }
    }

    private void loop() {
        List<Reply> ready = new ArrayList<>();
        while (true) {
            synchronized (lock) {
                while (!closed && (paused || active.isEmpty() && waiting.isEmpty())) {
                    try {
                        lock.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) {
                    for (Job j : List.copyOf(waiting)) abort(j, new IllegalStateException("server shutting down"));
                    waiting.clear();
                    for (Job j : List.copyOf(active)) abort(j, new IllegalStateException("server shutting down"));
                    active.clear();
                    return;
                }
                // a request whose client left while it waited never takes a slot
                for (var it = waiting.iterator(); it.hasNext(); ) {
                    Job j = it.next();
                    if (j.reply.cancelled()) {
                        it.remove();
                        cancelled(j);
                    }
                }
                while (active.size() < parallel && !waiting.isEmpty()) {
                    Job j = waiting.poll();
                    metrics.queued(System.nanoTime() - j.queuedAt);
                    active.add(j);
                }
            }
            // cancelled requests leave no trace; checked before every prefill chunk and decode step
            for (Job j : List.copyOf(active)) {
                if (j.reply.cancelled()) cancelled(j);
            }
            // one prefill chunk, round robin over the requests still prefilling
            Job p = nextPrefilling();
            if (p != null) {
                try {
                    long t0 = System.nanoTime();
                    int before = p.reply.prefillRemaining();
                    p.reply.prefill(prefillChunk);
                    metrics.prefill(before - p.reply.prefillRemaining(), System.nanoTime() - t0);
                } catch (RuntimeException e) {
                    abort(p, e);
                }
            }
            // one decode step for every reply with a token to feed
            ready.clear();
            for (Job j : active) {
                if (ready.size() < batch.limit() && j.reply.pendingToken() >= 0) ready.add(j.reply);
            }
            if (!ready.isEmpty()) {
                long t0 = System.nanoTime();
                try {
                    batch.step(ready);
                    metrics.decode(ready.size(), System.nanoTime() - t0);
                } catch (RuntimeException e) {
                    for (Job j : List.copyOf(active)) if (ready.contains(j.reply)) abort(j, e);
                }
            }
            for (Job j : List.copyOf(active)) {
                if (j.reply.done()) complete(j);
            }
        }
    }

    private Job nextPrefilling() {
        int n = active.size();
        for (int k = 0; k < n; k++) {
            Job j = active.get((prefillTurn + k) % n);
            if (j.reply.prefilling()) {
                prefillTurn = (prefillTurn + k + 1) % Math.max(n, 1);
                return j;
            }
        }
        return null;
    }

    private void complete(Job j) {
        try {
            j.reply.commit();
            j.evicted = j.reply.evicted();
            j.committed = true;
            if (persist) j.state = j.reply.conversation().state();
        } catch (RuntimeException e) {
            j.failure = e;
        }
        remove(j);
        j.finish();
    }

    private void cancelled(Job j) {
        metrics.cancelled(j.reply.prefillRemaining());
        abort(j, null);
    }

    /** Rolls back a job (cancelled, failed, or the server closing) and wakes its HTTP thread. */
    private void abort(Job j, Throwable failure) {
        try {
            j.reply.rollback();
        } catch (RuntimeException e) {
            if (failure == null) failure = e;
        }
        j.failure = failure;
        remove(j);
        j.finish();
    }

    private void remove(Job j) {
        synchronized (lock) {
            active.remove(j);
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
