package io.fdkvc.engine.sampling;

import static io.fdkvc.engine.tensor.Simd.F;
import static io.fdkvc.engine.tensor.Simd.L;

import io.fdkvc.core.param.ParameterException;
import io.fdkvc.engine.tensor.Simd;
import java.util.SplittableRandom;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

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

    /**
     * One pass, a vector at a time and allocation-free (a scalar chain of dependent adds would be a
     * visible share of a token's sampling at a 49,152-token vocabulary); the error path alone builds a message.
     */
    private static void checkFinite(float[] logits, int vocab) {
        // x * 0 is NaN iff x is NaN or infinite, and a NaN survives any order of additions
        FloatVector v = FloatVector.zero(F);
        int i = 0;
        for (int up = F.loopBound(vocab); i < up; i += L) v = v.add(FloatVector.fromArray(F, logits, i).mul(0f));
        float acc = v.reduceLanes(VectorOperators.ADD);
        for (; i < vocab; i++) acc += logits[i] * 0f;
        if (acc != acc) {
            i = 0;
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
        numerators(logits, max(logits, vocab), 1f / temperature);
        double mass = sum(probs, vocab);
        int n = vocab;
        // the filters below reorder the candidates; without them candidate i is token i
        if (topK > 0 && topK < n || topP < 1) {
            for (int i = 0; i < vocab; i++) ids[i] = i;
        } else {
            return draw(mass, vocab, false);
        }
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
        return draw(mass, n, true);
    }

    /** A draw from candidates [0, n) in proportion to probs, whose sum is mass; their token ids or, unfiltered, their indices. */
    private int draw(double mass, int n, boolean filtered) {
        double r = random.nextDouble() * mass, acc = 0;
        for (int i = 0; i < n; i++) {
            acc += probs[i];
            if (r < acc) return filtered ? ids[i] : i;
        }
        return filtered ? ids[n - 1] : n - 1; // rounding: r landed on the upper edge
    }

    /** The largest of x[0 .. n) (finite values: any order of comparisons gives the same). */
    private static float max(float[] x, int n) {
        FloatVector m = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        int i = 0;
        for (int up = F.loopBound(n); i < up; i += L) m = m.max(FloatVector.fromArray(F, x, i));
        float max = m.reduceLanes(VectorOperators.MAX);
        for (; i < n; i++) if (x[i] > max) max = x[i];
        return max;
    }

    /**
     * Vocabularies from this size take the vector softmax; smaller ones the scalar loop. The
     * vector loop calls {@link Simd#exp}, which C2 inlines only where the loop ran hot while it
     * was profiled: compiled after many small vocabularies (tests sample 2 to 500 tokens), it
     * called exp out of line and boxed every vector (384 KB a token in one test JVM of two). With
     * small vocabularies kept out, the loop is profiled only where it runs at length.
     */
    static final int VECTOR_VOCAB = 1024;

    /**
     * probs[i] = e^((x[i] - max) * invT) for i < vocab: a vector at a time with {@link Simd#exp},
     * whose bits do not depend on how warm the JIT is (Math.exp once per logit would take most of
     * a token's sampling time at a large vocabulary; {@code kernels.SamplerBench} measures it), the rest in scalar code.
     */
    private void numerators(float[] x, float max, float invT) {
        int i = 0;
        if (vocab >= VECTOR_VOCAB) {
            for (int up = F.loopBound(vocab); i < up; i += L) Simd.exp(FloatVector.fromArray(F, x, i).sub(max).mul(invT)).intoArray(probs, i);
        }
        for (; i < vocab; i++) probs[i] = (float) Math.exp((x[i] - max) * invT);
    }

    /** The sum of p[0 .. n) in double, in a fixed order: four interleaved sums (four chains of additions instead of one), then added. */
    private static double sum(float[] p, int n) {
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int i = 0;
        for (; i + 3 < n; i += 4) {
            s0 += p[i];
            s1 += p[i + 1];
            s2 += p[i + 2];
            s3 += p[i + 3];
        }
        for (; i < n; i++) s0 += p[i];
        return (s0 + s1) + (s2 + s3);
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
