package io.fdkvc.bench.kernels;

/**
 * One-thread speed of dequantizeRow per weight type, the prefill's panel fill: Gweights/s of the
 * best of repeated passes over all ROWS rows within SECONDS seconds, and a hash of every
 * dequantised float's bits (the same hash before and after a change to a decoder means no bit
 * changed). The weights are 64-byte-aligned native memory, as a mapped GGUF file's; 1024 x 8192
 * of Q6_K is 6.7 MB, in L3 here, so this measures the decoder and not the memory.
 * usage (repository root): scripts/run-bench kernels.DequantBench Q6_K,Q4_K ROWS COLS [SECONDS]
 */
import io.fdkvc.engine.tensor.*;
import java.util.*;

public class DequantBench {
    public static void main(String[] a) {
        String usage = "DequantBench Q6_K,Q4_K ROWS COLS [SECONDS]";
        BenchArgs.Matrix m = BenchArgs.orRefuse("DequantBench", usage, () -> BenchArgs.matrix(a, 0));
        int rows = m.rows(), cols = m.cols();
        double seconds = m.seconds();
        for (GgmlType t : m.types()) {
            FloatTensor ft = RandomTensor.of(t, rows, cols, new Random(7));
            float[] out = new float[cols];
            long hash = 0;
            for (int r = 0; r < rows; r++) {
                ft.dequantizeRow(r, out, 0);
                for (float f : out) hash = hash * 31 + Float.floatToRawIntBits(f);
            }
            double best = 0;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                for (int r = 0; r < rows; r++) ft.dequantizeRow(r, out, 0);
                best = Math.max(best, (double) rows * cols / (System.nanoTime() - t0));
            }
            System.out.printf("%-6s %dx%d  %.2f Gweights/s  bits hash %016x%n", t.name(), rows, cols, best, hash);
        }
    }
}
