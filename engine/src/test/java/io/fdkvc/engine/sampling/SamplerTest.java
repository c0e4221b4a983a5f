package io.fdkvc.engine.sampling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.tensor.Simd;
import java.lang.management.ManagementFactory;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.FloatRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class SamplerTest {

    static float[] logitsOf(double... probs) {
        float[] l = new float[probs.length];
        for (int i = 0; i < probs.length; i++) l[i] = (float) Math.log(probs[i]);
        return l;
    }

    static double[] frequencies(Sampler s, float[] logits, int draws) {
        double[] f = new double[logits.length];
        for (int i = 0; i < draws; i++) f[s.sample(logits)] += 1.0 / draws;
        return f;
    }

    @Property
    void greedyIsTheFirstLargest(@ForAll @Size(min = 1, max = 200) float[] logits) {
        for (float x : logits) if (Float.isNaN(x)) return;
        int want = 0;
        for (int i = 1; i < logits.length; i++) if (logits[i] > logits[want]) want = i;
        assertThat(Sampler.greedy(logits.length).sample(logits)).isEqualTo(want);
    }

    @Property
    void topOneIsGreedyAtAnyTemperature(@ForAll @Size(min = 2, max = 300) float[] logits,
                                        @ForAll @FloatRange(min = 0.05f, max = 5f) float temperature,
                                        @ForAll long seed) {
        for (float x : logits) if (!Float.isFinite(x)) return;
        int best = Sampler.argmax(logits, logits.length);
        Sampler s = new Sampler(logits.length, temperature, 1, 1f, seed);
        for (int i = 0; i < 20; i++) assertThat(s.sample(logits)).isEqualTo(best);
    }

    /** Temperature 1 draws from softmax(logits); temperature 0.5 from probabilities squared (renormalised). */
    @Test
    void drawsFollowTheTemperatureSoftmax() {
        float[] l = logitsOf(0.1, 0.2, 0.3, 0.4);
        double[] f = frequencies(new Sampler(4, 1f, 0, 1f, 1), l, 100_000);
        assertThat(f[0]).isCloseTo(0.1, offset(0.005));
        assertThat(f[1]).isCloseTo(0.2, offset(0.005));
        assertThat(f[2]).isCloseTo(0.3, offset(0.005));
        assertThat(f[3]).isCloseTo(0.4, offset(0.005));
        double z = 0.01 + 0.04 + 0.09 + 0.16;
        double[] g = frequencies(new Sampler(4, 0.5f, 0, 1f, 2), l, 100_000);
        assertThat(g[0]).isCloseTo(0.01 / z, offset(0.005));
        assertThat(g[3]).isCloseTo(0.16 / z, offset(0.005));
    }

    /**
     * A vocabulary large enough for the vector softmax, with a scalar tail (the last vocab % L
     * logits): draws follow the softmax at temperatures 1 and 0.5, unfiltered and through the
     * top-p path. Four heavy tokens, two in whole vectors and two in the tail, carry most of the
     * mass; the light ones are checked together.
     */
    @Test
    void aWideVocabularyDrawsFromTheTemperatureSoftmax() {
        int vocab = Sampler.VECTOR_VOCAB + 5;
        int[] heavy = {3, Simd.L + 1, vocab - 4, vocab - 2};
        double[] w = new double[vocab];
        java.util.Arrays.fill(w, 1);
        for (int h : heavy) w[h] = 300;
        double z1 = 0, z2 = 0;
        for (double x : w) {
            z1 += x;
            z2 += x * x;
        }
        float[] l = logitsOf(w);
        double[][] f = {
            frequencies(new Sampler(vocab, 1f, 0, 1f, 5), l, 40_000),
            frequencies(new Sampler(vocab, 0.5f, 0, 1f, 6), l, 40_000),
            frequencies(new Sampler(vocab, 1f, 0, 0.9999f, 7), l, 40_000)};
        double[] z = {z1, z2, z1};
        double[] power = {1, 2, 1};
        String[] what = {"temperature 1", "temperature 0.5", "top-p"};
        for (int c = 0; c < 3; c++) {
            double light = 1;
            for (int h : heavy) {
                double p = Math.pow(w[h], power[c]) / z[c];
                assertThat(f[c][h]).as("token %d, %s", h, what[c]).isCloseTo(p, offset(0.01));
                light -= p;
            }
            double got = 1;
            for (int h : heavy) got -= f[c][h];
            assertThat(got).as("the light tokens together, %s", what[c]).isCloseTo(light, offset(0.01));
        }
    }

    /** A NaN or infinite logit, in a whole vector or in the scalar tail, is an error naming its token. */
    @Test
    void nonFiniteLogitsAreAnErrorNamingTheToken() {
        int vocab = 2 * Simd.L + 3;
        for (int at : new int[] {0, Simd.L + 1, vocab - 1}) {
            for (float bad : new float[] {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
                float[] l = new float[vocab];
                l[at] = bad;
                for (Sampler s : new Sampler[] {Sampler.greedy(vocab), new Sampler(vocab, 0.8f, 0, 1f, 1)}) {
                    assertThatThrownBy(() -> s.sample(l)).isInstanceOf(ModelFormatException.class)
                            .hasMessageContaining("(" + bad + " for token " + at + ")");
                }
            }
        }
    }

    /** Nucleus 0.5 of (0.4, 0.3, 0.2, 0.1) is the smallest prefix reaching 0.5: {0.4, 0.3}, renormalised. */
    @Test
    void topPKeepsTheSmallestPrefixReachingP() {
        float[] l = logitsOf(0.2, 0.4, 0.1, 0.3);
        double[] f = frequencies(new Sampler(4, 1f, 0, 0.5f, 3), l, 100_000);
        assertThat(f[0]).isZero();
        assertThat(f[2]).isZero();
        assertThat(f[1]).isCloseTo(4 / 7.0, offset(0.006));
        assertThat(f[3]).isCloseTo(3 / 7.0, offset(0.006));
        // p = 0.35 is reached by the first token alone
        double[] g = frequencies(new Sampler(4, 1f, 0, 0.35f, 3), l, 1000);
        assertThat(g[1]).isEqualTo(1.0, offset(1e-9));
    }

    @Test
    void topKKeepsTheKMostProbable() {
        float[] l = logitsOf(0.2, 0.4, 0.1, 0.3);
        double[] f = frequencies(new Sampler(4, 1f, 2, 1f, 4), l, 100_000);
        assertThat(f[0] + f[2]).isZero();
        assertThat(f[1]).isCloseTo(4 / 7.0, offset(0.006));
        // top-k 3 then top-p 0.6: {0.4, 0.3, 0.2}/0.9 -> 0.444, 0.333 reaches 0.6 of 0.9 -> {0.4, 0.3}
        double[] g = frequencies(new Sampler(4, 1f, 3, 0.6f, 4), l, 100_000);
        assertThat(g[0] + g[2]).isZero();
        assertThat(g[3]).isCloseTo(3 / 7.0, offset(0.006));
    }

    @Property(tries = 30)
    void theSameSeedGivesTheSameDraws(@ForAll long seed, @ForAll @IntRange(min = 2, max = 500) int vocab) {
        float[] l = new float[vocab];
        java.util.Random r = new java.util.Random(seed);
        for (int i = 0; i < vocab; i++) l[i] = (float) r.nextGaussian();
        Sampler a = new Sampler(vocab, 0.9f, 40, 0.95f, seed), b = new Sampler(vocab, 0.9f, 40, 0.95f, seed);
        for (int i = 0; i < 50; i++) assertThat(a.sample(l)).isEqualTo(b.sample(l));
    }

    @Test
    void samplingDoesNotTouchTheLogits() {
        float[] l = logitsOf(0.2, 0.4, 0.1, 0.3);
        float[] copy = l.clone();
        new Sampler(4, 0.7f, 3, 0.8f, 1).sample(l);
        assertThat(l).containsExactly(copy);
    }

    @Test
    void samplingAllocatesNothing() {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int vocab = 32_000;
        float[] l = new float[vocab];
        java.util.Random r = new java.util.Random(1);
        for (int i = 0; i < vocab; i++) l[i] = (float) r.nextGaussian() * 3;
        Sampler s = new Sampler(vocab, 0.8f, 50, 0.9f, 1);
        Sampler p = new Sampler(vocab, 0.8f, 0, 0.9f, 1);
        for (int i = 0; i < 2000; i++) {
            s.sample(l);
            p.sample(l);
        }
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 200; i++) {
            s.sample(l);
            p.sample(l);
        }
        long after = mx.getCurrentThreadAllocatedBytes();
        assertThat(after - before).isLessThan(1024);
    }

    @Test
    void badSettingsAreInputErrorsNamingTheOption() {
        assertThatThrownBy(() -> new Sampler(4, -1f, 0, 1f, 0)).isInstanceOf(InputException.class).hasMessageStartingWith("temperature: ");
        assertThatThrownBy(() -> new Sampler(4, Float.NaN, 0, 1f, 0)).isInstanceOf(InputException.class).hasMessageStartingWith("temperature: ");
        assertThatThrownBy(() -> new Sampler(4, 1f, -1, 1f, 0)).isInstanceOf(InputException.class).hasMessageStartingWith("topK: ");
        assertThatThrownBy(() -> new Sampler(4, 1f, 0, 0f, 0)).isInstanceOf(InputException.class).hasMessageStartingWith("topP: ");
        assertThatThrownBy(() -> new Sampler(4, 1f, 0, 1.5f, 0)).isInstanceOf(InputException.class).hasMessageStartingWith("topP: ");
    }
}
