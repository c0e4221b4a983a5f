package io.fdkvc.engine.cache;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.LongList;
import io.fdkvc.core.policy.ObservedAttention;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.engine.tensor.Parallel;
import io.fdkvc.engine.tensor.Simd;

/**
 * The KV cache of one conversation: one {@link KvStream} per (layer, KV head), each driven by its
 * own {@link Policy} instance (policies keep per-stream state).
 *
 * <p>What is stored: each entry's key <em>before</em> the rotary embedding in the stream (its
 * embedding for the policy's similarity is the key itself, as the spec's default says), its
 * value, and, beside the stream, the same key <em>rotated</em> to the position attention gives it
 * ({@link PositionMode}: its true position, or its slot index). The forward pass rotates a key
 * once, when it enters ({@link #rotatedValid}); an update that evicts moves the survivors: with
 * {@code original} positions their rotated rows move with them ({@link #endTurn}), with
 * {@code cache} positions every entry after the first gap has a new slot and is rotated again,
 * from its pre-RoPE key, at the next forward pass (so the rotation is never composed and carries no
 * drift). The rotated copy costs one more key array per stream (half as much again as keys and
 * values).
 * Keys and queries of the llama (interleaved-pair) layout are stored with each head's pairs
 * de-interleaved into halves; this is one fixed permutation of the head's coordinates, so every
 * dot product, norm and cosine a policy computes is unchanged, and RoPE becomes a shuffle-free
 * vector operation.
 *
 * <p>Observed attention: when the policy reads attention ({@link Policy#readsAttention()}), the
 * forward pass hands each query row's weights, averaged over the KV head's group, to
 * {@link #observe}; they are summed per entry (and the last rows kept for
 * {@link Policy#recentAttentionRows()}) and given to the policy as the turn's
 * {@link Turn#observed()}.
 *
 * <p>Turn lifecycle: the forward pass {@link #append appends} every token of the turn in progress
 * to all streams, together with the turn's query row for each stream (the mean over the KV head's
 * query group of the token's query, before RoPE). {@link #endTurn} then calls every policy once.
 * A stream's capacity is {@code budget + maxTurnTokens}; the caller ends the turn early when
 * {@link #headroom()} reaches 0 (a long turn is processed in chunks, each counted as a turn, as
 * the spec's extension says). Only {@code full} grows.
 *
 * <p>Sliding-window layers (Gemma 3's five of every six): the model itself bounds what such a
 * layer sees, the last {@code window} positions, and was trained to see all of them. Their streams
 * therefore do not run the policy: each keeps exactly the {@code window - 1} most recent entries
 * between turns (what the next token sees besides itself), plus the turn; the forward pass masks
 * what falls out of the window within a turn. The policy, its budget and its eviction run on the
 * global layers only (docs/engine-policies.md).
 */
public final class KvCache {
    private final int layers, kvHeads, headDim, group, maxTurnTokens;
    private final int[] windows; // per layer: its sliding window, 0 for a global layer
    private final PolicySpec spec;
    private final PositionMode positions;
    private final KvStream[] streams;
    private final Policy[] policies;
    private final Turn[] turns;
    private final float[][] turnQueries;
    private final boolean modulated;
    private final boolean unbounded;
    private final Parallel.RangeBody updateBody = this::updateRange;

    // keys rotated to their attention positions, per stream; rows [0, rotatedValid) are current
    private final float[][] rotated;
    private final int[] rotatedValid;
    private final long[][] positionsBefore; // original positions: where each rotated row came from
    // observed attention, per stream (no streams when the policy reads none): sums over the turn's
    // rows, and a ring of the last `recentRows` rows with their lengths
    private final boolean observing;
    private final int recentRows;
    private final ObservedAttention[] observed;
    private final float[][] ring;
    private final int[][] ringCount;
    private boolean pastContextWarned;
    // auto positions: original below this position, cache positions from it on
    private long originalLimit = Long.MAX_VALUE;

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
        this(layers, kvHeads, headDim, group, spec, maxTurnTokens, positions, new int[layers]);
    }

    /**
     * A cache whose layer {@code l} is a sliding-window layer of {@code windows[l]} positions
     * ({@code 0}: a global layer, managed by the policy).
     */
    public KvCache(int layers, int kvHeads, int headDim, int group, PolicySpec spec, int maxTurnTokens,
                   PositionMode positions, int[] windows) {
        if (layers < 1 || kvHeads < 1 || headDim < 1 || group < 1) {
            throw new IllegalArgumentException("bad cache shape " + layers + "x" + kvHeads + "x" + headDim + "/" + group);
        }
        if (maxTurnTokens < 1) throw new io.fdkvc.core.param.ParameterException("maxTurnTokens", "must be >= 1, got " + maxTurnTokens);
        this.layers = layers;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
        this.group = group;
        this.maxTurnTokens = maxTurnTokens;
        this.spec = spec;
        this.positions = positions;
        if (windows.length != layers) throw new IllegalArgumentException(windows.length + " windows for " + layers + " layers");
        for (int w : windows) if (w < 0) throw new IllegalArgumentException("negative window " + w);
        this.windows = windows.clone();
        int n = layers * kvHeads;
        streams = new KvStream[n];
        policies = new Policy[n];
        turns = new Turn[n];
        turnQueries = new float[n][maxTurnTokens * headDim];
        evictedPerStream = new long[n];
        rotated = new float[n][];
        rotatedValid = new int[n];
        positionsBefore = positions != PositionMode.CACHE ? new long[n][] : null;
        boolean mod = false, unb = false, obs = false;
        int recent = 0;
        for (int i = 0; i < n; i++) {
            policies[i] = newPolicy(i);
            boolean grows = policies[i].unbounded();
            unb |= grows;
            mod |= policies[i].modulatesAttention();
            obs |= policies[i].readsAttention();
            recent = Math.max(recent, policies[i].recentAttentionRows());
            // full starts with one turn of room and doubles as it needs; the others never grow
            int window = windows[i / kvHeads];
            int capacity = grows ? maxTurnTokens : Math.addExact(window > 0 ? windowKeeps(window) : spec.budget(), maxTurnTokens);
            streams[i] = new KvStream(headDim, headDim, 0, capacity, grows);
            turns[i] = new Turn(headDim, headDim);
            rotated[i] = new float[tiledLength(capacity)];
            if (positionsBefore != null) positionsBefore[i] = new long[capacity];
        }
        modulated = mod;
        unbounded = unb;
        observing = obs;
        // more recent rows than a turn has are never needed
        recentRows = Math.min(recent, maxTurnTokens);
        observed = new ObservedAttention[obs ? n : 0];
        ring = new float[obs ? n : 0][];
        ringCount = new int[obs ? n : 0][];
        for (int i = 0; i < observed.length; i++) {
            int capacity = streams[i].capacity();
            observed[i] = new ObservedAttention(capacity);
            ring[i] = new float[recentRows * capacity];
            ringCount[i] = new int[recentRows];
            turns[i].setObserved(observed[i]);
        }
    }

    /**
     * Stream {@code i}'s policy: the spec's on a global layer; on a sliding-window layer, the
     * window's own rule (keep the most recent {@link #windowKeeps} entries).
     */
    private Policy newPolicy(int i) {
        int window = windows[i / kvHeads];
        return window > 0 ? new io.fdkvc.core.policy.baseline.WindowPolicy("sliding-window", windowKeeps(window)) : spec.newPolicy();
    }

    /** Entries a sliding-window layer of {@code window} keeps between turns: what the next token sees besides itself. */
    private static int windowKeeps(int window) {
        return Math.max(1, window - 1);
    }

    /** Layer {@code l}'s sliding window, 0 for a global layer (managed by the policy). */
    public int window(int layer) { return windows[layer]; }

    /** Sliding-window layers (they keep their window; the policy runs on the others). */
    public int slidingLayers() {
        int n = 0;
        for (int w : windows) if (w > 0) n++;
        return n;
    }

    /** The largest sliding window, 0 when every layer is global. */
    public int maxWindow() {
        int m = 0;
        for (int w : windows) m = Math.max(m, w);
        return m;
    }

    /** Entries held by the largest stream of a global layer (all layers when none is global). */
    public int maxGlobalEntries() {
        int m = 0;
        boolean any = slidingLayers() < layers;
        for (int i = 0; i < streams.length; i++) if (!any || windows[i / kvHeads] == 0) m = Math.max(m, streams[i].size());
        return m;
    }

    public int layers() { return layers; }
    public int kvHeads() { return kvHeads; }
    public int headDim() { return headDim; }
    public int group() { return group; }
    public int maxTurnTokens() { return maxTurnTokens; }
    public PolicySpec spec() { return spec; }
    /**
     * The positions attention gives entries now: {@link PositionMode#ORIGINAL} or
     * {@link PositionMode#CACHE} ({@link PositionMode#AUTO} is original below the context limit,
     * cache from it on). Constant during a forward pass: the limit is only crossed at its end.
     */
    public PositionMode positionMode() {
        if (positions != PositionMode.AUTO) return positions;
        return nextPosition < originalLimit ? PositionMode.ORIGINAL : PositionMode.CACHE;
    }

    /** The positions the cache was made with (possibly {@link PositionMode#AUTO}). */
    public PositionMode positionSetting() { return positions; }

    /**
     * With {@link PositionMode#AUTO}: keep original positions while every position is below
     * {@code contextLength} (the model's trained context), cache positions from there on. The
     * session sets it; no effect in the other modes.
     */
    public void limitOriginalPositions(long contextLength) {
        if (contextLength < 1) throw new IllegalArgumentException("context length must be >= 1, got " + contextLength);
        boolean wasOriginal = positionMode() == PositionMode.ORIGINAL;
        originalLimit = contextLength;
        if (wasOriginal != (positionMode() == PositionMode.ORIGINAL)) java.util.Arrays.fill(rotatedValid, 0);
    }
    /** Whether any stream's policy writes a non-zero logit bias (eq. 9). */
    public boolean modulated() { return modulated; }
    /** Whether the streams grow without bound (the full policy). */
    public boolean unbounded() { return unbounded; }
    /** Whether the policy reads attention, so that the forward pass must {@link #observe} it. */
    public boolean observing() { return observing; }
    /** Tokens appended since the last policy update. */
    public int pending() { return pending; }
    /**
     * Tokens that may still be appended before the policy must run; with {@link PositionMode#AUTO}
     * positions, no more than reach the context limit, so that no chunk straddles it.
     */
    public int headroom() {
        int room = maxTurnTokens - pending;
        if (positions == PositionMode.AUTO && nextPosition < originalLimit) room = (int) Math.min(room, originalLimit - nextPosition);
        return room;
    }
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
     * Entries per tile of the rotated keys: the float lanes of the tensor kernels' species, so
     * that one vector load holds component d of a tile's keys (see {@link #rotatedKeys}).
     */
    public static final int KEY_TILE = Simd.L;

    /** Floats of a rotated-key array for {@code entries} entries: whole tiles. */
    private int tiledLength(int entries) {
        return Math.multiplyExact((entries + KEY_TILE - 1) / KEY_TILE * KEY_TILE, headDim);
    }

    /** Where component {@code d} of entry {@code i}'s rotated key lies in {@link #rotatedKeys}. */
    public static int tiledIndex(int i, int d, int headDim) {
        return (i / KEY_TILE * headDim + d) * KEY_TILE + i % KEY_TILE;
    }

    /**
     * The stream's keys rotated to their attention positions, for entries below
     * {@link #rotatedValid}; entries from there to the stream's size are the forward pass's to
     * write ({@link #markRotated}). Grows with an unbounded stream.
     *
     * <p>Laid out in tiles of {@link #KEY_TILE} entries, component-major within a tile (entry i's
     * component d at {@link #tiledIndex}): the scores of a query against a tile are then a chain
     * of lane-wise FMAs, one lane per key, with no horizontal reduction per key (which cost four
     * times the multiply-adds themselves with 64-wide heads).
     */
    public float[] rotatedKeys(int layer, int kvHead) {
        int s = layer * kvHeads + kvHead;
        int need = tiledLength(streams[s].capacity());
        if (rotated[s].length < need) rotated[s] = java.util.Arrays.copyOf(rotated[s], need);
        return rotated[s];
    }

    /** Leading entries of the stream whose rotated key is current. */
    public int rotatedValid(int layer, int kvHead) {
        return rotatedValid[layer * kvHeads + kvHead];
    }

    /** Declares every entry of the stream rotated (the forward pass has written rows up to its size). */
    public void markRotated(int layer, int kvHead) {
        int s = layer * kvHeads + kvHead;
        rotatedValid[s] = streams[s].size();
    }

    /**
     * Adds one query row's attention (token {@code t} of the chunk in progress, its weights over
     * the stream's first {@code count} entries averaged over the KV head's group) to the turn's
     * observed attention. Rows of one stream must come in token order.
     */
    public void observe(int layer, int kvHead, int t, float[] weights, int count) {
        int s = layer * kvHeads + kvHead;
        ObservedAttention o = observed[s];
        o.ensure(count);
        float[] sum = o.sum();
        for (int i = 0; i < count; i++) sum[i] += weights[i];
        if (recentRows > 0) {
            int stride = ring[s].length / recentRows;
            if (stride < count) {
                // an unbounded stream grew: keep the rows at a new stride
                int ns = Math.max(count, 2 * stride);
                float[] g = new float[recentRows * ns];
                for (int r = 0; r < recentRows; r++) System.arraycopy(ring[s], r * stride, g, r * ns, ringCount[s][r]);
                ring[s] = g;
                stride = ns;
            }
            int slot = (pending + t) % recentRows;
            System.arraycopy(weights, 0, ring[s], slot * stride, count);
            ringCount[s][slot] = count;
        }
    }

    /** Whether the once-per-conversation warning about positions past the trained context was given. */
    public boolean pastContextWarned() { return pastContextWarned; }

    /** Records that the warning was given. */
    public void markPastContextWarned() { pastContextWarned = true; }

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
        boolean wasOriginal = positionMode() == PositionMode.ORIGINAL;
        pending += n;
        nextPosition += n;
        // auto positions reached the context's end: every survivor is rotated again, at its slot
        if (wasOriginal && positionMode() != PositionMode.ORIGINAL) java.util.Arrays.fill(rotatedValid, 0);
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
            KvStream st = streams[s];
            int sizeBefore = st.size();
            turns[s].set(turnQueries[s], pending, null);
            if (observing) finishObservation(s, sizeBefore);
            if (positionsBefore != null && positionMode() == PositionMode.ORIGINAL) {
                if (positionsBefore[s].length < sizeBefore) positionsBefore[s] = new long[st.capacity()];
                System.arraycopy(st.positions(), 0, positionsBefore[s], 0, sizeBefore);
            }
            policies[s].endTurn(st, turns[s]);
            evictedPerStream[s] = st.evicted().size();
            if (evictedPerStream[s] > 0) moveRotated(s, sizeBefore);
            if (observing) clearObservation(s, sizeBefore);
        }
    }

    /** The recent rows' sum from the ring, and the observation's extent, before the policy reads it. */
    private void finishObservation(int s, int entries) {
        ObservedAttention o = observed[s];
        o.ensure(entries);
        int rows = pending, recent = Math.min(recentRows, rows);
        float[] r = o.recent();
        java.util.Arrays.fill(r, 0, entries, 0f);
        if (recent > 0) {
            int cap = ring[s].length / recentRows;
            // the last `recent` rows, oldest first, so that the sum's order is fixed
            for (int k = rows - recent; k < rows; k++) {
                int slot = k % recentRows, off = slot * cap, count = ringCount[s][slot];
                float[] g = ring[s];
                for (int i = 0; i < count; i++) r[i] += g[off + i];
            }
        }
        o.set(entries, rows, recent);
    }

    private void clearObservation(int s, int entries) {
        java.util.Arrays.fill(observed[s].sum(), 0, entries, 0f);
        java.util.Arrays.fill(ringCount[s], 0);
    }

    /**
     * After an update that evicted: with original positions, each survivor's rotated row moves to
     * its new index (its angle does not change); with cache positions, every survivor after the
     * first evicted entry has a new slot, so its row must be rotated again.
     */
    private void moveRotated(int s, int sizeBefore) {
        KvStream st = streams[s];
        long[] pos = st.positions();
        int size = st.size();
        if (positionMode() == PositionMode.CACHE) {
            LongList ev = st.evicted();
            long first = Long.MAX_VALUE;
            for (int i = 0; i < ev.size(); i++) first = Math.min(first, ev.get(i));
            // survivors before the first evicted position keep their slots
            int lo = 0, hi = size;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (pos[mid] < first) lo = mid + 1;
                else hi = mid;
            }
            rotatedValid[s] = Math.min(rotatedValid[s], lo);
            return;
        }
        long[] before = positionsBefore[s];
        float[] rot = rotated[s];
        int valid = Math.min(rotatedValid[s], sizeBefore), kept = 0;
        for (int i = 0, j = 0; i < size; i++) {
            while (before[j] != pos[i]) j++;
            if (j >= valid) break;
            if (j != i) {
                // i < j: tiles are filled in entry order, so entry j is read before it is overwritten
                for (int d = 0; d < headDim; d++) rot[tiledIndex(i, d, headDim)] = rot[tiledIndex(j, d, headDim)];
            }
            kept = i + 1;
        }
        rotatedValid[s] = kept;
    }

    /**
     * For each position {@code p} in {@code [from, from + held.length)}: how many streams hold it,
     * at {@code held[p - from]}; with {@code perLayer} (length {@code layers * held.length}, or
     * null), how many KV heads of each layer hold it, at {@code perLayer[layer * held.length + p - from]}.
     * Both arrays are overwritten. One pass over the entries, no allocation; read between turns
     * (entries of a turn in progress count too).
     */
    public void heldCounts(long from, int[] held, int[] perLayer) {
        int n = held.length;
        if (perLayer != null && perLayer.length != (long) layers * n) {
            throw new IllegalArgumentException("perLayer has " + perLayer.length + " counts, expected " + (long) layers * n);
        }
        java.util.Arrays.fill(held, 0);
        if (perLayer != null) java.util.Arrays.fill(perLayer, 0);
        for (int s = 0; s < streams.length; s++) {
            KvStream st = streams[s];
            long[] pos = st.positions();
            int layerBase = (s / kvHeads) * n;
            for (int i = 0, size = st.size(); i < size; i++) {
                long k = pos[i] - from;
                if (k < 0 || k >= n) continue;
                held[(int) k]++;
                if (perLayer != null) perLayer[layerBase + (int) k]++;
            }
        }
    }

    /**
     * For each position {@code p} in {@code [from, from + evicted.length)}: how many streams the
     * last policy update evicted it from, at {@code evicted[p - from]} (overwritten). No allocation.
     */
    public void evictedCounts(long from, int[] evicted) {
        int n = evicted.length;
        java.util.Arrays.fill(evicted, 0);
        for (KvStream st : streams) {
            LongList ev = st.evicted();
            for (int i = 0, size = ev.size(); i < size; i++) {
                long k = ev.get(i) - from;
                if (k >= 0 && k < n) evicted[(int) k]++;
            }
        }
    }

    /** Streams: {@code layers * kvHeads}. */
    public int streamCount() { return streams.length; }

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

    /**
     * Bytes held by the cache (capacity, what the JVM really holds): the streams, the rotated
     * keys, the turn's query rows and the observed attention.
     */
    public long bytes() {
        long b = 0;
        for (KvStream s : streams) b += s.bytes();
        for (float[] q : turnQueries) b += 4L * q.length;
        for (float[] r : rotated) b += 4L * r.length;
        if (positionsBefore != null) for (long[] p : positionsBefore) b += 8L * p.length;
        for (ObservedAttention o : observed) b += o.bytes();
        for (float[] r : ring) b += 4L * r.length;
        return b;
    }

    /** Forgets the conversation: empty streams, position 0, fresh policy state. */
    public void clear() {
        for (int i = 0; i < streams.length; i++) {
            streams[i].clear();
            policies[i] = newPolicy(i);
            rotatedValid[i] = 0;
            if (observing) {
                java.util.Arrays.fill(observed[i].sum(), 0f);
                java.util.Arrays.fill(ringCount[i], 0);
            }
        }
        pastContextWarned = false;
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
            policies[i] = newPolicy(i);
            policies[i].restoreState(s.policyStates()[i]);
            rotatedValid[i] = 0; // the rotated copies are derived: rotated again from the restored keys
            if (observing) clearObservation(i, observed[i].sum().length);
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
        boolean wasOriginal = positionMode() == PositionMode.ORIGINAL;
        for (int i = 0; i < streams.length; i++) {
            KvStream s = streams[i];
            s.truncate(s.scored());
            // the dropped turn's rotated rows and observed attention go with it
            rotatedValid[i] = Math.min(rotatedValid[i], s.size());
            if (observing) clearObservation(i, observed[i].sum().length);
        }
        nextPosition -= pending;
        pending = 0;
        // auto positions back below the context's end: the rows rotated at slots are stale
        if (wasOriginal != (positionMode() == PositionMode.ORIGINAL)) java.util.Arrays.fill(rotatedValid, 0);
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
