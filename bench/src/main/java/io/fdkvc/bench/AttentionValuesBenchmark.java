package io.fdkvc.bench;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The attention's weighted values for the four query heads of one KV group (the Llama-3.2-1B
 * shape: heads of 64 floats, groups of four) over a stream of {@code entries} values: each head
 * through {@code AttentionKernels.weightedValues} alone, against the heads in pairs through
 * {@code AttentionKernels.weightedValuesPair}, which loads each value vector once for two heads.
 * The kernels and their class are package-private in {@code engine.model}; rather than a class in
 * the engine's package here (a split package), they are reached through a private lookup into
 * that class, which the class path allows. A {@code static final} method handle called with {@code invokeExact} compiles to a
 * direct call, so the benchmark measures the kernels, not the lookup.
 */
public class AttentionValuesBenchmark extends ShortRunDefaults {
    static final int HD = 64, HEADS = 4;
    private static final MethodHandle WEIGHTED_VALUES = kernel("weightedValues",
            float[].class, int.class, int.class, float.class, float[].class, int.class, float[].class, int.class);
    private static final MethodHandle WEIGHTED_VALUES_PAIR = kernel("weightedValuesPair",
            float[].class, int.class, int.class, int.class, float.class, float.class, float[].class, int.class, float[].class, int.class);

    @Param({"320", "2048"})
    public int entries;

    private float[] values, weights, out;

    /** The engine's class of attention kernels (package-private, so named here). */
    static final String KERNELS = "io.fdkvc.engine.model.AttentionKernels";

    private static MethodHandle kernel(String name, Class<?>... parameters) {
        try {
            Class<?> kernels = Class.forName(KERNELS);
            return MethodHandles.privateLookupIn(kernels, MethodHandles.lookup())
                    .findStatic(kernels, name, MethodType.methodType(void.class, parameters));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(KERNELS + "." + name + " is gone or changed its signature; update this benchmark", e);
        }
    }

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
    public float[] headByHead() throws Throwable {
        for (int h = 0; h < HEADS; h++) WEIGHTED_VALUES.invokeExact(weights, h * entries, entries, 1f, values, HD, out, h * HD);
        return out;
    }

    @Benchmark
    public float[] headPairs() throws Throwable {
        for (int h = 0; h < HEADS; h += 2) {
            WEIGHTED_VALUES_PAIR.invokeExact(weights, h * entries, (h + 1) * entries, entries, 1f, 1f, values, HD, out, h * HD);
        }
        return out;
    }
}
