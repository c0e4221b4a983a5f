package io.fdkvc.cli.engine;

import io.fdkvc.engine.sampling.Sampler;
import picocli.CommandLine.Option;

/** Temperature, top-k, top-p and seed of the sampler. */
public final class SamplingOptions {
    @Option(names = "--temperature", paramLabel = "T", defaultValue = "0.8",
            description = "softmax temperature; 0 = greedy; default: ${DEFAULT-VALUE}")
    public float temperature;

    @Option(names = "--top-p", paramLabel = "P", defaultValue = "0.9",
            description = "nucleus sampling mass in (0, 1]; 1 = off; default: ${DEFAULT-VALUE}")
    public float topP;

    @Option(names = "--top-k", paramLabel = "K", defaultValue = "0",
            description = "sample among the K most probable tokens; 0 = off; default: ${DEFAULT-VALUE}")
    public int topK;

    @Option(names = "--seed", paramLabel = "S", description = "random seed; default: drawn from the clock (and reported)")
    public Long seed;

    private long drawn;

    /** The seed in use: the given one, or one drawn once from the clock. */
    public long seed() {
        if (seed != null) return seed;
        if (drawn == 0) drawn = System.nanoTime() ^ System.currentTimeMillis();
        return drawn;
    }

    public Sampler newSampler(int vocab) {
        return new Sampler(vocab, temperature, topK, topP, seed());
    }
}
