package io.fdkvc.engine.model;

import static io.fdkvc.engine.model.AttentionKernels.expInPlace;
import static io.fdkvc.engine.model.AttentionKernels.geglu;
import static io.fdkvc.engine.model.AttentionKernels.rmsnorm;
import static io.fdkvc.engine.model.AttentionKernels.scores;
import static io.fdkvc.engine.model.AttentionKernels.scoresEight;
import static io.fdkvc.engine.model.AttentionKernels.scoresPair;
import static io.fdkvc.engine.model.AttentionKernels.swiglu;
import static io.fdkvc.engine.model.AttentionKernels.weightedValues;
import static io.fdkvc.engine.model.AttentionKernels.weightedValuesPair;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.Simd;
import java.util.function.Consumer;

/**
 * The forward pass of a decoder-only transformer of any {@link Architecture} (llama, qwen2, qwen3,
 * gemma3, phi3, mistral3, smollm3), composed from its {@link Blocks}, over a bounded,
 * policy-driven KV cache.
 *
 * <p>A pass runs rows of tokens through every layer: a prefill chunk (one conversation, n
 * consecutive tokens, {@link #forward}) or one decode step of several conversations (one token
 * each, {@link #forwardDecodeBatch}); a single decode token is a chunk of one. Each weight matrix
 * is read once per pass, whatever the number of rows. Every pass goes through the same
 * {@link #layer}, which reads top to bottom:
 * <ol>
 *   <li>attention block: RMSNorm; the q/k/v projections (qwen2 adds biases); the per-head RMSNorm
 *       of q and k (qwen3, gemma3); the rows' keys and values appended to the layer's streams
 *       with the turn's query rows (pre-RoPE, see {@link KvCache}); grouped-query attention over
 *       each stream (keys not yet rotated rotated once, by the layer's RoPE or none, into the
 *       cache's rotated copy; the rotated query, times the attention temperature where there is
 *       one, against them, scaled, plus the policy's eq. 9 logit bias; in a sliding-window layer
 *       keys outside the window masked; softmax, weighted values; when the policy reads
 *       attention, each row's weights averaged over the KV group go to the cache,
 *       {@link KvCache#observe}); the output projection; the residual add (of the output
 *       RMS-normalised again where the blocks normalise after, gemma3);
 *   <li>feed-forward block: RMSNorm, the gate and up projections, SwiGLU or GeGLU, the down
 *       projection, the residual add (likewise).
 * </ol>
 * The final RMSNorm and the classifier run on the rows whose logits are asked for.
 *
 * <p>Each step runs as a phase over a fixed team of threads ({@link LlamaWorkers}): products
 * split by rows, attention by (conversation, head, token). What a phase works on (the layer, the
 * caches, the rows, the attention block in progress) is in one {@link Pass} object, reused from
 * pass to pass. Every buffer is allocated at construction (sized for {@code maxBatch} rows),
 * except the attention scratch, which follows the largest stream capacity and therefore grows
 * only when the unbounded {@code full} cache grows. A token's forward pass allocates nothing.
 *
 * <p>Positions past the model's trained context ({@code --positions original} in a long
 * conversation, or a cache holding more entries than the context) are warned about once per
 * conversation, through {@link #onWarning}.
 *
 * <p>Not thread-safe: one pass at a time per instance.
 */
public final class Llama implements AutoCloseable {
    private final LlamaConfig config;
    private final LlamaWeights weights;
    private final int dim, headDim, heads, kvHeads, group, qDim, kvDim, hidden, vocab, layers, maxBatch;
    // whether two heads of a group share a pass over their values (weightedValuesPair)
    private final boolean pairedValues;
    private final boolean neox, qkNorm, gelu;
    private final float attnScale, embeddingScale;
    // per layer its RoPE (null: none) and window (0: global attention); the distinct RoPEs
    private final LlamaRope[] layerRope, ropes;
    private final int[] layerWindow;
    private final Blocks.AttentionTemperature temperature;
    private final LlamaWorkers workers;

    // activations, row r of a pass at r * (width): the residual stream, a block's normed input,
    // the attention's output per head, a block's output before its residual add, q, k, v, and the
    // feed-forward's gate and up rows
    private final float[] residual, normed, attnOut, blockOut, q, k, v, gate, up, logits, deinterleaved;
    private float[] rowLogits = new float[0];
    // attention scratch: one row of attention weights per (conversation, query head, token) unit
    // of the block in progress, with its softmax max and 1/sum; per worker a rotated query and
    // its neighbour's, eight rotated queries with their rows' offsets in att and their counts (a prefill's scores),
    // four reduction lanes, a group-mean row of weights (observation), a RoPE scratch and a
    // rotated key before it goes into its tile
    private float[] att = new float[0];
    private final float[] unitMax, unitInv;
    private final float[][] qrot, qrotNext, qEight, lanes, ropeScratch, keyRow;
    private final int[][] eightRows, eightCounts;
    private float[][] groupRow;
    private int scratchCap, attentionBlock;
    // keys to rotate in the layer in progress: stream h's entries [rotFrom[h], size), at
    // keyStart[h] .. keyStart[h+1] of the concatenated range
    private final int[] keyStart, rotFrom;
    // a batched decode step's token positions in the conversations whose caches keep true positions
    private final long[] originalPositions;
    private Consumer<String> warnings = Llama::logWarning;

    /** What the phases of the pass in progress work on; one object, set up by each pass. */
    private static final class Pass {
        /** the pass's conversations: caches[0 .. conversations), each with span consecutive rows */
        KvCache[] caches;
        int conversations, span, rows;
        int layer;
        /** the weights of the norm step in progress, and of the residual step's post-block norm (null: none) */
        float[] norm, postNorm;
        /** whether the products of the step in progress read a transposed batch, {@link #batch} */
        boolean sharedBatch;
        /** that batch: {@link #shared}, or the feed-forward's gate in its products' layout ({@link #gateT}) */
        FloatTensor.TransposedBatch batch;
        /** the cache whose keys the rotation step rotates */
        KvCache rotating;
        /** the attention block in progress: conversations [conv0, conv0 + convs), tokens [from, from + block) of each */
        int conv0, convs, from, block;
        /** which rows the caller reads after the last layer: {@link #ALL_ROWS}, {@link #LAST_ROW} or {@link #NO_ROWS} */
        int output;
    }

    /*
     * What a pass's last layer computes after its attention. Its keys and values (and the
     * attention the policy observes) are needed for every row, but its output projection and
     * feed-forward block only for the rows whose logits the caller reads: a prefill chunk's last
     * row when it wants logits, no row when it does not. For Llama-3.2-1B that is 5.5% of a
     * 64-token chunk's multiply-adds (the last of 16 layers' wo and feed-forward for 63 rows);
     * llama.cpp skips those rows' feed-forward (its wo runs for every row). The kept row then
     * goes through the batch-of-one products, as every decoded token does.
     */
    private static final int ALL_ROWS = 0, LAST_ROW = 1, NO_ROWS = 2;

    private final Pass pass = new Pass();
    private final KvCache[] chunkCache = new KvCache[1];
    // a prefill chunk's rows transposed once for the tiled products of the next phase
    private final FloatTensor.TransposedBatch shared = new FloatTensor.TransposedBatch();
    // a tiled chunk's feed-forward gate and up rows as their products leave them, transposed
    private final FloatTensor.TransposedBatch gateT = new FloatTensor.TransposedBatch(), upT = new FloatTensor.TransposedBatch();

    // Every step runs as a phase body, even the small ones that stay on the calling thread: a
    // body is called through parallel()'s megamorphic call, so C2 compiles it on its own instead
    // of inlining it into the layer, whose inlining budget would then run out on Vector API calls
    // (which, left out of line, box their vectors: an allocation per token)
    private final LlamaWorkers.Body normPhase = this::normRange;
    private final LlamaWorkers.Body qkvPhase = this::qkvRange;
    private final LlamaWorkers.Body qkNormPhase = this::qkNormRange;
    private final LlamaWorkers.Body ropePhase = this::ropeRange;
    private final LlamaWorkers.Body scoresPhase = this::scoresRange;
    private final LlamaWorkers.Body scoresPairPhase = this::scoresPairRange;
    private final LlamaWorkers.Body scoresEightPhase = this::scoresEightRange;
    private final LlamaWorkers.Body valuesPhase = this::valuesRange;
    private final LlamaWorkers.Body observePhase = this::observeRange;
    private final LlamaWorkers.Body outputProjPhase = this::outputProjRange;
    private final LlamaWorkers.Body residualPhase = this::residualRange;
    private final LlamaWorkers.Body ffnUpPhase = this::ffnUpRange;
    private final LlamaWorkers.Body activationPhase = this::activationRange;
    private final LlamaWorkers.Body tiledActivationPhase = this::tiledActivationRange;
    private final LlamaWorkers.Body ffnDownPhase = this::ffnDownRange;
    private final LlamaWorkers.Body lastRowNormPhase = this::lastRowNormRange;
    private final LlamaWorkers.Body classifierPhase = this::classifierRange;
    private final LlamaWorkers.Body rowClassifierPhase = this::rowClassifierRange;
    private final LlamaWorkers.Body transposePhase = this::transposeRange;

    private long attentionNanos, ropeNanos;

    /**
     * @param maxBatch most rows per pass (prefill chunk, conversations of a batched decode step)
     * @param threads  threads of the forward pass
     */
    public Llama(LlamaConfig config, LlamaWeights weights, int maxBatch, int threads) {
        this.config = config;
        this.weights = weights;
        validate(config, weights);
        if (maxBatch < 1) throw new IllegalArgumentException("maxBatch must be >= 1");
        dim = config.dim();
        headDim = config.headDim();
        pairedValues = AttentionKernels.pairsValues(headDim);
        heads = config.heads();
        kvHeads = config.kvHeads();
        group = heads / kvHeads;
        qDim = heads * headDim;
        kvDim = kvHeads * headDim;
        hidden = config.hiddenDim();
        vocab = config.vocabSize();
        layers = config.layers();
        this.maxBatch = maxBatch;
        neox = config.ropeNeox();
        qkNorm = config.arch().qkNorm();
        Blocks blocks = config.blocks();
        gelu = blocks.activation() == Blocks.Activation.GELU;
        attnScale = blocks.queryScale();
        embeddingScale = blocks.embeddingScale();
        temperature = blocks.temperature();
        // no table for the declared context: slots as the cache needs them, chunk positions per chunk;
        // one table per distinct RoPE (Gemma 3's sliding and global layers have one each)
        layerRope = new LlamaRope[layers];
        layerWindow = blocks.windows();
        java.util.List<Rope> distinct = new java.util.ArrayList<>();
        java.util.List<LlamaRope> tables = new java.util.ArrayList<>();
        for (int l = 0; l < layers; l++) {
            Rope r = blocks.layers().get(l).rope();
            if (r == null) continue;
            int i = distinct.indexOf(r);
            if (i < 0) {
                distinct.add(r);
                tables.add(new LlamaRope(r, headDim, maxBatch));
                i = distinct.size() - 1;
            }
            layerRope[l] = tables.get(i);
        }
        ropes = tables.toArray(new LlamaRope[0]);
        workers = new LlamaWorkers(threads);
        residual = new float[maxBatch * dim];
        normed = new float[maxBatch * dim];
        attnOut = new float[maxBatch * qDim];
        blockOut = new float[maxBatch * dim];
        q = new float[maxBatch * qDim];
        k = new float[maxBatch * kvDim];
        v = new float[maxBatch * kvDim];
        gate = new float[maxBatch * hidden];
        up = new float[maxBatch * hidden];
        logits = new float[vocab];
        deinterleaved = new float[headDim];
        unitMax = new float[heads * maxBatch];
        unitInv = new float[heads * maxBatch];
        qrot = new float[threads][headDim];
        qrotNext = new float[threads][headDim];
        qEight = new float[threads][8 * headDim];
        eightRows = new int[threads][8];
        eightCounts = new int[threads][8];
        lanes = new float[threads][4 * Simd.F.length()];
        groupRow = new float[threads][0];
        ropeScratch = new float[threads][headDim];
        keyRow = new float[threads][headDim];
        keyStart = new int[kvHeads + 1];
        rotFrom = new int[kvHeads];
        originalPositions = new long[maxBatch];
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
        if (c.blocks().norms() == Blocks.Norms.PRE_AND_POST) {
            for (int l = 0; l < c.layers(); l++) {
                length("layer " + l + " post-attention norm", w.postAttnNorm() == null ? null : w.postAttnNorm()[l], c.dim());
                length("layer " + l + " post-ffn norm", w.postFfnNorm() == null ? null : w.postFfnNorm()[l], c.dim());
            }
        } else if (w.postAttnNorm() != null || w.postFfnNorm() != null) {
            throw new ModelFormatException("architecture '" + c.architecture() + "' has no post-block norms, but the weights have them");
        }
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

    public LlamaConfig config() { return config; }
    public LlamaWeights weights() { return weights; }
    public int maxBatch() { return maxBatch; }
    public int threads() { return workers.threads(); }
    /** The logits written by the last {@link #forward} that asked for them. */
    public float[] logits() { return logits; }
    /** Time spent in attention (key rotation, scores, softmax, values) since construction. */
    public long attentionNanos() { return attentionNanos; }
    /** The part of {@link #attentionNanos()} spent rotating keys to their positions (new keys, and moved ones after an eviction). */
    public long ropeNanos() { return ropeNanos; }

    /** Bytes of the RoPE tables (bounded by the slots and chunk positions in use, see {@link LlamaRope}). */
    public long ropeTableBytes() {
        long b = 0;
        for (LlamaRope r : ropes) b += r.bytes();
        return b;
    }

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
        long ctx = config.contextLength();
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

    /**
     * A cache shaped for this model: the policy on the global layers; each sliding-window layer
     * keeps exactly its window (see {@link KvCache}).
     */
    public KvCache newCache(PolicySpec spec, int maxTurnTokens, PositionMode positions) {
        return new KvCache(layers, kvHeads, headDim, group, spec, maxTurnTokens, positions, layerWindow);
    }

    private void checkShape(KvCache cache) {
        if (cache.layers() != layers || cache.kvHeads() != kvHeads || cache.headDim() != headDim) {
            throw new IllegalArgumentException("cache shaped for another model");
        }
    }

    /** Row {@code row} of the residual stream: token {@code token}'s embedding. */
    private void embed(int token, int row) {
        if (token < 0 || token >= vocab) throw new IllegalArgumentException("token " + token + " outside the vocabulary of " + vocab);
        weights.tokenEmbedding().dequantizeRow(token, residual, row * dim);
        if (embeddingScale != 1f) for (int i = row * dim, end = i + dim; i < end; i++) residual[i] *= embeddingScale;
    }

    // ---- passes -------------------------------------------------------------------------------

    /**
     * Processes {@code tokens[off .. off+n)} at the cache's next positions, appending them to the
     * turn in progress; returns the logits of the last token when {@code wantLogits}, else null.
     * {@code n} must not exceed {@link #maxBatch()} nor the cache's headroom (the caller ends the
     * turn first). The last layer's output projection and feed-forward run for the last token
     * only, or for none without logits: work whose rows nobody reads.
     */
    public float[] forward(KvCache cache, int[] tokens, int off, int n, boolean wantLogits) {
        forwardChunk(cache, tokens, off, n, wantLogits ? LAST_ROW : NO_ROWS);
        if (!wantLogits) return null;
        parallel(1, lastRowNormPhase, dim);
        shareBatch(normed, dim, 1);
        parallelRows(vocab, classifierPhase, (long) vocab * dim);
        return logits;
    }

    /** {@link #forward}'s pass over the chunk, its last layer computing the {@code output} rows ({@link #ALL_ROWS} ...). */
    private void forwardChunk(KvCache cache, int[] tokens, int off, int n, int output) {
        if (n < 1 || n > maxBatch) throw new IllegalArgumentException("chunk of " + n + " tokens, limit " + maxBatch);
        if (n > cache.headroom()) throw new IllegalStateException("chunk of " + n + " tokens, turn headroom " + cache.headroom());
        checkShape(cache);
        for (int t = 0; t < n; t++) embed(tokens[off + t], t);
        checkContext(cache, n);
        if (cache.positionMode() == PositionMode.ORIGINAL) for (LlamaRope r : ropes) r.window(cache.nextPosition(), n);
        chunkCache[0] = cache;
        runLayers(chunkCache, 1, n, output);
        cache.advance(n);
    }

    /**
     * As {@link #forward}, but returns the logits of every token of the chunk: row {@code t} (the
     * prediction of the token after {@code tokens[off + t]}) at {@code t * vocab}, valid until the
     * next call. The classifier runs as one matrix product over the chunk's rows, so the last row
     * may differ in its last bits from {@link #forward}'s single-row logits; two caches fed the same
     * chunks through this method see the same arithmetic.
     */
    public float[] forwardEveryPosition(KvCache cache, int[] tokens, int off, int n) {
        forwardChunk(cache, tokens, off, n, ALL_ROWS);
        return logitsOfRows(n, n);
    }

    /**
     * One decode step for {@code n} conversations at once: {@code tokens[b]} at the next position
     * of {@code caches[b]} (distinct caches, each with headroom). The weight products run once
     * for the {@code n} tokens as a matrix (the prefill kernels), while each token attends only
     * over its own cache, through the same {@link #layer} as {@link #forward}. Returns the
     * logits, row {@code b} at {@code b * vocab} (valid until the next call).
     *
     * <p>Each row's arithmetic does not depend on the other rows, but the matrix kernel sums in a
     * different order than the single-token dot product (last bits), see {@link FloatTensor#matmul}.
     */
    public float[] forwardDecodeBatch(KvCache[] caches, int[] tokens, int n) {
        if (n < 1 || n > maxBatch || n > caches.length || n > tokens.length) {
            throw new IllegalArgumentException("decode batch of " + n + " conversations, limit " + maxBatch);
        }
        int original = 0;
        for (int b = 0; b < n; b++) {
            KvCache cache = caches[b];
            if (cache.headroom() < 1) throw new IllegalStateException("conversation " + b + " has no turn headroom");
            checkShape(cache);
            for (int a = 0; a < b; a++) if (caches[a] == cache) throw new IllegalArgumentException("a cache appears twice in a batch");
            embed(tokens[b], b);
            checkContext(cache, 1);
            if (cache.positionMode() == PositionMode.ORIGINAL) originalPositions[original++] = cache.nextPosition();
        }
        // the new keys and the queries of caches in original mode rotate to their token's
        // position: the window holds those positions, one per such conversation
        if (original > 0) for (LlamaRope r : ropes) r.windowEach(originalPositions, original);
        runLayers(caches, n, 1, ALL_ROWS);
        for (int b = 0; b < n; b++) caches[b].advance(1);
        // sized once for the largest batch, whatever the number of conversations in this step
        return logitsOfRows(n, maxBatch);
    }

    /**
     * Every layer over the pass's rows: {@code conversations} caches with {@code span} consecutive
     * tokens each, the last layer's output for the {@code output} rows ({@link #ALL_ROWS} ...). With
     * {@link #LAST_ROW} the last row ends in row 0 and {@code pass.rows} is 1.
     */
    private void runLayers(KvCache[] caches, int conversations, int span, int output) {
        pass.output = output;
        pass.caches = caches;
        pass.conversations = conversations;
        pass.span = span;
        pass.rows = conversations * span;
        for (int l = 0; l < layers; l++) layer(l);
        pass.caches = null;
        pass.rotating = null;
        chunkCache[0] = null;
    }

    /** Final norm and classifier over the pass's n rows, row r's logits at r * vocab; grows the logits to {@code rowsToHold} rows when they hold fewer than n. */
    private float[] logitsOfRows(int n, int rowsToHold) {
        for (int t = 0; t < n; t++) rmsnorm(normed, t * dim, residual, t * dim, weights.outputNorm(), dim, config.normEps());
        if (rowLogits.length < n * vocab) rowLogits = new float[rowsToHold * vocab];
        pass.rows = n;
        shareBatch(normed, dim, n);
        parallelRows(vocab, rowClassifierPhase, (long) vocab * dim * n);
        return rowLogits;
    }

    // ---- one layer ----------------------------------------------------------------------------

    /** Layer l over the pass's rows: the attention block, then the feed-forward block, each added to the residual stream. */
    private void layer(int l) {
        pass.layer = l;
        int n = pass.rows;

        // attention block
        norm(weights.attnNorm()[l], n);                                      // normed = rmsnorm(residual)
        shareBatch(normed, dim, n);
        parallelRows(qDim + 2 * kvDim, qkvPhase, (long) (qDim + 2 * kvDim) * dim * n); // q, k, v (+ biases)
        if (qkNorm) parallel(n * (heads + kvHeads), qkNormPhase, (long) n * (qDim + kvDim));
        if (!neox) {
            // interleaved pairs into the halves layout the rotation reads
            for (int r = 0; r < n; r++) {
                LlamaRope.deinterleave(q, r * qDim, heads, headDim, deinterleaved);
                LlamaRope.deinterleave(k, r * kvDim, kvHeads, headDim, deinterleaved);
            }
        }
        appendToCaches(l);
        attention(l);                                                        // attnOut
        if (l == layers - 1 && pass.output != ALL_ROWS) {
            if (pass.output == NO_ROWS) return;
            keepLastRow();
            n = 1;
        }
        shareBatch(attnOut, qDim, n);
        parallelRows(dim, outputProjPhase, (long) dim * qDim * n);           // blockOut = wo . attnOut
        addResidual(weights.postAttnNorm(), l, n);                           // residual += [rmsnorm](blockOut)

        // feed-forward block
        norm(weights.ffnNorm()[l], n);                                       // normed = rmsnorm(residual)
        shareBatch(normed, dim, n);
        if (pass.sharedBatch) {
            // tiled products: gate and up stay in the layout the products leave them in, the
            // activation runs there, and the down projection reads the gate as its transposed
            // batch (no scatter into rows, no transposition back)
            gateT.resetOutput(n, hidden);
            upT.resetOutput(n, hidden);
            parallelRows(hidden, ffnUpPhase, 2L * hidden * dim * n);         // gate, up
            parallel(hidden, tiledActivationPhase, (long) n * hidden);       // gate = silu|gelu(gate) * up
            pass.batch = gateT;
        } else {
            parallelRows(hidden, ffnUpPhase, 2L * hidden * dim * n);         // gate, up
            parallel(n, activationPhase, (long) n * hidden);                 // gate = silu|gelu(gate) * up
        }
        parallelRows(dim, ffnDownPhase, (long) dim * hidden * n);            // blockOut = down . gate
        addResidual(weights.postFfnNorm(), l, n);                            // residual += [rmsnorm](blockOut)
    }

    /**
     * Makes the pass one row, its last, for the rest of the last layer: that row's attention output
     * and residual stream moved to row 0 (nothing to move in a pass of one row: a decode step).
     */
    private void keepLastRow() {
        int last = pass.rows - 1;
        if (last == 0) return;
        System.arraycopy(attnOut, last * qDim, attnOut, 0, qDim);
        System.arraycopy(residual, last * dim, residual, 0, dim);
        pass.rows = 1;
    }

    /** The residual add of a block's output, normalised first where the architecture normalises after the block. */
    private void addResidual(float[][] postNorms, int l, int n) {
        pass.postNorm = postNorms == null ? null : postNorms[l];
        parallel(n, residualPhase, (long) n * dim);
    }

    private void norm(float[] weight, int n) {
        pass.norm = weight;
        parallel(n, normPhase, (long) n * dim);
    }

    /** The rows' keys and values into layer l's streams, with their (pre-RoPE) queries: conversation c's token t is row c * span + t. */
    private void appendToCaches(int l) {
        for (int c = 0; c < pass.conversations; c++) {
            KvCache cache = pass.caches[c];
            for (int t = 0; t < pass.span; t++) {
                int r = c * pass.span + t;
                cache.append(l, t, k, r * kvDim, v, r * kvDim, q, r * qDim);
            }
        }
    }

    /**
     * Layer l's attention for the pass's rows, already appended to their caches: each cache's
     * keys not yet rotated are rotated, then scores, softmax and values (and the observed
     * attention) run as one phase each over blocks of (conversation, head, token) units whose
     * rows fit the scratch: a prefill chunk's tokens in blocks, a batched decode step's
     * conversations in groups, so that the threads share all units of a step instead of
     * splitting the heads of one conversation with a wait after each. Every unit computes what
     * it would in a pass of its own (the same bits).
     */
    private void attention(int l) {
        long t0 = System.nanoTime(), keys = 0;
        boolean observing = false;
        for (int c = 0; c < pass.conversations; c++) {
            observing |= pass.caches[c].observing();
            keys += rotateNewKeys(pass.caches[c], l);
        }
        long t1 = System.nanoTime();
        int convBlock = pass.span == 1 ? attentionBlock : 1, tokenBlock = pass.span == 1 ? 1 : attentionBlock;
        for (int c0 = 0; c0 < pass.conversations; c0 += convBlock) {
            pass.conv0 = c0;
            pass.convs = Math.min(convBlock, pass.conversations - c0);
            for (int from = 0; from < pass.span; from += tokenBlock) {
                pass.from = from;
                pass.block = Math.min(tokenBlock, pass.span - from);
                long work = keys * headDim * group * pass.convs * pass.block / pass.conversations;
                int units = pass.convs * heads * pass.block;
                if (pass.block == 1) parallel(units, scoresPhase, work);
                else if (AttentionKernels.EIGHT_QUERIES) parallel(kvHeads * eightRuns(), scoresEightPhase, work);
                else parallel(units, scoresPairPhase, work);
                parallel(units, valuesPhase, work);
                if (observing) parallel(pass.convs * kvHeads, observePhase, work / headDim);
            }
        }
        long t2 = System.nanoTime();
        ropeNanos += t1 - t0;
        attentionNanos += t2 - t0;
    }

    /** Sizes the scratch for {@code cache}'s layer l, rotates its keys not yet rotated, and returns its entries over all streams. */
    private long rotateNewKeys(KvCache cache, int l) {
        pass.rotating = cache;
        long keys = prepareAttention(cache, l);
        parallel(keyStart[kvHeads], ropePhase, (long) keyStart[kvHeads] * headDim * 2);
        for (int h = 0; h < kvHeads; h++) cache.markRotated(l, h);
        return keys;
    }

    /**
     * Floats of attention weights held at once: a prefill chunk's attention runs in blocks of
     * tokens whose rows (heads x tokens x stream capacity) fit, so that an unbounded cache's long
     * context does not make the scratch chunk-size times larger (16 MB; a bounded cache's chunk
     * fits in one block).
     */
    private static final int ATTENTION_SCRATCH = 1 << 22;

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
        if (cache.positionMode() == PositionMode.CACHE && layerRope[l] != null) layerRope[l].ensure(cap);
        return entries;
    }

    // ---- phases -------------------------------------------------------------------------------

    /** RMSNorm of rows [from, to) of the residual stream into normed, with the weights of the step in progress. */
    private void normRange(int worker, int from, int to) {
        for (int r = from; r < to; r++) rmsnorm(normed, r * dim, residual, r * dim, pass.norm, dim, config.normEps());
    }

    /** The final RMSNorm of the pass's last row, into row 0 of normed. */
    private void lastRowNormRange(int worker, int from, int to) {
        rmsnorm(normed, 0, residual, (pass.rows - 1) * dim, weights.outputNorm(), dim, config.normEps());
    }

    /** q, k, v projections over the concatenated rows [q | k | v], plus qwen2's biases. */
    private void qkvRange(int worker, int from, int to) {
        int l = pass.layer;
        LlamaWeights w = weights;
        projectSegment(w.wq()[l], w.bq() == null ? null : w.bq()[l], q, qDim, 0, from, to);
        projectSegment(w.wk()[l], w.bk() == null ? null : w.bk()[l], k, kvDim, qDim, from, to);
        projectSegment(w.wv()[l], w.bv() == null ? null : w.bv()[l], v, kvDim, qDim + kvDim, from, to);
    }

    /** The part of [from, to) that falls in [base, base + width): those rows of m's product (plus bias) into out. */
    private void projectSegment(FloatTensor m, float[] bias, float[] out, int width, int base, int from, int to) {
        int a = Math.max(from - base, 0), b = Math.min(to - base, width), n = pass.rows;
        if (a >= b) return;
        product(m, a, b, normed, dim, n, out, width);
        if (bias != null) {
            for (int t = 0; t < n; t++) {
                for (int r = a; r < b; r++) out[t * width + r] += bias[r];
            }
        }
    }

    /** qwen3: RMSNorm of each head of q and k (units: row-major, q heads then k heads), before RoPE. */
    private void qkNormRange(int worker, int from, int to) {
        int l = pass.layer, per = heads + kvHeads;
        for (int u = from; u < to; u++) {
            int t = u / per, h = u % per;
            if (h < heads) rmsnorm(q, t * qDim + h * headDim, q, t * qDim + h * headDim, weights.qNorm()[l], headDim, config.normEps());
            else {
                int o = t * kvDim + (h - heads) * headDim;
                rmsnorm(k, o, k, o, weights.kNorm()[l], headDim, config.normEps());
            }
        }
    }

    /**
     * Rotates the stored (pre-RoPE) keys the cache does not hold rotated yet into its rotated copy:
     * at the entry's true position (original) or at its slot (cache).
     */
    private void ropeRange(int worker, int from, int to) {
        KvCache cache = pass.rotating;
        int l = pass.layer, hd = headDim;
        LlamaRope rope = layerRope[l];
        boolean original = cache.positionMode() == PositionMode.ORIGINAL;
        for (int h = 0; h < kvHeads; h++) {
            int a = Math.max(from, keyStart[h]), b = Math.min(to, keyStart[h + 1]);
            if (a >= b) continue;
            KvStream s = cache.stream(l, h);
            float[] keys = s.keys(), dst = cache.rotatedKeys(l, h);
            long[] pos = s.positions();
            float[] row = keyRow[worker];
            for (int g = a; g < b; g++) {
                int i = g - keyStart[h] + rotFrom[h];
                if (rope == null) System.arraycopy(keys, i * hd, row, 0, hd); // a layer without RoPE
                else if (original) rope.rotateAt(keys, i * hd, row, 0, pos[i], ropeScratch[worker]);
                else rope.rotate(keys, i * hd, row, 0, i);
                // into the cache's tiled layout: component d of the tile's keys side by side
                int t = KvCache.tiledIndex(i, 0, hd);
                for (int d = 0; d < hd; d++, t += KvCache.KEY_TILE) dst[t] = row[d];
            }
        }
    }

    /*
     * Attention runs in two phases over the units (conversation, query head, token) of a block,
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
     * the same count, so the two go through {@link AttentionKernels#scoresPair} together (the
     * same bits as two {@link AttentionKernels#scores}, each key tile loaded once for both).
     */
    private void scoresRange(int worker, int from, int to) {
        float[] qr = qrot[worker], qr2 = qrotNext[worker];
        int nb = pass.block, perConv = heads * nb, l = pass.layer;
        for (int u = from; u < to; ) {
            int b = pass.conv0 + u / perConv, h = u % perConv / nb, t = pass.from + u % nb, kvh = h / group;
            KvCache cache = pass.caches[b];
            KvStream s = cache.stream(l, kvh);
            // every token of the pass is already in the stream; token t sees up to itself
            int count = s.size() - (pass.span - 1 - t);
            float[] keys = cache.rotatedKeys(l, kvh);
            rotateQuery(cache, s, b, t, h, count - 1, qr, worker);
            if (nb == 1 && (h + 1) % group != 0 && u + 1 < to) {
                rotateQuery(cache, s, b, t, h + 1, count - 1, qr2, worker);
                scoresPair(qr, qr2, keys, headDim, count, att, u * scratchCap, (u + 1) * scratchCap);
                scaleBiasMax(cache, s, u, count);
                scaleBiasMax(cache, s, u + 1, count);
                u += 2;
            } else {
                scores(qr, keys, headDim, count, att, u * scratchCap);
                scaleBiasMax(cache, s, u, count);
                u++;
            }
        }
    }

    /**
     * Phase 1 for a block of several tokens (prefill) where {@link #scoresEightRange} does not run
     * (fewer than 32 vector registers): a head's consecutive tokens t and t+1 read
     * the same keys, t+1 one more of them, so they go through {@link AttentionKernels#scoresPair}
     * together, which loads each key tile once for both. Each score is the same FMA chain as in
     * {@link AttentionKernels#scores} (the same bits); token t's row gets one score past its count,
     * which nothing reads. A phase body of its own rather than a branch in {@link #scoresRange}:
     * decode's body stays the size it was for C2's inlining budget (see above).
     */
    private void scoresPairRange(int worker, int from, int to) {
        // a prefill chunk: one cache (pass.convs == 1)
        float[] qr = qrot[worker], qr2 = qrotNext[worker];
        KvCache cache = pass.caches[0];
        int nb = pass.block, l = pass.layer;
        for (int u = from; u < to; ) {
            int tb = u % nb, h = u / nb, t = pass.from + tb, kvh = h / group;
            KvStream s = cache.stream(l, kvh);
            int count = s.size() - (pass.span - 1 - t);
            float[] keys = cache.rotatedKeys(l, kvh);
            rotateQuery(cache, s, 0, t, h, count - 1, qr, worker);
            if (u + 1 < to && tb + 1 < nb) {
                rotateQuery(cache, s, 0, t + 1, h, count, qr2, worker);
                scoresPair(qr, qr2, keys, headDim, count + 1, att, u * scratchCap, (u + 1) * scratchCap);
                scaleBiasMax(cache, s, u, count);
                scaleBiasMax(cache, s, u + 1, count + 1);
                u += 2;
            } else {
                scores(qr, keys, headDim, count, att, u * scratchCap);
                scaleBiasMax(cache, s, u, count);
                u++;
            }
        }
    }

    /** Runs of eight queries per KV head in the attention block in progress (a prefill's): its group's query heads times its tokens, in eights. */
    private int eightRuns() {
        return (group * pass.block + 7) / 8;
    }

    /**
     * Phase 1 for a block of several tokens (prefill) where {@link AttentionKernels#scoresEight}
     * runs (AVX-512): a KV head's queries, (token, query head of the group) in that order, go in
     * runs of eight through one small matrix product against the head's keys, each key vector
     * loaded once for eight queries; in a 1B chunk that is two tokens' four heads a run. The
     * queries of a run see different counts (a later token one more key each): the kernel computes
     * every run's scores up to its last query's count, and each row is then read to its own count
     * only. A run cut short by the block's end goes query by query through {@link
     * AttentionKernels#scores}: the same bits either way.
     */
    private void scoresEightRange(int worker, int from, int to) {
        // a prefill chunk: one cache (pass.convs == 1)
        float[] qs = qEight[worker], qr = qrot[worker];
        int[] rows = eightRows[worker], counts = eightCounts[worker];
        KvCache cache = pass.caches[0];
        int nb = pass.block, l = pass.layer, perKv = group * nb, runs = eightRuns();
        for (int r = from; r < to; r++) {
            int kvh = r / runs, i0 = r % runs * 8, m = Math.min(8, perKv - i0);
            KvStream s = cache.stream(l, kvh);
            float[] keys = cache.rotatedKeys(l, kvh);
            for (int j = 0; j < m; j++) {
                int i = i0 + j, tb = i / group, h = kvh * group + i % group, t = pass.from + tb;
                // token t sees the stream up to itself (every token of the pass is in it already)
                int count = s.size() - (pass.span - 1 - t), u = h * nb + tb;
                rows[j] = u * scratchCap;
                counts[j] = count;
                if (m == 8) rotateQuery(cache, s, 0, t, h, count - 1, qs, j * headDim, worker);
                else {
                    rotateQuery(cache, s, 0, t, h, count - 1, qr, worker);
                    scores(qr, keys, headDim, count, att, rows[j]);
                }
            }
            if (m == 8) scoresEight(qs, keys, headDim, counts[7], att, rows);
            for (int j = 0; j < m; j++) scaleBiasMax(cache, s, rows[j] / scratchCap, counts[j]);
        }
    }

    /**
     * Conversation b's token t (its query in row b * span + t) for head h into dst, rotated to the
     * position of the stream's entry {@code self} (copied in a layer without RoPE), times the
     * attention temperature at its true position where the model has one.
     */
    private void rotateQuery(KvCache cache, KvStream s, int b, int t, int h, int self, float[] dst, int worker) {
        rotateQuery(cache, s, b, t, h, self, dst, 0, worker);
    }

    /** {@link #rotateQuery} into {@code dst[dOff .. dOff + headDim)}. */
    private void rotateQuery(KvCache cache, KvStream s, int b, int t, int h, int self, float[] dst, int dOff, int worker) {
        int src = (b * pass.span + t) * qDim + h * headDim;
        LlamaRope rope = layerRope[pass.layer];
        if (rope == null) System.arraycopy(q, src, dst, dOff, headDim);
        else if (cache.positionMode() == PositionMode.ORIGINAL) rope.rotateAt(q, src, dst, dOff, s.positions()[self], ropeScratch[worker]);
        else rope.rotate(q, src, dst, dOff, self);
        if (temperature != null) {
            float f = temperature.at(s.positions()[self]);
            if (f != 1f) for (int d = 0; d < headDim; d++) dst[dOff + d] *= f;
        }
    }

    /** The unit's first {@code count} scores scaled, plus eq. 9's bias when the cache modulates; their max into unitMax. */
    private void scaleBiasMax(KvCache cache, KvStream s, int u, int count) {
        int o = u * scratchCap;
        float max = AttentionKernels.scaleBiasMax(att, o, count, attnScale, cache.modulated() ? s.logitBias() : null);
        int window = layerWindow[pass.layer];
        if (window > 0) max = maskOutsideWindow(s, o, count, window);
        unitMax[u] = max;
    }

    /**
     * A sliding-window layer: the unit's scores of entries at positions {@code window} or more
     * before its query's (entry count - 1) become -inf, whatever the cache holds (a key evicted
     * or not, its weight is then exactly 0); returns the max of the rest.
     */
    private float maskOutsideWindow(KvStream s, int o, int count, int window) {
        long[] pos = s.positions();
        long oldest = pos[count - 1] - window; // the newest position no longer seen
        float[] row = att;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            if (pos[i] <= oldest) row[o + i] = Float.NEGATIVE_INFINITY;
            else if (row[o + i] > max) max = row[o + i];
        }
        return max;
    }

    /**
     * Phase 2: each unit's softmax (its row becomes exp(z - max), 1/sum kept) and its weighted
     * values. The phase visits the units group-inner, v = (conversation, KV head, token, query
     * head of the group), so that two query heads of a group at the same token are neighbours:
     * they read the same values, and {@link AttentionKernels#weightedValuesPair} loads each value
     * vector once for both. A pair cut by a block's end goes head by head (the same bits either way).
     */
    private void valuesRange(int worker, int from, int to) {
        int nb = pass.block, perConv = heads * nb, perKv = group * nb, l = pass.layer;
        for (int v = from; v < to; ) {
            int c = v / perConv, r = v % perConv, kvh = r / perKv, tb = r % perKv / group, j = r % group;
            int b = pass.conv0 + c, h = kvh * group + j, t = pass.from + tb;
            KvStream s = pass.caches[b].stream(l, kvh);
            int count = s.size() - (pass.span - 1 - t);
            // the scores phase's unit of (b, h, t): its row of att, its max and its 1/sum
            int u = c * perConv + h * nb + tb, out = (b * pass.span + t) * qDim + h * headDim;
            if (pairedValues && j + 1 < group && v + 1 < to) {
                int u2 = u + nb;   // head h + 1, same token
                weightedValuesPair(att, u * scratchCap, u2 * scratchCap, count, softmax(u, count, worker),
                        softmax(u2, count, worker), s.values(), headDim, attnOut, out);
                v += 2;
            } else {
                weightedValues(att, u * scratchCap, count, softmax(u, count, worker), s.values(), headDim, attnOut, out);
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
     * Phase 3, when the policy reads attention: per (conversation, KV head) unit, each token's
     * weights averaged over the group's query heads, handed to the cache in token order.
     */
    private void observeRange(int worker, int from, int to) {
        int nb = pass.block, l = pass.layer;
        float[] mean = groupRow[worker];
        for (int w = from; w < to; w++) {
            int c = w / kvHeads, kvh = w % kvHeads;
            KvCache cache = pass.caches[pass.conv0 + c];
            if (!cache.observing()) continue;
            KvStream s = cache.stream(l, kvh);
            for (int tb = 0; tb < nb; tb++) {
                int t = pass.from + tb, count = s.size() - (pass.span - 1 - t);
                java.util.Arrays.fill(mean, 0, count, 0f);
                for (int j = 0; j < group; j++) {
                    int u = (c * heads + kvh * group + j) * nb + tb, o = u * scratchCap;
                    float scale = unitInv[u] / group;
                    for (int i = 0; i < count; i++) mean[i] += att[o + i] * scale;
                }
                cache.observe(l, kvh, t, mean, count);
            }
        }
    }

    /** The output projection: blockOut = wo . attnOut. */
    private void outputProjRange(int worker, int from, int to) {
        product(weights.wo()[pass.layer], from, to, attnOut, qDim, pass.rows, blockOut, dim);
    }

    /** The residual add for rows [from, to): residual += blockOut, blockOut RMS-normalised first when the step has a post-block norm. */
    private void residualRange(int worker, int from, int to) {
        float[] post = pass.postNorm;
        if (post != null) for (int r = from; r < to; r++) rmsnorm(blockOut, r * dim, blockOut, r * dim, post, dim, config.normEps());
        for (int i = from * dim, end = to * dim; i < end; i++) residual[i] += blockOut[i];
    }

    /**
     * The feed-forward's two up projections for the same rows (their product: {@link
     * #activationRange}), into gate and up, or over a transposed batch into {@link #gateT} and
     * {@link #upT} ({@link #tiledActivationRange}).
     */
    private void ffnUpRange(int worker, int from, int to) {
        int l = pass.layer;
        if (pass.sharedBatch) {
            weights.wGate()[l].matmul(from, to, pass.batch, gateT);
            weights.wUp()[l].matmul(from, to, pass.batch, upT);
            return;
        }
        product(weights.wGate()[l], from, to, normed, dim, pass.rows, gate, hidden);
        product(weights.wUp()[l], from, to, normed, dim, pass.rows, up, hidden);
    }

    /**
     * The gated product for rows [from, to): gate = silu(gate) * up (SwiGLU) or gelu(gate) * up
     * (GeGLU) over whole rows, after the two up projections (a phase of its own so that each row
     * is split into vectors the same way whatever the threads' row ranges were).
     */
    private void activationRange(int worker, int from, int to) {
        if (gelu) for (int r = from; r < to; r++) geglu(gate, r * hidden, up, r * hidden, hidden);
        else for (int r = from; r < to; r++) swiglu(gate, r * hidden, up, r * hidden, hidden);
    }

    /**
     * {@link #activationRange} on the transposed gate and up ({@link #gateT}, {@link #upT}) for
     * their columns (hidden units) [from, to): each tile's lanes of those columns, whole vectors.
     * The lanes past the batch hold zeros (the products of the batch's zero padding) and stay so.
     */
    private void tiledActivationRange(int worker, int from, int to) {
        float[] g = gateT.data(), u = upT.data();
        int len = (to - from) * gateT.lanes();
        for (int t = 0; t < gateT.tiles(); t++) {
            if (gelu) geglu(g, gateT.at(t, from), u, upT.at(t, from), len);
            else swiglu(g, gateT.at(t, from), u, upT.at(t, from), len);
        }
    }

    /** The down projection: blockOut = down . gate. */
    private void ffnDownRange(int worker, int from, int to) {
        product(weights.wDown()[pass.layer], from, to, gate, hidden, pass.rows, blockOut, dim);
    }

    private void classifierRange(int worker, int from, int to) {
        weights.output().matmul(from, to, normed, 0, dim, 1, logits, 0, vocab);
    }

    private void rowClassifierRange(int worker, int from, int to) {
        product(weights.output(), from, to, normed, dim, pass.rows, rowLogits, vocab);
    }

    // ---- phase dispatch -----------------------------------------------------------------------

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
     * Every cut falls on a whole group of rows ({@link FloatTensor#ROW_GROUP}): SmolLM2's rows in
     * eight chunks (q, k and v's 960 cut at multiples of 120, o's 576 at 72) started half of the
     * chunks inside a group, whose panels then took the row-by-row fill and the generic kernel.
     */
    private void parallelRows(int n, LlamaWorkers.Body body, long work) {
        if (work < MIN_PARALLEL_WORK) body.run(0, 0, n);
        else workers.run(n, pass.sharedBatch ? workers.threads() * ROW_CHUNKS : workers.threads(), FloatTensor.ROW_GROUP, body);
    }

    private static final int ROW_CHUNKS = 4;

    /**
     * Before a phase of products over the pass's rows {@code src} (n rows of {@code cols}):
     * when the product takes the tiled path, transposes them once, in parallel, into
     * {@link #shared} for every call of the phase; otherwise the products read src themselves.
     */
    private void shareBatch(float[] src, int cols, int n) {
        pass.sharedBatch = FloatTensor.transposesBatch(n);
        if (!pass.sharedBatch) return;
        pass.batch = shared;
        shared.reset(src, 0, cols, n, cols);
        parallel(cols, transposePhase, (long) cols * n);
    }

    private void transposeRange(int worker, int from, int to) {
        shared.transpose(from, to);
    }

    /** The phase's product of {@code m}'s rows [a, b) with the n rows of src (cols wide), into out. */
    private void product(FloatTensor m, int a, int b, float[] src, int cols, int n, float[] out, int width) {
        if (pass.sharedBatch) m.matmul(a, b, pass.batch, out, 0, width);
        else m.matmul(a, b, src, 0, cols, n, out, 0, width);
    }

    /** Stops the worker threads. */
    @Override
    public void close() {
        workers.close();
    }
}
