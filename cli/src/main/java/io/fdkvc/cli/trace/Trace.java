package io.fdkvc.cli.trace;

import io.fdkvc.core.policy.PolicySpec;
import java.util.List;

/**
 * A validated policy-replay trace ({@code shared/spec/trace-format.md}).
 *
 * @param idNodes the id of every entry over the whole trace, by position, as given (a JSON string or integer)
 */
public record Trace(PolicySpec policy, int dim, List<TraceTurn> turns, List<Object> idNodes) {

    /** One turn: its query rows (row-major), the optional query embedding, and its new entries. */
    public record TraceTurn(float[] queries, int rows, float[] queryEmbedding, List<TraceEntry> entries) {}

    /** One new entry; {@code embedding} is its key when the trace gave none. */
    public record TraceEntry(long position, float[] key, float[] embedding) {}

    /** The largest number of entries any turn adds. */
    public int longestTurn() {
        int max = 0;
        for (TraceTurn t : turns) max = Math.max(max, t.entries().size());
        return max;
    }
}
