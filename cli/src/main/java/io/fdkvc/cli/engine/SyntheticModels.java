package io.fdkvc.cli.engine;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.gguf.GgufWriter;
import io.fdkvc.engine.model.GgufModelLoader;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.modelwriter.GgufModelWriter;
import io.fdkvc.engine.modelwriter.Layout;
import io.fdkvc.engine.modelwriter.ModelShape;
import io.fdkvc.engine.modelwriter.TensorSpec;
import io.fdkvc.engine.modelwriter.TensorTypes;
import io.fdkvc.engine.modelwriter.VocabularySpec;
import io.fdkvc.engine.modelwriter.Weights;
import io.fdkvc.engine.tensor.GgmlType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Random-weight models shaped like real ones, for speed measurements where the real weights are
 * not available: same layer count, widths, heads, vocabulary and weight type, so the same bytes
 * are streamed and the same arithmetic is done per token. The model is written as a GGUF file to
 * a temporary directory and loaded (memory-mapped) like any other, then the file is deleted (the
 * mapping keeps it alive until the model is closed).
 */
public final class SyntheticModels {
    private SyntheticModels() {}

    /**
     * A known shape: the real model's architecture and dimensions (layers, widths, heads, head
     * dimension, vocabulary, RoPE bases, sliding window, partial rotary, YaRN / LongRoPE parameters
     * as its GGUF file carries them), with random weights. Where a real file has values no config
     * gives (Phi-4-mini's 48 LongRoPE factors), smooth stand-ins of the same length are written.
     */
    public enum Shape {
        /** SmolLM2-135M: tied embeddings, width 576 (not a multiple of 256, so K-quants fall back). */
        SMOLLM2_135M("smollm2-135m", new ModelShape(new Layout.Llama(), 576, 1536, 30, 9, 3, 64, 49152, 8192, 1e-5f,
                100000f, true)),
        /** Llama-3.2-1B: tied embeddings, 16 layers, width 2048, 32 heads / 8 KV heads, vocabulary 128256. */
        LLAMA_3_2_1B("llama-3.2-1b", new ModelShape(new Layout.Llama(), 2048, 8192, 16, 32, 8, 64, 128256, 131072, 1e-5f,
                500000f, true)),
        /** Qwen3-0.6B: 28 layers, width 1024, 16 heads of 128 / 8 KV heads, q/k norm, vocabulary 151936. */
        QWEN3_0_6B("qwen3-0.6b", new ModelShape(new Layout.Qwen3(), 1024, 3072, 28, 16, 8, 128, 151936, 40960, 1e-6f,
                1_000_000f, true)),
        /**
         * Gemma 3 1B: 26 layers, width 1152, 4 heads of 256 / 1 KV head, feed-forward 6912, vocabulary
         * 262144; sliding window 512 on five layers of six (RoPE base 10000 there, 1e6 on the global ones).
         */
        GEMMA3_1B("gemma3-1b", new ModelShape(new Layout.Gemma3(512, 10000f), 1152, 6912, 26, 4, 1, 256, 262144, 32768,
                1e-6f, 1_000_000f, true)),
        /**
         * Ministral 3 3B (text model): 26 layers, width 3072, 32 heads of 128 / 8 KV heads, feed-forward
         * 9216, vocabulary 131072; YaRN factor 16 over an original context of 16384 (beta 32 / 1, log
         * multiplier 1), attention temperature scale 0.1.
         */
        MINISTRAL3_3B("ministral3-3b", new ModelShape(new Layout.Mistral3(16f, 16384, 32f, 1f, 1f, 0.1f), 3072, 9216, 26, 32,
                8, 128, 131072, 262144, 1e-5f, 1_000_000f, true)),
        /** SmolLM3-3B: 36 layers (no RoPE in every fourth), width 2048, 16 heads of 128 / 4 KV heads, feed-forward 11008. */
        SMOLLM3_3B("smollm3-3b", new ModelShape(new Layout.SmolLM3(), 2048, 11008, 36, 16, 4, 128, 128256, 65536, 1e-6f,
                5_000_000f, true)),
        /**
         * Phi-4-mini: 32 layers, width 3072, 24 heads of 128 / 8 KV heads, fused q/k/v and gate/up,
         * feed-forward 8192, vocabulary 200064; RoPE over 96 of 128 dimensions (partial rotary 0.75),
         * LongRoPE from 4096 to 131072 positions.
         */
        PHI4_MINI("phi4-mini", new ModelShape(new Layout.Phi3(96, 4096, longRopeFactors(48, 1, 40), longRopeFactors(48, 1, 1.5),
                262144), 3072, 8192, 32, 24, 8, 128, 200064, 131072, 1e-5f, 10000f, true));

        final String label;
        final ModelShape shape;

        Shape(String label, ModelShape shape) {
            this.label = label;
            this.shape = shape;
        }

        public String label() {
            return label;
        }

        public ModelShape shape() {
            return shape;
        }
    }

    /** {@code n} factors rising smoothly from {@code first} to {@code last} (LongRoPE stand-ins: low frequencies stretched most). */
    static float[] longRopeFactors(int n, double first, double last) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) f[i] = (float) (first + (last - first) * Math.pow((double) i / (n - 1), 2));
        return f;
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

        /**
         * The types for a model of {@code layers} layers: vectors in F32; the tied embedding or the
         * classifier as "output", attn_v and ffn_down by name, every other matrix as "other".
         */
        public TensorTypes types(int layers) {
            return t -> {
                if (!t.role().matrix()) return GgmlType.F32;
                String role = switch (t.role()) {
                    case TOKEN_EMBEDDING, OUTPUT -> "output";
                    case ATTN_V -> "attn_v";
                    case FFN_DOWN -> "ffn_down";
                    default -> "other";
                };
                return typeOf(role, Math.max(t.layer(), 0), layers, (int) t.cols());
            };
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
     * The model as GGUF ({@link GgufModelWriter}): seeded uniform weights of unit output variance
     * (so activations stay in range through all layers), unit norm weights, and a placeholder
     * SentencePiece vocabulary (it is for measuring, not for reading; llama.cpp's tools read it too).
     */
    public static void writeGguf(Model model, Path file) {
        ModelShape s = model.shape.shape;
        GgufWriter w = GgufModelWriter.writer(s, VocabularySpec.sentencePiecePlaceholders(s.vocabSize()),
                Weights.random(135).withUnitNorms(), model.quant.types(s.layers()));
        w.putString("general.name", "synthetic " + model.label()).fileType(model.quant.fileType());
        w.write(file);
    }

    /** A tensor of the model in file order: a matrix of {@code type}, or (type null) a vector of {@code cols}. */
    public record Matrix(String name, GgmlType type, int rows, int cols) {}

    /** The model's tensors in file order, with their types. */
    public static List<Matrix> matrices(Model model) {
        ModelShape s = model.shape.shape;
        TensorTypes types = model.quant.types(s.layers());
        List<Matrix> all = new ArrayList<>();
        for (TensorSpec t : GgufModelWriter.tensors(s))
            all.add(new Matrix(t.name(), t.role().matrix() ? types.typeOf(t) : null, (int) t.rows(), (int) t.cols()));
        return all;
    }
}
