package io.fdkvc.core.replay;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import java.util.ArrayList;
import java.util.List;

/**
 * Replays a policy on one stream turn by turn, the way a user drives it: per turn, append the
 * turn's entries, call {@code endTurn}, then read the stream's state and the attention of the mean
 * query over the cache (eq. 9 modulated when the policy modulates). This is what
 * {@code fdkvc trace} prints ({@code shared/spec/trace-format.md}) and what the differential tests
 * compare with the spec's reference, so the command and the tests run the same loop.
 */
public final class TraceReplay {
    /** One new entry: its position (its index over the whole trace), key and embedding (the key when none). */
    public record Entry(long position, float[] key, float[] embedding) {}

    /** One turn: query rows (row-major, {@code rows x dim}), the optional query embedding, the new entries. */
    public record Step(float[] queries, int rows, float[] queryEmbedding, List<Entry> entries) {}

    /** One cached entry after a turn. */
    public record EntryState(long position, double c, double rho, double h, double weight) {}

    /** The cache after one turn; {@code evicted} lists positions in removal order. */
    public record TurnState(int turn, double alpha, double loss, long[] evicted, List<EntryState> entries) {}

    private final Policy policy;
    private final KvStream stream;
    private final int dim;
    private double[] weights = new double[1];
    private int turn;

    /** @param longestTurn the most entries one turn appends (the stream's headroom) */
    public TraceReplay(PolicySpec spec, int dim, int longestTurn) {
        this(spec, dim, longestTurn, Long.MAX_VALUE);
    }

    /**
     * @param longestTurn  the most entries one turn appends (the stream's headroom)
     * @param totalEntries the entries of the whole replay: the stream never holds more, so a budget
     *                     far above what the input holds costs nothing
     */
    public TraceReplay(PolicySpec spec, int dim, int longestTurn, long totalEntries) {
        this.policy = spec.newPolicy();
        this.dim = dim;
        long capacity = Math.min((long) spec.budget() + Math.max(1, longestTurn), Math.max(1, totalEntries));
        this.stream = new KvStream(dim, 0, dim, (int) capacity, policy.unbounded());
    }

    /** Replays every turn of {@code steps}. */
    public static List<TurnState> run(PolicySpec spec, int dim, List<Step> steps) {
        int longest = 0;
        long total = 0;
        for (Step s : steps) {
            longest = Math.max(longest, s.entries().size());
            total += s.entries().size();
        }
        TraceReplay r = new TraceReplay(spec, dim, longest, total);
        List<TurnState> out = new ArrayList<>(steps.size());
        for (Step s : steps) out.add(r.turn(s));
        return out;
    }

    public Policy policy() {
        return policy;
    }

    public KvStream stream() {
        return stream;
    }

    /** Runs one turn and returns the state after it. */
    public TurnState turn(Step step) {
        for (Entry e : step.entries()) stream.append(e.position(), e.key(), 0, null, 0, e.embedding(), 0);
        Turn input = Turn.of(step.queries(), step.rows(), dim, step.queryEmbedding());
        policy.endTurn(stream, input);
        int n = stream.size();
        if (weights.length < n) weights = new double[Math.max(n, 2 * weights.length)];
        StreamAttention.weights(stream, n, input.meanQuery(), 0, policy.modulatesAttention(), weights);
        List<EntryState> entries = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            entries.add(new EntryState(stream.position(i), stream.c()[i], stream.rho()[i], stream.h()[i], weights[i]));
        }
        return new TurnState(turn++, policy.alpha(), policy.loss(), stream.evicted().toArray(), entries);
    }
}
