package io.fdkvc.bench.kernels;

/**
 * Speed of the batched product (prefill) per weight type and shape: GMAC/s of FloatTensor.matmul
 * over a batch of BATCH rows, the best of repeated runs over SECONDS seconds per shape (the JIT
 * needs a few seconds to compile the kernels). With THREADS > 1 the rows are split into contiguous
 * ranges, one per thread, run together as the model's workers do.
 * usage (repository root): scripts/run-bench kernels.GemmBench Q8_0,Q4_K 576x576,2048x2048 [SECONDS] [BATCH] [THREADS]
 * (ROWSxCOLS; a type whose block does not divide COLS is skipped)
 */
import io.fdkvc.engine.tensor.*;
import java.util.*;
import java.util.concurrent.*;

public class GemmBench {
    public static void main(String[] a) throws Exception {
        double seconds = a.length > 2 ? Double.parseDouble(a[2]) : 6;
        int batch = a.length > 3 ? Integer.parseInt(a[3]) : 64;
        int threads = a.length > 4 ? Integer.parseInt(a[4]) : 1;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        for (String tn : a[0].split(",")) {
            GgmlType t = GgmlType.valueOf(tn);
            for (String shape : a[1].split(",")) {
                int rows = Integer.parseInt(shape.split("x")[0]), cols = Integer.parseInt(shape.split("x")[1]);
                if (cols % t.blockSize != 0) continue;
                Random r = new Random(1);
                FloatTensor ft = RandomTensor.of(t, rows, cols, r);
                float[] x = RandomTensor.gaussian(batch * cols, r);
                float[] out = new float[batch * rows];
                double macs = (double) rows * cols * batch, best = 0;
                int reps = Math.max(1, (int) (2e8 / macs));
                List<Callable<Object>> parts = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    int from = (int) ((long) rows * i / threads), to = (int) ((long) rows * (i + 1) / threads);
                    parts.add(() -> {
                        for (int k = 0; k < reps; k++) ft.matmul(from, to, x, 0, cols, batch, out, 0, rows);
                        return null;
                    });
                }
                long end = System.nanoTime() + (long) (seconds * 1e9);
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    for (Future<Object> f : pool.invokeAll(parts)) f.get();
                    best = Math.max(best, reps * macs / (System.nanoTime() - t0));
                }
                System.out.printf("%-5s %5dx%-5d batch %d threads %d  %.1f GMAC/s%n", tn, rows, cols, batch, threads, best);
            }
        }
        pool.shutdown();
    }
}
