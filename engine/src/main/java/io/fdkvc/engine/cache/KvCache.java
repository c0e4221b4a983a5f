package io.fdkvc.engine.cache;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.engine.tensor.Parallel;

/**
 * The KV cache of one conversation: one {@link KvStream} per (layer, KV head), each driven by its
 * own {@link Policy} instance (policies keep per-stream state). Keys and values live only in the
 * streams.
 *
 * <p>What is stored: each entry's key <em>before</em> the rotary embedding (its embedding for the
 * policy's similarity is the key itself, as the spec's default says, so no second copy is held),
 * and its value. The forward pass rotates keys when it attends to them, at the entry's true
 * position or at its slot index ({@link PositionMode}). Keys and queries of the llama
 * (interleaved-pair) layout are stored with each head's pairs de-interleaved into halves; this is
 * one fixed permutation of the head's coordinates, so every dot product, norm and cosine a policy
 * computes is unchanged, and RoPE becomes a shuffle-free vector operation.
 *
 * <p>Turn lifecycle: the forward pass {@link #append appends} every token of the turn in progress
 * to all streams, together with the turn's query row for each stream (the mean over the KV head's
 * query group of the token's query, before RoPE). {@link #endTurn} then calls every policy once.
 * A stream's capacity is {@code budget + maxTurnTokens}; the caller ends the turn early when
 * {@link #headroom()} reaches 0 (a long turn is processed in chunks, each counted as a turn, as
 * the spec's extension says). Only {@code full} grows.
 */
public final class KvCache {
    private final int layers, kvHeads, headDim, group, maxTurnTokens;
    private final PolicySpec spec;
    private final PositionMode positions;
    private final KvStream[] streams;
    private final Policy[] policies;
    private final Turn[] turns;
    private final float[][] turnQueries;
    private final boolean modulated;
    private final boolean unbounded;
    private final Parallel.RangeBody updateBody = this::updateRange;

    private int pending;       // tokens appended since the last update
    private long nextPosition; // true position of the next token
    private long updates;      // policy updates so far
    // per-update results, summed by updateRange's callers
    private final long[] evictedPerStream;

    /**
     * @param layers        transformer layers
     * @param kvHeads       KV heads per layer
     * @param headDim       key and value dimension of a head
     * @param group         query heads per KV head
     * @param spec          the policy; one instance is created per stream
     * @param maxTurnTokens entries a turn may add before the policy must run (chunk size)
     * @param positions     how attention positions entries
     */
    public KvCache(int layers, int kvHeads, int headDim, int group, PolicySpec spec, int maxTurnTokens,
                   PositionMode positions) {
        if (layers < 1 || kvHeads < 1 || headDim < 1 || group < 1) {
            throw new IllegalArgumentException("bad cache shape " + layers + "x" + kvHeads + "x" + headDim + "/" + group);
        }
        if (maxTurnTokens < 1) throw new io.fdkvc.core.InputException("--max-turn-tokens must be >= 1, got " + maxTurnTokens);
        this.layers = layers;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
        this.group = group;
        this.maxTurnTokens = maxTurnTokens;
        this.spec = spec;
        this.positions = positions;
        int n = layers * kvHeads;
        streams = new KvStream[n];
        policies = new Policy[n];
        turns = new Turn[n];
        turnQueries = new float[n][maxTurnTokens * headDim];
        evictedPerStream = new long[n];
        boolean mod = false, unb = false;
        for (int i = 0; i < n; i++) {
            policies[i] = spec.newPolicy();
            unb = policies[i].unbounded();
            mod |= policies[i].modulatesAttention();
            // full starts with one turn of room and doubles as it needs; the others never grow
            int capacity = unb ? maxTurnTokens : Math.addExact(spec.budget(), maxTurnTokens);
            streams[i] = new KvStream(headDim, headDim, 0, capacity, unb);
            turns[i] = new Turn(headDim, headDim);
        }
        modulated = mod;
        unbounded = unb;
    }

    public int layers() { return layers; }
    public int kvHeads() { return kvHeads; }
    public int headDim() { return headDim; }
    public int group() { return group; }
    public int maxTurnTokens() { return maxTurnTokens; }
    public PolicySpec spec() { return spec; }
    public PositionMode positionMode() { return positions; }
    /** Whether any stream's policy writes a non-zero logit bias (eq. 9). */
    public boolean modulated() { return modulated; }
    /** Whether the streams grow without bound (the full policy). */
    public boolean unbounded() { return unbounded; }
    /** Tokens appended since the last policy update. */
    public int pending() { return pending; }
    /** Tokens that may still be appended before the policy must run. */
    public int headroom() { return maxTurnTokens - pending; }
    /** True position of the next token (tokens processed so far). */
    public long nextPosition() { return nextPosition; }
    /** Policy updates so far (turns and chunks). */
    public long updates() { return updates; }

    public KvStream stream(int layer, int kvHead) {
        return streams[layer * kvHeads + kvHead];
    }

    public Policy policy(int layer, int kvHead) {
        return policies[layer * kvHeads + kvHead];
    }

    /**
     * Appends token {@code t} of the chunk in progress to the streams of {@code layer}: key and
     * value of each KV head (pre-RoPE key at {@code k[kOff + h*headDim]}, value at
     * {@code v[vOff + h*headDim]}), and its turn query row for each KV head: the mean of the
     * group's pre-RoPE queries at {@code q[qOff + (h*group + j)*headDim]}.
     */
    public void append(int layer, int t, float[] k, int kOff, float[] v, int vOff, float[] q, int qOff) {
        int row = pending + t;
        if (row >= maxTurnTokens) {
            throw new IllegalStateException("turn in progress is full (" + maxTurnTokens + " tokens): end the turn first");
        }
        long position = nextPosition + t;
        float inv = 1f / group;
        for (int h = 0; h < kvHeads; h++) {
            int s = layer * kvHeads + h;
            streams[s].append(position, k, kOff + h * headDim, v, vOff + h * headDim);
            float[] tq = turnQueries[s];
            int o = row * headDim, qh = qOff + h * group * headDim;
            for (int d = 0; d < headDim; d++) {
                float sum = 0;
                for (int j = 0; j < group; j++) sum += q[qh + j * headDim + d];
                tq[o + d] = sum * inv;
            }
        }
    }

    /** Marks {@code n} appended tokens (every layer done) as part of the turn in progress. */
    public void advance(int n) {
        if (n < 0 || pending + n > maxTurnTokens) throw new IllegalStateException("advance " + n + " with " + pending + " pending");
        pending += n;
        nextPosition += n;
    }

    /**
     * Runs every stream's policy on the turn in progress (nothing when no token is pending) and
     * returns what it did. Streams are independent, so they are updated in parallel.
     */
    public Update endTurn() {
        if (pending == 0) return new Update(0, maxEntries(), 0, bytes(), 0);
        long t0 = System.nanoTime();
        Parallel.forRange(streams.length, updateBody);
        long nanos = System.nanoTime() - t0;
        long evicted = 0;
        for (long e : evictedPerStream) evicted += e;
        int tokens = pending;
        pending = 0;
        updates++;
        return new Update(tokens, maxEntries(), evicted, bytes(), nanos);
    }

    private void updateRange(int from, int to) {
        for (int s = from; s < to; s++) {
            turns[s].set(turnQueries[s], pending, null);
            policies[s].endTurn(streams[s], turns[s]);
            evictedPerStream[s] = streams[s].evicted().size();
        }
    }

    /** Entries held by the largest stream. */
    public int maxEntries() {
        int m = 0;
        for (KvStream s : streams) m = Math.max(m, s.size());
        return m;
    }

    /** Entries held by all streams together. */
    public long totalEntries() {
        long m = 0;
        for (KvStream s : streams) m += s.size();
        return m;
    }

    /** Bytes held by the streams' arrays (their capacity, what the JVM really holds). */
    public long bytes() {
        long b = 0;
        for (KvStream s : streams) b += s.bytes();
        for (float[] q : turnQueries) b += 4L * q.length;
        return b;
    }

    /** Largest stream capacity (the forward pass sizes its scratch by it). */
    public int maxCapacity() {
        int m = 0;
        for (KvStream s : streams) m = Math.max(m, s.capacity());
        return m;
    }

    /** Forgets the conversation: empty streams, position 0, fresh policy state. */
    public void clear() {
        for (int i = 0; i < streams.length; i++) {
            streams[i].clear();
            policies[i] = spec.newPolicy();
        }
        pending = 0;
        nextPosition = 0;
        updates = 0;
    }

    // ---- snapshots: persistence and rollback of a cancelled turn -------------------------------

    /**
     * The cache as of its last policy update: every stream's entries and scores, every policy's
     * own state, the next position and the update count. Entries of the turn in progress are not
     * included, so restoring it undoes that turn (a cancelled request) as well.
     */
    public Snapshot snapshot() {
        int n = streams.length;
        io.fdkvc.core.cache.StreamSnapshot[] ss = new io.fdkvc.core.cache.StreamSnapshot[n];
        double[][] states = new double[n][];
        for (int i = 0; i < n; i++) {
            KvStream s = streams[i];
            if (s.size() > s.scored()) {
                // leave out the turn in progress: copy, drop it from the copy's stream, keep the original
                KvStream tmp = new KvStream(s.keyDim(), s.valueDim(), 0, Math.max(1, s.size()), true);
                tmp.restore(s.snapshot());
                tmp.truncate(tmp.scored());
                ss[i] = tmp.snapshot();
            } else {
                ss[i] = s.snapshot();
            }
            states[i] = policies[i].exportState();
        }
        return new Snapshot(layers, kvHeads, headDim, spec.name(), spec.budget(), ss, states, nextPosition - pending, updates);
    }

    /** Replaces the whole cache (turn in progress included) with {@code s}, taken from a cache of the same shape and policy. */
    public void restore(Snapshot s) {
        if (s.layers() != layers || s.kvHeads() != kvHeads || s.headDim() != headDim) {
            throw new IllegalArgumentException("cache snapshot of shape " + s.layers() + "x" + s.kvHeads() + "x" + s.headDim()
                    + " restored into " + layers + "x" + kvHeads + "x" + headDim);
        }
        if (!s.policy().equals(spec.name()) || s.budget() != spec.budget()) {
            throw new IllegalArgumentException("cache snapshot of policy " + s.policy() + "/" + s.budget() + " restored into "
                    + spec.name() + "/" + spec.budget());
        }
        for (int i = 0; i < streams.length; i++) {
            streams[i].restore(s.streams()[i]);
            policies[i] = spec.newPolicy();
            policies[i].restoreState(s.policyStates()[i]);
        }
        pending = 0;
        nextPosition = s.nextPosition();
        updates = s.updates();
    }

    /**
     * Drops the turn in progress (every entry appended since the last policy update): the cache
     * is as it was after that update. Cheap; valid only while no update ran since the turn began,
     * else restore a {@link #snapshot()} taken before that update.
     */
    public void discardPending() {
        for (KvStream s : streams) s.truncate(s.scored());
        nextPosition -= pending;
        pending = 0;
    }

    /**
     * A copy of a cache (see {@link #snapshot()}), in stream order {@code layer * kvHeads + head}.
     *
     * @param policy       the policy's registry name (with its budget, checked on restore)
     * @param policyStates each stream's {@link Policy#exportState()}
     * @param nextPosition true position of the next token
     * @param updates      policy updates so far
     */
    public record Snapshot(int layers, int kvHeads, int headDim, String policy, int budget,
                           io.fdkvc.core.cache.StreamSnapshot[] streams, double[][] policyStates, long nextPosition,
                           long updates) {
        public Snapshot {
            if (streams.length != (long) layers * kvHeads || policyStates.length != streams.length) {
                throw new IllegalArgumentException("cache snapshot has " + streams.length + " streams and " + policyStates.length
                        + " policy states, expected " + layers * kvHeads);
            }
            if (nextPosition < 0 || updates < 0) throw new IllegalArgumentException("negative position or update count");
            for (io.fdkvc.core.cache.StreamSnapshot st : streams) {
                if (st.keyDim() != headDim || st.valueDim() != headDim || st.embeddingDim() != 0) {
                    throw new IllegalArgumentException("cache snapshot stream of shape " + st.keyDim() + "/" + st.valueDim()
                            + ", expected " + headDim);
                }
                if (st.size() > 0 && st.positions()[st.size() - 1] >= nextPosition) {
                    throw new IllegalArgumentException("cache snapshot entry at position " + st.positions()[st.size() - 1]
                            + " not before the next position " + nextPosition);
                }
            }
        }

        /** Entries held by all streams together. */
        public long totalEntries() {
            long n = 0;
            for (io.fdkvc.core.cache.StreamSnapshot st : streams) n += st.size();
            return n;
        }
    }

    /**
     * What one policy update did.
     *
     * @param tokens     tokens of the turn (or chunk) the update closed
     * @param maxEntries entries of the largest stream afterwards
     * @param evicted    entries evicted, summed over all streams
     * @param bytes      bytes held by the cache afterwards
     * @param nanos      wall time of the update
     */
    public record Update(int tokens, int maxEntries, long evicted, long bytes, long nanos) {}
}
