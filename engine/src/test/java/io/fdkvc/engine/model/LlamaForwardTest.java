package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.F32Tensor;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The forward pass against {@link NaiveLlama}, an independent double-precision implementation,
 * on random models of both architectures: llama (interleaved RoPE, tied embeddings) and qwen2
 * (NEOX RoPE, q/k/v biases, separate classifier), with linear and llama3 RoPE scaling, grouped
 * and ungrouped attention, batched prefill and several thread counts.
 */
class LlamaForwardTest {

    static LlamaConfig config(String arch, int dim, int heads, int kvHeads, int hidden, String scaling) {
        boolean qwen = arch.equals("qwen2");
        float factor = scaling.equals("none") ? 1f : 8f;
        return new LlamaConfig(arch, dim, hidden, 2, heads, kvHeads, dim / heads, 300, 64, 1e-5f,
                qwen ? 1_000_000f : 10000f, scaling, factor, scaling.equals("llama3") ? 32 : 0, qwen, !qwen);
    }

    static int[] randomTokens(int n, int vocab, long seed) {
        Random r = new Random(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) t[i] = r.nextInt(vocab);
        return t;
    }

    static double maxRelativeError(float[] got, double[] want) {
        double scale = 0, err = 0;
        for (double v : want) scale = Math.max(scale, Math.abs(v));
        for (int i = 0; i < want.length; i++) err = Math.max(err, Math.abs(got[i] - want[i]));
        return err / scale;
    }

    @ParameterizedTest(name = "{0} dim {1} heads {2}/{3} rope {5} batch {6} threads {7} positions {8}")
    @CsvSource({
            "llama, 64,  8, 4, 96,  none,   1,  1, cache",
            "llama, 64,  4, 4, 96,  linear, 5,  1, original",
            "llama, 128, 8, 2, 256, llama3, 16, 2, cache",
            "qwen2, 64,  4, 2, 96,  none,   1,  1, original",
            "qwen2, 128, 8, 2, 256, none,   7,  2, cache",
            "qwen2, 96,  6, 3, 160, llama3, 40, 2, original",
            // heads of 64 floats, whose group's heads share a pass over the values (in pairs, the
            // third of a group of three alone)
            "llama, 256, 4, 2, 96,  none,   16, 2, cache",
            "qwen2, 384, 6, 2, 160, none,   9,  2, original",
    })
    void logitsMatchTheNaiveReference(String arch, int dim, int heads, int kvHeads, int hidden, String scaling,
                                      int batch, int threads, String positions) {
        LlamaConfig c = config(arch, dim, heads, kvHeads, hidden, scaling);
        LlamaWeights w = NaiveLlama.randomWeights(c, 42, arch.equals("qwen2"));
        NaiveLlama ref = new NaiveLlama(c, w);
        int[] tokens = randomTokens(40, c.vocabSize(), 7);
        try (Llama llama = new Llama(c, w, batch, threads)) {
            KvCache cache = llama.newCache(PolicyRegistry.spec("full", 8), 64, PositionMode.parse(positions));
            Session s = new Session(llama, cache);
            // prompt of 24 tokens as one feed (chunks of `batch`), then 16 single tokens
            double[] want = null;
            for (int i = 0; i < 24; i++) want = ref.next(tokens[i]);
            float[] got = s.feed(tokens, 0, 24);
            assertThat(maxRelativeError(got, want)).isLessThan(2e-5);
            for (int i = 24; i < tokens.length; i++) {
                want = ref.next(tokens[i]);
                got = s.feed(tokens[i]);
                assertThat(maxRelativeError(got, want)).as("token %d", i).isLessThan(2e-5);
            }
        }
    }

    /**
     * Splitting rows and heads over threads changes no formula, and batched prefill only the
     * order of summation (the batch kernel): every setup agrees with one thread, one token at a
     * time, to float rounding (the Vector API leaves the order of a lane reduction open, so even
     * one setup is not bitwise reproducible while the JIT compiles). A race or a wrong row split
     * would show as an error many orders of magnitude larger.
     */
    @Test
    void threadsAndBatchingAgreeToRounding() {
        LlamaConfig c = config("qwen2", 128, 8, 2, 256, "none");
        LlamaWeights w = NaiveLlama.randomWeights(c, 3, true);
        int[] tokens = randomTokens(50, c.vocabSize(), 11);
        float[][] oneByOne = run(c, w, tokens, 1, 1);
        for (int[] setup : new int[][] {{1, 2}, {1, 3}, {50, 1}, {50, 2}, {7, 3}}) {
            float[][] got = run(c, w, tokens, setup[0], setup[1]);
            for (int i = 0; i < tokens.length; i++) {
                double[] want = new double[c.vocabSize()];
                for (int j = 0; j < want.length; j++) want[j] = oneByOne[i][j];
                assertThat(maxRelativeError(got[i], want)).as("batch %d threads %d token %d", setup[0], setup[1], i)
                        .isLessThan(2e-6);
            }
        }
    }

    /** Logits after every token: a prompt of 30 fed at once (the last one's logits), then one at a time. */
    private static float[][] run(LlamaConfig c, LlamaWeights w, int[] tokens, int batch, int threads) {
        float[][] logits = new float[tokens.length][];
        try (Llama llama = new Llama(c, w, batch, threads)) {
            Session s = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 8), 64, PositionMode.CACHE));
            logits[29] = s.feed(tokens, 0, 30).clone();
            for (int i = 30; i < tokens.length; i++) logits[i] = s.feed(tokens[i]).clone();
        }
        // the prompt's inner logits are not produced by a batched feed; compare from token 29 on
        for (int i = 0; i < 29; i++) logits[i] = logits[29];
        return logits;
    }

    /** A random model of dim 64, 4 heads over 2 KV heads and hidden 96, and 40 random tokens for it. */
    private record SmallModel(LlamaConfig config, LlamaWeights weights, int[] tokens) {
        static SmallModel of(String arch, long weightSeed, long tokenSeed) {
            LlamaConfig c = LlamaForwardTest.config(arch, 64, 4, 2, 96, "none");
            return new SmallModel(c, NaiveLlama.randomWeights(c, weightSeed, arch.equals("qwen2")), randomTokens(40, c.vocabSize(), tokenSeed));
        }

        NaiveLlama reference() {
            return new NaiveLlama(config, weights);
        }

        Llama llama(int batch, int threads) {
            return new Llama(config, weights, batch, threads);
        }
    }

    /**
     * {@link Llama#forwardEveryPosition}: each row of a chunk's logits is the prediction after that
     * row's token, as the naive reference computes it one token at a time, chunk after chunk.
     */
    @ParameterizedTest(name = "{0} batch {1} threads {2} positions {3}")
    @CsvSource({"llama, 8, 1, cache", "qwen2, 13, 2, original", "llama, 40, 2, original"})
    void everyPositionOfAChunkHasItsLogits(String arch, int batch, int threads, String positions) {
        SmallModel m = SmallModel.of(arch, 5, 9);
        NaiveLlama ref = m.reference();
        int[] tokens = m.tokens();
        int vocab = m.config().vocabSize();
        try (Llama llama = m.llama(batch, threads)) {
            KvCache cache = llama.newCache(PolicyRegistry.spec("full", 8), 64, PositionMode.parse(positions));
            for (int off = 0; off < tokens.length; off += batch) {
                int n = Math.min(batch, tokens.length - off);
                float[] rows = llama.forwardEveryPosition(cache, tokens, off, n);
                for (int t = 0; t < n; t++) {
                    double[] want = ref.next(tokens[off + t]);
                    float[] got = java.util.Arrays.copyOfRange(rows, t * vocab, (t + 1) * vocab);
                    assertThat(maxRelativeError(got, want)).as("token %d", off + t).isLessThan(2e-5);
                }
            }
        }
    }

    /**
     * {@link Llama#forward} runs the last layer's output projection and feed-forward block only
     * for the rows whose logits it returns (the chunk's last, or none without logits): every
     * layer's keys and values are still the bits that computing every row stores ({@link
     * Llama#forwardEveryPosition}), chunk after chunk, under a policy that observes attention;
     * and the logits of the last row are its prediction, as the naive reference makes it.
     */
    @ParameterizedTest(name = "{0} batch {1} threads {2}")
    @CsvSource({"llama, 12, 2", "qwen2, 7, 1", "llama, 40, 2"})
    void theLastLayerComputesOnlyTheRowsReadAndStoresTheSameCache(String arch, int batch, int threads) {
        SmallModel m = SmallModel.of(arch, 13, 17);
        LlamaConfig c = m.config();
        NaiveLlama ref = m.reference();
        int[] tokens = m.tokens();
        int vocab = c.vocabSize();
        try (Llama llama = m.llama(batch, threads)) {
            KvCache skipping = llama.newCache(PolicyRegistry.spec("fdkvc", 64), 64, PositionMode.CACHE);
            KvCache every = llama.newCache(PolicyRegistry.spec("fdkvc", 64), 64, PositionMode.CACHE);
            assertThat(skipping.observing()).as("the policy reads the last layer's attention of every row").isTrue();
            double[] want = null;
            for (int off = 0; off < tokens.length; off += batch) {
                int n = Math.min(batch, tokens.length - off);
                boolean last = off + n == tokens.length;
                for (int t = off; t < off + n; t++) want = ref.next(tokens[t]);
                float[] got = llama.forward(skipping, tokens, off, n, last);
                float[] rows = llama.forwardEveryPosition(every, tokens, off, n);
                if (last) {
                    assertThat(maxRelativeError(got, want)).isLessThan(2e-5);
                    assertThat(maxRelativeError(got, toDoubles(rows, (n - 1) * vocab, vocab))).isLessThan(2e-5);
                } else {
                    assertThat(got).isNull();
                }
                for (int l = 0; l < c.layers(); l++) {
                    for (int h = 0; h < c.kvHeads(); h++) {
                        var a = skipping.stream(l, h);
                        var b = every.stream(l, h);
                        int size = a.size() * c.headDim();
                        assertThat(a.size()).isEqualTo(b.size());
                        assertThat(java.util.Arrays.copyOf(a.keys(), size)).as("layer %d head %d keys", l, h).isEqualTo(java.util.Arrays.copyOf(b.keys(), size));
                        assertThat(java.util.Arrays.copyOf(a.values(), size)).as("layer %d head %d values", l, h).isEqualTo(java.util.Arrays.copyOf(b.values(), size));
                    }
                }
            }
        }
    }

    private static double[] toDoubles(float[] a, int off, int n) {
        double[] d = new double[n];
        for (int i = 0; i < n; i++) d[i] = a[off + i];
        return d;
    }

    @Test
    void refusesWeightsOfTheWrongShape() {
        LlamaConfig c = config("llama", 64, 8, 4, 96, "none");
        LlamaWeights w = NaiveLlama.randomWeights(c, 1, false);
        var wk = w.wk().clone();
        wk[1] = new F32Tensor(new float[64 * 64], 64, 64);
        LlamaWeights bad = new LlamaWeights(w.tokenEmbedding(), w.attnNorm(), w.wq(), wk, w.wv(), w.wo(), null, null, null,
                w.ffnNorm(), w.wGate(), w.wDown(), w.wUp(), w.outputNorm(), w.output());
        assertThatThrownBy(() -> new Llama(c, bad, 1, 1)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("layer 1 wk").hasMessageContaining("64 x 64").hasMessageContaining("32 x 64");
    }

    @Test
    void aChunkLargerThanTheTurnHeadroomIsRefused() {
        LlamaConfig c = config("llama", 64, 8, 4, 96, "none");
        try (Llama llama = new Llama(c, NaiveLlama.randomWeights(c, 1, false), 16, 1)) {
            KvCache cache = llama.newCache(PolicyRegistry.spec("window", 8), 4, PositionMode.CACHE);
            assertThatThrownBy(() -> llama.forward(cache, new int[5], 0, 5, true)).isInstanceOf(IllegalStateException.class);
            // the session splits the same tokens at the turn boundary instead
            Session s = new Session(llama, cache);
            s.feed(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, 0, 9);
            assertThat(cache.updates()).isEqualTo(2);
            assertThat(cache.pending()).isEqualTo(1);
        }
    }
}
