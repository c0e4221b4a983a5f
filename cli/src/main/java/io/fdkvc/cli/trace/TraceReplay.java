package io.fdkvc.cli.trace;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.Turn;
import java.util.ArrayList;
import java.util.List;

/** Replays a validated trace on one stream and returns each turn's state. */
public final class TraceReplay {
    private TraceReplay() {}

    /** The cache after one turn, as the trace format's output line describes it. */
    public record TurnState(int turn, double alpha, double loss, List<Object> evicted, List<EntryState> entries) {}

    public record EntryState(Object id, long position, double c, double rho, double h, double weight) {}

    public static List<TurnState> replay(Trace trace) {
        Policy policy = trace.policy().newPolicy();
        int dim = trace.dim();
        KvStream s = new KvStream(dim, 0, dim, trace.policy().budget() + Math.max(1, trace.longestTurn()), policy.unbounded());
        List<TurnState> out = new ArrayList<>();
        double[] weights = new double[0];
        for (int t = 0; t < trace.turns().size(); t++) {
            Trace.TraceTurn turn = trace.turns().get(t);
            for (Trace.TraceEntry e : turn.entries()) {
                s.append(e.position(), e.key(), 0, null, 0, e.embedding(), 0);
            }
            Turn input = Turn.of(turn.queries(), turn.rows(), dim, turn.queryEmbedding());
            policy.endTurn(s, input);

            List<Object> evicted = new ArrayList<>();
            for (int k = 0; k < s.evicted().size(); k++) evicted.add(trace.idNodes().get((int) s.evicted().get(k)));
            int n = s.size();
            if (weights.length < n) weights = new double[Math.max(n, 2 * weights.length)];
            StreamAttention.weights(s, n, input.meanQuery(), 0, policy.modulatesAttention(), weights);
            List<EntryState> entries = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long pos = s.position(i);
                entries.add(new EntryState(trace.idNodes().get((int) pos), pos, s.c()[i], s.rho()[i], s.h()[i], weights[i]));
            }
            out.add(new TurnState(t, policy.alpha(), policy.loss(), evicted, entries));
        }
        return out;
    }
}
