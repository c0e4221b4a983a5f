package io.fdkvc.bench;

import io.fdkvc.bench.kernels.TensorVariant;
import java.lang.invoke.MethodHandle;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The quantised weight types of llama-quantize's Q4_K_M preset (Q4_K, Q6_K; Q5_0 where a row is
 * not a multiple of 256) in their two products on one thread: {@code matvec}, decode's batch of
 * one (one pass over the weights, x prepared once), and {@code matmul}, prefill's tiled product
 * over a chunk of 64 rows (panels dequantised, then multiplied). Shapes ROWSxCOLS: the
 * Llama-3.2-1B projections (2048x2048 q and o, 8192x2048 gate and up, 2048x8192 down) and the
 * SmolLM2-135M ones (576 columns: Q5_0).
 *
 * <p>{@code classes} names a directory of compiled {@code io.fdkvc.engine.tensor} classes (an older
 * build, see {@code kernels.DotAB}'s usage) to measure instead of the engine on the class path
 * (empty): {@code -p classes=,/tmp/old/classes} compares the two builds in one run.
 * {@code scripts/run-bench jmh QuantKernelsBenchmark -p type=Q4_K -p shape=2048x8192}
 */
public class QuantKernelsBenchmark extends ShortRunDefaults {
    @Param({"Q4_K", "Q6_K"})
    public String type;

    @Param({"2048x2048", "2048x8192"})
    public String shape;

    @Param({""})
    public String classes;

    static final int CHUNK = 64;

    private MethodHandle matmul;
    private int rows, cols;
    private float[] x, out;

    @Setup
    public void setUp() {
        String[] rc = shape.split("x");
        rows = Integer.parseInt(rc[0]);
        cols = Integer.parseInt(rc[1]);
        matmul = TensorVariant.of(classes, type, rows, cols, 1).matmul;
        SplittableRandom r = new SplittableRandom(2);
        x = new float[CHUNK * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        out = new float[CHUNK * rows];
    }

    @Benchmark
    public float[] matvec() throws Throwable {
        matmul.invokeExact(0, rows, x, 0, cols, 1, out, 0, rows);
        return out;
    }

    @Benchmark
    public float[] matmul() throws Throwable {
        matmul.invokeExact(0, rows, x, 0, cols, CHUNK, out, 0, rows);
        return out;
    }
}
