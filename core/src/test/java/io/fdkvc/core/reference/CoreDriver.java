package io.fdkvc.core.reference;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;
import io.fdkvc.core.reference.SpecReference.EntryState;
import io.fdkvc.core.reference.SpecReference.NewEntry;
import io.fdkvc.core.reference.SpecReference.TurnInput;
import io.fdkvc.core.reference.SpecReference.TurnOutput;
import io.fdkvc.core.replay.TraceReplay;
import java.util.ArrayList;
import java.util.List;

/**
 * The tests' side of {@link TraceReplay}, the replay loop {@code fdkvc trace} runs: it converts the
 * reference's turn inputs into replay steps and the replay's states into the reference's outputs,
 * so the differential tests check the very loop the command uses.
 */
public final class CoreDriver {
    private final TraceReplay replay;
    private final int dim;
    private long nextPosition;

    /** @param longestTurn the most entries one turn appends (the stream's headroom) */
    public CoreDriver(PolicySpec spec, int dim, int longestTurn) {
        this.replay = new TraceReplay(spec, dim, longestTurn);
        this.dim = dim;
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
        return replay.policy();
    }

    public KvStream stream() {
        return replay.stream();
    }

    public TurnOutput turn(TurnInput t) {
        List<TraceReplay.Entry> entries = new ArrayList<>(t.entries().size());
        for (NewEntry e : t.entries()) entries.add(new TraceReplay.Entry(nextPosition++, e.key(), e.embeddingOrKey()));
        float[][] q = t.queries();
        TraceReplay.TurnState st = replay.turn(new TraceReplay.Step(flatten(q), q.length, t.queryEmbedding(), entries));
        List<EntryState> out = new ArrayList<>(st.entries().size());
        for (TraceReplay.EntryState e : st.entries()) out.add(new EntryState(e.position(), e.c(), e.rho(), e.h(), e.weight()));
        List<Long> evicted = new ArrayList<>();
        for (long p : st.evicted()) evicted.add(p);
        return new TurnOutput(out, st.alpha(), st.loss(), evicted, null);
    }

    public static Turn toTurn(TurnInput t, int dim) {
        return Turn.of(flatten(t.queries()), t.queries().length, dim, t.queryEmbedding());
    }

    private static float[] flatten(float[][] q) {
        int d = q.length == 0 ? 0 : q[0].length;
        float[] flat = new float[q.length * d];
        for (int r = 0; r < q.length; r++) System.arraycopy(q[r], 0, flat, r * d, d);
        return flat;
    }
}
