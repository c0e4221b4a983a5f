package io.fdkvc.engine.model;

/**
 * One rotary position embedding, as a layer applies it: frequency j (of {@code dims / 2}) is
 * {@code theta^(-2j / dims)}, changed by the scaling, divided by {@code frequencyFactors[j]} when
 * the file has them (LongRoPE); cos and sin are multiplied by {@code magnitude}. Coordinates from
 * {@code dims} to the head dimension are not rotated (partial rotary).
 *
 * @param theta            the base frequency
 * @param dims             the rotated coordinates of a head (even, at most the head dimension)
 * @param scaling          {@link Scaling#NONE}, LINEAR (every frequency divided by factor),
 *                         LLAMA3 (Llama 3.1's smooth division of the low frequencies, low/high
 *                         frequency factors 1 and 4) or YARN (llama.cpp's ramp between
 *                         interpolated and extrapolated frequencies over the correction dims)
 * @param factor           the scaling factor (1 for none)
 * @param originalContext  the context the unscaled model was trained for (llama3, yarn; 0 when unused)
 * @param betaFast         YaRN's fast boundary (32 by default)
 * @param betaSlow         YaRN's slow boundary (1 by default)
 * @param magnitude        the factor on cos and sin, i.e. on q and k (YaRN's mscale, LongRoPE's attention factor; 1)
 * @param frequencyFactors divisors of the frequencies (LongRoPE's factors, dims / 2 of them), or null
 * @param longFactors      LongRoPE's factors for a context beyond {@code originalContext}, or null;
 *                         {@link #forContext} swaps them in
 */
public record Rope(float theta, int dims, Scaling scaling, float factor, int originalContext, float betaFast,
                   float betaSlow, float magnitude, float[] frequencyFactors, float[] longFactors) {

    /** How the frequencies are scaled for a longer context. */
    public enum Scaling { NONE, LINEAR, LLAMA3, YARN }

    public Rope {
        if (dims < 2 || dims % 2 != 0) throw new io.fdkvc.engine.ModelFormatException("RoPE over " + dims + " dimensions: must be even and >= 2");
        if (frequencyFactors != null && frequencyFactors.length != dims / 2)
            throw new io.fdkvc.engine.ModelFormatException(frequencyFactors.length + " RoPE frequency factors for " + dims + " rotated dimensions");
        if (longFactors != null && (frequencyFactors == null || longFactors.length != frequencyFactors.length))
            throw new io.fdkvc.engine.ModelFormatException("LongRoPE's long factors need as many short ones");
    }

    /**
     * This RoPE for a run whose context is {@code context} tokens: LongRoPE's long factors when the
     * context exceeds the original one (as llama.cpp chooses by its context size), else itself.
     */
    public Rope forContext(int context) {
        if (longFactors == null || context <= originalContext) return this;
        return new Rope(theta, dims, scaling, factor, originalContext, betaFast, betaSlow, magnitude, longFactors, null);
    }

    /** Plain RoPE (or linear / llama3 scaling) over {@code dims} dimensions, from the config's fields. */
    public static Rope of(float theta, int dims, String scaling, float factor, int originalContext) {
        Scaling s = switch (scaling == null ? "none" : scaling) {
            case "none" -> Scaling.NONE;
            case "linear" -> Scaling.LINEAR;
            case "llama3" -> Scaling.LLAMA3;
            case "yarn" -> Scaling.YARN;
            default -> throw new IllegalArgumentException("unknown RoPE scaling '" + scaling + "'");
        };
        return new Rope(theta, dims, s, factor, originalContext, 32, 1, 1, null, null);
    }

    /**
     * Frequency j after scaling and factors, in float as the forward pass uses it. Plain and
     * linear/llama3 frequencies are llama2.c's ({@code 1 / theta^(2j/dims)} in float); YaRN mixes
     * the interpolated (divided by factor) and the extrapolated frequency with llama.cpp's ramp
     * over the correction dimensions computed from (originalContext, betaFast, betaSlow).
     */
    float frequency(int j) {
        float f = (float) (1.0 / Math.pow(theta, (2 * j) / (float) dims));
        if (frequencyFactors != null) f /= frequencyFactors[j];
        switch (scaling) {
            case NONE:
                return f;
            case LINEAR:
                return f / factor;
            case LLAMA3: {
                double low = 1, high = 4, orig = originalContext;
                double wavelen = 2 * Math.PI / f;
                if (wavelen < orig / high) return f;
                if (wavelen > orig / low) return f / factor;
                double smooth = (orig / wavelen - low) / (high - low);
                return (float) ((1 - smooth) * f / factor + smooth * f);
            }
            case YARN: {
                double lowDim = Math.max(0, Math.floor(correctionDim(betaFast)));
                double highDim = Math.min(dims - 1, Math.ceil(correctionDim(betaSlow)));
                double y = (j - lowDim) / Math.max(0.001, highDim - lowDim);
                double extrapolate = 1 - Math.min(1, Math.max(0, y));
                return (float) (f / factor * (1 - extrapolate) + f * extrapolate);
            }
            default:
                throw new AssertionError(scaling);
        }
    }

    /** The dimension whose wavelength turns {@code rotations} times over the original context (YaRN). */
    private double correctionDim(float rotations) {
        return dims * Math.log(originalContext / (rotations * 2 * Math.PI)) / (2 * Math.log(theta));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Rope r && theta == r.theta && dims == r.dims && scaling == r.scaling && factor == r.factor
                && originalContext == r.originalContext && betaFast == r.betaFast && betaSlow == r.betaSlow
                && magnitude == r.magnitude && java.util.Arrays.equals(frequencyFactors, r.frequencyFactors)
                && java.util.Arrays.equals(longFactors, r.longFactors);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(theta, dims, scaling, factor, originalContext, magnitude) * 31
                + java.util.Arrays.hashCode(frequencyFactors) * 7 + java.util.Arrays.hashCode(longFactors);
    }

    @Override
    public String toString() {
        return "Rope[theta=" + theta + ", dims=" + dims + ", scaling=" + scaling + ", factor=" + factor
                + ", originalContext=" + originalContext + (magnitude != 1 ? ", magnitude=" + magnitude : "")
                + (frequencyFactors != null ? ", " + frequencyFactors.length + " frequency factors" : "") + "]";
    }
}
