package io.fdkvc.cli.engine;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.gguf.GgufValueType;
import io.fdkvc.engine.gguf.GgufWriter;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LlamaConfig;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tensor.GgmlType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Random-weight models shaped like real ones, for speed measurements where the real weights are
 * not available: same layer count, widths, heads, vocabulary and weight type, so the same bytes
 * are streamed and the same arithmetic is done per token. The model is written as a GGUF file to
 * a temporary directory and loaded (memory-mapped) like any other, then the file is deleted (the
 * mapping keeps it alive until the model is closed).
 */
public final class SyntheticModels {
    private SyntheticModels() {}

    /** A known shape. */
    public enum Shape {
        /** SmolLM2-135M (llama architecture, tied embeddings) with every matrix in Q8_0. */
        SMOLLM2_135M_Q8("smollm2-135m-q8", new LlamaConfig("llama", 576, 1536, 30, 9, 3, 64, 49152, 8192, 1e-5f,
                100000f, "none", 1f, 0, false, true), GgmlType.Q8_0),
        /** The same shape in F32. */
        SMOLLM2_135M_F32("smollm2-135m-f32", SMOLLM2_135M_Q8.config, GgmlType.F32);

        final String label;
        final LlamaConfig config;
        final GgmlType type;

        Shape(String label, LlamaConfig config, GgmlType type) {
            this.label = label;
            this.config = config;
            this.type = type;
        }

        public String label() {
            return label;
        }

        public LlamaConfig config() {
            return config;
        }
    }

    /** The shape with this label (the --synthetic option). */
    public static Shape shape(String label) {
        for (Shape s : Shape.values()) if (s.label.equalsIgnoreCase(label.strip())) return s;
        throw new InputException("--synthetic: unknown model '" + label + "' (known: "
                + String.join(", ", Arrays.stream(Shape.values()).map(Shape::label).toList()) + ")");
    }

    /** Writes the model to a temporary GGUF file and loads it. */
    public static LoadedModel load(Shape shape) {
        try {
            Path dir = Files.createTempDirectory("fdkvc-synthetic");
            Path file = dir.resolve(shape.label + ".gguf");
            try {
                writeGguf(shape, file);
                return GgufModelLoader.load(file);
            } finally {
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the synthetic model", e);
        }
    }

    /**
     * The model as GGUF: seeded uniform weights of unit output variance (so activations stay in
     * range through all layers), unit norm weights, tied embeddings, and a placeholder SentencePiece
     * vocabulary (it is for measuring, not for reading).
     */
    public static void writeGguf(Shape shape, Path file) {
        LlamaConfig c = shape.config;
        SplittableRandom rnd = new SplittableRandom(135);
        String a = c.architecture();
        GgufWriter w = new GgufWriter()
                .putString("general.architecture", a)
                .putString("general.name", "synthetic " + shape.label)
                .putUInt32(a + ".context_length", c.contextLength())
                .putUInt32(a + ".embedding_length", c.dim())
                .putUInt32(a + ".feed_forward_length", c.hiddenDim())
                .putUInt32(a + ".block_count", c.layers())
                .putUInt32(a + ".attention.head_count", c.heads())
                .putUInt32(a + ".attention.head_count_kv", c.kvHeads())
                .putFloat32(a + ".attention.layer_norm_rms_epsilon", c.normEps())
                .putFloat32(a + ".rope.freq_base", c.ropeTheta());
        String[] tokens = new String[c.vocabSize()];
        float[] scores = new float[c.vocabSize()];
        int[] types = new int[c.vocabSize()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : "t" + i;
            types[i] = i == 0 ? 2 : i < 3 ? 3 : 1;
            scores[i] = -i;
        }
        w.putString("tokenizer.ggml.model", "llama")
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.scores", GgufValueType.FLOAT32, scores)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, types)
                .putUInt32("tokenizer.ggml.bos_token_id", 1)
                .putUInt32("tokenizer.ggml.eos_token_id", 2);
        int qd = c.heads() * c.headDim(), kd = c.kvDim();
        matrix(w, "token_embd.weight", shape.type, rnd, c.vocabSize(), c.dim());
        vector(w, "output_norm.weight", c.dim());
        for (int l = 0; l < c.layers(); l++) {
            String p = "blk." + l + ".";
            vector(w, p + "attn_norm.weight", c.dim());
            matrix(w, p + "attn_q.weight", shape.type, rnd, qd, c.dim());
            matrix(w, p + "attn_k.weight", shape.type, rnd, kd, c.dim());
            matrix(w, p + "attn_v.weight", shape.type, rnd, kd, c.dim());
            matrix(w, p + "attn_output.weight", shape.type, rnd, c.dim(), qd);
            vector(w, p + "ffn_norm.weight", c.dim());
            matrix(w, p + "ffn_gate.weight", shape.type, rnd, c.hiddenDim(), c.dim());
            matrix(w, p + "ffn_down.weight", shape.type, rnd, c.dim(), c.hiddenDim());
            matrix(w, p + "ffn_up.weight", shape.type, rnd, c.hiddenDim(), c.dim());
        }
        w.write(file);
    }

    private static void matrix(GgufWriter w, String name, GgmlType type, SplittableRandom rnd, int rows, int cols) {
        float[] data = new float[rows * cols];
        double a = Math.sqrt(3.0 / cols);
        for (int i = 0; i < data.length; i++) data[i] = (float) ((rnd.nextDouble() * 2 - 1) * a);
        w.addTensor(name, type, data, cols, rows);
    }

    private static void vector(GgufWriter w, String name, int n) {
        float[] ones = new float[n];
        Arrays.fill(ones, 1f);
        w.addTensor(name, GgmlType.F32, ones, n);
    }
}
