package io.fdkvc.engine.modelwriter;

import java.util.SplittableRandom;

/**
 * The values of a model's tensors, produced a few rows at a time while the file is written:
 * {@code fill} puts rows {@code firstRow .. firstRow+count)} of {@code tensor} ({@code cols}
 * values each) into {@code into}.
 */
@FunctionalInterface
public interface Weights {
    void fill(TensorSpec tensor, long firstRow, int count, float[] into);

    /**
     * Seeded random values that keep activations in range through any number of layers: matrices
     * uniform in +-sqrt(3 / cols) (unit output variance for unit inputs), norm weights uniform in
     * [0.8, 1.2], biases in +-0.1. Each row has its own generator (from the seed, the tensor's
     * name and the row), so the values do not depend on how the rows are chunked.
     */
    static Weights random(long seed) {
        return (t, firstRow, count, into) -> {
            int cols = (int) t.cols();
            long nameHash = t.name().hashCode() * 0x9E3779B97F4A7C15L;
            double scale = t.role().matrix() ? Math.sqrt(3.0 / cols) : 0.1;
            for (int r = 0; r < count; r++) {
                SplittableRandom rnd = new SplittableRandom(seed ^ nameHash ^ (firstRow + r) * 0xBF58476D1CE4E5B9L);
                int o = r * cols;
                if (t.role().norm()) for (int i = 0; i < cols; i++) into[o + i] = (float) (1 + 0.2 * (rnd.nextDouble() * 2 - 1));
                else for (int i = 0; i < cols; i++) into[o + i] = (float) ((rnd.nextDouble() * 2 - 1) * scale);
            }
        };
    }

    /** This source, with norm weights of exactly one (the throughput shapes, where values do not matter). */
    default Weights withUnitNorms() {
        return (t, firstRow, count, into) -> {
            if (t.role().norm()) java.util.Arrays.fill(into, 0, (int) (count * t.cols()), 1f);
            else fill(t, firstRow, count, into);
        };
    }
}
