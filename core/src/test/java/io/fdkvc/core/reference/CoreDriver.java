package io.fdkvc.core.reference;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.core.reference.SpecReference.EntryState;
import io.fdkvc.core.reference.SpecReference.NewEntry;
import io.fdkvc.core.reference.SpecReference.TurnInput;
import io.fdkvc.core.reference.SpecReference.TurnOutput;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a core {@link Policy} on a {@link KvStream} the way a user would: per turn, append the
 * turn's entries, call {@code endTurn}, then read the stream's state and the attention of the
 * mean query over the cache (eq. 9 modulated when the policy modulates).
 */
public final class CoreDriver {
    private final Policy policy;
    private final KvStream stream;
    private final int dim;
    private long nextPosition;

    /** @param longestTurn the most entries one turn appends (the stream's headroom) */
    public CoreDriver(PolicySpec spec, int dim, int longestTurn) {
        this.policy = spec.newPolicy();
        this.dim = dim;
        this.stream = new KvStream(dim, 0, dim, Math.max(1, spec.budget() + longestTurn), policy.unbounded());
    }

    public static List<TurnOutput> run(PolicySpec spec, int dim, List<TurnInput> turns) {
        CoreDriver driver = new CoreDriver(spec, dim, longestTurn(turns));
        List<TurnOutput> out = new ArrayList<>();
        for (TurnInput t : turns) out.add(driver.turn(t));
        return out;
    }

    public static int longestTurn(List<TurnInput> turns) {
        int longest = 0;
        for (TurnInput t : turns) longest = Math.max(longest, t.entries().size());
        return longest;
    }

    public Policy policy() {
        return policy;
    }

    public KvStream stream() {
        return stream;
    }

    public TurnOutput turn(TurnInput t) {
        for (NewEntry e : t.entries()) {
            stream.append(nextPosition++, e.key(), 0, null, 0, e.embeddingOrKey(), 0);
        }
        Turn turn = toTurn(t, dim);
        policy.endTurn(stream, turn);
        int n = stream.size();
        double[] w = new double[Math.max(1, n)];
        StreamAttention.weights(stream, n, turn.meanQuery(), 0, policy.modulatesAttention(), w);
        List<EntryState> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(new EntryState(stream.positions()[i], stream.c()[i], stream.rho()[i], stream.h()[i], w[i]));
        }
        List<Long> evicted = new ArrayList<>();
        for (long p : stream.evicted().toArray()) evicted.add(p);
        return new TurnOutput(entries, policy.alpha(), policy.loss(), evicted, null);
    }

    public static Turn toTurn(TurnInput t, int dim) {
        float[][] q = t.queries();
        float[] flat = new float[q.length * dim];
        for (int r = 0; r < q.length; r++) System.arraycopy(q[r], 0, flat, r * dim, dim);
        return Turn.of(flat, q.length, dim, t.queryEmbedding());
    }
}
