package io.fdkvc.engine.chat;

import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.model.Llama;
import java.util.List;

/**
 * Continuous batching: one decode step for every reply that has a token to feed, as one pass
 * over the weights ({@link Llama#forwardDecodeBatch}); each reply's token attends only over its
 * own conversation's cache. A single reply is decoded alone, through its session, with exactly
 * the arithmetic of {@code fdkvc chat}.
 *
 * <p>Used from one thread (the model's); not thread-safe.
 */
public final class DecodeBatch {
    private final Llama model;
    private final int vocab;
    private final float[] row;
    private KvCache[] caches = new KvCache[0];
    private int[] tokens = new int[0];

    public DecodeBatch(Llama model) {
        this.model = model;
        this.vocab = model.config().vocabSize();
        this.row = new float[vocab];
    }

    /** Most replies one step takes (the model's batch size). */
    public int limit() {
        return model.maxBatch();
    }

    /**
     * Feeds each reply's {@link Reply#pendingToken()} and samples its next token. Every reply
     * must have a pending token, belong to a distinct conversation on this model, and at most
     * {@link #limit()} are given.
     */
    public void step(List<Reply> replies) {
        int n = replies.size();
        if (n == 0) return;
        if (n > limit()) throw new IllegalArgumentException(n + " replies in one step, limit " + limit());
        if (n == 1) {
            replies.getFirst().decodeAlone();
            return;
        }
        if (caches.length < n) {
            caches = new KvCache[n];
            tokens = new int[n];
        }
        for (int b = 0; b < n; b++) {
            Reply r = replies.get(b);
            int t = r.pendingToken();
            if (t < 0) throw new IllegalStateException("reply " + b + " has no token to feed");
            r.ensureHeadroom();
            caches[b] = r.conversation().cache();
            tokens[b] = t;
        }
        float[] logits = model.forwardDecodeBatch(caches, tokens, n);
        for (int b = 0; b < n; b++) {
            Reply r = replies.get(b);
            if (r.pendingWantsLogits()) {
                System.arraycopy(logits, b * vocab, row, 0, vocab);
                r.fed(row);
            } else {
                r.fed(null);
            }
            caches[b] = null;
        }
    }
}
