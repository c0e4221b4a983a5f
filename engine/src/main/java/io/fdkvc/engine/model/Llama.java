package io.fdkvc.engine.model;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.Simd;
import java.util.function.Consumer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The forward pass of a Llama-family model ({@link Architecture}: llama, qwen2, qwen3) over a
 * bounded, policy-driven KV cache.
 *
 * <p>One call processes a chunk of consecutive tokens as a matrix (batched prefill: each weight
 * row is read once per chunk), or a single token (decode). Per layer, top to bottom:
 * <ol>
 *   <li>RMSNorm, the q/k/v projections (qwen2 adds biases), qwen3's per-head RMSNorm of q and k;
 *   <li>the tokens' keys and values appended to the layer's streams with the turn's query rows
 *       (pre-RoPE, see {@link KvCache}), and each key not yet rotated rotated once into the
 *       cache's rotated copy (new keys; with {@code --positions cache}, the survivors of an
 *       eviction, which have new slots);
 *   <li>grouped-query attention over each stream: the rotated query against the rotated keys,
 *       plus the policy's eq. 9 logit bias, softmax, weighted values; when the policy reads
 *       attention, each row's weights averaged over the KV group go to the cache
 *       ({@link KvCache#observe});
 *   <li>the output projection, RMSNorm and the SwiGLU feed-forward, each with its residual.
 * </ol>
 * The final RMSNorm and the classifier run on the chunk's last token only.
 *
 * <p>Every buffer is allocated at construction (sized for {@code maxBatch} tokens), except the
 * attention scratch, which follows the largest stream capacity and therefore grows only when the
 * unbounded {@code full} cache grows. A token's forward pass allocates nothing. Work is split over
 * a fixed team of threads ({@link LlamaWorkers}); matrix products split by rows, attention by
 * (head, token).
 *
 * <p>Positions past the model's trained context ({@code --positions original} in a long
 * conversation, or a cache holding more entries than the context) are warned about once per
 * conversation, through {@link #onWarning}.
 *
 * <p>Not thread-safe: one conversation at a time per instance.
 */
public final class Llama implements AutoCloseable {
    /**
     * The tensor kernels' species: lane sums go through {@link Simd#sum}, a fixed fold, because
     * {@code reduceLanes(ADD)} sums in a different order in the interpreter than in C2, and a
     * score or norm differing in its last bit before and after compilation could change a greedy
     * token depending on how warm the JIT is.
     */
    private static final VectorSpecies<Float> S = Simd.F;

    private final LlamaConfig c;
    private final LlamaWeights w;
    private final int dim, hd, heads, kvHeads, group, qDim, kvDim, hidden, vocab, layers, maxBatch;
    // whether two heads of a group share a pass over their values (weightedValuesPair): heads of whole blocks of four vectors
    private final boolean pairedValues;
    private final boolean neox, qkNorm;
    private final float attnScale;
    private final LlamaRope rope;
    private final LlamaWorkers workers;

    // activations: row t of a chunk at t * (width)
    private final float[] x, xb, xb2, q, k, v, hb, hb2, logits, headTmp;
    // attention scratch: one row of attention weights per (query head, token) unit of the block
    // in progress, with its softmax max and 1/sum; per worker a rotated query, four reduction
    // lanes, a group-mean row of weights (observation) and a RoPE scratch
    private float[] att = new float[0];
    private final float[] unitMax, unitInv;
    private final float[][] qrot, qrotNext;
    private final float[][] lanes;
    private float[][] groupRow;
    private final float[][] ropeScratch;
    private final float[][] keyRow;   // per worker: a key rotated, before it goes into its tile
    private int scratchCap;
    // keys to rotate in the layer in progress: stream h's entries [rotFrom[h], size), at
    // keyStart[h] .. keyStart[h+1] of the concatenated range
    private final int[] keyStart, rotFrom;
    private Consumer<String> warnings = Llama::logWarning;

    // the phase in progress (fields, so that the phase bodies below are allocated once)
    private int pLayer, pBatch, pFrom, pBlock;
    private KvCache pCache;
    // the attention phases' conversations: pConvs caches from pCaches[pConv0], each attending
    // pSpan tokens of the chunk (a prefill chunk: one cache and its n tokens; a batched decode
    // step: a group of conversations, one token each, in rows pConv0 ..)
    private final KvCache[] chunkCache = new KvCache[1];
    private KvCache[] pCaches = chunkCache;
    private int pConv0, pConvs, pSpan;
    // a batched decode step's token positions in the conversations whose caches keep true positions
    private long[] originalPositions = new long[0];
    private float[] pNorm;
    // Every step runs as a phase body, even the small ones that stay on the calling thread: a
    // body is called through parallel()'s megamorphic call, so C2 compiles it on its own instead
    // of inlining it into forward(), whose inlining budget would then run out on Vector API calls
    // (which, left out of line, box their vectors: an allocation per token)
    private final LlamaWorkers.Body normPhase = this::normRange;
    private final LlamaWorkers.Body finalNormPhase = this::finalNormRange;
    private final LlamaWorkers.Body qkvPhase = this::qkvRange;
    private final LlamaWorkers.Body ropePhase = this::ropeRange;
    private final LlamaWorkers.Body qkNormPhase = this::qkNormRange;
    private final LlamaWorkers.Body scoresPhase = this::scoresRange;
    private final LlamaWorkers.Body scoresPairPhase = this::scoresPairRange;
    private final LlamaWorkers.Body valuesPhase = this::valuesRange;
    private final LlamaWorkers.Body observePhase = this::observeRange;
    private final LlamaWorkers.Body outputProjPhase = this::outputProjRange;
    private final LlamaWorkers.Body ffnUpPhase = this::ffnUpRange;
    private final LlamaWorkers.Body swigluPhase = this::swigluRange;
    private final LlamaWorkers.Body ffnDownPhase = this::ffnDownRange;
    private final LlamaWorkers.Body classifierPhase = this::classifierRange;
    private final LlamaWorkers.Body transposePhase = this::transposeRange;
    // a prefill chunk's rows transposed once for the tiled products of the next phase
    private final FloatTensor.TransposedBatch shared = new FloatTensor.TransposedBatch();
    private boolean pShared;

    private long attentionNanos, ropeNanos;

    /**
     * @param maxBatch most tokens per {@link #forward} call (prefill chunk)
     * @param threads  threads of the forward pass
     */
    public Llama(LlamaConfig config, LlamaWeights weights, int maxBatch, int threads) {
        this.c = config;
        this.w = weights;
        validate(config, weights);
        if (maxBatch < 1) throw new IllegalArgumentException("maxBatch must be >= 1");
        dim = c.dim();
        hd = c.headDim();
        pairedValues = hd % (4 * S.length()) == 0;
        heads = c.heads();
        kvHeads = c.kvHeads();
        group = heads / kvHeads;
        qDim = heads * hd;
        kvDim = kvHeads * hd;
        hidden = c.hiddenDim();
        vocab = c.vocabSize();
        layers = c.layers();
        this.maxBatch = maxBatch;
        neox = c.ropeNeox();
        qkNorm = c.arch().qkNorm();
        attnScale = (float) (1.0 / Math.sqrt(hd));
        // no table for the declared context: slots as the cache needs them, chunk positions per chunk
        rope = new LlamaRope(c, maxBatch);
        workers = new LlamaWorkers(threads);
        x = new float[maxBatch * dim];
        xb = new float[maxBatch * Math.max(dim, qDim)];
        xb2 = new float[maxBatch * qDim];
        q = new float[maxBatch * qDim];
        k = new float[maxBatch * kvDim];
        v = new float[maxBatch * kvDim];
        hb = new float[maxBatch * hidden];
        hb2 = new float[maxBatch * hidden];
        logits = new float[vocab];
        headTmp = new float[hd];
        unitMax = new float[heads * maxBatch];
        unitInv = new float[heads * maxBatch];
        qrot = new float[threads][hd];
        qrotNext = new float[threads][hd];
        lanes = new float[threads][4 * S.length()];
        groupRow = new float[threads][0];
        ropeScratch = new float[threads][hd];
        keyRow = new float[threads][hd];
        keyStart = new int[kvHeads + 1];
        rotFrom = new int[kvHeads];
    }

    /** Checks that every tensor has the shape the config implies; names the first one that does not. */
    static void validate(LlamaConfig c, LlamaWeights w) {
        if (c.dim() < 1 || c.layers() < 1 || c.heads() < 1 || c.kvHeads() < 1 || c.headDim() < 1 || c.hiddenDim() < 1
                || c.vocabSize() < 1) {
            throw new ModelFormatException("model config has a non-positive size: " + c);
        }
        if (c.heads() % c.kvHeads() != 0) {
            throw new ModelFormatException("model config: " + c.heads() + " heads are not a multiple of " + c.kvHeads() + " KV heads");
        }
        if (c.headDim() % 2 != 0) throw new ModelFormatException("model config: odd head dimension " + c.headDim());
        int qd = c.heads() * c.headDim(), kd = c.kvDim();
        shape("token embedding", w.tokenEmbedding(), c.vocabSize(), c.dim());
        shape("output", w.output(), c.vocabSize(), c.dim());
        length("output norm", w.outputNorm(), c.dim());
        for (int l = 0; l < c.layers(); l++) {
            shape("layer " + l + " wq", w.wq()[l], qd, c.dim());
            shape("layer " + l + " wk", w.wk()[l], kd, c.dim());
            shape("layer " + l + " wv", w.wv()[l], kd, c.dim());
            shape("layer " + l + " wo", w.wo()[l], c.dim(), qd);
            shape("layer " + l + " ffn gate", w.wGate()[l], c.hiddenDim(), c.dim());
            shape("layer " + l + " ffn up", w.wUp()[l], c.hiddenDim(), c.dim());
            shape("layer " + l + " ffn down", w.wDown()[l], c.dim(), c.hiddenDim());
            length("layer " + l + " attention norm", w.attnNorm()[l], c.dim());
            length("layer " + l + " ffn norm", w.ffnNorm()[l], c.dim());
            if (w.bq() != null) length("layer " + l + " q bias", w.bq()[l], qd);
            if (w.bk() != null) length("layer " + l + " k bias", w.bk()[l], kd);
            if (w.bv() != null) length("layer " + l + " v bias", w.bv()[l], kd);
            if (c.arch().qkNorm()) {
                length("layer " + l + " q norm", w.qNorm() == null ? null : w.qNorm()[l], c.headDim());
                length("layer " + l + " k norm", w.kNorm() == null ? null : w.kNorm()[l], c.headDim());
            }
        }
        if (!c.arch().qkNorm() && (w.qNorm() != null || w.kNorm() != null))
            throw new ModelFormatException("architecture '" + c.architecture() + "' has no q/k norm, but the weights have one");
        if (c.arch().ropeNeox() != c.ropeNeox())
            throw new ModelFormatException("model config: RoPE layout " + (c.ropeNeox() ? "NEOX" : "interleaved")
                    + " disagrees with architecture '" + c.architecture() + "'");
    }

    private static void shape(String what, FloatTensor t, int rows, int cols) {
        if (t == null) throw new ModelFormatException("model has no " + what + " tensor");
        if (t.rows() != rows || t.cols() != cols) {
            throw new ModelFormatException(what + " is " + t.rows() + " x " + t.cols() + ", expected " + rows + " x " + cols);
        }
    }

    private static void length(String what, float[] a, int n) {
        if (a == null) throw new ModelFormatException("model has no " + what);
        if (a.length != n) throw new ModelFormatException(what + " has " + a.length + " values, expected " + n);
    }

    public LlamaConfig config() { return c; }
    public LlamaWeights weights() { return w; }
    public int maxBatch() { return maxBatch; }
    public int threads() { return workers.threads(); }
    /** The logits written by the last {@link #forward} that asked for them. */
    public float[] logits() { return logits; }
    /** Time spent in attention (key rotation, scores, softmax, values) since construction. */
    public long attentionNanos() { return attentionNanos; }
    /** The part of {@link #attentionNanos()} spent rotating keys to their positions (new keys, and moved ones after an eviction). */
    public long ropeNanos() { return ropeNanos; }

    /** Bytes of the RoPE tables (bounded by the slots and chunk positions in use, see {@link LlamaRope}). */
    public long ropeTableBytes() { return rope.bytes(); }

    /**
     * Where warnings go (once per conversation: positions past the trained context). By default
     * to the {@code io.fdkvc.engine} {@link System.Logger} at WARNING; the CLI prints them on stderr.
     */
    public void onWarning(Consumer<String> sink) {
        this.warnings = java.util.Objects.requireNonNull(sink, "sink");
    }

    private static void logWarning(String message) {
        System.getLogger("io.fdkvc.engine").log(System.Logger.Level.WARNING, message);
    }

    /**
     * Warns, once per conversation, when this chunk gives some key or query a RoPE position at
     * or past the trained context: the model then sees distances it was never trained on.
     */
    private void checkContext(KvCache cache, int n) {
        if (cache.pastContextWarned()) return;
        long ctx = c.contextLength();
        if (cache.positionMode() == PositionMode.ORIGINAL) {
            long last = cache.nextPosition() + n - 1;
            if (last < ctx) return;
            cache.markPastContextWarned();
            warnings.accept("position " + last + " is past the model's trained context of " + ctx
                    + " tokens (--positions original): from here the model sees distances it was not trained on; "
                    + "--positions cache with a bounded policy keeps every distance below budget + turn");
        } else {
            long last = cache.maxEntries() + n - 1;
            if (last < ctx) return;
            cache.markPastContextWarned();
            warnings.accept("the cache holds " + (last + 1) + " entries, past the model's trained context of " + ctx
                    + " tokens (" + (cache.unbounded() ? "policy full" : "budget + turn too large")
                    + "): from here the model sees distances it was not trained on"
                    + (cache.unbounded() ? "; a bounded policy keeps every distance below budget + turn" : ""));
        }
    }

    /** A cache shaped for this model. */
    public KvCache newCache(PolicySpec spec, int maxTurnTokens, PositionMode positions) {
        return new KvCache(layers, kvHeads, hd, group, spec, maxTurnTokens, positions);
    }

    /**
     * Processes {@code tokens[off .. off+n)} at the cache's next positions, appending them to the
     * turn in progress; returns the logits of the last token when {@code wantLogits}, else null.
     * {@code n} must not exceed {@link #maxBatch()} nor the cache's headroom (the caller ends the
     * turn first).
     */
    public float[] forward(KvCache cache, int[] tokens, int off, int n, boolean wantLogits) {
        if (n < 1 || n > maxBatch) throw new IllegalArgumentException("chunk of " + n + " tokens, limit " + maxBatch);
        if (n > cache.headroom()) throw new IllegalStateException("chunk of " + n + " tokens, turn headroom " + cache.headroom());
        if (cache.layers() != layers || cache.kvHeads() != kvHeads || cache.headDim() != hd) {
            throw new IllegalArgumentException("cache shaped for another model");
        }
        for (int t = 0; t < n; t++) {
            int tok = tokens[off + t];
            if (tok < 0 || tok >= vocab) throw new IllegalArgumentException("token " + tok + " outside the vocabulary of " + vocab);
            w.tokenEmbedding().dequantizeRow(tok, x, t * dim);
        }
        checkContext(cache, n);
        if (cache.positionMode() == PositionMode.ORIGINAL) rope.window(cache.nextPosition(), n);
        pCache = cache;
        pBatch = n;
        for (int l = 0; l < layers; l++) {
            pLayer = l;
            // attention block
            projectQkv(l, n);
            for (int t = 0; t < n; t++) cache.append(l, t, k, t * kvDim, v, t * kvDim, q, t * qDim);
            attend(cache, l, n);
            shareBatch(xb2, qDim, n);
            parallelRows(dim, outputProjPhase, (long) dim * qDim * n);
            feedForward(l, n);
        }
        cache.advance(n);
        pCache = null;
        if (!wantLogits) return null;
        parallel(1, finalNormPhase, dim);
        shareBatch(xb, dim, 1);
        parallelRows(vocab, classifierPhase, (long) vocab * dim);
        return logits;
    }

    /**
     * As {@link #forward}, but returns the logits of every token of the chunk: row {@code t} (the
     * prediction of the token after {@code tokens[off + t]}) at {@code t * vocab}, valid until the
     * next call. The classifier runs as one matrix product over the chunk's rows, so the last row
     * may differ in its last bits from {@link #forward}'s single-row logits; two caches fed the same
     * chunks through this method see the same arithmetic.
     */
    public float[] forwardEveryPosition(KvCache cache, int[] tokens, int off, int n) {
        forward(cache, tokens, off, n, false);
        for (int t = 0; t < n; t++) rmsnorm(xb, t * dim, x, t * dim, w.outputNorm(), dim, c.normEps());
        if (batchLogits.length < n * vocab) batchLogits = new float[n * vocab];
        pBatch = n;
        shareBatch(xb, dim, n);
        parallelRows(vocab, batchClassifierPhase, (long) vocab * dim * n);
        return batchLogits;
    }

    // ---- one decode step for several conversations (continuous batching) ----------------------

    private float[] batchLogits = new float[0];
    private final LlamaWorkers.Body batchClassifierPhase = this::batchClassifierRange;

    /**
     * One decode step for {@code n} conversations at once: {@code tokens[b]} at the next position
     * of {@code caches[b]} (distinct caches, each with headroom). The weight products run once
     * for the {@code n} tokens as a matrix (the prefill kernels), while each token attends only
     * over its own cache, with the same per-layer attention code as {@link #forward}. Returns the
     * logits, row {@code b} at {@code b * vocab} (valid until the next call).
     *
     * <p>Each row's arithmetic does not depend on the other rows, but the matrix kernel sums in a
     * different order than the single-token dot product (last bits), see {@link FloatTensor#matmul}.
     */
    public float[] forwardDecodeBatch(KvCache[] caches, int[] tokens, int n) {
        if (n < 1 || n > maxBatch || n > caches.length || n > tokens.length) {
            throw new IllegalArgumentException("decode batch of " + n + " conversations, limit " + maxBatch);
        }
        for (int b = 0; b < n; b++) {
            KvCache cache = caches[b];
            if (cache.headroom() < 1) throw new IllegalStateException("conversation " + b + " has no turn headroom");
            if (cache.layers() != layers || cache.kvHeads() != kvHeads || cache.headDim() != hd) {
                throw new IllegalArgumentException("cache shaped for another model");
            }
            for (int a = 0; a < b; a++) if (caches[a] == cache) throw new IllegalArgumentException("a cache appears twice in a batch");
            int tok = tokens[b];
            if (tok < 0 || tok >= vocab) throw new IllegalArgumentException("token " + tok + " outside the vocabulary of " + vocab);
            w.tokenEmbedding().dequantizeRow(tok, x, b * dim);
            checkContext(cache, 1);
        }
        for (int l = 0; l < layers; l++) {
            pLayer = l;
            pBatch = n;
            projectQkv(l, n);
            for (int t = 0; t < n; t++) caches[t].append(l, 0, k, t * kvDim, v, t * kvDim, q, t * qDim);
            attendBatch(caches, l, n);
            pBatch = n;
            shareBatch(xb2, qDim, n);
            parallelRows(dim, outputProjPhase, (long) dim * qDim * n);
            feedForward(l, n);
        }
        for (int b = 0; b < n; b++) caches[b].advance(1);
        pCache = null;
        for (int t = 0; t < n; t++) rmsnorm(xb, t * dim, x, t * dim, w.outputNorm(), dim, c.normEps());
        if (batchLogits.length < n * vocab) batchLogits = new float[maxBatch * vocab];
        pBatch = n;
        shareBatch(xb, dim, n);
        parallelRows(vocab, batchClassifierPhase, (long) vocab * dim * n);
        return batchLogits;
    }

    /**
     * Layer l's attention for a batched decode step: each conversation's token (row b of q, its
     * output to row b of xb2) over its own cache. The keys are rotated cache by cache; then the
     * scores, softmax and values (and the observed attention) run as one phase each over all
     * conversations' (conversation, head) units, so the two threads share 4 x 9 units instead of
     * splitting 9 heads (or 3 KV heads) per conversation, with a wait at the end of each. Every
     * unit computes what a one-token chunk of {@link #forward} would (the same bits).
     */
    private void attendBatch(KvCache[] caches, int l, int n) {
        long t0 = System.nanoTime(), keys = 0;
        // the new keys and the queries of caches in original mode rotate to their token's
        // position: the window holds those positions, one per such conversation
        if (originalPositions.length < n) originalPositions = new long[maxBatch];
        int original = 0;
        for (int b = 0; b < n; b++) {
            if (caches[b].positionMode() == PositionMode.ORIGINAL) originalPositions[original++] = caches[b].nextPosition();
        }
        if (original > 0) rope.windowEach(originalPositions, original);
        boolean anyObserving = false;
        for (int b = 0; b < n; b++) {
            anyObserving |= caches[b].observing();
            keys += rotateNewKeys(caches[b], l);
        }
        long t1 = System.nanoTime();
        pCaches = caches;
        pSpan = 1;
        pFrom = 0;
        pBlock = 1;
        // conversations in groups whose rows fit the scratch (all of them, unless caches are huge)
        for (int g = 0; g < n; g += attentionBlock) {
            pConv0 = g;
            pConvs = Math.min(attentionBlock, n - g);
            attentionPhases(keys * hd * group * pConvs / n, anyObserving);
        }
        pCaches = chunkCache;
        long t2 = System.nanoTime();
        ropeNanos += t1 - t0;
        attentionNanos += t2 - t0;
    }

    /**
     * Layer l's attention for the chunk's n tokens (already appended to {@code cache}): the keys
     * not yet rotated are rotated, then scores, softmax and values (and the observed attention
     * when the policy reads it) in blocks of tokens whose rows fit the scratch.
     */
    private void attend(KvCache cache, int l, int n) {
        long t0 = System.nanoTime();
        long keys = rotateNewKeys(cache, l);
        long t1 = System.nanoTime();
        chunkCache[0] = cache;
        pCaches = chunkCache;
        pConv0 = 0;
        pConvs = 1;
        pSpan = n;
        for (int from = 0; from < n; from += attentionBlock) {
            pFrom = from;
            pBlock = Math.min(attentionBlock, n - from);
            attentionPhases(keys * hd * group * pBlock, cache.observing());
        }
        long t2 = System.nanoTime();
        ropeNanos += t1 - t0;
        attentionNanos += t2 - t0;
    }

    /**
     * Scores, softmax and values (and the observed attention) over the units of the phase fields:
     * pConvs conversations from pConv0, each with pBlock tokens from pFrom; {@code work} sizes
     * the phases for {@link #parallel}.
     */
    private void attentionPhases(long work, boolean observing) {
        int units = pConvs * heads * pBlock;
        parallel(units, pBlock > 1 ? scoresPairPhase : scoresPhase, work);
        parallel(units, valuesPhase, work);
        if (observing) parallel(pConvs * kvHeads, observePhase, work / hd);
    }

    /** Sizes the scratch for {@code cache}'s layer l, rotates its keys not yet rotated, and returns its entries over all streams. */
    private long rotateNewKeys(KvCache cache, int l) {
        pCache = cache;
        long keys = prepareAttention(cache, l);
        parallel(keyStart[kvHeads], ropePhase, (long) keyStart[kvHeads] * hd * 2);
        for (int h = 0; h < kvHeads; h++) cache.markRotated(l, h);
        return keys;
    }

    /**
     * Layer l's attention norm and q, k, v projections for the chunk's n rows (plus qwen3's q/k
     * norm), with q and k in NEOX order for the rotation.
     */
    private void projectQkv(int l, int n) {
        pNorm = w.attnNorm()[l];
        parallel(n, normPhase, (long) n * dim);
        shareBatch(xb, dim, n);
        parallelRows(qDim + 2 * kvDim, qkvPhase, (long) (qDim + 2 * kvDim) * dim * n);
        if (qkNorm) parallel(n * (heads + kvHeads), qkNormPhase, (long) n * (qDim + kvDim));
        if (!neox) {
            for (int t = 0; t < n; t++) {
                LlamaRope.deinterleave(q, t * qDim, heads, hd, headTmp);
                LlamaRope.deinterleave(k, t * kvDim, kvHeads, hd, headTmp);
            }
        }
    }

    /** Layer l's feed-forward block for the chunk's n rows: norm, SwiGLU, down projection and residual. */
    private void feedForward(int l, int n) {
        pNorm = w.ffnNorm()[l];
        parallel(n, normPhase, (long) n * dim);
        shareBatch(xb, dim, n);
        parallelRows(hidden, ffnUpPhase, 2L * hidden * dim * n);
        parallel(n, swigluPhase, (long) n * hidden);
        shareBatch(hb, hidden, n);
        parallelRows(dim, ffnDownPhase, (long) dim * hidden * n);
    }

    private void batchClassifierRange(int worker, int from, int to) {
        product(w.output(), from, to, xb, dim, pBatch, batchLogits, vocab);
    }

    /**
     * Below this many multiply-adds a phase runs on the calling thread: waking a second thread
     * costs microseconds (milliseconds when the machine is oversubscribed), more than such a
     * phase takes. A model as small as stories260K therefore runs entirely on one thread.
     */
    private static final long MIN_PARALLEL_WORK = 1 << 15;

    private void parallel(int n, LlamaWorkers.Body body, long work) {
        if (work < MIN_PARALLEL_WORK) body.run(0, 0, n);
        else workers.run(n, workers.threads(), body);
    }

    /**
     * {@link #parallel} for a phase of weight products over n rows. Over a shared transposed
     * batch (a prefill chunk, {@link #shareBatch}) the rows are cut into {@link #ROW_CHUNKS}
     * chunks a thread, which the threads take as they finish: the two halves of a product, the
     * same work, took 6-12% apart on this project's VM. Decode's products keep one chunk a thread.
     */
    private void parallelRows(int n, LlamaWorkers.Body body, long work) {
        if (work < MIN_PARALLEL_WORK) body.run(0, 0, n);
        else workers.run(n, pShared ? workers.threads() * ROW_CHUNKS : workers.threads(), body);
    }

    private static final int ROW_CHUNKS = 4;

    /**
     * Before a phase of products over the chunk's rows {@code src} (n rows of {@code cols}):
     * when the product takes the tiled path, transposes them once, in parallel, into
     * {@link #shared} for every call of the phase; otherwise the products read src themselves.
     */
    private void shareBatch(float[] src, int cols, int n) {
        pShared = FloatTensor.transposesBatch(n);
        if (!pShared) return;
        shared.reset(src, 0, cols, n, cols);
        parallel(cols, transposePhase, (long) cols * n);
    }

    private void transposeRange(int worker, int from, int to) {
        shared.transpose(from, to);
    }

    /** The phase's product of {@code m}'s rows [a, b) with the n rows of src (cols wide), into out. */
    private void product(FloatTensor m, int a, int b, float[] src, int cols, int n, float[] out, int width) {
        if (pShared) m.matmul(a, b, shared, out, 0, width);
        else m.matmul(a, b, src, 0, cols, n, out, 0, width);
    }

    /**
     * Floats of attention weights held at once: a prefill chunk's attention runs in blocks of
     * tokens whose rows (heads x tokens x stream capacity) fit, so that an unbounded cache's long
     * context does not make the scratch chunk-size times larger (16 MB; a bounded cache's chunk
     * fits in one block).
     */
    private static final int ATTENTION_SCRATCH = 1 << 22;
    private int attentionBlock;

    /**
     * Sizes the scratch for the layer's streams, lays out the keys still to rotate (each stream's
     * entries from its first unrotated one) and returns the entries of all streams together.
     */
    private long prepareAttention(KvCache cache, int l) {
        int cap = 0;
        long entries = 0;
        keyStart[0] = 0;
        for (int h = 0; h < kvHeads; h++) {
            KvStream s = cache.stream(l, h);
            // sized by capacity, not size: a bounded cache allocates its scratch once, at the
            // first token; only the unbounded (full) cache's doubling makes it grow
            cap = Math.max(cap, s.capacity());
            rotFrom[h] = cache.rotatedValid(l, h);
            cache.rotatedKeys(l, h); // grows with an unbounded stream here, before the phases share it
            keyStart[h + 1] = keyStart[h] + s.size() - rotFrom[h];
            entries += s.size();
        }
        if (cap > scratchCap) {
            // whole key tiles: the scores kernel writes a tile's lanes past the stream's size
            int nc = (cap + KvCache.KEY_TILE - 1) / KvCache.KEY_TILE * KvCache.KEY_TILE;
            scratchCap = nc;
            attentionBlock = (int) Math.max(1, Math.min(maxBatch, ATTENTION_SCRATCH / ((long) heads * nc)));
            att = new float[heads * attentionBlock * nc];
            for (int i = 0; i < groupRow.length; i++) groupRow[i] = new float[nc];
        }
        if (cache.positionMode() == PositionMode.CACHE) rope.ensure(cap);
        return entries;
    }

    // ---- phases -------------------------------------------------------------------------------

    /** RMSNorm of the chunk's rows [from, to) of x into xb, with the weights of the step in progress. */
    private void normRange(int worker, int from, int to) {
        for (int t = from; t < to; t++) rmsnorm(xb, t * dim, x, t * dim, pNorm, dim, c.normEps());
    }

    /** The final RMSNorm of the chunk's last token, into row 0 of xb. */
    private void finalNormRange(int worker, int from, int to) {
        rmsnorm(xb, 0, x, (pBatch - 1) * dim, w.outputNorm(), dim, c.normEps());
    }

    /** q, k, v projections over the concatenated rows [q | k | v], plus qwen2's biases. */
    private void qkvRange(int worker, int from, int to) {
        int l = pLayer, n = pBatch;
        segment(w.wq()[l], w.bq() == null ? null : w.bq()[l], q, qDim, 0, from, to, n);
        segment(w.wk()[l], w.bk() == null ? null : w.bk()[l], k, kvDim, qDim, from, to, n);
        segment(w.wv()[l], w.bv() == null ? null : w.bv()[l], v, kvDim, qDim + kvDim, from, to, n);
    }

    private void segment(FloatTensor m, float[] bias, float[] out, int width, int base, int from, int to, int n) {
        int a = Math.max(from - base, 0), b = Math.min(to - base, width);
        if (a >= b) return;
        product(m, a, b, xb, dim, n, out, width);
        if (bias != null) {
            for (int t = 0; t < n; t++) {
                for (int r = a; r < b; r++) out[t * width + r] += bias[r];
            }
        }
    }

    /** qwen3: RMSNorm of each head of q and k (units: token-major, q heads then k heads), before RoPE. */
    private void qkNormRange(int worker, int from, int to) {
        int l = pLayer, per = heads + kvHeads;
        for (int u = from; u < to; u++) {
            int t = u / per, h = u % per;
            if (h < heads) rmsnorm(q, t * qDim + h * hd, q, t * qDim + h * hd, w.qNorm()[l], hd, c.normEps());
            else rmsnorm(k, t * kvDim + (h - heads) * hd, k, t * kvDim + (h - heads) * hd, w.kNorm()[l], hd, c.normEps());
        }
    }

    /**
     * Rotates the stored (pre-RoPE) keys the cache does not hold rotated yet into its rotated copy:
     * at the entry's true position (original) or at its slot (cache).
     */
    private void ropeRange(int worker, int from, int to) {
        boolean original = pCache.positionMode() == PositionMode.ORIGINAL;
        for (int h = 0; h < kvHeads; h++) {
            int a = Math.max(from, keyStart[h]), b = Math.min(to, keyStart[h + 1]);
            if (a >= b) continue;
            KvStream s = pCache.stream(pLayer, h);
            float[] keys = s.keys(), dst = pCache.rotatedKeys(pLayer, h);
            long[] pos = s.positions();
            float[] row = keyRow[worker];
            for (int g = a; g < b; g++) {
                int i = g - keyStart[h] + rotFrom[h];
                if (original) rope.rotateAt(keys, i * hd, row, 0, pos[i], ropeScratch[worker]);
                else rope.rotate(keys, i * hd, row, 0, i);
                // into the cache's tiled layout: component d of the tile's keys side by side
                int t = KvCache.tiledIndex(i, 0, hd);
                for (int d = 0; d < hd; d++, t += KvCache.KEY_TILE) dst[t] = row[d];
            }
        }
    }

    /*
     * Attention runs in two phases over the units (query head, token) of a block of the chunk,
     * head-major: scores, then softmax and weighted values, each unit's weights kept in its own
     * row of the scratch. Two phases rather than one body because C2 compiles each phase body as
     * one unit with its kernels inlined, and the scores' and the softmax's Vector API code together
     * exceed its inlining node budget: the calls left over were then made out of line with boxed
     * vectors, which allocated on every token (SessionTest.decodingAllocatesNothing).
     */

    /**
     * Phase 1: the unit's rotated query against the stream's rotated keys, scaled, plus eq. 9's
     * bias; the row's max. With one token per conversation (decode) a unit's neighbour is the
     * next head of the same token; when it is in the same KV group it reads the same keys with
     * the same count, so the two go through {@link #scoresPair} together (the same bits as two
     * {@link #scores}, each key tile loaded once for both).
     */
    private void scoresRange(int worker, int from, int to) {
        float[] qr = qrot[worker], qr2 = qrotNext[worker];
        int perConv = heads * pBlock;
        for (int u = from; u < to; ) {
            int b = pConv0 + u / perConv, h = u % perConv / pBlock, t = pFrom + u % pBlock, kvh = h / group;
            KvCache cache = pCaches[b];
            KvStream s = cache.stream(pLayer, kvh);
            // every token of the chunk is already in the stream; token t sees up to itself
            int count = s.size() - (pSpan - 1 - t);
            float[] keys = cache.rotatedKeys(pLayer, kvh);
            rotateQuery(cache, s, b, t, h, count - 1, qr, worker);
            if (pBlock == 1 && (h + 1) % group != 0 && u + 1 < to) {
                rotateQuery(cache, s, b, t, h + 1, count - 1, qr2, worker);
                scoresPair(qr, qr2, keys, hd, count, att, u * scratchCap, (u + 1) * scratchCap);
                scaleBiasMax(cache, s, u, count);
                scaleBiasMax(cache, s, u + 1, count);
                u += 2;
            } else {
                scores(qr, keys, hd, count, att, u * scratchCap);
                scaleBiasMax(cache, s, u, count);
                u++;
            }
        }
    }

    /**
     * Phase 1 for a block of several tokens (prefill): a head's consecutive tokens t and t+1 read
     * the same keys, t+1 one more of them, so they go through {@link #scoresPair} together, which
     * loads each key tile once for both. Each score is the same FMA chain as in {@link #scores}
     * (the same bits); token t's row gets one score past its count, which nothing reads. A phase
     * body of its own rather than a branch in {@link #scoresRange}: decode's body stays the size
     * it was for C2's inlining budget (see above).
     */
    private void scoresPairRange(int worker, int from, int to) {
        // a prefill chunk: one cache (pConvs == 1)
        float[] qr = qrot[worker], qr2 = qrotNext[worker];
        KvCache cache = pCaches[0];
        for (int u = from; u < to; ) {
            int tb = u % pBlock, h = u / pBlock, t = pFrom + tb, kvh = h / group;
            KvStream s = cache.stream(pLayer, kvh);
            int count = s.size() - (pSpan - 1 - t);
            float[] keys = cache.rotatedKeys(pLayer, kvh);
            rotateQuery(cache, s, 0, t, h, count - 1, qr, worker);
            if (u + 1 < to && tb + 1 < pBlock) {
                rotateQuery(cache, s, 0, t + 1, h, count, qr2, worker);
                scoresPair(qr, qr2, keys, hd, count + 1, att, u * scratchCap, (u + 1) * scratchCap);
                scaleBiasMax(cache, s, u, count);
                scaleBiasMax(cache, s, u + 1, count + 1);
                u += 2;
            } else {
                scores(qr, keys, hd, count, att, u * scratchCap);
                scaleBiasMax(cache, s, u, count);
                u++;
            }
        }
    }

    /** Conversation b's token t (its query in row b * pSpan + t) for head h into dst, rotated to the position of the stream's entry {@code self}. */
    private void rotateQuery(KvCache cache, KvStream s, int b, int t, int h, int self, float[] dst, int worker) {
        int src = (b * pSpan + t) * qDim + h * hd;
        if (cache.positionMode() == PositionMode.ORIGINAL) rope.rotateAt(q, src, dst, 0, s.positions()[self], ropeScratch[worker]);
        else rope.rotate(q, src, dst, 0, self);
    }

    /** The unit's first {@code count} scores scaled, plus eq. 9's bias when the cache modulates; their max into unitMax. */
    private void scaleBiasMax(KvCache cache, KvStream s, int u, int count) {
        boolean modulated = cache.modulated();
        float[] row = att, bias = s.logitBias();
        int o = u * scratchCap;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            float z = row[o + i] * attnScale;
            if (modulated) z += bias[i];
            row[o + i] = z;
            if (z > max) max = z;
        }
        unitMax[u] = max;
    }

    /**
     * Phase 2: each unit's softmax (its row becomes exp(z - max), 1/sum kept) and its weighted
     * values. The phase visits the units group-inner, v = (conversation, KV head, token, query
     * head of the group), so that two query heads of a group at the same token are neighbours:
     * they read the same values, and {@link #weightedValuesPair} loads each value vector once for
     * both. A pair cut by a chunk's end goes head by head (the same bits either way).
     */
    private void valuesRange(int worker, int from, int to) {
        int nb = pBlock, perConv = heads * nb, perKv = group * nb;
        for (int v = from; v < to; ) {
            int c = v / perConv, r = v % perConv, kvh = r / perKv, tb = r % perKv / group, j = r % group;
            int b = pConv0 + c, h = kvh * group + j, t = pFrom + tb;
            KvStream s = pCaches[b].stream(pLayer, kvh);
            int count = s.size() - (pSpan - 1 - t);
            // the scores phase's unit of (b, h, t): its row of att, its max and its 1/sum
            int u = c * perConv + h * nb + tb, out = (b * pSpan + t) * qDim + h * hd;
            if (pairedValues && j + 1 < group && v + 1 < to) {
                int u2 = u + nb;   // head h + 1, same token
                weightedValuesPair(att, u * scratchCap, u2 * scratchCap, count, softmax(u, count, worker),
                        softmax(u2, count, worker), s.values(), hd, xb2, out);
                v += 2;
            } else {
                weightedValues(att, u * scratchCap, count, softmax(u, count, worker), s.values(), hd, xb2, out);
                v++;
            }
        }
    }

    /** Unit u's row of scores becomes exp(z - max); returns 1/sum, which it also keeps in unitInv (the observe phase reads it). */
    private float softmax(int u, int count, int worker) {
        float inv = 1f / expInPlace(att, u * scratchCap, count, unitMax[u], lanes[worker]);
        unitInv[u] = inv;
        return inv;
    }

    /**
     * Phase 3, when the policy reads attention: per KV head (unit), each token's weights averaged
     * over the group's query heads, handed to the cache in token order.
     */
    private void observeRange(int worker, int from, int to) {
        int nb = pBlock;
        float[] mean = groupRow[worker];
        for (int w = from; w < to; w++) {
            int c = w / kvHeads, kvh = w % kvHeads;
            KvCache cache = pCaches[pConv0 + c];
            if (!cache.observing()) continue;
            KvStream s = cache.stream(pLayer, kvh);
            for (int tb = 0; tb < nb; tb++) {
                int t = pFrom + tb, count = s.size() - (pSpan - 1 - t);
                java.util.Arrays.fill(mean, 0, count, 0f);
                for (int j = 0; j < group; j++) {
                    int u = (c * heads + kvh * group + j) * nb + tb, o = u * scratchCap;
                    float scale = unitInv[u] / group;
                    for (int i = 0; i < count; i++) mean[i] += att[o + i] * scale;
                }
                cache.observe(pLayer, kvh, t, mean, count);
            }
        }
    }

    /**
     * sc[so + i] = q . key i for i < count, from the cache's tiled rotated keys (see
     * {@link KvCache#rotatedKeys}): per tile one vector of lanes, one lane per key, accumulated
     * over the components in order, so each score is one FMA chain over d = 0 .. hd-1 (a fixed
     * order, the same bits in the interpreter and C2) and no lane sum per key. Four tiles at a time
     * keep four independent chains in flight; the last tile writes up to a tile past count
     * (the scratch rows are whole tiles long).
     */
    static void scores(float[] q, float[] tiles, int hd, int count, float[] sc, int so) {
        int T = KvCache.KEY_TILE, tileFloats = T * hd, i = 0, base = 0;
        for (; i + 3 * T < count; i += 4 * T, base += 4 * tileFloats) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0, p = base; d < hd; d++, p += T) {
                FloatVector qd = FloatVector.broadcast(S, q[d]);
                a0 = FloatVector.fromArray(S, tiles, p).fma(qd, a0);
                a1 = FloatVector.fromArray(S, tiles, p + tileFloats).fma(qd, a1);
                a2 = FloatVector.fromArray(S, tiles, p + 2 * tileFloats).fma(qd, a2);
                a3 = FloatVector.fromArray(S, tiles, p + 3 * tileFloats).fma(qd, a3);
            }
            a0.intoArray(sc, so + i);
            a1.intoArray(sc, so + i + T);
            a2.intoArray(sc, so + i + 2 * T);
            a3.intoArray(sc, so + i + 3 * T);
        }
        for (; i < count; i += T, base += tileFloats) {
            FloatVector a0 = FloatVector.zero(S);
            for (int d = 0, p = base; d < hd; d++, p += T) a0 = FloatVector.fromArray(S, tiles, p).fma(FloatVector.broadcast(S, q[d]), a0);
            a0.intoArray(sc, so + i);
        }
    }

    /**
     * {@link #scores} for two queries over the same keys: sc[so + i] = q . key i and
     * sc[so2 + i] = q2 . key i for i < count, each the same FMA chain over d as in scores (the
     * same bits), with each tile's vector loaded once for both.
     */
    static void scoresPair(float[] q, float[] q2, float[] tiles, int hd, int count, float[] sc, int so, int so2) {
        int T = KvCache.KEY_TILE, tileFloats = T * hd, i = 0, base = 0;
        for (; i + 3 * T < count; i += 4 * T, base += 4 * tileFloats) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            for (int d = 0, p = base; d < hd; d++, p += T) {
                FloatVector qd = FloatVector.broadcast(S, q[d]), rd = FloatVector.broadcast(S, q2[d]);
                FloatVector k0 = FloatVector.fromArray(S, tiles, p), k1 = FloatVector.fromArray(S, tiles, p + tileFloats);
                FloatVector k2 = FloatVector.fromArray(S, tiles, p + 2 * tileFloats), k3 = FloatVector.fromArray(S, tiles, p + 3 * tileFloats);
                a0 = k0.fma(qd, a0);
                a1 = k1.fma(qd, a1);
                a2 = k2.fma(qd, a2);
                a3 = k3.fma(qd, a3);
                b0 = k0.fma(rd, b0);
                b1 = k1.fma(rd, b1);
                b2 = k2.fma(rd, b2);
                b3 = k3.fma(rd, b3);
            }
            a0.intoArray(sc, so + i);
            a1.intoArray(sc, so + i + T);
            a2.intoArray(sc, so + i + 2 * T);
            a3.intoArray(sc, so + i + 3 * T);
            b0.intoArray(sc, so2 + i);
            b1.intoArray(sc, so2 + i + T);
            b2.intoArray(sc, so2 + i + 2 * T);
            b3.intoArray(sc, so2 + i + 3 * T);
        }
        for (; i < count; i += T, base += tileFloats) {
            FloatVector a0 = FloatVector.zero(S), b0 = a0;
            for (int d = 0, p = base; d < hd; d++, p += T) {
                FloatVector k0 = FloatVector.fromArray(S, tiles, p);
                a0 = k0.fma(FloatVector.broadcast(S, q[d]), a0);
                b0 = k0.fma(FloatVector.broadcast(S, q2[d]), b0);
            }
            a0.intoArray(sc, so + i);
            b0.intoArray(sc, so2 + i);
        }
    }

    /**
     * sc[so + i] = exp(sc[so + i] - max) for i < count, vectorised with {@link Simd#exp} (not the
     * Vector API's EXP, whose bits differ between interpreter and C2); returns the sum.
     */
    private static float expInPlace(float[] sc, int so, int count, float max, float[] lanes) {
        int i = 0;
        float sum = 0;
        if (count >= S.length()) {
            FloatVector acc = FloatVector.zero(S);
            for (int up = S.loopBound(count); i < up; i += S.length()) {
                FloatVector e = Simd.exp(FloatVector.fromArray(S, sc, so + i).sub(max));
                e.intoArray(sc, so + i);
                acc = acc.add(e);
            }
            acc.intoArray(lanes, 0);
            sum = Simd.sum(lanes, 0);
        }
        for (; i < count; i++) {
            float e = (float) Math.exp(sc[so + i] - max);
            sc[so + i] = e;
            sum += e;
        }
        return sum;
    }

    /**
     * out[o .. o+hd) = scale * sum_i p[i] * values[i*hd ..]. The output block stays in registers
     * (four vectors at a time) while the entries stream by, instead of a load and store of the
     * output per entry.
     */
    static void weightedValues(float[] p, int po, int count, float scale, float[] vals, int hd, float[] out, int o) {
        int L = S.length(), d = 0;
        for (; d + 4 * L <= hd; d += 4 * L) {
            // even entries into a, odd ones into b: eight FMA chains instead of four, so the
            // FMA latency no longer bounds the loop; a + b at the end (a fixed order)
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            int i = 0, r = d;
            for (; i + 1 < count; i += 2, r += 2 * hd) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]), pj = FloatVector.broadcast(S, p[po + i + 1]);
                a0 = FloatVector.fromArray(S, vals, r).fma(pi, a0);
                a1 = FloatVector.fromArray(S, vals, r + L).fma(pi, a1);
                a2 = FloatVector.fromArray(S, vals, r + 2 * L).fma(pi, a2);
                a3 = FloatVector.fromArray(S, vals, r + 3 * L).fma(pi, a3);
                b0 = FloatVector.fromArray(S, vals, r + hd).fma(pj, b0);
                b1 = FloatVector.fromArray(S, vals, r + hd + L).fma(pj, b1);
                b2 = FloatVector.fromArray(S, vals, r + hd + 2 * L).fma(pj, b2);
                b3 = FloatVector.fromArray(S, vals, r + hd + 3 * L).fma(pj, b3);
            }
            if (i < count) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]);
                a0 = FloatVector.fromArray(S, vals, r).fma(pi, a0);
                a1 = FloatVector.fromArray(S, vals, r + L).fma(pi, a1);
                a2 = FloatVector.fromArray(S, vals, r + 2 * L).fma(pi, a2);
                a3 = FloatVector.fromArray(S, vals, r + 3 * L).fma(pi, a3);
            }
            a0 = a0.add(b0);
            a1 = a1.add(b1);
            a2 = a2.add(b2);
            a3 = a3.add(b3);
            a0.mul(scale).intoArray(out, o + d);
            a1.mul(scale).intoArray(out, o + d + L);
            a2.mul(scale).intoArray(out, o + d + 2 * L);
            a3.mul(scale).intoArray(out, o + d + 3 * L);
        }
        for (; d + L <= hd; d += L) {
            FloatVector a0 = FloatVector.zero(S);
            for (int i = 0, r = d; i < count; i++, r += hd) a0 = FloatVector.fromArray(S, vals, r).fma(FloatVector.broadcast(S, p[po + i]), a0);
            a0.mul(scale).intoArray(out, o + d);
        }
        for (; d < hd; d++) {
            float a = 0;
            for (int i = 0, r = d; i < count; i++, r += hd) a += p[po + i] * vals[r];
            out[o + d] = a * scale;
        }
    }

    /**
     * {@link #weightedValues} for two query heads that read the same values with the same count:
     * out[o ..] from the weights at p[po ..] and out[o + hd ..] from those at p[po2 ..]. Every
     * output is the same chains as there (even and odd entries, added, then scaled), so the same
     * bits; each value vector is loaded once for both heads, which halves the loads per FMA's
     * worth of work and the values' traffic from L2 (a 1B head's 320 entries are 80 KB, more than
     * L1). Only for head dimensions of whole blocks of four vectors ({@link #pairedValues}).
     */
    static void weightedValuesPair(float[] p, int po, int po2, int count, float scale, float scale2, float[] vals, int hd, float[] out, int o) {
        int L = S.length();
        for (int d = 0; d < hd; d += 4 * L) {
            FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
            FloatVector e0 = a0, e1 = a0, e2 = a0, e3 = a0, f0 = a0, f1 = a0, f2 = a0, f3 = a0;
            int i = 0, r = d;
            for (; i + 1 < count; i += 2, r += 2 * hd) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]), qi = FloatVector.broadcast(S, p[po2 + i]);
                FloatVector v0 = FloatVector.fromArray(S, vals, r), v1 = FloatVector.fromArray(S, vals, r + L);
                FloatVector v2 = FloatVector.fromArray(S, vals, r + 2 * L), v3 = FloatVector.fromArray(S, vals, r + 3 * L);
                a0 = v0.fma(pi, a0); a1 = v1.fma(pi, a1); a2 = v2.fma(pi, a2); a3 = v3.fma(pi, a3);
                e0 = v0.fma(qi, e0); e1 = v1.fma(qi, e1); e2 = v2.fma(qi, e2); e3 = v3.fma(qi, e3);
                FloatVector pj = FloatVector.broadcast(S, p[po + i + 1]), qj = FloatVector.broadcast(S, p[po2 + i + 1]);
                FloatVector w0 = FloatVector.fromArray(S, vals, r + hd), w1 = FloatVector.fromArray(S, vals, r + hd + L);
                FloatVector w2 = FloatVector.fromArray(S, vals, r + hd + 2 * L), w3 = FloatVector.fromArray(S, vals, r + hd + 3 * L);
                b0 = w0.fma(pj, b0); b1 = w1.fma(pj, b1); b2 = w2.fma(pj, b2); b3 = w3.fma(pj, b3);
                f0 = w0.fma(qj, f0); f1 = w1.fma(qj, f1); f2 = w2.fma(qj, f2); f3 = w3.fma(qj, f3);
            }
            if (i < count) {
                FloatVector pi = FloatVector.broadcast(S, p[po + i]), qi = FloatVector.broadcast(S, p[po2 + i]);
                FloatVector v0 = FloatVector.fromArray(S, vals, r), v1 = FloatVector.fromArray(S, vals, r + L);
                FloatVector v2 = FloatVector.fromArray(S, vals, r + 2 * L), v3 = FloatVector.fromArray(S, vals, r + 3 * L);
                a0 = v0.fma(pi, a0); a1 = v1.fma(pi, a1); a2 = v2.fma(pi, a2); a3 = v3.fma(pi, a3);
                e0 = v0.fma(qi, e0); e1 = v1.fma(qi, e1); e2 = v2.fma(qi, e2); e3 = v3.fma(qi, e3);
            }
            a0.add(b0).mul(scale).intoArray(out, o + d);
            a1.add(b1).mul(scale).intoArray(out, o + d + L);
            a2.add(b2).mul(scale).intoArray(out, o + d + 2 * L);
            a3.add(b3).mul(scale).intoArray(out, o + d + 3 * L);
            e0.add(f0).mul(scale2).intoArray(out, o + hd + d);
            e1.add(f1).mul(scale2).intoArray(out, o + hd + d + L);
            e2.add(f2).mul(scale2).intoArray(out, o + hd + d + 2 * L);
            e3.add(f3).mul(scale2).intoArray(out, o + hd + d + 3 * L);
        }
    }

    /** Output projection and its residual: x += wo . attention. */
    private void outputProjRange(int worker, int from, int to) {
        int n = pBatch;
        product(w.wo()[pLayer], from, to, xb2, qDim, n, xb, dim);
        for (int t = 0; t < n; t++) {
            for (int r = from; r < to; r++) x[t * dim + r] += xb[t * dim + r];
        }
    }

    /** SwiGLU's two up projections for the same rows (their product: {@link #swigluRange}). */
    private void ffnUpRange(int worker, int from, int to) {
        int n = pBatch, l = pLayer;
        product(w.wGate()[l], from, to, xb, dim, n, hb, hidden);
        product(w.wUp()[l], from, to, xb, dim, n, hb2, hidden);
    }

    /**
     * SwiGLU's product for the chunk's tokens [from, to): hb = silu(gate) * up over whole rows,
     * after the two up projections (a phase of its own so that each row is split into vectors
     * the same way whatever the threads' row ranges were).
     */
    private void swigluRange(int worker, int from, int to) {
        for (int t = from; t < to; t++) swiglu(hb, hb2, t * hidden, hidden);
    }

    /**
     * a[o + i] = silu(a[o + i]) * b[o + i] = a / (1 + e^-a) * b for i < n, a vector at a time with
     * {@link Simd#exp} (the scalar Math.exp loop held 9% of a prefill-heavy JFR profile's samples); the
     * row's last n % lanes units in scalar code.
     */
    static void swiglu(float[] a, float[] b, int o, int n) {
        int i = 0;
        for (int up = S.loopBound(n); i < up; i += S.length()) {
            FloatVector g = FloatVector.fromArray(S, a, o + i);
            FloatVector e = Simd.exp(g.neg());
            g.div(e.add(1f)).mul(FloatVector.fromArray(S, b, o + i)).intoArray(a, o + i);
        }
        for (; i < n; i++) {
            float g = a[o + i];
            a[o + i] = g / (1f + (float) Math.exp(-g)) * b[o + i];
        }
    }

    /** Down projection and its residual. */
    private void ffnDownRange(int worker, int from, int to) {
        int n = pBatch;
        product(w.wDown()[pLayer], from, to, hb, hidden, n, xb, dim);
        for (int t = 0; t < n; t++) {
            for (int r = from; r < to; r++) x[t * dim + r] += xb[t * dim + r];
        }
    }

    private void classifierRange(int worker, int from, int to) {
        w.output().matmul(from, to, xb, 0, dim, 1, logits, 0, vocab);
    }

    // ---- kernels ------------------------------------------------------------------------------

    /** out = weight * x / rms(x), as llama2.c: 1 / sqrt(mean(x^2) + eps). */
    static void rmsnorm(float[] out, int oOff, float[] x, int xOff, float[] weight, int n, float eps) {
        float ss = Simd.dot(x, xOff, x, xOff, n);
        ss = ss / n + eps;
        ss = 1f / (float) Math.sqrt(ss);
        for (int i = 0; i < n; i++) out[oOff + i] = weight[i] * (ss * x[xOff + i]);
    }

    /** Stops the worker threads. */
    @Override
    public void close() {
        workers.close();
    }
}
