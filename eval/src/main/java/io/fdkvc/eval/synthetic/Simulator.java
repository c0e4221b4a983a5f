package io.fdkvc.eval.synthetic;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.math.VectorMath;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.core.policy.Turn;

/**
 * Runs one policy over one dialogue turn by turn and records its {@link Trajectory}
 * (docs/evaluation.md, "The simulation"). One simulator per worker thread: its buffers are reused
 * and a turn allocates nothing.
 */
public final class Simulator {
    private final GeneratorConfig c;
    private final float[] turnQueries;
    private final Turn turn;
    private final float[] readout;
    private double[] weights;

    public Simulator(GeneratorConfig config) {
        this.c = config;
        this.turnQueries = new float[config.queries() * config.dim()];
        this.turn = new Turn(config.dim(), config.dim());
        this.readout = new float[config.dim()];
        this.weights = new double[config.budget() + config.entriesPerTurn()];
    }

    /** A stream for {@code policy} under this configuration: bounded to B + n unless the policy is unbounded. */
    public KvStream newStream(Policy policy) {
        int d = c.dim();
        return policy.unbounded()
                ? new KvStream(d, d, 0, c.totalEntries(), true)
                : new KvStream(d, d, 0, c.budget() + c.entriesPerTurn(), false);
    }

    /** Runs a fresh instance of {@code spec} on {@code dlg}, writing {@code out}. */
    public void run(Dialogue dlg, PolicySpec spec, Trajectory out) {
        Policy policy = spec.newPolicy();
        run(dlg, policy, newStream(policy), out);
    }

    /**
     * Runs {@code policy} (a fresh instance: it carries per-dialogue state) on {@code dlg} with
     * {@code stream}, which is cleared first.
     */
    public void run(Dialogue dlg, Policy policy, KvStream stream, Trajectory out) {
        int d = c.dim(), n = c.entriesPerTurn(), m = c.queries(), turns = c.turns();
        stream.clear();
        out.clear();
        boolean modulated = policy.modulatesAttention();
        for (int t = 0; t < turns; t++) {
            for (int j = 0; j < n; j++) {
                int p = t * n + j;
                stream.append(p, dlg.keys, p * d, dlg.values, p * d);
            }
            System.arraycopy(dlg.queries, t * m * d, turnQueries, 0, m * d);
            turn.set(turnQueries, m, null);
            int label = dlg.turnLabel[t];
            int past = stream.scored();
            int size = stream.size();
            ensure(size);

            // What the model sees during turn t: C_{t-1} with its eq. 9 bias, plus the new entries (factor 1).
            // The softmax over the retained past alone is the same weights renormalised over the
            // past, and a cosine ignores scale: one pass gives both read-outs.
            StreamAttention.weights(stream, size, turn.meanQuery(), 0, modulated, weights);
            java.util.Arrays.fill(readout, 0f);
            accumulate(stream, 0, past);
            if (past > 0) {
                double pastMass = 0;
                for (int i = 0; i < past; i++) pastMass += weights[i];
                out.alignmentPast[t] = cosine(dlg.topic, t * d);
                out.pastMassOnCurrent[t] = Metrics.massOn(weights, dlg.entryLabel, stream.positions(), past, label) / pastMass;
            }
            accumulate(stream, past, size);
            out.alignment[t] = cosine(dlg.topic, t * d);

            policy.endTurn(stream, turn);
            out.retention[t] = Metrics.share(dlg.entryLabel, stream.positions(), stream.size(), label);
        }
        out.diversity = Metrics.diversity(dlg.entryLabel, stream.positions(), stream.size(), dlg.turnLabel, turns);
        out.finalSize = stream.size();
    }

    /** readout += sum of w_i v_i over entries [from, to), with the weights in {@link #weights}. */
    private void accumulate(KvStream s, int from, int to) {
        int d = c.dim();
        float[] v = s.values();
        for (int i = from; i < to; i++) VectorMath.axpy((float) weights[i], v, i * d, readout, 0, d);
    }

    /** cos(readout, topic). */
    private double cosine(float[] topic, int topicOff) {
        int d = c.dim();
        double dot = VectorMath.dot(readout, 0, topic, topicOff, d);
        return VectorMath.cosine(dot, VectorMath.norm(readout, 0, d), VectorMath.norm(topic, topicOff, d));
    }

    private void ensure(int n) {
        if (weights.length < n) weights = new double[Math.max(n, 2 * weights.length)];
    }
}
