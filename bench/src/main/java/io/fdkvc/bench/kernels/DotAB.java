package io.fdkvc.bench.kernels;

import java.lang.foreign.*;
import java.lang.invoke.*;
import java.net.*;
import java.nio.file.*;
import java.util.*;

/**
 * A/B of the batch-of-one product (decode) in one JVM: each CLASSDIR (a compiled copy of the
 * io.fdkvc.engine.tensor package, e.g. an older commit's) is loaded in its own class loader ahead
 * of engine/target/classes, and the variants run in turn for 0.3 s each until SECS have passed;
 * GMAC/s is the best 10M-MAC repetition of each. Alternating in one JVM keeps other processes' load
 * about equal for all variants, which separate runs on a shared machine do not.
 * usage (repository root, after scripts/run-bench has built the jar once):
 *   mkdir -p /tmp/old && git archive COMMIT engine/src/main/java/io/fdkvc/engine/tensor | tar -x -C /tmp/old
 *   javac --add-modules jdk.incubator.vector -cp engine/target/classes:core/target/classes -d /tmp/old/classes \
 *     /tmp/old/engine/src/main/java/io/fdkvc/engine/tensor/*.java
 *   scripts/run-bench kernels.DotAB Q4_K 2048 2048 12 /tmp/old/classes engine/target/classes
 */
public class DotAB {
    public static void main(String[] a) throws Throwable {
        String type = a[0]; int rows = Integer.parseInt(a[1]), cols = Integer.parseInt(a[2]); double secs = Double.parseDouble(a[3]);
        int nv = a.length - 4;
        Object[] tensors = new Object[nv]; MethodHandle[] mm = new MethodHandle[nv];
        Random r = new Random(1);
        float[] w = new float[rows * cols];
        for (int i = 0; i < w.length; i++) w[i] = (float) r.nextGaussian();
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        for (int v = 0; v < nv; v++) {
            URL[] urls = { Path.of(a[4 + v]).toUri().toURL(), Path.of("engine/target/classes").toUri().toURL(), Path.of("core/target/classes").toUri().toURL() };
            ClassLoader cl = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
            Class<?> gt = cl.loadClass("io.fdkvc.engine.tensor.GgmlType");
            Object t = gt.getMethod("valueOf", String.class).invoke(null, type);
            byte[] q = (byte[]) cl.loadClass("io.fdkvc.engine.tensor.Quantizer").getMethod("quantize", gt, float[].class).invoke(null, t, w);
            MemorySegment seg = Arena.global().allocate(q.length, 64);
            MemorySegment.copy(MemorySegment.ofArray(q), 0, seg, 0, q.length);
            tensors[v] = cl.loadClass("io.fdkvc.engine.tensor.Tensors").getMethod("view", gt, MemorySegment.class, int.class, int.class).invoke(null, t, seg, rows, cols);
            Class<?> ft = cl.loadClass("io.fdkvc.engine.tensor.FloatTensor");
            mm[v] = MethodHandles.publicLookup().findVirtual(ft, "matmul", MethodType.methodType(void.class, int.class, int.class, float[].class, int.class, int.class, int.class, float[].class, int.class, int.class)).bindTo(tensors[v]);
        }
        float[][] outs = new float[nv][rows];
        double[] best = new double[nv];
        int reps = Math.max(1, (int) (1e7 / ((long) rows * cols)));
        long end = System.nanoTime() + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
            for (int v = 0; v < nv; v++) {
                long tEnd = System.nanoTime() + 300_000_000L;
                while (System.nanoTime() < tEnd) {
                    long t0 = System.nanoTime();
                    for (int k = 0; k < reps; k++) mm[v].invokeExact(0, rows, x, 0, cols, 1, outs[v], 0, rows);
                    best[v] = Math.max(best[v], (double) reps * rows * cols / (System.nanoTime() - t0));
                }
            }
        }
        for (int v = 0; v < nv; v++) {
            double md = 0;
            for (int i = 0; i < rows; i++) md = Math.max(md, Math.abs(outs[v][i] - outs[0][i]));
            System.out.printf("%-5s %dx%d %-28s %6.2f GMAC/s  (max |diff| vs first %.2g)%n", type, rows, cols, a[4 + v], best[v], md);
        }
    }
}
