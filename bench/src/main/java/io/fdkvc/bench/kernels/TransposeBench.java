package io.fdkvc.bench.kernels;

import io.fdkvc.engine.tensor.FloatTensor;

/**
 * One-thread speed of the prefill's batch transposition ({@link FloatTensor.TransposedBatch}): the
 * microseconds of the best of repeated transpositions of BATCH rows of COLS floats within SECONDS
 * seconds, and GB/s of floats moved (read once, written once). The engine transposes each layer's
 * inputs once per prompt chunk: at the 1B shape, three of 64 x 2048 and one of 64 x 8192 a layer.
 * usage (repository root): scripts/run-bench kernels.TransposeBench 64 2048,8192 [SECONDS]
 * Bad arguments exit 2.
 */
public final class TransposeBench {
    private TransposeBench() {}

    record Args(int batch, int[] cols, double seconds) {}

    public static void main(String[] a) {
        String usage = "TransposeBench BATCH COLS[,COLS...] [SECONDS], e.g. 64 2048,8192";
        Args args = BenchArgs.orRefuse("TransposeBench", usage, () -> {
            if (a.length < 2 || a.length > 3) throw new IllegalArgumentException("expected 2 or 3 arguments, got " + a.length);
            // the tiled path's batches: larger than the small-batch path's 8 rows
            int batch = BenchArgs.whole("BATCH", a[0], 9, 4096);
            String[] parts = a[1].split(",", -1);
            int[] cols = new int[parts.length];
            for (int i = 0; i < parts.length; i++) {
                cols[i] = BenchArgs.whole("COLS", parts[i].strip(), 1, 1 << 20);
                // the batch and its transposition (tiles padded to 64 rows) as floats on the heap
                long bytes = 4L * (2L * batch + 64) * cols[i], heap = Runtime.getRuntime().maxMemory();
                if (bytes > heap) throw new IllegalArgumentException("BATCH x COLS: " + batch + " x " + cols[i] + " needs about "
                        + (bytes >> 20) + " MiB, more than this JVM's " + (heap >> 20) + " MiB heap (-Xmx)");
            }
            return new Args(batch, cols, a.length > 2 ? BenchArgs.seconds(a[2]) : 3);
        });
        FloatTensor.TransposedBatch tb = new FloatTensor.TransposedBatch();
        for (int cols : args.cols()) {
            float[] x = new float[args.batch() * cols];
            for (int i = 0; i < x.length; i++) x[i] = i;
            double best = Double.MAX_VALUE;
            long end = System.nanoTime() + (long) (args.seconds() * 1e9);
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                tb.reset(x, 0, cols, args.batch(), cols);
                tb.transpose(0, cols);
                best = Math.min(best, System.nanoTime() - t0);
            }
            System.out.printf("%d x %d  %.1f us  %.1f GB/s%n", args.batch(), cols, best / 1e3, 8.0 * x.length / best);
        }
    }
}
