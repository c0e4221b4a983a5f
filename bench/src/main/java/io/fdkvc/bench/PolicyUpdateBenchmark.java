package io.fdkvc.bench;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.cache.StreamAttention;
import io.fdkvc.core.math.VectorMath;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.Turn;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * One FD-KVC turn update on a stream holding |C| entries, against the attention of one query over
 * the same stream (logits, softmax, weighted sum of values): the work a transformer does per
 * token and KV head. The update runs once per turn; attention runs once per token.
 *
 * <p>Steady state: each update first tops the stream up to |C| + 1 entries (one new entry per
 * turn, usually), then evicts back to the budget |C|.
 */
public class PolicyUpdateBenchmark extends ShortRunDefaults {
    @Param({"256", "1024", "4096", "16384"})
    public int entries;

    @Param({"64", "128"})
    public int dim;

    @Param({"fdkvc"})
    public String policy;

    private KvStream stream;
    private Policy fdkvc;
    private Turn turn;
    private float[] pool;
    private float[] query;
    private double[] weights;
    private float[] readout;
    private long nextPosition;
    private int poolRows;
    private int poolCursor;

    @Setup(Level.Trial)
    public void setup() {
        SplittableRandom r = new SplittableRandom(42);
        poolRows = 1024;
        pool = new float[poolRows * dim];
        for (int i = 0; i < pool.length; i++) pool[i] = (float) r.nextGaussian();
        query = new float[dim];
        for (int i = 0; i < dim; i++) query[i] = (float) r.nextGaussian();
        fdkvc = PolicyRegistry.spec(policy, entries).newPolicy();
        stream = new KvStream(dim, dim, 0, entries + 1, false);
        turn = Turn.of(query, 1, dim, null);
        weights = new double[entries + 1];
        readout = new float[dim];
        // Fill the stream to its budget, one scored turn at a time, so every entry has scores.
        while (stream.size() < entries) {
            appendOne();
            fdkvc.endTurn(stream, turn);
        }
    }

    private void appendOne() {
        int row = poolCursor++ % poolRows;
        stream.append(nextPosition++, pool, row * dim, pool, row * dim);
    }

    /** One turn: top up to |C| + 1 entries, then the full FD-KVC update and eviction. */
    @Benchmark
    public int fdkvcTurnUpdate() {
        while (stream.size() <= entries) appendOne();
        fdkvc.endTurn(stream, turn);
        return stream.size();
    }

    /** One query attending over the stream (what a transformer does per token and KV head). */
    @Benchmark
    public float attentionOneQuery() {
        int n = stream.size();
        StreamAttention.weights(stream, n, query, 0, true, weights);
        java.util.Arrays.fill(readout, 0f);
        float[] values = stream.values();
        for (int i = 0; i < n; i++) VectorMath.axpy((float) weights[i], values, i * dim, readout, 0, dim);
        return readout[0];
    }
}
