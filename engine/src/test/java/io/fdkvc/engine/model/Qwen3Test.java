package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.gguf.GgufValueType;
import io.fdkvc.engine.gguf.GgufWriter;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Tensors;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Architecture {@code qwen3} read from a GGUF file written by our {@link GgufWriter} (the tensor
 * names and keys llama.cpp's converter writes: {@code blk.N.attn_q_norm.weight},
 * {@code qwen3.attention.key_length}, no q/k/v biases), its forward pass against
 * {@link NaiveLlama}'s independent per-head q/k RMSNorm, and the refusals: an architecture the
 * engine does not run, named with the ones it does, and tensors an architecture does not have.
 */
class Qwen3Test {
    @TempDir
    Path dir;

    // head dimension 12: the q projection is 48 wide for a model width of 32, as in Qwen3 (1024 -> 2048)
    static final LlamaConfig C = new LlamaConfig("qwen3", 32, 64, 2, 4, 2, 12, 70, 4096, 1e-6f, 1_000_000f, "none", 1f, 0,
            true, false);

    /** The model as GGUF (F32), with {@code edit} applied to the writer before the tensors. */
    static GgufWriter gguf(LlamaConfig c, LlamaWeights w, Consumer<GgufWriter> edit) {
        String a = c.architecture();
        GgufWriter g = new GgufWriter()
                .putString("general.architecture", a)
                .putUInt32(a + ".context_length", c.contextLength())
                .putUInt32(a + ".embedding_length", c.dim())
                .putUInt32(a + ".feed_forward_length", c.hiddenDim())
                .putUInt32(a + ".block_count", c.layers())
                .putUInt32(a + ".attention.head_count", c.heads())
                .putUInt32(a + ".attention.head_count_kv", c.kvHeads())
                .putUInt32(a + ".attention.key_length", c.headDim())
                .putUInt32(a + ".attention.value_length", c.headDim())
                .putFloat32(a + ".attention.layer_norm_rms_epsilon", c.normEps())
                .putFloat32(a + ".rope.freq_base", c.ropeTheta());
        String[] tokens = new String[c.vocabSize()];
        for (int i = 0; i < tokens.length; i++) tokens[i] = "t" + i;
        g.putString("tokenizer.ggml.model", "gpt2").putString("tokenizer.ggml.pre", "qwen2")
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, new int[c.vocabSize()])
                .putArray("tokenizer.ggml.merges", GgufValueType.STRING, new String[] {"t 1"})
                .putUInt32("tokenizer.ggml.eos_token_id", 2);
        edit.accept(g);
        matrix(g, "token_embd.weight", w.tokenEmbedding());
        for (int l = 0; l < c.layers(); l++) {
            String p = "blk." + l + ".";
            g.addTensor(p + "attn_norm.weight", GgmlType.F32, w.attnNorm()[l], c.dim());
            matrix(g, p + "attn_q.weight", w.wq()[l]);
            matrix(g, p + "attn_k.weight", w.wk()[l]);
            matrix(g, p + "attn_v.weight", w.wv()[l]);
            matrix(g, p + "attn_output.weight", w.wo()[l]);
            if (w.qNorm() != null) {
                g.addTensor(p + "attn_q_norm.weight", GgmlType.F32, w.qNorm()[l], c.headDim());
                g.addTensor(p + "attn_k_norm.weight", GgmlType.F32, w.kNorm()[l], c.headDim());
            }
            g.addTensor(p + "ffn_norm.weight", GgmlType.F32, w.ffnNorm()[l], c.dim());
            matrix(g, p + "ffn_gate.weight", w.wGate()[l]);
            matrix(g, p + "ffn_down.weight", w.wDown()[l]);
            matrix(g, p + "ffn_up.weight", w.wUp()[l]);
        }
        g.addTensor("output_norm.weight", GgmlType.F32, w.outputNorm(), c.dim());
        if (!c.tiedEmbeddings()) matrix(g, "output.weight", w.output());
        return g;
    }

    private static void matrix(GgufWriter g, String name, FloatTensor t) {
        g.addTensor(name, GgmlType.F32, Tensors.toFloats(t), t.cols(), t.rows());
    }

    private Path write(String name, GgufWriter g) {
        Path f = dir.resolve(name);
        g.write(f);
        return f;
    }

    @Test
    void qwen3LoadsAndRunsAsTheNaiveReference() {
        LlamaWeights w = NaiveLlama.randomWeights(C, 8, false);
        Path f = write("qwen3.gguf", gguf(C, w, g -> { }));
        try (LoadedModel m = GgufModelLoader.load(f)) {
            assertThat(m.config()).isEqualTo(C);
            assertThat(m.config().arch()).isInstanceOf(Qwen3Architecture.class);
            assertThat(m.weights().bq()).isNull();
            for (int l = 0; l < C.layers(); l++) {
                assertThat(m.weights().qNorm()[l]).containsExactly(w.qNorm()[l]);
                assertThat(m.weights().kNorm()[l]).containsExactly(w.kNorm()[l]);
            }
            NaiveLlama ref = new NaiveLlama(C, w);
            int[] tokens = LlamaForwardTest.randomTokens(30, C.vocabSize(), 4);
            try (Llama llama = new Llama(m.config(), m.weights(), 8, 2)) {
                Session s = new Session(llama, llama.newCache(PolicyRegistry.spec("full", 8), 64, PositionMode.CACHE));
                double[] want = null;
                for (int i = 0; i < 20; i++) want = ref.next(tokens[i]);
                assertThat(LlamaForwardTest.maxRelativeError(s.feed(tokens, 0, 20), want)).isLessThan(2e-5);
                for (int i = 20; i < tokens.length; i++) {
                    want = ref.next(tokens[i]);
                    assertThat(LlamaForwardTest.maxRelativeError(s.feed(tokens[i]), want)).as("token %d", i).isLessThan(2e-5);
                }
            }
        }
    }

    /** Without its q/k norm qwen3 is another model: the norm must matter (a reference that ignored it would pass anything). */
    @Test
    void theQkNormChangesTheLogits() {
        LlamaWeights w = NaiveLlama.randomWeights(C, 8, false);
        LlamaConfig asQwen2 = new LlamaConfig("qwen2", C.dim(), C.hiddenDim(), C.layers(), C.heads(), C.kvHeads(), C.headDim(),
                C.vocabSize(), C.contextLength(), C.normEps(), C.ropeTheta(), "none", 1f, 0, true, false);
        LlamaWeights noNorm = new LlamaWeights(w.tokenEmbedding(), w.attnNorm(), w.wq(), w.wk(), w.wv(), w.wo(), null, null,
                null, w.ffnNorm(), w.wGate(), w.wDown(), w.wUp(), w.outputNorm(), w.output());
        double[] with = null, without = null;
        NaiveLlama a = new NaiveLlama(C, w), b = new NaiveLlama(asQwen2, noNorm);
        for (int t : new int[] {3, 9, 27, 5}) {
            with = a.next(t);
            without = b.next(t);
        }
        float[] f = new float[with.length];
        for (int i = 0; i < f.length; i++) f[i] = (float) with[i];
        assertThat(LlamaForwardTest.maxRelativeError(f, without)).isGreaterThan(1e-2);
    }

    @Test
    void unsupportedArchitecturesAndForeignTensorsAreRefusedByName() {
        LlamaWeights w = NaiveLlama.randomWeights(C, 8, false);
        Path gemma = write("gemma3.gguf", gguf(C, w, g -> g.putString("general.architecture", "gemma3")));
        assertThatThrownBy(() -> GgufModelLoader.load(gemma)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(gemma.toString())
                .hasMessageContaining("unsupported architecture 'gemma3' (this engine reads llama, qwen2, qwen3)");

        Path biased = write("biased.gguf", gguf(C, w, g -> g.addTensor("blk.0.attn_q.bias", GgmlType.F32,
                new float[C.heads() * C.headDim()], C.heads() * C.headDim())));
        assertThatThrownBy(() -> GgufModelLoader.load(biased)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("architecture 'qwen3' has no q/k/v biases").hasMessageContaining("blk.0.attn_q.bias");

        LlamaWeights noNorm = new LlamaWeights(w.tokenEmbedding(), w.attnNorm(), w.wq(), w.wk(), w.wv(), w.wo(), null, null,
                null, w.ffnNorm(), w.wGate(), w.wDown(), w.wUp(), w.outputNorm(), w.output());
        Path missing = write("nonorm.gguf", gguf(C, noNorm, g -> { }));
        assertThatThrownBy(() -> GgufModelLoader.load(missing)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("missing tensor 'blk.0.attn_q_norm.weight'");

        // a llama file carrying q/k norms would run without them: refused
        LlamaConfig llama = new LlamaConfig("llama", C.dim(), C.hiddenDim(), C.layers(), C.heads(), C.kvHeads(), C.headDim(),
                C.vocabSize(), C.contextLength(), C.normEps(), 10000f, "none", 1f, 0, false, false);
        Path normed = write("llama-norm.gguf", gguf(llama, w, g -> { }));
        assertThatThrownBy(() -> GgufModelLoader.load(normed)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("architecture 'llama' has no q/k norm");

        assertThatThrownBy(() -> new Llama(C, noNorm, 1, 1)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("layer 0 q norm");
    }
}
