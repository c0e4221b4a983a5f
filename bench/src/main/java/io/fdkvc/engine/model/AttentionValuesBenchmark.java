package io.fdkvc.engine.model;

import io.fdkvc.bench.ShortRunDefaults;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The attention's weighted values for the four query heads of one KV group (the Llama-3.2-1B
 * shape: heads of 64 floats, groups of four) over a stream of {@code entries} values: each head
 * through {@link Llama#weightedValues} alone, against the heads in pairs through
 * {@link Llama#weightedValuesPair}, which loads each value vector once for two heads. In the
 * package of the kernels, which are package-private; the run settings are the project's
 * ({@link ShortRunDefaults}).
 */
public class AttentionValuesBenchmark extends ShortRunDefaults {
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
