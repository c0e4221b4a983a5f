package io.fdkvc.engine.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.cache.PositionMode;
import io.fdkvc.engine.gguf.GgufWriter;
import io.fdkvc.engine.modelwriter.GgufModelWriter;
import io.fdkvc.engine.modelwriter.Layout;
import io.fdkvc.engine.modelwriter.ModelShape;
import io.fdkvc.engine.modelwriter.TensorTypes;
import io.fdkvc.engine.modelwriter.VocabularySpec;
import io.fdkvc.engine.modelwriter.Weights;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Tensors;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Architecture {@code qwen3} read from a GGUF file written by our {@link GgufModelWriter} (the tensor
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

    /** The shape of {@code c} for {@link GgufModelWriter} (architectures llama, qwen2, qwen3). */
    static ModelShape shape(LlamaConfig c) {
        Layout layout = switch (c.architecture()) {
            case "qwen2" -> new Layout.Qwen2();
            case "qwen3" -> new Layout.Qwen3();
            default -> new Layout.Llama();
        };
        return new ModelShape(layout, c.dim(), c.hiddenDim(), c.layers(), c.heads(), c.kvHeads(), c.headDim(), c.vocabSize(),
                c.contextLength(), c.normEps(), c.ropeTheta(), c.tiedEmbeddings());
    }

    /** {@code w}'s values for the tensors of {@link GgufModelWriter#tensors}. */
    static Weights weights(LlamaWeights w) {
        return (t, firstRow, count, into) -> {
            int l = t.layer();
            float[] all = switch (t.role()) {
                case TOKEN_EMBEDDING -> Tensors.toFloats(w.tokenEmbedding());
                case OUTPUT -> Tensors.toFloats(w.output());
                case OUTPUT_NORM -> w.outputNorm();
                case ATTN_NORM -> w.attnNorm()[l];
                case ATTN_Q -> Tensors.toFloats(w.wq()[l]);
                case ATTN_K -> Tensors.toFloats(w.wk()[l]);
                case ATTN_V -> Tensors.toFloats(w.wv()[l]);
                case ATTN_OUTPUT -> Tensors.toFloats(w.wo()[l]);
                case ATTN_Q_BIAS -> w.bq()[l];
                case ATTN_K_BIAS -> w.bk()[l];
                case ATTN_V_BIAS -> w.bv()[l];
                case ATTN_Q_NORM -> w.qNorm()[l];
                case ATTN_K_NORM -> w.kNorm()[l];
                case FFN_NORM -> w.ffnNorm()[l];
                case FFN_GATE -> Tensors.toFloats(w.wGate()[l]);
                case FFN_UP -> Tensors.toFloats(w.wUp()[l]);
                case FFN_DOWN -> Tensors.toFloats(w.wDown()[l]);
                default -> throw new IllegalArgumentException("no " + t.role() + " in LlamaWeights");
            };
            System.arraycopy(all, (int) (firstRow * t.cols()), into, 0, (int) (count * t.cols()));
        };
    }

    /** The model as GGUF (F32, a GPT-2 vocabulary "t0", "t1", ...), with {@code edit} applied before it is written. */
    static GgufWriter gguf(LlamaConfig c, LlamaWeights w, Consumer<GgufWriter> edit) {
        String[] tokens = new String[c.vocabSize()];
        for (int i = 0; i < tokens.length; i++) tokens[i] = "t" + i;
        VocabularySpec vocab = new VocabularySpec("gpt2", "qwen2", tokens, null, new int[c.vocabSize()], new String[] {"t 1"}, -1, 2, null);
        GgufWriter g = GgufModelWriter.writer(shape(c), vocab, weights(w), TensorTypes.uniform(GgmlType.F32));
        edit.accept(g);
        return g;
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
        Path gemma = write("gemma2.gguf", gguf(C, w, g -> g.putString("general.architecture", "gemma2")));
        assertThatThrownBy(() -> GgufModelLoader.load(gemma)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(gemma.toString())
                .hasMessageContaining("unsupported architecture 'gemma2' (this engine reads llama, qwen2, qwen3, gemma3, phi3, mistral3, smollm3)");

        // soft-capped attention logits are not implemented: refused, never run without them
        Path capped = write("capped.gguf", gguf(C, w, g -> g.putFloat32("qwen3.attn_logit_softcapping", 50f)));
        assertThatThrownBy(() -> GgufModelLoader.load(capped)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("qwen3.attn_logit_softcapping = 50.0: logit soft-capping is not supported");

        Path biased = write("biased.gguf", gguf(C, w, g -> g.addTensor("blk.0.attn_q.bias", GgmlType.F32,
                new float[C.heads() * C.headDim()], C.heads() * C.headDim())));
        assertThatThrownBy(() -> GgufModelLoader.load(biased)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("architecture 'qwen3' has no q/k/v biases").hasMessageContaining("blk.0.attn_q.bias");

        LlamaWeights noNorm = new LlamaWeights(w.tokenEmbedding(), w.attnNorm(), w.wq(), w.wk(), w.wv(), w.wo(), null, null,
                null, w.ffnNorm(), w.wGate(), w.wDown(), w.wUp(), w.outputNorm(), w.output());
        Path missing = write("nonorm.gguf", gguf(C, w, g -> {
            for (int l = 0; l < C.layers(); l++) {
                g.removeTensor("blk." + l + ".attn_q_norm.weight");
                g.removeTensor("blk." + l + ".attn_k_norm.weight");
            }
        }));
        assertThatThrownBy(() -> GgufModelLoader.load(missing)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("missing tensor 'blk.0.attn_q_norm.weight'");

        // a llama file carrying q/k norms would run without them: refused
        LlamaConfig llama = new LlamaConfig("llama", C.dim(), C.hiddenDim(), C.layers(), C.heads(), C.kvHeads(), C.headDim(),
                C.vocabSize(), C.contextLength(), C.normEps(), 10000f, "none", 1f, 0, false, false);
        Path normed = write("llama-norm.gguf", gguf(llama, w, g -> g.addTensor("blk.0.attn_q_norm.weight", GgmlType.F32,
                w.qNorm()[0], C.headDim())));
        assertThatThrownBy(() -> GgufModelLoader.load(normed)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("architecture 'llama' has no q/k norm");

        assertThatThrownBy(() -> new Llama(C, noNorm, 1, 1)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("layer 0 q norm");
    }
}
