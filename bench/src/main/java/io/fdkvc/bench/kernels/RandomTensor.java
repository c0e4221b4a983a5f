package io.fdkvc.bench.kernels;

import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import io.fdkvc.engine.tensor.Tensors;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

/**
 * The kernel benchmarks' weights: a rows x cols matrix of Gaussian values quantised to a type by
 * our own quantiser, in 64-byte-aligned native memory, and Gaussian input rows from the same
 * generator. Compiled with the benchmark that uses it (Java's source launcher finds this file
 * beside the one it runs).
 */
final class RandomTensor {
    private RandomTensor() {}

    static FloatTensor of(GgmlType type, int rows, int cols, Random r) {
        return Tensors.view(type, segment(Quantizer.quantize(type, gaussian(rows * cols, r))), rows, cols);
    }

    /**
     * Refuses a shape {@link #of} cannot build in this JVM: built as one float array, then
     * quantised, a matrix needs about 6 bytes a weight of heap.
     */
    static void checkShape(int rows, int cols) {
        if (rows < 1 || cols < 1 || (long) rows * cols > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("ROWS x COLS must be 1 to 2^31 - 9");
        long heap = Runtime.getRuntime().maxMemory();
        if ((long) rows * cols * 6 > heap) throw new IllegalArgumentException("ROWS x COLS needs about " + ((long) rows * cols * 6 >> 20) + " MiB, more than this JVM's " + (heap >> 20) + " MiB heap (-Xmx)");
    }

    static float[] gaussian(int n, Random r) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) v[i] = (float) r.nextGaussian();
        return v;
    }

    /** bytes copied into native memory aligned as a mapped GGUF file's tensors may be. */
    static MemorySegment segment(byte[] bytes) {
        MemorySegment seg = Arena.global().allocate(bytes.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, seg, 0, bytes.length);
        return seg;
    }
}
