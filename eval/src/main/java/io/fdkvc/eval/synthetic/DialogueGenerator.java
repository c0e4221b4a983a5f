package io.fdkvc.eval.synthetic;

import java.util.SplittableRandom;

/**
 * Seeded generator of synthetic dialogues (docs/evaluation.md, "The generator"): per turn a topic
 * vector, n entries drawn around it and m query rows drawn around it. Deterministic in
 * (config, scenario, seed).
 */
public final class DialogueGenerator {
    private DialogueGenerator() {}

    /**
     * The seed of dialogue {@code index} of {@code scenario} in a run seeded with {@code runSeed}:
     * independent of how many dialogues, threads or policies the run has.
     */
    public static long dialogueSeed(long runSeed, Scenario scenario, int index) {
        long z = mix(runSeed + 0x9E3779B97F4A7C15L * (scenario.ordinal() + 1));
        return mix(z ^ (0xBF58476D1CE4E5B9L * (index + 1L)));
    }

    /** SplitMix64's finaliser: a bijective 64-bit mixer. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    public static Dialogue generate(GeneratorConfig c, Scenario scenario, long seed) {
        Dialogue d = new Dialogue(c);
        fill(d, scenario, seed);
        return d;
    }

    /** Overwrites {@code out} with the dialogue of (scenario, seed). */
    public static void fill(Dialogue out, Scenario scenario, long seed) {
        GeneratorConfig c = out.config;
        int d = c.dim(), turns = c.turns(), n = c.entriesPerTurn(), m = c.queries();
        SplittableRandom rnd = new SplittableRandom(seed);
        out.scenario = scenario;
        out.seed = seed;

        // Base topics first, so that a scenario's topics do not depend on its schedule.
        int k = scenario.baseTopics();
        float[] base = new float[k * d];
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < d; j++) base[i * d + j] = (float) rnd.nextGaussian();
            normalise(base, i * d, d);
        }
        schedule(scenario, turns, rnd, out.turnLabel);

        for (int t = 0; t < turns; t++) {
            int o = t * d;
            if (scenario == Scenario.GRADUAL_DRIFT) {
                double l = (double) t / (turns - 1);
                for (int j = 0; j < d; j++) out.topic[o + j] = (float) ((1 - l) * base[j] + l * base[d + j]);
                normalise(out.topic, o, d);
            } else {
                System.arraycopy(base, out.turnLabel[t] * d, out.topic, o, d);
            }
        }

        float kappa = (float) c.vectorNorm();
        double sigma = c.noise() / Math.sqrt(d); // per-coordinate sd: |xi| ~ 1, so sigma is a length ratio
        for (int t = 0; t < turns; t++) {
            for (int j = 0; j < n; j++) {
                int p = t * n + j;
                out.entryLabel[p] = out.turnLabel[t];
                around(out.topic, t * d, d, sigma, rnd, out.keys, p * d, kappa);
                around(out.topic, t * d, d, sigma, rnd, out.values, p * d, 1f);
            }
            for (int r = 0; r < m; r++) {
                around(out.topic, t * d, d, sigma, rnd, out.queries, (t * m + r) * d, kappa);
            }
        }
    }

    /** Topic labels by turn (the table of scenarios in docs/evaluation.md). */
    static void schedule(Scenario s, int turns, SplittableRandom rnd, int[] label) {
        switch (s) {
            case STABLE_TOPIC -> java.util.Arrays.fill(label, 0, turns, 0);
            case TOPIC_SHIFT -> {
                for (int t = 0; t < turns; t++) label[t] = t < turns / 2 ? 0 : 1;
            }
            case GRADUAL_DRIFT -> {
                for (int t = 0; t < turns; t++) label[t] = (double) t / (turns - 1) < 0.5 ? 0 : 1;
            }
            case TOPIC_RETURN -> {
                for (int t = 0; t < turns; t++) label[t] = t < turns / 3 ? 0 : t < 2 * turns / 3 ? 1 : 0;
            }
            case MIXED_TOPICS -> {
                int t = 0;
                int topic = rnd.nextInt(Scenario.MIXED_TOPIC_COUNT);
                while (t < turns) {
                    int len = 2 + rnd.nextInt(3); // 2, 3 or 4 turns
                    for (int i = 0; i < len && t < turns; i++) label[t++] = topic;
                    // another topic than the one just left, uniformly
                    topic = (topic + 1 + rnd.nextInt(Scenario.MIXED_TOPIC_COUNT - 1)) % Scenario.MIXED_TOPIC_COUNT;
                }
            }
        }
    }

    /** out[off..off+d) = scale * normalise(topic + N(0, sigma^2 I)). */
    private static void around(float[] topic, int tOff, int d, double sigma, SplittableRandom rnd,
                               float[] out, int off, float scale) {
        for (int j = 0; j < d; j++) out[off + j] = (float) (topic[tOff + j] + sigma * rnd.nextGaussian());
        normalise(out, off, d);
        if (scale != 1f) for (int j = 0; j < d; j++) out[off + j] *= scale;
    }

    private static void normalise(float[] x, int off, int d) {
        double s = 0;
        for (int j = 0; j < d; j++) s += (double) x[off + j] * x[off + j];
        if (s == 0) { // a zero draw has probability 0; keep the vector defined anyway
            x[off] = 1;
            return;
        }
        float inv = (float) (1 / Math.sqrt(s));
        for (int j = 0; j < d; j++) x[off + j] *= inv;
    }
}
