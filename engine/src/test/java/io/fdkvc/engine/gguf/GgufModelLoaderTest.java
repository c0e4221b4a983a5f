package io.fdkvc.engine.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LlamaConfig;
import io.fdkvc.engine.model.LlamaWeights;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.modelwriter.GgufModelWriter;
import io.fdkvc.engine.modelwriter.Layout;
import io.fdkvc.engine.modelwriter.ModelShape;
import io.fdkvc.engine.modelwriter.TensorTypes;
import io.fdkvc.engine.modelwriter.VocabularySpec;
import io.fdkvc.engine.modelwriter.Weights;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import io.fdkvc.engine.tensor.Tensors;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufModelLoaderTest {
    @TempDir
    Path dir;

    static Path shared() {
        String s = System.getProperty("fdkvc.shared");
        if (s == null) throw new IllegalStateException("system property fdkvc.shared is not set (run the tests through Maven)");
        return Path.of(s);
    }

    /**
     * stories260K.gguf: the README's hyper-parameters. Its metadata says llama.context_length =
     * 2048 (checked with an independent parser), while llama2.c trained it with 512: the loader
     * reports what the file says.
     */
    @Test
    void stories260K() throws IOException {
        Path dirModel = shared().resolve("models/stories260K");
        try (LoadedModel m = GgufModelLoader.load(dirModel.resolve("stories260K.gguf"))) {
            LlamaConfig c = m.config();
            assertThat(c).isEqualTo(new LlamaConfig("llama", 64, 172, 5, 8, 4, 8, 512, 2048, 1e-5f, 10000f,
                    "none", 1f, 0, false, true));
            LlamaWeights w = m.weights();
            assertThat(w.output()).isSameAs(w.tokenEmbedding());   // output.weight is a byte-identical copy
            assertThat(w.tokenEmbedding().type()).isEqualTo(GgmlType.F32);
            assertThat(w.wq()).hasSize(5);
            assertThat(w.wk()[4].rows()).isEqualTo(32);
            assertThat(w.wDown()[0].rows()).isEqualTo(64);
            assertThat(w.wDown()[0].cols()).isEqualTo(172);
            assertThat(w.bq()).isNull();
            Vocabulary v = m.vocabulary();
            assertThat(v.model()).isEqualTo("llama");
            assertThat(v.tokens()).hasSize(512).startsWith("<unk>", "<s>", "</s>", "<0x00>");
            assertThat(v.tokenTypes()).startsWith(2, 3, 3, 6);
            assertThat(v.scores()).hasSize(512);
            assertThat(v.bos()).isEqualTo(1);
            assertThat(v.eos()).isEqualTo(2);
            assertThat(v.merges()).isNull();

            // the same weights as llama2.c's checkpoint, read here straight from its layout:
            // 7 int32 (dim, hidden, layers, heads, kv heads, vocab, seq len), token embedding, rms_att
            ByteBuffer bin = ByteBuffer.wrap(Files.readAllBytes(dirModel.resolve("stories260K.bin"))).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(new int[] {bin.getInt(0), bin.getInt(4), bin.getInt(8), bin.getInt(12), bin.getInt(16), bin.getInt(24)})
                    .containsExactly(64, 172, 5, 8, 4, 512);
            float[] row = new float[64];
            for (int t = 0; t < 512; t++) {
                w.tokenEmbedding().dequantizeRow(t, row, 0);
                for (int i = 0; i < 64; i++) assertThat(row[i]).isEqualTo(bin.getFloat(28 + 4 * (t * 64 + i)));
            }
            int rmsAtt = 28 + 4 * 512 * 64;
            for (int l = 0; l < 5; l++)
                for (int i = 0; i < 64; i++) assertThat(w.attnNorm()[l][i]).isEqualTo(bin.getFloat(rmsAtt + 4 * (l * 64 + i)));
        }
    }

    // ---- synthetic models --------------------------------------------------------------

    static final int DIM = 64, HIDDEN = 96, LAYERS = 2, HEADS = 4, KV = 2, HEAD_DIM = 16, VOCAB = 40;

    static final Weights WEIGHTS = Weights.random(42);

    /** The tiny model's shape: llama, qwen2 (biases) or qwen3 (q/k norm), tied unless {@code untied}. */
    static ModelShape shape(String arch, boolean untied) {
        Layout layout = switch (arch) {
            case "qwen2" -> new Layout.Qwen2();
            case "qwen3" -> new Layout.Qwen3();
            default -> new Layout.Llama();
        };
        return new ModelShape(layout, DIM, HIDDEN, LAYERS, HEADS, KV, HEAD_DIM, VOCAB, 4096, 1e-6f, 1_000_000f, !untied);
    }

    /**
     * A complete tiny model of {@code arch} (matrices in {@code type}, vectors in F32) with a GPT-2
     * vocabulary of "t0", "t1", ..., bos "none" (uint32 -1); {@code edit} changes it before it is written.
     */
    static GgufWriter tiny(String arch, GgmlType type, boolean untied, Consumer<GgufWriter> edit) {
        String[] tokens = new String[VOCAB];
        for (int i = 0; i < VOCAB; i++) tokens[i] = "t" + i;
        VocabularySpec vocab = new VocabularySpec("gpt2", "qwen2", tokens, null, new int[VOCAB], new String[] {"t 1", "t 2"},
                -1, 7, "{{ messages }}");
        GgufWriter w = GgufModelWriter.writer(shape(arch, untied), vocab, WEIGHTS, TensorTypes.uniform(type))
                .putUInt32("tokenizer.ggml.bos_token_id", 0xFFFF_FFFFL);
        edit.accept(w);
        return w;
    }

    private Path write(String name, GgufWriter w) {
        Path f = dir.resolve(name);
        w.write(f);
        return f;
    }

    @Test
    void qwen2WithBiasesAndUntiedOutput() {
        Path f = write("qwen2.gguf", tiny("qwen2", GgmlType.Q8_0, true, w -> w.putUInt32("qwen2.attention.key_length", HEAD_DIM)));
        try (LoadedModel m = GgufModelLoader.load(f); GgufFile g = GgufFile.open(f)) {
            assertThat(m.config()).isEqualTo(new LlamaConfig("qwen2", DIM, HIDDEN, LAYERS, HEADS, KV, HEAD_DIM, VOCAB, 4096,
                    1e-6f, 1_000_000f, "none", 1f, 0, true, false));
            LlamaWeights w = m.weights();
            assertThat(w.output()).isNotSameAs(w.tokenEmbedding());
            assertThat(w.output().type()).isEqualTo(GgmlType.Q8_0);
            for (int l = 0; l < LAYERS; l++) {
                assertThat(w.bq()[l]).containsExactly(g.floats("blk." + l + ".attn_q.bias"));
                assertThat(w.bk()[l]).hasSize(KV * HEAD_DIM);
                assertThat(w.bv()[l]).containsExactly(g.floats("blk." + l + ".attn_v.bias"));
                assertThat(w.wo()[l].rows()).isEqualTo(DIM);
                assertThat(w.wo()[l].cols()).isEqualTo(HEADS * HEAD_DIM);
                assertThat(w.wGate()[l].rows()).isEqualTo(HIDDEN);
                assertThat(w.wDown()[l].cols()).isEqualTo(HIDDEN);
            }
            Vocabulary v = m.vocabulary();
            assertThat(v.model()).isEqualTo("gpt2");
            assertThat(v.preTokenizer()).isEqualTo("qwen2");
            assertThat(v.merges()).containsExactly("t 1", "t 2");
            assertThat(v.scores()).isNull();
            assertThat(v.bos()).isEqualTo(-1);   // uint32 0xFFFFFFFF means none
            assertThat(v.eos()).isEqualTo(7);
            assertThat(v.chatTemplate()).isEqualTo("{{ messages }}");
        }
    }

    /** Weights are the writer's quantised bytes: check one matrix against an independent decode of Quantizer output. */
    @Test
    void llamaQuantisedWeightsAreTheWrittenOnes() {
        Path f = write("llama.gguf", tiny("llama", GgmlType.Q4_0, false, w -> { }));
        try (LoadedModel m = GgufModelLoader.load(f)) {
            assertThat(m.config().ropeNeox()).isFalse();
            assertThat(m.config().tiedEmbeddings()).isTrue();
            assertThat(m.config().headDim()).isEqualTo(DIM / HEADS);
            assertThat(m.weights().output()).isSameAs(m.weights().tokenEmbedding());
            assertThat(m.weights().bq()).isNull();
            float[] emb = new float[VOCAB * DIM];
            WEIGHTS.fill(GgufModelWriter.tensors(shape("llama", false)).getFirst(), 0, VOCAB, emb);
            FloatTensor expect = Tensors.view(GgmlType.Q4_0, MemorySegment.ofArray(Quantizer.quantize(GgmlType.Q4_0, emb)), VOCAB, DIM);
            assertThat(Tensors.toFloats(m.weights().tokenEmbedding())).containsExactly(Tensors.toFloats(expect));
        }
    }

    @Test
    void ropeScalingMetadata() {
        Path lin = write("lin.gguf", tiny("llama", GgmlType.F16, false, w -> w.putString("llama.rope.scaling.type", "linear")
                .putFloat32("llama.rope.scaling.factor", 4f)));
        try (LoadedModel m = GgufModelLoader.load(lin)) {
            assertThat(m.config().ropeScaling()).isEqualTo("linear");
            assertThat(m.config().ropeScaleFactor()).isEqualTo(4f);
        }
        Path l3 = write("l3.gguf", tiny("llama", GgmlType.F16, false, w -> w.putString("llama.rope.scaling.type", "llama3")
                .putFloat32("llama.rope.scaling.factor", 8f).putUInt32("llama.rope.scaling.original_context_length", 8192)));
        try (LoadedModel m = GgufModelLoader.load(l3)) {
            assertThat(m.config().ropeScaling()).isEqualTo("llama3");
            assertThat(m.config().ropeScaleFactor()).isEqualTo(8f);
            assertThat(m.config().ropeOrigContext()).isEqualTo(8192);
        }
        // YaRN needs its factor; the original context defaults to the trained one, as in llama.cpp
        Path yarn = write("yarn.gguf", tiny("qwen2", GgmlType.F16, false, w -> w.putString("qwen2.rope.scaling.type", "yarn")));
        assertThatThrownBy(() -> GgufModelLoader.load(yarn)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(yarn.toString()).hasMessageContaining("'qwen2.rope.scaling.factor'");
        Path yarn4 = write("yarn4.gguf", tiny("qwen2", GgmlType.F16, false, w -> w.putString("qwen2.rope.scaling.type", "yarn")
                .putFloat32("qwen2.rope.scaling.factor", 4f)));
        try (LoadedModel m = GgufModelLoader.load(yarn4)) {
            io.fdkvc.engine.model.Rope r = m.config().blocks().layers().get(0).rope();
            assertThat(r.scaling()).isEqualTo(io.fdkvc.engine.model.Rope.Scaling.YARN);
            assertThat(r.originalContext()).isEqualTo(m.config().contextLength());
            // llama.cpp's magnitude without a log multiplier: 1 + 0.1 ln(factor)
            assertThat((double) r.magnitude()).isCloseTo(1 + 0.1 * Math.log(4), org.assertj.core.data.Offset.offset(1e-6));
        }
        Path dynamic = write("dynamic.gguf", tiny("qwen2", GgmlType.F16, false, w -> w.putString("qwen2.rope.scaling.type", "dynamic")));
        assertThatThrownBy(() -> GgufModelLoader.load(dynamic)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(dynamic.toString()).hasMessageContaining("'dynamic' is not supported");
    }

    /**
     * Llama 3.1 divisors as the Llama 3.1 reference computes them (factor 8, low/high frequency
     * factors 1 and 4, original context 8192), stored as rope_freqs.weight.
     */
    static float[] llama31Divisors(double theta, int headDim) {
        float[] d = new float[headDim / 2];
        for (int j = 0; j < d.length; j++) {
            double freq = Math.pow(theta, -2.0 * j / headDim), wavelen = 2 * Math.PI / freq;
            double lowWavelen = 8192 / 1.0, highWavelen = 8192 / 4.0;
            if (wavelen < highWavelen) d[j] = 1;
            else if (wavelen > lowWavelen) d[j] = 8;
            else {
                double smooth = (8192 / wavelen - 1) / (4 - 1);
                d[j] = (float) (1 / ((1 - smooth) / 8 + smooth));
            }
        }
        return d;
    }

    @Test
    void ropeFreqsTensorIsReadAsLlama3Scaling() {
        float[] div = llama31Divisors(500000, HEAD_DIM);
        assertThat(div[0]).isEqualTo(1f);
        assertThat(div[div.length - 1]).isEqualTo(8f);
        Path f = write("rf.gguf", tiny("llama", GgmlType.F32, false, w -> w.putFloat32("llama.rope.freq_base", 500000f)
                .addTensor("rope_freqs.weight", GgmlType.F32, div, HEAD_DIM / 2)));
        try (LoadedModel m = GgufModelLoader.load(f)) {
            assertThat(m.config().ropeScaling()).isEqualTo("llama3");
            assertThat(m.config().ropeScaleFactor()).isEqualTo(8f);
            assertThat(m.config().ropeOrigContext()).isEqualTo(8192);
        }
        float[] bad = div.clone();
        bad[1] = 1.3f;   // a high frequency, which llama3 scaling leaves alone (divisor 1)
        Path g = write("rf-bad.gguf", tiny("llama", GgmlType.F32, false, w -> w.putFloat32("llama.rope.freq_base", 500000f)
                .addTensor("rope_freqs.weight", GgmlType.F32, bad, HEAD_DIM / 2)));
        assertThatThrownBy(() -> GgufModelLoader.load(g)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining("rope_freqs.weight[1] = 1.3").hasMessageContaining("factor 8.0");
    }

    @Test
    void brokenModelsNameTheProblem() {
        Path gpt2 = write("gpt2.gguf", tiny("llama", GgmlType.F32, false, w -> w.putString("general.architecture", "gpt2")));
        assertThatThrownBy(() -> GgufModelLoader.load(gpt2)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(gpt2.toString()).hasMessageContaining("unsupported architecture 'gpt2'");

        Path noArch = write("noarch.gguf", new GgufWriter().putUInt32("x", 1));
        assertThatThrownBy(() -> GgufModelLoader.load(noArch)).hasMessageContaining("general.architecture");

        Path noHeads = write("noheads.gguf", tiny("llama", GgmlType.F32, false, w -> w.put("llama.attention.head_count",
                GgufValueType.STRING, "four")));
        assertThatThrownBy(() -> GgufModelLoader.load(noHeads)).hasMessageContaining("llama.attention.head_count").hasMessageContaining("String");

        Path badEos = write("eos.gguf", tiny("llama", GgmlType.F32, false, w -> w.putUInt32("tokenizer.ggml.eos_token_id", VOCAB)));
        assertThatThrownBy(() -> GgufModelLoader.load(badEos)).hasMessageContaining("'tokenizer.ggml.eos_token_id' = " + VOCAB);

        Path tokens = write("tok.gguf", tiny("llama", GgmlType.F32, false, w -> w.putArray("tokenizer.ggml.tokens",
                GgufValueType.STRING, new String[] {"a", "b"})));
        assertThatThrownBy(() -> GgufModelLoader.load(tokens)).hasMessageContaining("2 tokens").hasMessageContaining(VOCAB + " rows");

        Path heads = write("heads.gguf", tiny("llama", GgmlType.F32, false, w -> w.putUInt32("llama.attention.head_count_kv", 3)));
        assertThatThrownBy(() -> GgufModelLoader.load(heads)).hasMessageContaining("not a multiple of 3 KV heads");

        // a shape that disagrees with the metadata
        Path shape = write("shape.gguf", tiny("llama", GgmlType.F32, false, w -> w.putUInt32("llama.feed_forward_length", HIDDEN * 2)));
        assertThatThrownBy(() -> GgufModelLoader.load(shape)).hasMessageContaining("blk.0.ffn_gate.weight").hasMessageContaining("expected [64, 192]");

        // qwen2 needs its biases: drop one by renaming it
        GgufWriter q = tiny("qwen2", GgmlType.F32, false, w -> { });
        byte[] bytes = q.toBytes();
        byte[] from = "blk.1.attn_k.bias".getBytes(), to = "blk.1.attn_k.bia_".getBytes();
        replace(bytes, from, to);
        Path noBias = dir.resolve("nobias.gguf");
        writeBytes(noBias, bytes);
        assertThatThrownBy(() -> GgufModelLoader.load(noBias)).isInstanceOf(ModelFormatException.class)
                .hasMessageContaining(noBias.toString()).hasMessageContaining("missing tensor 'blk.1.attn_k.bias'");

        Path missing = dir.resolve("absent.gguf");
        assertThatThrownBy(() -> GgufModelLoader.load(missing)).isInstanceOf(ModelFormatException.class).hasMessageContaining("does not exist");
    }

    private static void replace(byte[] b, byte[] from, byte[] to) {
        outer:
        for (int i = 0; i + from.length <= b.length; i++) {
            for (int j = 0; j < from.length; j++) if (b[i + j] != from[j]) continue outer;
            System.arraycopy(to, 0, b, i, to.length);
            return;
        }
        throw new AssertionError("not found");
    }

    private static void writeBytes(Path f, byte[] b) {
        try {
            Files.write(f, b);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
