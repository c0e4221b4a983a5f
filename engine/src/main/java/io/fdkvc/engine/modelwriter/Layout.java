package io.fdkvc.engine.modelwriter;

import java.util.Objects;

/**
 * The architecture of a model file to write: its GGUF name and what its converter (llama.cpp's
 * {@code convert_hf_to_gguf.py}) writes beyond the shared Llama block, as the records' fields.
 * {@link GgufModelWriter} turns a layout into metadata keys and tensor names.
 */
public sealed interface Layout {
    /** The {@code general.architecture} value and the prefix of the architecture's keys. */
    String name();

    /** Llama: separate q/k/v, SwiGLU, interleaved RoPE over the whole head. */
    record Llama() implements Layout {
        public String name() {
            return "llama";
        }
    }

    /** Qwen2: Llama with q/k/v biases and NEOX RoPE. */
    record Qwen2() implements Layout {
        public String name() {
            return "qwen2";
        }
    }

    /** Qwen3: Llama with per-head q/k RMSNorm and an explicit head dimension. */
    record Qwen3() implements Layout {
        public String name() {
            return "qwen3";
        }
    }

    /**
     * Gemma 3 (text): q/k norm, norms after attention and after the feed-forward as well as before,
     * GELU, embeddings scaled by sqrt(dim); sliding-window layers (llama.cpp's default pattern: five
     * of every six, the converter writes no pattern key) with their own RoPE base.
     *
     * @param slidingWindow {@code gemma3.attention.sliding_window}
     * @param ropeThetaSwa  {@code gemma3.rope.freq_base_swa}, the sliding layers' RoPE base
     */
    record Gemma3(int slidingWindow, float ropeThetaSwa) implements Layout {
        public Gemma3 {
            if (slidingWindow < 1) throw new IllegalArgumentException("sliding window must be positive, not " + slidingWindow);
            if (!(ropeThetaSwa > 1)) throw new IllegalArgumentException("sliding RoPE base must be above 1, not " + ropeThetaSwa);
        }

        public String name() {
            return "gemma3";
        }
    }

    /**
     * Phi-3 / Phi-4-mini: fused {@code attn_qkv} and gate/up ({@code ffn_up} of twice the
     * feed-forward length), RoPE over the first {@code ropeDims} dimensions of each head, LongRoPE
     * frequency factors as the tensors {@code rope_factors_long/short.weight} and the attention factor
     * the converter derives, {@code sqrt(1 + ln(context / original) / ln(original))}.
     *
     * @param ropeDims        {@code phi3.rope.dimension_count}
     * @param originalContext {@code phi3.rope.scaling.original_context_length}
     * @param longFactors     LongRoPE's long factors (ropeDims / 2), or null for a file without LongRoPE
     * @param shortFactors    the short factors, null exactly when longFactors is
     * @param slidingWindow   {@code phi3.attention.sliding_window} (0 for Phi-4, which llama.cpp ignores anyway)
     */
    record Phi3(int ropeDims, int originalContext, float[] longFactors, float[] shortFactors, int slidingWindow)
            implements Layout {
        public Phi3 {
            if (ropeDims < 2 || ropeDims % 2 != 0) throw new IllegalArgumentException("RoPE dimensions must be even and positive, not " + ropeDims);
            if (originalContext < 1) throw new IllegalArgumentException("original context must be positive, not " + originalContext);
            if ((longFactors == null) != (shortFactors == null)) throw new IllegalArgumentException("long and short factors come together");
            if (longFactors != null && (longFactors.length != ropeDims / 2 || shortFactors.length != ropeDims / 2))
                throw new IllegalArgumentException("LongRoPE factors need ropeDims / 2 = " + ropeDims / 2 + " values each");
            if (slidingWindow < 0) throw new IllegalArgumentException("sliding window must be >= 0, not " + slidingWindow);
        }

        public String name() {
            return "phi3";
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Phi3 p && p.ropeDims == ropeDims && p.originalContext == originalContext
                    && java.util.Arrays.equals(p.longFactors, longFactors) && java.util.Arrays.equals(p.shortFactors, shortFactors)
                    && p.slidingWindow == slidingWindow;
        }

        @Override
        public int hashCode() {
            return Objects.hash(ropeDims, originalContext, java.util.Arrays.hashCode(longFactors), java.util.Arrays.hashCode(shortFactors), slidingWindow);
        }

        @Override
        public String toString() {
            return "Phi3[ropeDims=" + ropeDims + ", originalContext=" + originalContext + ", longFactors="
                    + java.util.Arrays.toString(longFactors) + ", shortFactors=" + java.util.Arrays.toString(shortFactors)
                    + ", slidingWindow=" + slidingWindow + "]";
        }
    }

    /**
     * Ministral 3 (architecture {@code mistral3}): Llama with YaRN RoPE scaling and the
     * position-dependent attention temperature, keys as the converter writes them
     * ({@code rope.scaling.type = yarn}, factor, original context, beta fast/slow, the YaRN log
     * multiplier from {@code mscale_all_dim}, {@code attention.temperature_scale} from
     * {@code llama_4_scaling_beta}).
     */
    record Mistral3(float yarnFactor, int originalContext, float betaFast, float betaSlow, float yarnLogMultiplier,
                    float temperatureScale) implements Layout {
        public Mistral3 {
            if (!(yarnFactor >= 1)) throw new IllegalArgumentException("YaRN factor must be >= 1, not " + yarnFactor);
            if (originalContext < 1) throw new IllegalArgumentException("original context must be positive, not " + originalContext);
        }

        public String name() {
            return "mistral3";
        }
    }

    /** SmolLM3: Llama whose every fourth layer has no RoPE (fixed in llama.cpp, no key). */
    record SmolLM3() implements Layout {
        public String name() {
            return "smollm3";
        }
    }
}
