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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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

    /** A known shape (architecture llama, RoPE without scaling: the scaling does not change the cost). */
    public enum Shape {
        /** SmolLM2-135M: tied embeddings, width 576 (not a multiple of 256, so K-quants fall back). */
        SMOLLM2_135M("smollm2-135m", new LlamaConfig("llama", 576, 1536, 30, 9, 3, 64, 49152, 8192, 1e-5f,
                100000f, "none", 1f, 0, false, true)),
        /** Llama-3.2-1B: tied embeddings, 16 layers, width 2048, 32 heads / 8 KV heads, vocabulary 128256. */
        LLAMA_3_2_1B("llama-3.2-1b", new LlamaConfig("llama", 2048, 8192, 16, 32, 8, 64, 128256, 131072, 1e-5f,
                500000f, "none", 1f, 0, false, true));

        final String label;
        final LlamaConfig config;

        Shape(String label, LlamaConfig config) {
            this.label = label;
            this.config = config;
        }

        public String label() {
            return label;
        }

        public LlamaConfig config() {
            return config;
        }
    }

    /**
     * A weight-type preset: one {@link GgmlType} for every matrix, or llama-quantize's mixed
     * {@code Q4_K_M} / {@code Q5_K_M}. Types of 256-weight blocks on rows that are not a multiple
     * of 256 fall back as llama-quantize does (Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, Q2_K and
     * Q3_K to Q4_0, IQ4_XS to IQ4_NL), so a file made here has the types llama-quantize gives.
     */
    public record Quant(String name, GgmlType base, int fileType) {
        /** The presets with their llama_ftype ids (llama.h). */
        public static Quant of(String name) {
            String n = name.strip().toUpperCase(java.util.Locale.ROOT);
            return switch (n) {
                case "Q4_K_M" -> new Quant(n, GgmlType.Q4_K, 15);
                case "Q5_K_M" -> new Quant(n, GgmlType.Q5_K, 17);
                default -> {
                    GgmlType t;
                    try {
                        t = GgmlType.valueOf(n);
                    } catch (IllegalArgumentException e) {
                        throw new InputException("--quant: unknown type '" + name + "' (known: " + String.join(", ", names()) + ")");
                    }
                    yield new Quant(n, t, GgufWriter.fileTypeOf(t));
                }
            };
        }

        public static List<String> names() {
            List<String> all = new ArrayList<>();
            for (GgmlType t : GgmlType.values()) all.add(t.name());
            all.add("Q4_K_M");
            all.add("Q5_K_M");
            return all;
        }

        private boolean mixed() {
            return name.endsWith("_M");
        }

        /**
         * The type of a matrix with {@code cols} columns. {@code role}: "output" (the tied
         * embedding or output matrix), "attn_v", "ffn_down" or "other". For the _M presets, as
         * llama-quantize for the llama architecture: output Q6_K; attn_v and ffn_down Q6_K in the
         * layers that get more bits (the first and last eighth, and every third in between).
         */
        public GgmlType typeOf(String role, int layer, int layers, int cols) {
            GgmlType t = base;
            if (mixed()) {
                boolean more = layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
                if (role.equals("output")) t = cols % 256 != 0 ? GgmlType.Q8_0 : GgmlType.Q6_K;
                else if ((role.equals("attn_v") || role.equals("ffn_down")) && more) t = GgmlType.Q6_K;
            }
            if (cols % t.blockSize != 0) {
                t = switch (t) {
                    case Q4_K -> GgmlType.Q5_0;
                    case Q5_K -> GgmlType.Q5_1;
                    case Q6_K -> GgmlType.Q8_0;
                    case Q2_K, Q3_K -> GgmlType.Q4_0;
                    case IQ4_XS -> GgmlType.IQ4_NL;
                    default -> t;
                };
                if (cols % t.blockSize != 0) t = GgmlType.F16;
            }
            return t;
        }
    }

    /**
     * A shape with a preset: {@code --synthetic NAME [--quant TYPE]}. The older labels
     * {@code smollm2-135m-q8} and {@code smollm2-135m-f32} still name the SmolLM2 shape in Q8_0 / F32.
     */
    public record Model(Shape shape, Quant quant) {
        public String label() {
            return shape.label + "-" + quant.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** The shape with this label (the --synthetic option) in {@code quant} (null: Q8_0, or the label's own type). */
    public static Model model(String label, String quant) {
        String l = label.strip().toLowerCase(java.util.Locale.ROOT);
        String implied = null;
        if (l.equals("smollm2-135m-q8")) {
            l = "smollm2-135m";
            implied = "Q8_0";
        } else if (l.equals("smollm2-135m-f32")) {
            l = "smollm2-135m";
            implied = "F32";
        }
        if (implied != null && quant != null && !Quant.of(quant).name().equals(implied))
            throw new InputException("--quant " + quant + " contradicts --synthetic " + label + " (use --synthetic " + l + ")");
        for (Shape s : Shape.values())
            if (s.label.equals(l)) return new Model(s, Quant.of(quant != null ? quant : implied != null ? implied : "Q8_0"));
        throw new InputException("--synthetic: unknown model '" + label + "' (known: "
                + String.join(", ", Arrays.stream(Shape.values()).map(Shape::label).toList()) + ", smollm2-135m-q8, smollm2-135m-f32)");
    }

    /** Writes the model to a temporary GGUF file (or to {@code keep}, which stays) and loads it. */
    public static LoadedModel load(Model model, Path keep) {
        try {
            if (keep != null) {
                writeGguf(model, keep);
                return GgufModelLoader.load(keep);
            }
            Path dir = Files.createTempDirectory("fdkvc-synthetic");
            Path file = dir.resolve(model.label() + ".gguf");
            try {
                writeGguf(model, file);
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
     * vocabulary (it is for measuring, not for reading; llama.cpp's tools read it too).
     */
    public static void writeGguf(Model model, Path file) {
        Shape shape = model.shape;
        Quant q = model.quant;
        LlamaConfig c = shape.config;
        SplittableRandom rnd = new SplittableRandom(135);
        String a = c.architecture();
        GgufWriter w = new GgufWriter()
                .putString("general.architecture", a)
                .putString("general.name", "synthetic " + model.label())
                .fileType(q.fileType())
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
        int codePoint = FIRST_PLACEHOLDER;
        for (int i = 0; i < tokens.length; i++) {
            if (i < 3) {
                tokens[i] = i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>";
                types[i] = i == 0 ? 2 : 3;
            } else if (i < 3 + 256) {
                tokens[i] = String.format(java.util.Locale.ROOT, "<0x%02X>", i - 3);
                types[i] = 6;
            } else {
                codePoint = nextPlaceholder(codePoint);
                tokens[i] = Character.toString(codePoint++);
                types[i] = 1;
            }
            scores[i] = -i;
        }
        w.putString("tokenizer.ggml.model", "llama")
                .putArray("tokenizer.ggml.tokens", GgufValueType.STRING, tokens)
                .putArray("tokenizer.ggml.scores", GgufValueType.FLOAT32, scores)
                .putArray("tokenizer.ggml.token_type", GgufValueType.INT32, types)
                .putUInt32("tokenizer.ggml.bos_token_id", 1)
                .putUInt32("tokenizer.ggml.eos_token_id", 2);
        for (Matrix m : matrices(model)) {
            if (m.type == null) vector(w, m.name, m.cols);
            else matrix(w, m.name, m.type, rnd, m.rows, m.cols);
        }
        w.write(file);
    }

    // The placeholder vocabulary: the control tokens, SentencePiece's 256 byte tokens (so that any
    // text has a tokenisation, as llama.cpp requires: it looks up the newline's byte token), then
    // one token per code point from the CJK ideographs on. A token is a single code point that no
    // other token's text contains, so every engine detokenises a reply and tokenises it back into
    // the same ids, which a server's prefix cache depends on when a client resends the history.
    private static final int FIRST_PLACEHOLDER = 0x4E00;

    /**
     * {@code cp}, or the next code point after it that UTF-8 can carry in text: no surrogate, no
     * noncharacter. Unassigned code points are kept, so that the file does not depend on the JDK's
     * Unicode version.
     */
    static int nextPlaceholder(int cp) {
        while (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE || cp >= 0xFDD0 && cp <= 0xFDEF || (cp & 0xFFFE) == 0xFFFE) {
            cp++;
        }
        return cp;
    }

    /** A tensor of the model in file order: a matrix of {@code type}, or (type null) a norm vector of {@code cols}. */
    public record Matrix(String name, GgmlType type, int rows, int cols) {}

    /** The model's tensors in the order llama.cpp's converter writes them, with their types. */
    public static List<Matrix> matrices(Model model) {
        LlamaConfig c = model.shape.config;
        Quant q = model.quant;
        int qd = c.heads() * c.headDim(), kd = c.kvDim(), n = c.layers();
        List<Matrix> all = new ArrayList<>();
        all.add(new Matrix("token_embd.weight", q.typeOf("output", 0, n, c.dim()), c.vocabSize(), c.dim()));
        all.add(new Matrix("output_norm.weight", null, 1, c.dim()));
        for (int l = 0; l < n; l++) {
            String p = "blk." + l + ".";
            all.add(new Matrix(p + "attn_norm.weight", null, 1, c.dim()));
            all.add(new Matrix(p + "attn_q.weight", q.typeOf("other", l, n, c.dim()), qd, c.dim()));
            all.add(new Matrix(p + "attn_k.weight", q.typeOf("other", l, n, c.dim()), kd, c.dim()));
            all.add(new Matrix(p + "attn_v.weight", q.typeOf("attn_v", l, n, c.dim()), kd, c.dim()));
            all.add(new Matrix(p + "attn_output.weight", q.typeOf("other", l, n, qd), c.dim(), qd));
            all.add(new Matrix(p + "ffn_norm.weight", null, 1, c.dim()));
            all.add(new Matrix(p + "ffn_gate.weight", q.typeOf("other", l, n, c.dim()), c.hiddenDim(), c.dim()));
            all.add(new Matrix(p + "ffn_down.weight", q.typeOf("ffn_down", l, n, c.hiddenDim()), c.dim(), c.hiddenDim()));
            all.add(new Matrix(p + "ffn_up.weight", q.typeOf("other", l, n, c.dim()), c.hiddenDim(), c.dim()));
        }
        return all;
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
