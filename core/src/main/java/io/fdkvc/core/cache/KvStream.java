package io.fdkvc.core.cache;

import io.fdkvc.core.math.VectorMath;
import java.util.Arrays;

/**
 * One independent sequence of cache entries: one KV head of one layer in a transformer, or the
 * whole cache in a simulation.
 *
 * <p>Storage is struct-of-arrays. Entry {@code i} (0 &lt;= i &lt; size, always in increasing
 * position order) owns {@code keys[i*keyDim ..]}, {@code values[i*valueDim ..]},
 * {@code embeddings[i*embeddingDim ..]} (or its key when the stream has no separate embeddings),
 * its position, and the policy scores {@code c}, {@code rho}, {@code h} and the attention logit
 * bias of eq. 9.
 *
 * <p>Entries {@code [0, scored)} were present at the last policy update; entries
 * {@code [scored, size)} belong to the turn in progress and have not been scored yet. A policy's
 * {@code endTurn} scores them, evicts, and calls {@link #markScored()}.
 *
 * <p>Capacity is fixed at construction (budget + headroom for one turn). Appending past it grows
 * the arrays only when the stream was built growable (the {@code full} policy); otherwise it is an
 * error, because a bounded stream that grows is a memory leak in disguise. Eviction compacts in
 * place and allocates nothing.
 */
public final class KvStream {
    private final int keyDim;
    private final int valueDim;
    private final int embeddingDim; // 0: the embedding of an entry is its key
    private final boolean growable;

    private int capacity;
    private int size;
    private int scored;

    private float[] keys;
    private float[] values;
    private float[] embeddings;
    private double[] embeddingNorms;
    private long[] positions;
    private double[] c;
    private double[] rho;
    private double[] h;
    private float[] logitBias;
    private int[] cost;
    private long totalCost;

    private final LongList evicted = new LongList(16);

    /**
     * @param keyDim       key dimension (d), at least 1
     * @param valueDim     value dimension, 0 for a stream that stores no values (simulation)
     * @param embeddingDim embedding dimension, or 0 to use each entry's key as its embedding
     * @param capacity     entries the stream holds: budget plus the longest turn
     * @param growable     whether appending past capacity grows the stream (unbounded caches)
     */
    public KvStream(int keyDim, int valueDim, int embeddingDim, int capacity, boolean growable) {
        if (keyDim < 1) throw new IllegalArgumentException("keyDim must be >= 1, got " + keyDim);
        if (valueDim < 0) throw new IllegalArgumentException("valueDim must be >= 0, got " + valueDim);
        if (embeddingDim < 0) throw new IllegalArgumentException("embeddingDim must be >= 0, got " + embeddingDim);
        if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        this.keyDim = keyDim;
        this.valueDim = valueDim;
        this.embeddingDim = embeddingDim;
        this.growable = growable;
        allocate(capacity);
    }

    private void allocate(int newCapacity) {
        // every array below must fit a Java array: refuse rather than overflow into a negative size
        long widest = Math.max(1, Math.max(keyDim, Math.max(valueDim, embeddingDim)));
        if ((long) newCapacity * widest > Integer.MAX_VALUE - 8) {
            throw new io.fdkvc.core.param.ParameterException("capacity", newCapacity + " entries of " + widest
                    + " floats do not fit one Java array (docs/limits.md)");
        }
        keys = keys == null ? new float[newCapacity * keyDim] : Arrays.copyOf(keys, newCapacity * keyDim);
        values = values == null ? new float[newCapacity * valueDim] : Arrays.copyOf(values, newCapacity * valueDim);
        embeddings = embeddings == null ? new float[newCapacity * embeddingDim]
                : Arrays.copyOf(embeddings, newCapacity * embeddingDim);
        embeddingNorms = grow(embeddingNorms, newCapacity);
        positions = positions == null ? new long[newCapacity] : Arrays.copyOf(positions, newCapacity);
        c = grow(c, newCapacity);
        rho = grow(rho, newCapacity);
        h = grow(h, newCapacity);
        logitBias = logitBias == null ? new float[newCapacity] : Arrays.copyOf(logitBias, newCapacity);
        cost = cost == null ? new int[newCapacity] : Arrays.copyOf(cost, newCapacity);
        capacity = newCapacity;
    }

    private static double[] grow(double[] a, int n) {
        return a == null ? new double[n] : Arrays.copyOf(a, n);
    }

    /**
     * Appends an entry of the turn in progress.
     *
     * @param embedding the entry's embedding, or null when the stream uses keys as embeddings
     * @return the entry's index
     */
    public int append(long position, float[] key, int keyOff, float[] value, int valueOff,
                      float[] embedding, int embeddingOff) {
        return append(position, key, keyOff, value, valueOff, embedding, embeddingOff, 1);
    }

    /**
     * Appends an entry that costs {@code cost} units against the budget (extension: a token
     * budget over multi-token entries, e.g. utterances; the spec's entries all cost 1).
     */
    public int append(long position, float[] key, int keyOff, float[] value, int valueOff,
                      float[] embedding, int embeddingOff, int cost) {
        if (cost < 1) throw new IllegalArgumentException("cost must be >= 1, got " + cost);
        if (size > 0 && position <= positions[size - 1]) {
            throw new IllegalArgumentException("positions must increase: " + position + " after " + positions[size - 1]);
        }
        if (size == capacity) {
            if (!growable) {
                throw new IllegalStateException("stream full: capacity " + capacity
                        + " entries (budget + turn headroom); end the turn or split it into chunks");
            }
            allocate(Math.max(capacity * 2, 16));
        }
        int i = size;
        System.arraycopy(key, keyOff, keys, i * keyDim, keyDim);
        if (valueDim > 0) System.arraycopy(value, valueOff, values, i * valueDim, valueDim);
        if (embeddingDim > 0) {
            System.arraycopy(embedding, embeddingOff, embeddings, i * embeddingDim, embeddingDim);
            embeddingNorms[i] = VectorMath.norm(embeddings, i * embeddingDim, embeddingDim);
        } else {
            embeddingNorms[i] = VectorMath.norm(keys, i * keyDim, keyDim);
        }
        positions[i] = position;
        c[i] = 0;
        rho[i] = 0;
        h[i] = 0;
        logitBias[i] = 0; // factor 1 until the entry has been scored (eq. 9)
        this.cost[i] = cost;
        totalCost += cost;
        size++;
        return i;
    }

    /** Appends an entry whose embedding is its key (or that has no separate embedding). */
    public int append(long position, float[] key, int keyOff, float[] value, int valueOff) {
        return append(position, key, keyOff, value, valueOff, null, 0);
    }

    /**
     * Removes every entry whose flag is set, keeping the others in order, in place. The caller
     * has already logged the removals with {@link #logEviction(int)} in the order it chose.
     */
    public void compact(boolean[] remove) {
        int removedScored = 0;
        for (int r = 0; r < scored; r++) {
            if (remove[r]) removedScored++;
        }
        // Move runs of kept entries, one array copy per run and array: a turn usually removes a
        // few entries, and per-entry copies would cost a call per entry and array.
        int w = 0;
        int r = 0;
        while (r < size) {
            if (remove[r]) {
                totalCost -= cost[r];
                r++;
                continue;
            }
            int runStart = r;
            while (r < size && !remove[r]) r++;
            int len = r - runStart;
            if (w != runStart) moveRun(runStart, w, len);
            w += len;
        }
        scored -= removedScored;
        size = w;
    }

    private void moveRun(int from, int to, int len) {
        System.arraycopy(keys, from * keyDim, keys, to * keyDim, len * keyDim);
        if (valueDim > 0) System.arraycopy(values, from * valueDim, values, to * valueDim, len * valueDim);
        if (embeddingDim > 0) System.arraycopy(embeddings, from * embeddingDim, embeddings, to * embeddingDim, len * embeddingDim);
        System.arraycopy(embeddingNorms, from, embeddingNorms, to, len);
        System.arraycopy(positions, from, positions, to, len);
        System.arraycopy(c, from, c, to, len);
        System.arraycopy(rho, from, rho, to, len);
        System.arraycopy(h, from, h, to, len);
        System.arraycopy(logitBias, from, logitBias, to, len);
        System.arraycopy(cost, from, cost, to, len);
    }

    /** Starts a policy update: clears the list of entries evicted during the previous one. */
    public void beginUpdate() {
        evicted.clear();
    }

    /** Records that entry {@code i} is being evicted in this update (call before compacting). */
    public void logEviction(int i) {
        evicted.add(positions[i]);
    }

    /** Ends a policy update: every entry now held has been scored. */
    public void markScored() {
        scored = size;
    }

    /** Positions of the entries evicted by the last update, in the order they were removed. */
    public LongList evicted() {
        return evicted;
    }

    /** Removes every entry (a new conversation). */
    public void clear() {
        size = 0;
        scored = 0;
        totalCost = 0;
        evicted.clear();
    }

    /**
     * Drops the entries {@code [newSize, size)}, which must all belong to the turn in progress
     * (not scored yet): a cancelled turn leaves the stream as it was before the turn began. No
     * policy has seen those entries, so nothing else needs undoing.
     */
    public void truncate(int newSize) {
        if (newSize < scored || newSize > size) {
            throw new IllegalArgumentException("truncate to " + newSize + ": only unscored entries [" + scored + ", " + size
                    + ") may be dropped");
        }
        for (int i = newSize; i < size; i++) totalCost -= cost[i];
        size = newSize;
    }

    /** A copy of every entry and its policy scores (see {@link StreamSnapshot}). */
    public StreamSnapshot snapshot() {
        int n = size;
        return new StreamSnapshot(keyDim, valueDim, embeddingDim, n, scored,
                Arrays.copyOf(keys, n * keyDim), Arrays.copyOf(values, n * valueDim),
                Arrays.copyOf(embeddings, n * embeddingDim), Arrays.copyOf(embeddingNorms, n),
                Arrays.copyOf(positions, n), Arrays.copyOf(c, n), Arrays.copyOf(rho, n), Arrays.copyOf(h, n),
                Arrays.copyOf(logitBias, n), Arrays.copyOf(cost, n));
    }

    /**
     * Replaces the stream's contents with {@code s}, which must have this stream's dimensions; a
     * bounded stream must have room for it. The eviction log is cleared.
     */
    public void restore(StreamSnapshot s) {
        if (s.keyDim() != keyDim || s.valueDim() != valueDim || s.embeddingDim() != embeddingDim) {
            throw new IllegalArgumentException("snapshot of a " + s.keyDim() + "/" + s.valueDim() + "/" + s.embeddingDim()
                    + " stream restored into a " + keyDim + "/" + valueDim + "/" + embeddingDim + " stream");
        }
        int n = s.size();
        if (n > capacity) {
            if (!growable) throw new IllegalArgumentException("snapshot of " + n + " entries exceeds capacity " + capacity);
            allocate(n);
        }
        System.arraycopy(s.keys(), 0, keys, 0, n * keyDim);
        System.arraycopy(s.values(), 0, values, 0, n * valueDim);
        System.arraycopy(s.embeddings(), 0, embeddings, 0, n * embeddingDim);
        System.arraycopy(s.embeddingNorms(), 0, embeddingNorms, 0, n);
        System.arraycopy(s.positions(), 0, positions, 0, n);
        System.arraycopy(s.c(), 0, c, 0, n);
        System.arraycopy(s.rho(), 0, rho, 0, n);
        System.arraycopy(s.h(), 0, h, 0, n);
        System.arraycopy(s.logitBias(), 0, logitBias, 0, n);
        System.arraycopy(s.costs(), 0, cost, 0, n);
        long total = 0;
        for (int i = 0; i < n; i++) total += cost[i];
        totalCost = total;
        size = n;
        scored = s.scored();
        evicted.clear();
    }

    /** Exact bytes held by this stream's arrays (capacity, not size: what the JVM really holds). */
    public long bytes() {
        return 4L * (keys.length + values.length + embeddings.length + logitBias.length + cost.length)
                + 8L * (embeddingNorms.length + positions.length + c.length + rho.length + h.length)
                + evicted.bytes();
    }

    /** Entries held now: the scored ones {@code [0, scored())} and the current turn's after them. */
    public int size() { return size; }
    /**
     * Entries present at the last policy update: {@code [0, scored())} have scores, and
     * {@code [scored(), size())} are the current turn's, which a policy's {@code endTurn} scores
     * for the first time.
     */
    public int scored() { return scored; }
    /** Entries the arrays hold room for (budget plus the longest turn, for a bounded stream). */
    public int capacity() { return capacity; }
    /** Floats per key (the model's head size, d). */
    public int keyDim() { return keyDim; }
    /** Floats per value; 0 for a stream that stores no values (the simulations, the trace). */
    public int valueDim() { return valueDim; }
    /** Dimension of the embeddings used for similarity: the key dimension when embeddings are keys. */
    public int embeddingDim() { return embeddingDim > 0 ? embeddingDim : keyDim; }
    /** Whether appending past capacity grows the stream (only unbounded caches such as {@code full}). */
    public boolean growable() { return growable; }

    /** Raw key storage, row i at {@code i * keyDim()}. Valid for indices below {@link #size()}. */
    public float[] keys() { return keys; }
    /** Raw value storage, row i at {@code i * valueDim()}; empty when {@code valueDim() == 0}. */
    public float[] values() { return values; }
    /** Raw embedding storage, row i at {@code i * embeddingDim()}: the keys when the stream has none. */
    public float[] embeddings() { return embeddingDim > 0 ? embeddings : keys; }
    /** Euclidean norm of each entry's embedding, computed once when it is appended (for cosines). */
    public double[] embeddingNorms() { return embeddingNorms; }
    /** Each entry's position in the conversation, strictly increasing with the index. */
    public long[] positions() { return positions; }

    /**
     * Per-entry cumulative attention, the spec's c_i: FD-KVC adds each turn's mean-query
     * attention to it (eq. 1). Baselines keep their own score here, which is what they rank by:
     * H2O its accumulated attention, TOVA the last turn's attention, SnapKV its pooled attention
     * over the observation window. 0 when an
     * entry is appended; the policy owns it from then on, and compaction moves it with the entry.
     * Valid for indices below {@link #size()}.
     */
    public double[] c() { return c; }

    /**
     * Per-entry recency relevance, the spec's rho_i: FD-KVC decays it by gamma every turn and adds
     * alpha times the entry's rescaled similarity to the turn's query embedding (eqs. 2-4); eq. 9's
     * attention bias is computed from it. 0 when appended; unused by the baselines.
     */
    public double[] rho() { return rho; }

    /**
     * Per-entry ownership, the spec's h_i = wc * chat_i + wrho * rho_i (eq. 5), as the last update
     * computed it: FD-KVC evicts below {@code tau * max h} (eq. 8) and then the lowest h down to
     * the budget. fdkvc-fidelity keeps its long-term importance here (the heavy share's ranking).
     * 0 when appended; unused by the baselines.
     */
    public double[] h() { return h; }

    /** Per-entry additive attention logit bias (eq. 9); 0 for entries not scored yet. */
    public float[] logitBias() { return logitBias; }

    /** Entry i's position in the conversation (the same as {@code positions()[i]}). */
    public long position(int i) { return positions[i]; }
    /** Budget units per entry (1 unless appended with a cost). */
    public int[] costs() { return cost; }
    /** Sum of the costs of the entries held: the quantity a budget bounds (the size when all cost 1). */
    public long totalCost() { return totalCost; }
}
