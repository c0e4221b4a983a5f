package io.fdkvc.engine.session;

import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.sampling.Sampler;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;

/**
 * One conversation with a model: feeds tokens through the forward pass in chunks, runs the cache
 * policy at the end of each dialogue turn, and samples replies.
 *
 * <p>A dialogue turn is the user's message plus the model's reply; the policy runs once after
 * the reply ({@link #endTurn}). A turn longer than the cache's {@code maxTurnTokens} is split: the
 * policy also runs whenever the turn in progress has filled its headroom, before the next token
 * (spec: each chunk counts as a turn). Prefill chunks are also bounded by the model's batch size.
 *
 * <p>The session counts, per dialogue turn, the tokens processed, the forward-pass time and the
 * policy time, so that callers can report the cost of the policy relative to the turn's compute.
 */
public final class Session {
    private final Llama model;
    private final KvCache cache;
    private final int[] one = new int[1];

    private int turn;
    private int turnTokens;
    private long turnEvicted;
    private long turnUpdateNanos;
    private long turnComputeNanos;
    private float[] lastLogits;

    public Session(Llama model, KvCache cache) {
        this.model = model;
        this.cache = cache;
        cache.limitOriginalPositions(model.config().contextLength());
    }

    public Llama model() { return model; }
    public KvCache cache() { return cache; }
    /** Dialogue turns ended so far. */
    public int turns() { return turn; }
    /** Tokens processed in the turn in progress. */
    public int turnTokens() { return turnTokens; }
    /** True position of the next token. */
    public long position() { return cache.nextPosition(); }

    /**
     * Processes {@code tokens[off .. off+len)} as part of the turn in progress and returns the
     * logits after the last one (the model's array: valid until the next call).
     */
    public float[] feed(int[] tokens, int off, int len) {
        return feed(tokens, off, len, true);
    }

    /**
     * As {@link #feed(int[], int, int)}; without {@code wantLogits} the classifier is skipped
     * (the tokens only enter the cache, e.g. a reply's last token before the turn ends) and null
     * is returned.
     */
    public float[] feed(int[] tokens, int off, int len, boolean wantLogits) {
        if (len < 1) throw new IllegalArgumentException("nothing to feed");
        int done = 0;
        float[] logits = null;
        while (done < len) {
            if (cache.headroom() == 0) chunkUpdate();
            int n = Math.min(len - done, Math.min(model.maxBatch(), cache.headroom()));
            long t0 = System.nanoTime();
            logits = model.forward(cache, tokens, off + done, n, wantLogits && done + n == len);
            turnComputeNanos += System.nanoTime() - t0;
            done += n;
        }
        turnTokens += len;
        lastLogits = logits;
        return logits;
    }

    /**
     * Processes {@code tokens[off .. off+len)} as {@link #feed(int[], int, int)} does (the same
     * chunks, and the policy run whenever the turn's headroom is used up) and writes the logits of
     * every token into {@code out}: row {@code t}, the prediction of the token after
     * {@code tokens[off + t]}, at {@code t * vocab}. For teacher-forced evaluation: two sessions fed
     * the same tokens see the same arithmetic.
     *
     * @return {@code out}
     */
    public float[] feedEveryPosition(int[] tokens, int off, int len, float[] out) {
        if (len < 1) throw new IllegalArgumentException("nothing to feed");
        int vocab = model.config().vocabSize();
        if (out.length < (long) len * vocab) throw new IllegalArgumentException("logits array too small for " + len + " rows");
        int done = 0;
        while (done < len) {
            if (cache.headroom() == 0) chunkUpdate();
            int n = Math.min(len - done, Math.min(model.maxBatch(), cache.headroom()));
            long t0 = System.nanoTime();
            float[] rows = model.forwardEveryPosition(cache, tokens, off + done, n);
            turnComputeNanos += System.nanoTime() - t0;
            System.arraycopy(rows, 0, out, done * vocab, n * vocab);
            done += n;
        }
        turnTokens += len;
        lastLogits = java.util.Arrays.copyOfRange(out, (len - 1) * vocab, len * vocab);
        return out;
    }

    public float[] feed(int token) {
        one[0] = token;
        return feed(one, 0, 1, true);
    }

    /** Puts one token into the cache without computing its logits. */
    public void append(int token) {
        one[0] = token;
        feed(one, 0, 1, false);
    }

    /** The logits after the last token fed. */
    public float[] logits() {
        if (lastLogits == null) throw new IllegalStateException("no token fed yet");
        return lastLogits;
    }

    /**
     * Samples up to {@code maxTokens} tokens, starting from the logits of the last token fed.
     * Each sampled token is passed to {@code onToken} and fed, except a stop token, which ends
     * the reply without being fed or reported, and the last one when {@code maxTokens} is reached,
     * which is reported but not fed (the caller feeds it if the conversation goes on).
     *
     * @return the tokens reported; the last reported one is {@link #lastSampled()}
     */
    public int generate(Sampler sampler, int maxTokens, IntPredicate stop, IntConsumer onToken) {
        float[] logits = logits();
        int produced = 0;
        while (produced < maxTokens) {
            int next = sampler.sample(logits);
            lastSampled = next;
            if (stop.test(next)) break;
            onToken.accept(next);
            produced++;
            if (produced == maxTokens) break;
            logits = feed(next);
        }
        return produced;
    }

    private int lastSampled = -1;

    /** The last token {@link #generate} sampled (the stop token when it stopped on one). */
    public int lastSampled() { return lastSampled; }

    private void chunkUpdate() {
        KvCache.Update u = cache.endTurn();
        turnEvicted += u.evicted();
        turnUpdateNanos += u.nanos();
    }

    /** Ends the dialogue turn: runs the policy on what is pending and reports the whole turn. */
    public TurnStats endTurn() {
        KvCache.Update u = cache.endTurn();
        turnEvicted += u.evicted();
        turnUpdateNanos += u.nanos();
        TurnStats s = new TurnStats(++turn, turnTokens, u.maxEntries(), turnEvicted, u.bytes(), turnComputeNanos,
                turnUpdateNanos, cache.updates());
        turnTokens = 0;
        turnEvicted = 0;
        turnUpdateNanos = 0;
        turnComputeNanos = 0;
        return s;
    }

    /** Forgets the conversation. */
    public void reset() {
        cache.clear();
        turn = 0;
        turnTokens = 0;
        turnEvicted = 0;
        turnUpdateNanos = 0;
        turnComputeNanos = 0;
        lastLogits = null;
        lastSampled = -1;
    }

    /**
     * What one dialogue turn did.
     *
     * @param turn           1-based turn number
     * @param tokens         tokens processed in the turn (prompt and reply)
     * @param cacheEntries   entries of the largest stream after the policy update
     * @param evicted        entries evicted during the turn, all streams together
     * @param kvBytes        bytes held by the cache afterwards
     * @param computeNanos   forward-pass time of the turn
     * @param updateNanos    policy time of the turn (every chunk update and the final one)
     * @param updates        policy updates since the conversation began
     */
    public record TurnStats(int turn, int tokens, int cacheEntries, long evicted, long kvBytes, long computeNanos,
                            long updateNanos, long updates) {}
}
