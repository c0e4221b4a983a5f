package io.fdkvc.bench.kernels;

/**
 * Time to sample one token from VOCAB logits (49,152 by default, SmolLM2's vocabulary), greedy,
 * at temperature 0.8, and at temperature 0.8 with top-p 0.9: the mean over 3,000 samples after
 * 3,000 of warm-up. The logits are Gaussian with standard deviation 3, fixed by a seed; the line
 * ends with the drawn tokens' sum modulo 7 (the same before and after a change that keeps the draws).
 * usage (repository root): scripts/run-bench kernels.SamplerBench [VOCAB]
 */
import io.fdkvc.engine.sampling.Sampler;

public class SamplerBench {
    public static void main(String[] a) {
        int vocab = BenchArgs.orRefuse("SamplerBench", "SamplerBench [VOCAB]", () -> {
            if (a.length > 1) throw new IllegalArgumentException("expected [VOCAB]");
            return a.length > 0 ? BenchArgs.whole("VOCAB", a[0], 1, 1 << 24) : 49_152;
        });
        float[] logits = new float[vocab];
        java.util.Random r = new java.util.Random(1);
        for (int i = 0; i < vocab; i++) logits[i] = (float) r.nextGaussian() * 3;
        String[] names = {"greedy", "temperature 0.8", "temperature 0.8, top-p 0.9"};
        Sampler[] samplers = {Sampler.greedy(vocab), new Sampler(vocab, 0.8f, 0, 1f, 1), new Sampler(vocab, 0.8f, 0, 0.9f, 1)};
        for (int k = 0; k < samplers.length; k++) {
            Sampler s = samplers[k];
            long sink = 0;
            for (int i = 0; i < 3000; i++) sink += s.sample(logits);
            int n = 3000;
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) sink += s.sample(logits);
            System.out.printf("%-28s %8.1f us per token  (draws %d)%n", names[k], (System.nanoTime() - t0) / 1e3 / n, sink % 7);
        }
    }
}
