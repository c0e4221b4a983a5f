package io.fdkvc.engine.tensor;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import jdk.jfr.Recording;

/**
 * Run in a fresh JVM by {@link KernelInliningTest}: multiplies a small matrix of each weight type
 * by one vector (the decode's products), by a batch of 3 (continuous batching's and a short
 * prompt's small-batch products: two batch rows at a time, then the odd one alone) and by a
 * batch of 64 (the prefill's tiled product) until C2 has compiled the kernels, recording the
 * JIT's compilations and inlining decisions (JFR) into the file its second argument names, so
 * that the test can read what C2 did and did not inline into them. The weights lie in native
 * memory, as a model's do (a mapped file or an anonymous copy): C2 inlines by the types its
 * profile has seen, and heap segments in it as well would grow the kernels' parse with a second
 * segment type production never passes (once in about ten runs it then ran out of its node budget
 * in Q4_K's panel fill). Arguments: ROUNDS FILE. Prints "done" at the end.
 */
public final class KernelInliningMain {
    private KernelInliningMain() {}

    public static void main(String[] args) throws IOException {
        int rounds = Integer.parseInt(args[0]);
        Recording recording = new Recording();
        recording.enable("jdk.CompilerInlining");
        recording.enable("jdk.Compilation").withThreshold(Duration.ZERO);
        recording.start();
        int rows = 32, cols = 512, batch = 64;
        Random r = new Random(3);
        float[] x = new float[batch * cols], out = new float[batch * rows];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        double sink = 0;
        for (GgmlType type : GgmlType.values()) {
            float[] w = new float[rows * cols];
            for (int i = 0; i < w.length; i++) w[i] = (float) r.nextGaussian();
            byte[] bytes = Quantizer.quantize(type, w);
            MemorySegment weights = Arena.global().allocate(bytes.length, 64).copyFrom(MemorySegment.ofArray(bytes));
            FloatTensor t = Tensors.view(type, weights, rows, cols);
            for (int k = 0; k < rounds; k++) {
                t.matmul(0, rows, x, 0, cols, 1, out, 0, rows);
                if (k % 2 == 1) t.matmul(0, rows, x, 0, cols, 3, out, 0, rows);
                if (k % 16 == 0) t.matmul(0, rows, x, 0, cols, batch, out, 0, rows);
                sink += out[k % rows];
            }
        }
        recording.stop();
        recording.dump(Path.of(args[1]));
        System.out.println(Double.isNaN(sink) ? "NaN" : "done");
    }
}
