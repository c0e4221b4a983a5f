package io.fdkvc.engine.sampling;

import io.fdkvc.core.param.ParameterException;
import java.util.SplittableRandom;

/**
 * Picks the next token from a row of logits: greedy at temperature 0, otherwise a seeded draw
 * from the temperature softmax restricted to the top-k tokens and then to the smallest prefix
 * whose probability mass reaches top-p (nucleus).
 *
 * <p>All scratch arrays are allocated once for the vocabulary, so sampling a token allocates
 * nothing; the logits are left untouched. Not thread-safe: one sampler per generation.
 */
public final class Sampler {
    private final int vocab;
    private final float temperature;
    private final int topK;
    private final float topP;
    private final SplittableRandom random;
    // candidate ids and their probabilities; only [0, n) is meaningful after a filter step
    private final int[] ids;
    private final float[] probs;

    /**
     * @param vocab       logits per row
     * @param temperature 0 for greedy, otherwise > 0
     * @param topK        keep the k most probable tokens; 0 keeps all
     * @param topP        nucleus mass in (0, 1]; 1 keeps all
     * @param seed        seed of the random stream (same seed, same draws)
     */
    public Sampler(int vocab, float temperature, int topK, float topP, long seed) {
        if (vocab < 1) throw new IllegalArgumentException("vocab must be >= 1");
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new ParameterException("temperature", "must be a finite number >= 0, got " + temperature);
        }
        if (topK < 0) throw new ParameterException("topK", "must be >= 0 (0: off), got " + topK);
        if (!(topP > 0 && topP <= 1)) throw new ParameterException("topP", "must be in (0, 1], got " + topP);
        this.vocab = vocab;
        this.temperature = temperature;
        this.topK = topK;
        this.topP = topP;
        this.random = new SplittableRandom(seed);
        this.ids = new int[vocab];
        this.probs = new float[vocab];
    }

    /** One pass, plain and allocation-free; the error path alone builds a message. */
    private static void checkFinite(float[] logits, int vocab) {
        float acc = 0;
        for (int i = 0; i < vocab; i++) acc += logits[i] * 0f; // NaN iff some logit is NaN or infinite
        if (acc != acc) {
            int i = 0;
            while (Float.isFinite(logits[i])) i++;
            throw new io.fdkvc.engine.ModelFormatException("the model computed a non-finite logit (" + logits[i] + " for token " + i
                    + "): its weights overflow float32 on this input");
        }
    }

    /** A greedy sampler (temperature 0). */
    public static Sampler greedy(int vocab) {
        return new Sampler(vocab, 0f, 0, 1f, 0);
    }

    public boolean greedy() {
        return temperature == 0;
    }

    /**
     * The next token for {@code logits[0 .. vocab)}. Non-finite logits (from weights that
     * overflow at run time; NaN/Inf stored weights are refused at load) are an error, not a token.
     */
    public int sample(float[] logits) {
        checkFinite(logits, vocab);
        if (temperature == 0) return argmax(logits, vocab);
        // softmax at the temperature, max subtracted for range
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) if (logits[i] > max) max = logits[i];
        double sum = 0;
        float invT = 1f / temperature;
        for (int i = 0; i < vocab; i++) {
            float e = (float) Math.exp((logits[i] - max) * invT);
            probs[i] = e;
            ids[i] = i;
            sum += e;
        }
        int n = vocab;
        double mass = sum;
        if (topK > 0 && topK < n) {
            selectTop(ids, probs, 0, n - 1, topK);
            n = topK;
            mass = 0;
            for (int i = 0; i < n; i++) mass += probs[i];
        }
        if (topP < 1) {
            // Tokens below (1 - p) / (n - 1) of the mass can never be inside the nucleus (the
            // nucleus of mass p ends before any such token), so drop them before sorting.
            if (n > 1) {
                float cutoff = (float) ((1 - topP) / (n - 1) * mass);
                int m = 0;
                for (int i = 0; i < n; i++) {
                    if (probs[i] >= cutoff) {
                        ids[m] = ids[i];
                        probs[m] = probs[i];
                        m++;
                    }
                }
                if (m > 0) n = m;
            }
            sortDescending(ids, probs, 0, n - 1);
            double target = topP * mass, acc = 0;
            int last = n - 1;
            for (int i = 0; i < n; i++) {
                acc += probs[i];
                if (acc >= target) {
                    last = i;
                    break;
                }
            }
            n = last + 1;
            mass = acc;
        }
        double r = random.nextDouble() * mass, acc = 0;
        for (int i = 0; i < n; i++) {
            acc += probs[i];
            if (r < acc) return ids[i];
        }
        return ids[n - 1]; // rounding: r landed on the upper edge
    }

    /** The first index of the largest value (as llama2.c's run.c does). */
    public static int argmax(float[] x, int n) {
        int best = 0;
        float max = x[0];
        for (int i = 1; i < n; i++) {
            if (x[i] > max) {
                max = x[i];
                best = i;
            }
        }
        return best;
    }

    /** Quickselect: afterwards the k largest probabilities are in [lo, lo + k), in no order. */
    static void selectTop(int[] ids, float[] p, int lo, int hi, int k) {
        int target = lo + k - 1; // the k-th largest lands here
        while (lo < hi) {
            int mid = partition(ids, p, lo, hi);
            if (mid == target) return;
            if (mid < target) lo = mid + 1; else hi = mid - 1;
        }
    }

    /** Sorts [lo, hi] by probability, largest first (ties: smaller id first). */
    static void sortDescending(int[] ids, float[] p, int lo, int hi) {
        while (lo < hi) {
            if (hi - lo < 16) {
                insertion(ids, p, lo, hi);
                return;
            }
            int mid = partition(ids, p, lo, hi);
            // recurse into the smaller half, loop on the larger: O(log n) stack
            if (mid - lo < hi - mid) {
                sortDescending(ids, p, lo, mid - 1);
                lo = mid + 1;
            } else {
                sortDescending(ids, p, mid + 1, hi);
                hi = mid - 1;
            }
        }
    }

    private static boolean before(int[] ids, float[] p, int a, int b) {
        return p[a] > p[b] || (p[a] == p[b] && ids[a] < ids[b]);
    }

    private static void insertion(int[] ids, float[] p, int lo, int hi) {
        for (int i = lo + 1; i <= hi; i++) {
            int id = ids[i];
            float v = p[i];
            int j = i - 1;
            while (j >= lo && (p[j] < v || (p[j] == v && ids[j] > id))) {
                ids[j + 1] = ids[j];
                p[j + 1] = p[j];
                j--;
            }
            ids[j + 1] = id;
            p[j + 1] = v;
        }
    }

    /** Lomuto partition around the median of three; returns the pivot's final index. */
    private static int partition(int[] ids, float[] p, int lo, int hi) {
        int mid = (lo + hi) >>> 1;
        if (before(ids, p, mid, lo)) swap(ids, p, mid, lo);
        if (before(ids, p, hi, lo)) swap(ids, p, hi, lo);
        if (before(ids, p, mid, hi)) swap(ids, p, mid, hi);
        // now p[hi] is the median of the three
        int store = lo;
        for (int i = lo; i < hi; i++) {
            if (before(ids, p, i, hi)) swap(ids, p, i, store++);
        }
        swap(ids, p, store, hi);
        return store;
    }

    private static void swap(int[] ids, float[] p, int a, int b) {
        int t = ids[a];
        ids[a] = ids[b];
        ids[b] = t;
        float f = p[a];
        p[a] = p[b];
        p[b] = f;
    }
}
