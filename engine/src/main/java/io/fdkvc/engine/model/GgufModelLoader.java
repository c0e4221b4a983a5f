package io.fdkvc.engine.model;

import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.gguf.GgufFile;
import io.fdkvc.engine.gguf.GgufTensorInfo;
import io.fdkvc.engine.tensor.FloatTensor;
import io.fdkvc.engine.tokenizer.Vocabulary;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Reads a model of one of the GGUF architectures of {@link Architecture#ALL} (llama, qwen2, qwen3,
 * gemma3, phi3, mistral3, smollm3) from a GGUF file: hyper-parameters from {@code {arch}.*} metadata, weights as views of the
 * mapped file, the tokenizer from {@code tokenizer.*}. What differs between architectures (biases,
 * q/k norms, RoPE layout, fused tensors, the {@link Blocks}) comes from the file's {@link Architecture}; any other architecture is
 * refused by name. Every tensor's presence and shape is checked against the config, so a file that
 * loads can be run. The returned model owns the mapping; close it.
 */
public final class GgufModelLoader {
    private GgufModelLoader() {}

    /** Opens {@code path} and loads the model; the result's resource is the mapped file. */
    public static LoadedModel load(Path path) {
        GgufFile f = GgufFile.open(path);
        try {
            return load(f);
        } catch (RuntimeException | Error e) {
            f.close();
            throw e;
        }
    }

    /** Loads from an open file; the result's resource is {@code f}. */
    public static LoadedModel load(GgufFile f) {
        Reader r = new Reader(f);
        LlamaConfig config = r.config();
        // with the file's add_bos_token / add_space_prefix, so that every user of the model tokenises alike
        Vocabulary vocab = io.fdkvc.engine.tokenizer.GgufVocabulary.withFlags(r.vocabulary(config.vocabSize()), f);
        LlamaWeights weights = r.weights(config);
        // NaN/Inf weights: refused naming the tensor; before the row-lane copies, whose making
        // lets the file's pages of their tensors go (a check after it read them all back in)
        io.fdkvc.engine.gguf.FiniteCheck.check(f);
        weights.prepareDecode();
        return new LoadedModel(config, weights, vocab, f);
    }

    /** Parses one file; every message names it. */
    private static final class Reader implements ModelMetadata {
        private final GgufFile f;
        private String arch;
        private Architecture architecture;
        private boolean tied;

        Reader(GgufFile f) {
            this.f = f;
        }

        @Override
        public ModelFormatException fail(String problem) {
            return new ModelFormatException("GGUF file " + f.path() + ": " + problem);
        }

        private Object raw(String key, boolean required) {
            Object v = f.metadata().get(key);
            if (v == null && required) throw fail("missing metadata '" + key + "'");
            return v;
        }

        /** A positive int, or {@code def} when absent (def < 0: required). */
        private int positiveIntKey(String key, int def) {
            Object v = raw(key, def < 0);
            if (v == null) return def;
            if (!(v instanceof Long l))
                throw fail("metadata '" + key + "' is a " + v.getClass().getSimpleName() + ", expected one integer");
            if (l < 1 || l > Integer.MAX_VALUE) throw fail("metadata '" + key + "' = " + l + " is not a positive 32-bit integer");
            return (int) (long) l;
        }

        // ModelMetadata: the architecture's own keys, by suffix
        @Override public boolean has(String suffix) { return f.metadata().containsKey(architecture.key(suffix)); }
        @Override public int positiveInt(String suffix, int def) { return positiveIntKey(architecture.key(suffix), def); }
        @Override public double number(String suffix, double def) { return number(architecture.key(suffix), def, false); }

        @Override
        public boolean[] flags(String suffix) {
            return f.metadata().get(architecture.key(suffix)) instanceof boolean[] b ? b : null;
        }

        private double number(String key, double def, boolean required) {
            Object v = raw(key, required);
            if (v == null) return def;
            if (v instanceof Double d) return d;
            if (v instanceof Long l) return l;
            throw fail("metadata '" + key + "' is a " + v.getClass().getSimpleName() + ", expected a number");
        }

        LlamaConfig config() {
            arch = f.get("general.architecture", String.class);
            if (arch == null) throw fail("missing metadata 'general.architecture'");
            try {
                architecture = Architecture.forName(arch);
            } catch (ModelFormatException e) {
                throw fail(e.getMessage());
            }
            boolean neox = architecture.ropeNeox();
            // every key below is the architecture's ({arch}.embedding_length, ...)
            int dim = positiveIntKey(architecture.key("embedding_length"), -1);
            int hidden = positiveIntKey(architecture.key("feed_forward_length"), -1);
            int layers = positiveIntKey(architecture.key("block_count"), -1);
            int heads = positiveIntKey(architecture.key("attention.head_count"), -1);
            int kvHeads = positiveIntKey(architecture.key("attention.head_count_kv"), heads);
            if (heads % kvHeads != 0) throw fail(heads + " attention heads are not a multiple of " + kvHeads + " KV heads");
            if (dim % heads != 0 && !f.metadata().containsKey(architecture.key("attention.key_length")))
                throw fail("embedding length " + dim + " is not a multiple of " + heads + " heads and no key_length is given");
            int headDim = positiveIntKey(architecture.key("attention.key_length"), dim / heads);
            int valueDim = positiveIntKey(architecture.key("attention.value_length"), headDim);
            if (valueDim != headDim) throw fail("value length " + valueDim + " differs from key length " + headDim + " (not supported)");
            if (headDim % 2 != 0) throw fail("head dimension " + headDim + " is odd; RoPE needs pairs");
            int ropeDim = positiveIntKey(architecture.key("rope.dimension_count"), headDim);
            if (ropeDim != headDim && !(architecture.partialRotary() && neox))
                throw fail("RoPE over " + ropeDim + " of " + headDim + " head dimensions (partial rotary) is not supported for architecture '" + arch + "'");
            if (ropeDim > headDim || ropeDim % 2 != 0) throw fail("RoPE over " + ropeDim + " of " + headDim + " head dimensions: must be even and at most the head");
            for (String cap : new String[] {"attn_logit_softcapping", "final_logit_softcapping"}) {
                double v = number(architecture.key(cap), 0, false);
                if (v != 0) throw fail(arch + "." + cap + " = " + v + ": logit soft-capping is not supported");
            }
            int context = positiveIntKey(architecture.key("context_length"), -1);
            double eps = number(architecture.key("attention.layer_norm_rms_epsilon"), 0, true);
            if (!(eps > 0 && eps < 1)) throw fail("RMSNorm epsilon " + eps + " is not in (0, 1)");
            double theta = number(architecture.key("rope.freq_base"), 10000, false);
            if (!(theta > 1 && Double.isFinite(theta))) throw fail("RoPE base " + theta + " is not a finite number above 1");

            GgufTensorInfo emb = f.tensorInfo("token_embd.weight");
            expectShape(emb, dim, -1);
            long vocab = emb.rows();
            if (vocab < 1 || vocab > Integer.MAX_VALUE) throw fail("token_embd.weight has " + vocab + " rows");
            int declaredVocab = positiveIntKey(architecture.key("vocab_size"), (int) vocab);
            if (declaredVocab != vocab) throw fail(arch + ".vocab_size " + declaredVocab + " differs from the " + vocab + " rows of token_embd.weight");

            String scaling = "none";
            float factor = 1;
            int orig = 0;
            String type = f.get(architecture.key("rope.scaling.type"), String.class);
            if (type != null && !type.equals("none")) {
                switch (type) {
                    case "linear" -> {
                        factor = (float) number(architecture.key("rope.scaling.factor"), 0, true);
                        if (!(factor > 0)) throw fail("RoPE scaling factor " + factor + " is not positive");
                    }
                    case "llama3", "yarn" -> {
                        factor = (float) number(architecture.key("rope.scaling.factor"), 0, true);
                        if (!(factor >= 1)) throw fail(type + " RoPE scaling factor " + factor + " is below 1");
                        orig = positiveIntKey(architecture.key("rope.scaling.original_context_length"), type.equals("yarn") ? context : -1);
                    }
                    default -> throw fail("RoPE scaling '" + type + "' is not supported (none, linear, llama3, yarn)");
                }
                scaling = type;
            }
            tied = !f.hasTensor("output.weight") || sameData("output.weight", "token_embd.weight");
            LlamaConfig c = new LlamaConfig(arch, dim, hidden, layers, heads, kvHeads, headDim, (int) vocab, context,
                    (float) eps, (float) theta, scaling, factor, orig, neox, tied);
            if (f.hasTensor("rope_freqs.weight")) c = withRopeFreqs(c);
            Rope global = globalRope(c, ropeDim);
            return c.withBlocks(architecture.blocks(this, layers, dim, heads, headDim, global));
        }

        /**
         * The RoPE of the global layers as llama.cpp reads it for every architecture: the config's
         * base and scaling over {@code dims} coordinates; for YaRN the beta boundaries and the
         * magnitude on cos and sin (llama.cpp's: mscale(factor, 1) / mscale(factor, m) with the
         * file's {@code yarn_log_multiplier} m, or mscale(factor, 1) = 1 + 0.1 ln(factor) without); times
         * {@code rope.scaling.attn_factor}; LongRoPE's short and long factors when the file has
         * {@code rope_factors_short/long.weight}.
         */
        private Rope globalRope(LlamaConfig c, int dims) {
            Rope plain = Rope.of(c.ropeTheta(), dims, c.ropeScaling(), c.ropeScaleFactor(), c.ropeOrigContext());
            float betaFast = 32, betaSlow = 1, magnitude = 1;
            if (plain.scaling() == Rope.Scaling.YARN) {
                betaFast = (float) number(architecture.key("rope.scaling.yarn_beta_fast"), 32, false);
                betaSlow = (float) number(architecture.key("rope.scaling.yarn_beta_slow"), 1, false);
                double logMul = number(architecture.key("rope.scaling.yarn_log_multiplier"), 0, false);
                double f = c.ropeScaleFactor();
                magnitude = (float) (logMul != 0 ? mscale(f, 1) / mscale(f, logMul) : mscale(f, 1));
            }
            double attnFactor = number(architecture.key("rope.scaling.attn_factor"), 1, false);
            if (!(attnFactor > 0 && Double.isFinite(attnFactor))) throw fail("RoPE attention factor " + attnFactor + " is not a positive number");
            magnitude *= (float) attnFactor;
            float[] shortFactors = null, longFactors = null;
            int original = plain.originalContext();
            if (f.hasTensor("rope_factors_short.weight") || f.hasTensor("rope_factors_long.weight")) {
                // the context up to which the short factors apply
                original = positiveIntKey(architecture.key("rope.scaling.original_context_length"), c.contextLength());
                if (!f.hasTensor("rope_factors_short.weight") || !f.hasTensor("rope_factors_long.weight"))
                    throw fail("LongRoPE needs both rope_factors_short.weight and rope_factors_long.weight");
                shortFactors = factors("rope_factors_short.weight", dims);
                longFactors = factors("rope_factors_long.weight", dims);
            }
            return new Rope(plain.theta(), dims, plain.scaling(), plain.factor(), original, betaFast, betaSlow,
                    magnitude, shortFactors, longFactors);
        }

        /** YaRN's magnitude for a context scaled by {@code scale} (llama.cpp's get_mscale). */
        private static double mscale(double scale, double m) {
            return scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1;
        }

        private float[] factors(String name, int dims) {
            float[] a = vector(name, dims / 2);
            for (float x : a) if (!(x > 0 && Float.isFinite(x))) throw fail("tensor '" + name + "' has the factor " + x + ", not a positive number");
            return a;
        }

        /**
         * Llama 3.1+ GGUF files carry the RoPE frequency divisors as a tensor instead of scaling
         * metadata. The forward pass computes llama3 scaling from (factor, original context) with
         * low/high frequency factors 1 and 4, so the tensor is accepted only when it equals what
         * those parameters give: factor = its largest divisor, original context from the metadata
         * or Llama 3's 8192.
         */
        private LlamaConfig withRopeFreqs(LlamaConfig c) {
            float[] div = f.floats("rope_freqs.weight");
            int half = c.headDim() / 2;
            if (div.length != half) throw fail("rope_freqs.weight has " + div.length + " values, expected headDim/2 = " + half);
            if (!c.ropeScaling().equals("none") && !c.ropeScaling().equals("llama3"))
                throw fail("rope_freqs.weight together with RoPE scaling '" + c.ropeScaling() + "' is not supported");
            float factor = 0;
            for (float d : div) factor = Math.max(factor, d);
            int orig = c.ropeOrigContext() > 0 ? c.ropeOrigContext() : positiveIntKey(architecture.key("rope.scaling.original_context_length"), 8192);
            if (c.ropeScaling().equals("llama3")) factor = c.ropeScaleFactor();
            for (int j = 0; j < half; j++) {
                double freq = 1.0 / Math.pow(c.ropeTheta(), 2.0 * j / c.headDim());
                double wavelen = 2 * Math.PI / freq, expect;
                if (wavelen < orig / 4.0) expect = 1;
                else if (wavelen > orig) expect = factor;
                else {
                    double smooth = (orig / wavelen - 1) / (4 - 1);
                    expect = 1 / ((1 - smooth) / factor + smooth);
                }
                if (Math.abs(div[j] - expect) > 1e-3 * expect)
                    throw fail("rope_freqs.weight[" + j + "] = " + div[j] + " does not match llama3 RoPE scaling with factor "
                            + factor + ", original context " + orig + ", low/high frequency factors 1/4 (expected " + expect + ")");
            }
            return new LlamaConfig(c.architecture(), c.dim(), c.hiddenDim(), c.layers(), c.heads(), c.kvHeads(), c.headDim(),
                    c.vocabSize(), c.contextLength(), c.normEps(), c.ropeTheta(), "llama3", factor, orig, c.ropeNeox(),
                    c.tiedEmbeddings());
        }

        /** Same type, shape and bytes: a converter that wrote the shared embedding twice. */
        private boolean sameData(String a, String b) {
            GgufTensorInfo ta = f.tensorInfo(a), tb = f.tensorInfo(b);
            if (ta.typeId() != tb.typeId() || !java.util.Arrays.equals(ta.dims(), tb.dims()) || ta.type() == null) return false;
            MemorySegment sa = f.tensorData(a), sb = f.tensorData(b);
            return sa.mismatch(sb) == -1;
        }

        /** ne[0] must be {@code cols}; the product of the others {@code rows} (any, if rows < 0). */
        private void expectShape(GgufTensorInfo t, long cols, long rows) {
            if (t.cols() != cols || (rows >= 0 && t.rows() != rows))
                throw fail("tensor '" + t.name() + "' has shape " + java.util.Arrays.toString(t.dims()) + " (ne0, ne1, ...), expected ["
                        + cols + (rows >= 0 ? ", " + rows : ", *") + "]");
        }

        private FloatTensor matrix(String name, int rows, int cols) {
            expectShape(f.tensorInfo(name), cols, rows);
            return f.tensor(name);
        }

        /** Rows [from, from + n) of matrix {@code name} (cols wide) as a tensor of their own: a view of the same bytes. */
        private FloatTensor rows(String name, int from, int n, int cols) {
            io.fdkvc.engine.tensor.GgmlType type = f.tensorInfo(name).type();
            if (type == null) return f.tensor(name); // names the unsupported type
            long rowBytes = type.bytes(cols);
            return io.fdkvc.engine.tensor.Tensors.view(type, f.tensorData(name).asSlice(from * rowBytes, n * rowBytes), n, cols);
        }

        private float[] vector(String name, int n) {
            expectShape(f.tensorInfo(name), n, 1);
            return f.floats(name);
        }

        LlamaWeights weights(LlamaConfig c) {
            int L = c.layers(), dim = c.dim(), qDim = c.heads() * c.headDim(), kvDim = c.kvDim(), hid = c.hiddenDim();
            FloatTensor emb = matrix("token_embd.weight", c.vocabSize(), dim);
            float[][] attnNorm = new float[L][], ffnNorm = new float[L][];
            FloatTensor[] wq = new FloatTensor[L], wk = new FloatTensor[L], wv = new FloatTensor[L], wo = new FloatTensor[L];
            FloatTensor[] gate = new FloatTensor[L], down = new FloatTensor[L], up = new FloatTensor[L];
            Architecture a = architecture;
            boolean biases = switch (a.qkvBiases()) {
                case NONE -> false;
                case REQUIRED -> true;
                case OPTIONAL -> f.hasTensor(Architecture.layerTensor(0, "attn_q.bias"));
            };
            if (!biases && f.hasTensor(Architecture.layerTensor(0, "attn_q.bias")))
                throw fail("architecture '" + arch + "' has no q/k/v biases, but the file has tensor 'blk.0.attn_q.bias'");
            if (!a.qkNorm() && f.hasTensor(Architecture.layerTensor(0, "attn_q_norm.weight")))
                throw fail("architecture '" + arch + "' has no q/k norm, but the file has tensor 'blk.0.attn_q_norm.weight'");
            float[][] bq = biases ? new float[L][] : null, bk = biases ? new float[L][] : null, bv = biases ? new float[L][] : null;
            float[][] qn = a.qkNorm() ? new float[L][] : null, kn = a.qkNorm() ? new float[L][] : null;
            boolean post = c.blocks().norms() == Blocks.Norms.PRE_AND_POST;
            float[][] postAttn = post ? new float[L][] : null, postFfn = post ? new float[L][] : null;
            for (String suffix : new String[] {"attn_qkv.bias", "attn_output.bias", "ffn_gate.bias", "ffn_up.bias", "ffn_down.bias"})
                if (f.hasTensor(Architecture.layerTensor(0, suffix)))
                    throw fail("tensor 'blk.0." + suffix + "': this engine does not read biases of that projection");
            int vision = 0;
            for (String name : f.tensorNames()) if (name.startsWith("v.") || name.startsWith("mm.")) vision++;
            if (vision > 0)
                System.getLogger("io.fdkvc.engine").log(System.Logger.Level.INFO,
                        f.path() + ": " + vision + " vision tensors ignored (the engine runs the text model)");
            for (int i = 0; i < L; i++) {
                String p = "blk." + i + ".";
                attnNorm[i] = vector(p + "attn_norm.weight", dim);
                if (f.hasTensor(p + "attn_qkv.weight")) {
                    // fused q, k, v rows (phi3): three views of the one tensor
                    String qkv = p + "attn_qkv.weight";
                    expectShape(f.tensorInfo(qkv), dim, qDim + 2L * kvDim);
                    wq[i] = rows(qkv, 0, qDim, dim);
                    wk[i] = rows(qkv, qDim, kvDim, dim);
                    wv[i] = rows(qkv, qDim + kvDim, kvDim, dim);
                } else {
                    wq[i] = matrix(p + "attn_q.weight", qDim, dim);
                    wk[i] = matrix(p + "attn_k.weight", kvDim, dim);
                    wv[i] = matrix(p + "attn_v.weight", kvDim, dim);
                }
                wo[i] = matrix(p + "attn_output.weight", dim, qDim);
                if (biases) {
                    bq[i] = vector(p + "attn_q.bias", qDim);
                    bk[i] = vector(p + "attn_k.bias", kvDim);
                    bv[i] = vector(p + "attn_v.bias", kvDim);
                }
                if (a.qkNorm()) {
                    qn[i] = vector(p + "attn_q_norm.weight", c.headDim());
                    kn[i] = vector(p + "attn_k_norm.weight", c.headDim());
                }
                if (post) {
                    postAttn[i] = vector(p + "post_attention_norm.weight", dim);
                    postFfn[i] = vector(p + "post_ffw_norm.weight", dim);
                }
                ffnNorm[i] = vector(p + "ffn_norm.weight", dim);
                if (a.fusedGateUp()) {
                    // gate rows, then up rows, in one tensor (phi3)
                    String gateUp = p + "ffn_up.weight";
                    if (f.hasTensor(p + "ffn_gate.weight")) throw fail("architecture '" + arch + "' fuses gate and up in ffn_up, but the file has 'blk." + i + ".ffn_gate.weight'");
                    expectShape(f.tensorInfo(gateUp), dim, 2L * hid);
                    gate[i] = rows(gateUp, 0, hid, dim);
                    up[i] = rows(gateUp, hid, hid, dim);
                } else {
                    gate[i] = matrix(p + "ffn_gate.weight", hid, dim);
                    up[i] = matrix(p + "ffn_up.weight", hid, dim);
                }
                down[i] = matrix(p + "ffn_down.weight", dim, hid);
            }
            float[] outNorm = vector("output_norm.weight", dim);
            FloatTensor out = tied ? emb : matrix("output.weight", c.vocabSize(), dim);
            return new LlamaWeights(emb, attnNorm, wq, wk, wv, wo, bq, bk, bv, ffnNorm, gate, down, up, outNorm, out, qn, kn,
                    postAttn, postFfn);
        }

        Vocabulary vocabulary(int vocabSize) {
            String model = f.get("tokenizer.ggml.model", String.class);
            if (model == null) throw fail("missing metadata 'tokenizer.ggml.model'");
            String pre = f.get("tokenizer.ggml.pre", String.class);
            String[] tokens = f.get("tokenizer.ggml.tokens", String[].class);
            if (tokens == null) throw fail("missing metadata 'tokenizer.ggml.tokens'");
            if (tokens.length != vocabSize)
                throw fail("tokenizer.ggml.tokens has " + tokens.length + " tokens but token_embd.weight has " + vocabSize + " rows");
            float[] scores = f.get("tokenizer.ggml.scores", float[].class);
            if (scores != null && scores.length != vocabSize)
                throw fail("tokenizer.ggml.scores has " + scores.length + " values for " + vocabSize + " tokens");
            int[] types = f.get("tokenizer.ggml.token_type", int[].class);
            if (types != null && types.length != vocabSize)
                throw fail("tokenizer.ggml.token_type has " + types.length + " values for " + vocabSize + " tokens");
            String[] merges = f.get("tokenizer.ggml.merges", String[].class);
            int bos = tokenId("tokenizer.ggml.bos_token_id", vocabSize);
            int eos = tokenId("tokenizer.ggml.eos_token_id", vocabSize);
            String template = f.get("tokenizer.chat_template", String.class);
            return new Vocabulary(model, pre, tokens, scores, types, merges, bos, eos, template);
        }

        /** A token id, or -1 when absent or stored as uint32/int -1 ("none"). */
        private int tokenId(String key, int vocabSize) {
            Long v = f.get(key, Long.class);
            if (v == null || v == -1 || v == 0xFFFF_FFFFL) return -1;
            if (v < 0 || v >= vocabSize) throw fail("metadata '" + key + "' = " + v + " is not a token id (vocabulary of " + vocabSize + ")");
            return (int) (long) v;
        }
    }
}
