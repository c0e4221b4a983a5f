package io.fdkvc.cli.engine;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.model.LlamaConfig;
import io.fdkvc.engine.model.LlamaWeights;
import io.fdkvc.engine.model.LoadedModel;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tensor.GgmlType;
import io.fdkvc.engine.tensor.Quantizer;
import io.fdkvc.engine.tensor.Tensors;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Random-weight models shaped like real ones, for speed measurements where the real weights are
 * not available: same layer count, widths, heads, vocabulary and weight type, so the same bytes
 * are streamed and the same arithmetic done per token. The weights live off-heap, as a
 * memory-mapped file's would.
 */
public final class SyntheticModels {
    private SyntheticModels() {}

    /** A known shape. */
    public enum Shape {
        /** SmolLM2-135M (llama architecture, tied embeddings) with every matrix in Q8_0. */
        SMOLLM2_135M_Q8("smollm2-135m-q8", new LlamaConfig("llama", 576, 1536, 30, 9, 3, 64, 49152, 8192, 1e-5f,
                100000f, "none", 1f, 0, false, true), GgmlType.Q8_0),
        /** The same shape in F32 (what the Q8_0 kernels are compared with). */
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

    /**
     * The model with seeded uniform weights of unit output variance (so activations stay in
     * range through 30 layers) and unit norm weights. Its vocabulary is placeholder tokens: it is
     * for measuring, not for reading.
     */
    public static LoadedModel load(Shape shape) {
        LlamaConfig c = shape.config;
        Arena arena = Arena.ofShared();
        SplittableRandom rnd = new SplittableRandom(135);
        int L = c.layers(), qd = c.heads() * c.headDim(), kd = c.kvDim();
        FloatTensor emb = matrix(arena, shape.type, rnd, c.vocabSize(), c.dim());
        FloatTensor[] wq = new FloatTensor[L], wk = new FloatTensor[L], wv = new FloatTensor[L], wo = new FloatTensor[L];
        FloatTensor[] gate = new FloatTensor[L], down = new FloatTensor[L], up = new FloatTensor[L];
        float[][] attnNorm = new float[L][], ffnNorm = new float[L][];
        for (int l = 0; l < L; l++) {
            wq[l] = matrix(arena, shape.type, rnd, qd, c.dim());
            wk[l] = matrix(arena, shape.type, rnd, kd, c.dim());
            wv[l] = matrix(arena, shape.type, rnd, kd, c.dim());
            wo[l] = matrix(arena, shape.type, rnd, c.dim(), qd);
            gate[l] = matrix(arena, shape.type, rnd, c.hiddenDim(), c.dim());
            down[l] = matrix(arena, shape.type, rnd, c.dim(), c.hiddenDim());
            up[l] = matrix(arena, shape.type, rnd, c.hiddenDim(), c.dim());
            attnNorm[l] = ones(c.dim());
            ffnNorm[l] = ones(c.dim());
        }
        LlamaWeights w = new LlamaWeights(emb, attnNorm, wq, wk, wv, wo, null, null, null, ffnNorm, gate, down, up,
                ones(c.dim()), emb);
        String[] tokens = new String[c.vocabSize()];
        for (int i = 0; i < tokens.length; i++) tokens[i] = i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : "t" + i;
        Vocabulary v = new Vocabulary("llama", null, tokens, new float[tokens.length], null, null, 1, 2, null);
        return new LoadedModel(c, w, v, arena);
    }

    private static FloatTensor matrix(Arena arena, GgmlType type, SplittableRandom rnd, int rows, int cols) {
        long rowBytes = type.bytes(cols);
        MemorySegment seg = arena.allocate(rowBytes * rows, 64);
        float[] row = new float[cols];
        double a = Math.sqrt(3.0 / cols);
        for (int r = 0; r < rows; r++) {
            for (int i = 0; i < cols; i++) row[i] = (float) ((rnd.nextDouble() * 2 - 1) * a);
            byte[] q = Quantizer.quantize(type, row);
            MemorySegment.copy(q, 0, seg, ValueLayout.JAVA_BYTE, r * rowBytes, q.length);
        }
        return Tensors.view(type, seg, rows, cols);
    }

    private static float[] ones(int n) {
        float[] a = new float[n];
        Arrays.fill(a, 1f);
        return a;
    }
}
