package io.fdkvc.core.policy;

/**
 * The attention weights a model actually computed during one turn, over one stream, as a caller
 * that runs the model hands them to a policy ({@link Turn#observed()}): each query row's softmax
 * over every entry it attended to, after the rotary embedding and with the eq. 9 logit bias,
 * averaged over the query heads of the stream's KV group. A row attends to the entries scored at
 * earlier turns and to the turn's own entries up to its own token, so the weights of one row
 * sum to 1 over both together.
 *
 * <p>Two sums per entry (index i of the stream at the end of the turn, before the policy
 * evicts): {@link #sum()} over all of the turn's query rows, and {@link #recent()} over its last
 * {@link #recentRows()} rows (as many as the policy asked for with
 * {@link Policy#recentAttentionRows()}). An entry receives nothing from rows before its own.
 *
 * <p>A policy that finds observed attention uses it instead of recomputing attention from the
 * turn's query rows and the stream's keys (the spec's definition, which the trace and the
 * simulations use); where the two differ is documented in {@code docs/engine-policies.md}.
 * Mutable and reused turn after turn, so that an engine fills it without allocating.
 */
public final class ObservedAttention {
    private float[] sum;
    private float[] recent;
    private int entries;
    private int rows;
    private int recentRows;

    /** @param capacity entries the arrays hold at first (they grow with {@link #ensure}) */
    public ObservedAttention(int capacity) {
        if (capacity < 0) throw new IllegalArgumentException("capacity must be >= 0, got " + capacity);
        sum = new float[capacity];
        recent = new float[capacity];
    }

    /** Makes the arrays hold at least {@code capacity} entries, keeping their contents. */
    public void ensure(int capacity) {
        if (capacity <= sum.length) return;
        int n = Math.max(capacity, 2 * sum.length);
        sum = java.util.Arrays.copyOf(sum, n);
        recent = java.util.Arrays.copyOf(recent, n);
    }

    /**
     * Declares what the arrays hold for the turn that is ending: weights over {@code entries}
     * entries, {@code rows} query rows in {@link #sum()}, the last {@code recentRows} of them in
     * {@link #recent()}.
     */
    public void set(int entries, int rows, int recentRows) {
        if (entries < 0 || entries > sum.length) throw new IllegalArgumentException("entries " + entries + " outside 0.." + sum.length);
        if (rows < 1) throw new IllegalArgumentException("a turn has at least one query row, got " + rows);
        if (recentRows < 0 || recentRows > rows) throw new IllegalArgumentException("recentRows " + recentRows + " outside 0.." + rows);
        this.entries = entries;
        this.rows = rows;
        this.recentRows = recentRows;
    }

    /** Entry i's attention summed over all of the turn's query rows, for i below {@link #entries()}. */
    public float[] sum() { return sum; }
    /** Entry i's attention summed over the turn's last {@link #recentRows()} query rows. */
    public float[] recent() { return recent; }
    /** Entries covered: the stream's size at the end of the turn. */
    public int entries() { return entries; }
    /** Query rows of the turn. */
    public int rows() { return rows; }
    /** Rows summed in {@link #recent()}. */
    public int recentRows() { return recentRows; }
    /** Bytes of the arrays. */
    public long bytes() { return 4L * (sum.length + recent.length); }
}
