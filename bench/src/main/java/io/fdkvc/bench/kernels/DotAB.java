package io.fdkvc.bench.kernels;

import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Random;

/**
 * A/B of two or more builds of {@code io.fdkvc.engine.tensor} in one JVM, on one thread: the product
 * of a ROWS x COLS matrix of TYPE with a batch of BATCH rows (1: decode's product; more: prefill's
 * tiled one). Each CLASSDIR is loaded in its own class loader ({@link TensorVariant}); the variants
 * run in turn for 0.3 s each until SECS have passed, so that other processes' load falls on all of
 * them alike. Per variant it prints the best wall-clock GMAC/s of one repetition (about 10M MACs)
 * and the median over the 0.3 s slices of GMAC per second of this thread's CPU time, which a
 * loaded machine distorts much less: time spent descheduled is not counted. (Thread CPU time is
 * user plus system time, read with nanosecond resolution; a kernel loop has no system time.
 * The JVM reads user time alone in clock ticks, too coarse for a slice.)
 * usage (repository root, after scripts/run-bench has built the jar once):
 *   mkdir -p /tmp/old && git archive COMMIT engine/src/main/java/io/fdkvc/engine/tensor | tar -x -C /tmp/old
 *   javac --add-modules jdk.incubator.vector -cp engine/target/classes:core/target/classes -d /tmp/old/classes \
 *     /tmp/old/engine/src/main/java/io/fdkvc/engine/tensor/*.java
 *   scripts/run-bench kernels.DotAB Q4_K 2048 2048 12 [BATCH] /tmp/old/classes engine/target/classes
 */
public class DotAB {
    public static void main(String[] a) throws Throwable {
        String usage = "DotAB TYPE ROWS COLS SECS [BATCH] CLASSDIR...";
        if (a.length < 5) BenchArgs.orRefuse("DotAB", usage, () -> { throw new IllegalArgumentException("expected at least 5 arguments, got " + a.length); });
        String type = a[0];
        int rows = BenchArgs.orRefuse("DotAB", usage, () -> BenchArgs.whole("ROWS", a[1], 1, 1 << 16));
        int cols = BenchArgs.orRefuse("DotAB", usage, () -> BenchArgs.whole("COLS", a[2], 1, 1 << 16));
        double secs = BenchArgs.orRefuse("DotAB", usage, () -> BenchArgs.seconds(a[3]));
        boolean hasBatch = a[4].chars().allMatch(Character::isDigit);
        int batch = hasBatch ? BenchArgs.orRefuse("DotAB", usage, () -> BenchArgs.whole("BATCH", a[4], 1, 256)) : 1;
        int first = hasBatch ? 5 : 4, nv = a.length - first;
        if (nv < 1) BenchArgs.orRefuse("DotAB", usage, () -> { throw new IllegalArgumentException("no CLASSDIR"); });
        MethodHandle[] mm = new MethodHandle[nv];
        for (int v = 0; v < nv; v++) mm[v] = TensorVariant.of(a[first + v], type, rows, cols, 1).matmul;
        float[] x = RandomTensor.gaussian(cols * batch, new Random(2));
        float[][] outs = new float[nv][rows * batch];
        double[] best = new double[nv];
        double[][] perCpu = new double[nv][(int) (secs / 0.3 / nv) + 2];
        int[] count = new int[nv];
        ThreadMXBean tm = ManagementFactory.getThreadMXBean();
        double macs = (double) rows * cols * batch;
        int reps = Math.max(1, (int) (1e7 / macs));
        long end = System.nanoTime() + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
            for (int v = 0; v < nv; v++) {
                long tEnd = System.nanoTime() + 300_000_000L, cpu0 = tm.getCurrentThreadCpuTime(), done = 0;
                while (System.nanoTime() < tEnd) {
                    long t0 = System.nanoTime();
                    for (int k = 0; k < reps; k++) mm[v].invokeExact(0, rows, x, 0, cols, batch, outs[v], 0, rows);
                    best[v] = Math.max(best[v], reps * macs / (System.nanoTime() - t0));
                    done += reps;
                }
                if (count[v] < perCpu[v].length) perCpu[v][count[v]++] = done * macs / (tm.getCurrentThreadCpuTime() - cpu0);
            }
        }
        for (int v = 0; v < nv; v++) {
            double md = 0;
            for (int i = 0; i < outs[v].length; i++) md = Math.max(md, Math.abs(outs[v][i] - outs[0][i]));
            double[] c = Arrays.copyOf(perCpu[v], count[v]);
            Arrays.sort(c);
            double cpu = c.length == 0 ? Double.NaN : c[c.length / 2];
            System.out.printf("%-5s %dx%d batch %d %-28s wall best %6.2f GMAC/s  CPU-time median %6.2f GMAC/s (%d slices)  max |diff| vs first %.2g%n",
                    type, rows, cols, batch, a[first + v], best[v], cpu, c.length, md);
        }
    }
}
