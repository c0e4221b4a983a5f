package io.fdkvc.engine.modelwriter;

import io.fdkvc.engine.gguf.GgufValueType;
import io.fdkvc.engine.gguf.GgufWriter;
import io.fdkvc.engine.modelwriter.TensorSpec.Role;
import io.fdkvc.engine.tensor.GgmlType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a complete model GGUF file, the inverse of the engine's loader: the metadata keys and
 * tensor names that llama.cpp's converter writes for the shape's {@link Layout}, the vocabulary,
 * and every tensor in the type {@link TensorTypes} gives it, with values from {@link Weights}.
 * Tensors are streamed (quantised a chunk of rows at a time), so a model of real size is written
 * without holding it in memory. llama.cpp's own tools load these files.
 *
 * <pre>{@code
 * GgufModelWriter.write(file, shape, VocabularySpec.sentencePiecePlaceholders(shape.vocabSize()),
 *         Weights.random(1), TensorTypes.uniform(GgmlType.Q8_0));
 * }</pre>
 */
public final class GgufModelWriter {
    private GgufModelWriter() {}

    /** Writes the model to {@code file}. */
    public static void write(Path file, ModelShape shape, VocabularySpec vocab, Weights weights, TensorTypes types) {
        writer(shape, vocab, weights, types).write(file);
    }

    /**
     * The model as a {@link GgufWriter} holding every key and tensor, for a caller that adds or
     * changes something before writing it (a test's broken file, {@code general.name}).
     */
    public static GgufWriter writer(ModelShape shape, VocabularySpec vocab, Weights weights, TensorTypes types) {
        if (vocab.size() != shape.vocabSize())
            throw new IllegalArgumentException("vocabulary of " + vocab.size() + " tokens for a shape of " + shape.vocabSize());
        GgufWriter w = new GgufWriter();
        metadata(w, shape);
        vocabulary(w, vocab);
        Layout.Phi3 phi = shape.layout() instanceof Layout.Phi3 p ? p : null;
        for (TensorSpec t : tensors(shape)) {
            if (phi != null && t.role() == Role.ROPE_FACTORS_LONG) w.addTensor(t.name(), GgmlType.F32, phi.longFactors(), t.dims());
            else if (phi != null && t.role() == Role.ROPE_FACTORS_SHORT) w.addTensor(t.name(), GgmlType.F32, phi.shortFactors(), t.dims());
            else w.addTensor(t.name(), types.typeOf(t), (GgufWriter.Rows) (first, count, into) -> weights.fill(t, first, count, into), t.dims());
        }
        return w;
    }

    /** The hyper-parameter keys: the shared ones, then the layout's own, as its converter writes them. */
    private static void metadata(GgufWriter w, ModelShape s) {
        String a = s.architecture() + ".";
        w.putString("general.architecture", s.architecture())
                .putUInt32(a + "context_length", s.contextLength())
                .putUInt32(a + "embedding_length", s.dim())
                .putUInt32(a + "feed_forward_length", s.hiddenDim())
                .putUInt32(a + "block_count", s.layers())
                .putUInt32(a + "attention.head_count", s.heads())
                .putUInt32(a + "attention.head_count_kv", s.kvHeads())
                .putFloat32(a + "attention.layer_norm_rms_epsilon", s.normEps())
                .putFloat32(a + "rope.freq_base", s.ropeTheta());
        boolean explicitHead = switch (s.layout()) {
            case Layout.Qwen3 q -> true;
            case Layout.Gemma3 g -> true;
            case Layout.Mistral3 m -> true;
            default -> s.headDim() * s.heads() != s.dim();
        };
        if (explicitHead) w.putUInt32(a + "attention.key_length", s.headDim()).putUInt32(a + "attention.value_length", s.headDim());
        switch (s.layout()) {
            // the converter's LlamaModel (llama, and the architectures built on it) writes these two
            case Layout.Llama l -> llamaFamily(w, s);
            case Layout.SmolLM3 l -> llamaFamily(w, s);
            case Layout.Mistral3 m -> {
                llamaFamily(w, s);
                w.putString(a + "rope.scaling.type", "yarn")
                        .putFloat32(a + "rope.scaling.factor", m.yarnFactor())
                        .putUInt32(a + "rope.scaling.original_context_length", m.originalContext())
                        .putFloat32(a + "rope.scaling.yarn_beta_fast", m.betaFast())
                        .putFloat32(a + "rope.scaling.yarn_beta_slow", m.betaSlow())
                        .putFloat32(a + "rope.scaling.yarn_log_multiplier", m.yarnLogMultiplier())
                        .putFloat32(a + "attention.temperature_scale", m.temperatureScale());
            }
            case Layout.Gemma3 g -> w.putUInt32(a + "attention.sliding_window", g.slidingWindow())
                    .putFloat32(a + "rope.freq_base_swa", g.ropeThetaSwa());
            case Layout.Phi3 p -> {
                w.putUInt32(a + "rope.dimension_count", p.ropeDims())
                        .putUInt32(a + "rope.scaling.original_context_length", p.originalContext())
                        .putUInt32(a + "attention.sliding_window", p.slidingWindow());
                if (p.longFactors() != null) w.putFloat32(a + "rope.scaling.attn_factor", longRopeAttentionFactor(s.contextLength(), p.originalContext()));
            }
            case Layout.Qwen2 q -> { }
            case Layout.Qwen3 q -> { }
        }
    }

    private static void llamaFamily(GgufWriter w, ModelShape s) {
        String a = s.architecture() + ".";
        w.putUInt32(a + "vocab_size", s.vocabSize()).putUInt32(a + "rope.dimension_count", s.headDim());
    }

    /**
     * LongRoPE's attention factor as llama.cpp's converter computes it for Phi-3:
     * {@code sqrt(1 + ln(scale) / ln(original))} with {@code scale = context / original}, 1 without extension.
     */
    public static float longRopeAttentionFactor(int context, int original) {
        double scale = (double) context / original;
        return scale <= 1 ? 1f : (float) Math.sqrt(1 + Math.log(scale) / Math.log(original));
    }

    private static void vocabulary(GgufWriter w, VocabularySpec v) {
        w.putString("tokenizer.ggml.model", v.model());
        if (v.pre() != null) w.putString("tokenizer.ggml.pre", v.pre());
        w.putArray("tokenizer.ggml.tokens", GgufValueType.STRING, v.tokens());
        if (v.scores() != null) w.putArray("tokenizer.ggml.scores", GgufValueType.FLOAT32, v.scores());
        if (v.types() != null) w.putArray("tokenizer.ggml.token_type", GgufValueType.INT32, v.types());
        if (v.merges() != null) w.putArray("tokenizer.ggml.merges", GgufValueType.STRING, v.merges());
        if (v.bos() >= 0) w.putUInt32("tokenizer.ggml.bos_token_id", v.bos());
        if (v.eos() >= 0) w.putUInt32("tokenizer.ggml.eos_token_id", v.eos());
        if (v.chatTemplate() != null) w.putString("tokenizer.chat_template", v.chatTemplate());
    }

    /** Every tensor of the shape in file order, with llama.cpp's names. */
    public static List<TensorSpec> tensors(ModelShape s) {
        List<TensorSpec> all = new ArrayList<>();
        Layout layout = s.layout();
        int dim = s.dim(), qd = s.qDim(), kd = s.kvDim(), ff = s.hiddenDim(), hd = s.headDim();
        all.add(new TensorSpec("token_embd.weight", Role.TOKEN_EMBEDDING, -1, s.vocabSize(), dim));
        if (layout instanceof Layout.Phi3 p && p.longFactors() != null) {
            all.add(new TensorSpec("rope_factors_long.weight", Role.ROPE_FACTORS_LONG, -1, 1, p.ropeDims() / 2));
            all.add(new TensorSpec("rope_factors_short.weight", Role.ROPE_FACTORS_SHORT, -1, 1, p.ropeDims() / 2));
        }
        boolean phi = layout instanceof Layout.Phi3, gemma = layout instanceof Layout.Gemma3;
        boolean qkNorm = gemma || layout instanceof Layout.Qwen3, biases = layout instanceof Layout.Qwen2;
        for (int l = 0; l < s.layers(); l++) {
            String p = "blk." + l + ".";
            all.add(new TensorSpec(p + "attn_norm.weight", Role.ATTN_NORM, l, 1, dim));
            if (phi) {
                all.add(new TensorSpec(p + "attn_qkv.weight", Role.ATTN_QKV, l, qd + 2L * kd, dim));
            } else {
                all.add(new TensorSpec(p + "attn_q.weight", Role.ATTN_Q, l, qd, dim));
                all.add(new TensorSpec(p + "attn_k.weight", Role.ATTN_K, l, kd, dim));
                all.add(new TensorSpec(p + "attn_v.weight", Role.ATTN_V, l, kd, dim));
            }
            if (biases) {
                all.add(new TensorSpec(p + "attn_q.bias", Role.ATTN_Q_BIAS, l, 1, qd));
                all.add(new TensorSpec(p + "attn_k.bias", Role.ATTN_K_BIAS, l, 1, kd));
                all.add(new TensorSpec(p + "attn_v.bias", Role.ATTN_V_BIAS, l, 1, kd));
            }
            if (qkNorm) {
                all.add(new TensorSpec(p + "attn_q_norm.weight", Role.ATTN_Q_NORM, l, 1, hd));
                all.add(new TensorSpec(p + "attn_k_norm.weight", Role.ATTN_K_NORM, l, 1, hd));
            }
            all.add(new TensorSpec(p + "attn_output.weight", Role.ATTN_OUTPUT, l, dim, qd));
            if (gemma) all.add(new TensorSpec(p + "post_attention_norm.weight", Role.ATTN_POST_NORM, l, 1, dim));
            all.add(new TensorSpec(p + "ffn_norm.weight", Role.FFN_NORM, l, 1, dim));
            if (phi) {
                all.add(new TensorSpec(p + "ffn_up.weight", Role.FFN_GATE_UP, l, 2L * ff, dim));
            } else {
                all.add(new TensorSpec(p + "ffn_gate.weight", Role.FFN_GATE, l, ff, dim));
                all.add(new TensorSpec(p + "ffn_up.weight", Role.FFN_UP, l, ff, dim));
            }
            all.add(new TensorSpec(p + "ffn_down.weight", Role.FFN_DOWN, l, dim, ff));
            if (gemma) all.add(new TensorSpec(p + "post_ffw_norm.weight", Role.FFN_POST_NORM, l, 1, dim));
        }
        all.add(new TensorSpec("output_norm.weight", Role.OUTPUT_NORM, -1, 1, dim));
        if (!s.tiedEmbeddings()) all.add(new TensorSpec("output.weight", Role.OUTPUT, -1, s.vocabSize(), dim));
        return all;
    }
}
