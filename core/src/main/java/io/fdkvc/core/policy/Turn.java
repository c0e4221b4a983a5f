package io.fdkvc.core.policy;

import io.fdkvc.core.math.VectorMath;

/**
 * What a policy sees of one turn for one stream: the turn's query rows (n x d, row-major), their
 * mean qbar, and the query embedding used for topical similarity (by default qbar).
 *
 * <p>Mutable and reusable so that an engine fills the same object every turn without allocating.
 */
public final class Turn {
    private final int dim;
    private final int embeddingDim;
    private float[] queries;
    private int rows;
    private final float[] meanQuery;
    private final float[] queryEmbedding;
    private ObservedAttention observed;

    public Turn(int dim, int embeddingDim) {
        if (dim < 1) throw new IllegalArgumentException("dim must be >= 1");
        this.dim = dim;
        this.embeddingDim = embeddingDim;
        this.meanQuery = new float[dim];
        this.queryEmbedding = new float[embeddingDim];
        this.queries = new float[0];
    }

    /** A turn with the given rows; {@code queryEmbedding} null means "the mean query". */
    public static Turn of(float[] queries, int rows, int dim, float[] queryEmbedding) {
        int ed = queryEmbedding == null ? dim : queryEmbedding.length;
        Turn t = new Turn(dim, ed);
        t.set(queries, rows, queryEmbedding);
        return t;
    }

    /**
     * Sets the turn's query rows (the array is used, not copied) and the query embedding (copied;
     * null means the mean query, which then requires embeddingDim == dim).
     */
    public void set(float[] queries, int rows, float[] queryEmbedding) {
        if (rows < 1) throw new IllegalArgumentException("a turn needs at least one query row");
        if (queries.length < rows * dim) throw new IllegalArgumentException("queries hold fewer than rows * dim floats");
        this.queries = queries;
        this.rows = rows;
        VectorMath.meanRows(queries, rows, dim, meanQuery);
        if (queryEmbedding == null) {
            if (embeddingDim != dim) throw new IllegalArgumentException("no query embedding given and embeddingDim != dim");
            System.arraycopy(meanQuery, 0, this.queryEmbedding, 0, dim);
        } else {
            if (queryEmbedding.length != embeddingDim) throw new IllegalArgumentException("query embedding has length "
                    + queryEmbedding.length + ", expected " + embeddingDim);
            System.arraycopy(queryEmbedding, 0, this.queryEmbedding, 0, embeddingDim);
        }
    }

    /** Floats per query row: the stream's key dimension d. */
    public int dim() { return dim; }
    /** Floats of {@link #queryEmbedding()}: the stream's embedding dimension. */
    public int embeddingDim() { return embeddingDim; }
    /** Query rows of this turn: one per token (the engine), one or more per turn (trace, simulation). */
    public int rows() { return rows; }
    /**
     * The turn's query rows, row-major: row r starts at {@code r * dim()}; only the first
     * {@link #rows()} rows are this turn's (the array may be longer). In the engine each row is a
     * token's query before RoPE, averaged over the KV head's query group. Read-only for a policy.
     */
    public float[] queries() { return queries; }
    /**
     * qbar_t, the mean of the turn's query rows ({@code dim()} floats): the query whose attention
     * over the stream FD-KVC adds to c (eq. 1) and attention-based baselines score with, when the
     * caller gives no {@link #observed()} attention. Read-only for a policy.
     */
    public float[] meanQuery() { return meanQuery; }
    /**
     * The turn's query embedding, ebar_q ({@code embeddingDim()} floats): what entries' embeddings
     * are compared with for topical similarity (FD-KVC's rho, eq. 3). The mean query unless the
     * caller gave another (the dialogue evaluation gives the utterance's sentence embedding).
     * Read-only for a policy.
     */
    public float[] queryEmbedding() { return queryEmbedding; }

    /**
     * The attention the model computed during this turn, when the caller runs one (the engine),
     * else null (the trace, the simulations): policies then compute attention from the query rows
     * as the spec defines it.
     */
    public ObservedAttention observed() { return observed; }

    /** Attaches (or, with null, removes) the observed attention; the caller fills it before each {@code endTurn}. */
    public void setObserved(ObservedAttention observed) { this.observed = observed; }
}
