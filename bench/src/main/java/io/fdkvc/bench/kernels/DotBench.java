package io.fdkvc.bench.kernels;

/**
 * One-thread speed of the decode product per weight type: GMAC/s of the best of repeated 5-call
 * runs over SECONDS seconds (the JIT needs several seconds to compile the kernels), at a batch of
 * BATCH rows (default 1; 2-8 are continuous batching's kernels).
 * usage (repository root): scripts/run-bench kernels.DotBench Q8_0,Q4_K,Q6_K ROWS COLS [SECONDS] [BATCH]
 */
import io.fdkvc.engine.tensor.*;
import java.util.*;

public class DotBench {
    public static void main(String[] a) {
        String usage = "DotBench Q8_0,Q4_K ROWS COLS [SECONDS] [BATCH]";
        BenchArgs.Matrix m = BenchArgs.orRefuse("DotBench", usage, () -> BenchArgs.matrix(a, 1));
        int batch = BenchArgs.orRefuse("DotBench", usage, () -> a.length > 4 ? BenchArgs.whole("BATCH", a[4], 1, 64) : 1);
        int rows = m.rows(), cols = m.cols();
        double seconds = m.seconds();
        for (GgmlType t : m.types()) {
            String tn = t.name();
            Random r = new Random(1);
            FloatTensor ft = RandomTensor.of(t, rows, cols, r);
            float[] x = RandomTensor.gaussian(cols * batch, r);
            float[] out = new float[rows * batch];
            double best = 0;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                int reps = 5;
                for (int k = 0; k < reps; k++) ft.matmul(0, rows, x, 0, cols, batch, out, 0, rows);
                long dt = System.nanoTime() - t0;
                best = Math.max(best, (double) reps * rows * cols * batch / dt);
            }
            // weight bytes read per second: each weight once per batch
            System.out.printf("%-6s %dx%d batch %d  %.2f GMAC/s  %.2f GB/s%n", tn, rows, cols, batch, best, best / batch * t.blockBytes / t.blockSize);
        }
    }
}
