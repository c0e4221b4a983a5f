package io.fdkvc.engine.model;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The attention's weighted values for the four query heads of one KV group (the Llama-3.2-1B
 * shape: heads of 64 floats, groups of four) over a stream of {@code entries} values: each head
 * through {@link Llama#weightedValues} alone, against the heads in pairs through
 * {@link Llama#weightedValuesPair}, which loads each value vector once for two heads. In the
 * package of the kernels, which are package-private.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules=jdk.incubator.vector"})
public class AttentionValuesBenchmark {
    static final int HD = 64, HEADS = 4;

    @Param({"320", "2048"})
    public int entries;

    private float[] values, weights, out;

    @Setup
    public void setUp() {
        SplittableRandom r = new SplittableRandom(1);
        values = new float[entries * HD];
        for (int i = 0; i < values.length; i++) values[i] = (float) r.nextDouble(-1, 1);
        weights = new float[HEADS * entries];
        for (int i = 0; i < weights.length; i++) weights[i] = (float) r.nextDouble();
        out = new float[HEADS * HD];
    }

    @Benchmark
    public float[] headByHead() {
        for (int h = 0; h < HEADS; h++) Llama.weightedValues(weights, h * entries, entries, 1f, values, HD, out, h * HD);
        return out;
    }

    @Benchmark
    public float[] headPairs() {
        for (int h = 0; h < HEADS; h += 2) {
            Llama.weightedValuesPair(weights, h * entries, (h + 1) * entries, entries, 1f, 1f, values, HD, out, h * HD);
        }
        return out;
    }
}
