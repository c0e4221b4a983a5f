package io.fdkvc.engine.session;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.model.Llama;
import io.fdkvc.engine.sampling.Sampler;
import java.time.Duration;

/**
 * Runs throwaway conversations through a model so that the JIT compiles its hot paths before
 * the first real request: prefill chunks, single decode steps, batched decode steps of several
 * conversations (continuous batching's kernels), and the policy's updates and evictions once
 * the caches pass their budget. Nothing of it is kept: the caches are dropped, and the model
 * holds no state between calls that changes a result (its scratch arrays are overwritten before
 * they are read), so a warmed model computes the same bits as a cold one.
 *
 * <p>Why a server wants it: until C2 has compiled them, the Vector API kernels run interpreted or
 * in C1, boxing every vector, and a fresh JVM's first request is several times slower than the
 * next ones. Measured with {@code scripts/serve-bench 1 50 16 300 --synthetic smollm2-135m-q8}
 * (93 prompt tokens and 16 generated a turn, two threads, no client warm-up): the first turn took
 * 4.0-4.7 s without a warm-up, 2.3 s after 3 s of it and 1.8 s after 10 s; from the fifth turn on
 * the runs did not differ beyond the machine's noise. llama.cpp's server also runs a warm-up pass
 * before it answers (there to page the weights in).
 */
public final class JitWarmup {
    private JitWarmup() {}

    /** Entries after which a throwaway unbounded cache starts over. */
    static final int UNBOUNDED_LIMIT = 2048;

    /**
     * What a warm-up did.
     *
     * @param turns         dialogue turns of each throwaway conversation
     * @param conversations throwaway conversations (the request, up to the model's batch size)
     * @param tokens        tokens through the forward pass, all conversations together
     * @param batchedSteps  decode steps that ran several conversations as one batch
     * @param peakEntries   the most entries any stream held at the end of a turn
     * @param nanos         time taken
     */
    public record Result(int turns, int conversations, long tokens, long batchedSteps, int peakEntries, long nanos) {}

    /**
     * Runs turns of {@code conversations} throwaway conversations (caches as {@code spec},
     * {@code maxTurnTokens} and {@code positions} build them) until {@code budget} has passed,
     * at least one (possibly shortened) turn when the budget is positive and none when it is zero;
     * the time is checked after each decode step, so it is overrun by at most the turn's prefill
     * chunks and one step. Each turn prefills a chunk of the model's batch size (bounded by the
     * turn headroom), decodes a few tokens in conversation 0 alone and then, with several
     * conversations, as one batch of all.
     */
    public static Result run(Llama model, PolicySpec spec, int maxTurnTokens, PositionMode positions, int conversations,
                             Duration budget) {
        return run(model, spec, maxTurnTokens, positions, conversations, budget, Integer.MAX_VALUE);
    }

    /** As {@link #run(Llama, PolicySpec, int, PositionMode, int, Duration)}, ending after {@code maxTurns} turns at the latest. */
    static Result run(Llama model, PolicySpec spec, int maxTurnTokens, PositionMode positions, int conversations,
                      Duration budget, int maxTurns) {
        if (conversations < 1) throw new IllegalArgumentException("warm-up conversations must be >= 1, got " + conversations);
        if (budget.isNegative()) throw new IllegalArgumentException("warm-up time must not be negative, got " + budget);
        if (maxTurnTokens < 2) throw new IllegalArgumentException("warm-up needs a turn headroom of 2 tokens or more, got " + maxTurnTokens);
        long start = System.nanoTime();
        if (budget.isZero() || maxTurns < 1) return new Result(0, 0, 0, 0, 0, 0);
        int n = Math.min(conversations, model.maxBatch());
        int vocab = model.config().vocabSize();
        // decode steps per turn: alone, then batched (each conversation's cache takes one token per
        // batched step); the prompt fills what is left of the turn's headroom, up to one chunk
        int steps = Math.max(1, Math.min(16, maxTurnTokens / 4));
        int batched = n > 1 ? steps : 0;
        int prompt = Math.max(1, Math.min(model.maxBatch(), maxTurnTokens - steps - batched));
        Session[] sessions = new Session[n];
        KvCache[] caches = new KvCache[n];
        for (int i = 0; i < n; i++) {
            caches[i] = model.newCache(spec, maxTurnTokens, positions);
            // a throwaway conversation that runs past the trained context is not worth a warning
            caches[i].markPastContextWarned();
            sessions[i] = new Session(model, caches[i]);
        }
        int[] chunk = new int[prompt], next = new int[n];
        Sampler greedy = Sampler.greedy(vocab);
        long deadline = start + budget.toNanos(), tokens = 0, batchSteps = 0;
        int turns = 0, peak = 0;
        long walk = 1;
        do {
            // an unbounded cache (full) would grow for as long as the warm-up runs
            if (caches[0].unbounded() && caches[0].maxEntries() > UNBOUNDED_LIMIT) {
                for (Session s : sessions) {
                    s.reset();
                    s.cache().markPastContextWarned();
                }
            }
            for (int i = 0; i < n; i++) {
                for (int t = 0; t < prompt; t++) chunk[t] = token(walk = step(walk), vocab);
                sessions[i].feed(chunk, 0, prompt, i == 0);
                tokens += prompt;
            }
            float[] logits = sessions[0].logits();
            // the deadline is checked per step: a cold JVM's first steps on a large model are slow
            for (int s = 0; s < steps && caches[0].headroom() > batched && System.nanoTime() < deadline; s++) {
                logits = sessions[0].feed(greedy.sample(logits));
                tokens++;
            }
            for (int s = 0; s < batched && System.nanoTime() < deadline; s++) {
                for (int i = 0; i < n; i++) next[i] = token(walk = step(walk), vocab);
                model.forwardDecodeBatch(caches, next, n);
                tokens += n;
                batchSteps++;
            }
            for (Session s : sessions) peak = Math.max(peak, s.endTurn().cacheEntries());
            turns++;
        } while (System.nanoTime() < deadline && turns < maxTurns);
        return new Result(turns, n, tokens, batchSteps, peak, System.nanoTime() - start);
    }

    /** The warm-up's token ids: a fixed walk (a 64-bit LCG) over the vocabulary; any valid ids do. */
    private static long step(long walk) {
        return walk * 6364136223846793005L + 1442695040888963407L;
    }

    private static int token(long walk, int vocab) {
        return (int) ((walk >>> 33) % vocab);
    }
}
