package io.fdkvc.engine.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Rotary position embedding in the "halves" layout: coordinate j of a head is paired with
 * coordinate j + headDim/2. NEOX models (qwen2) store heads that way; for llama's interleaved
 * pairs (2j, 2j+1) the forward pass de-interleaves each head of q and k once, right after the
 * projection (see {@link #deinterleave}), so that one vectorised rotation serves both layouts.
 *
 * <p>cos/sin tables are indexed by position and grow by doubling on demand. Frequencies follow
 * llama2.c ({@code 1 / theta^(2j/headDim)} in float, angle {@code pos * freq} in float), with the
 * config's linear or llama3 scaling.
 */
final class LlamaRope {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;

    private final int half;
    private final float[] freq;
    private float[] cos = new float[0];
    private float[] sin = new float[0];
    private int positions;

    LlamaRope(LlamaConfig c, int initialPositions) {
        int hd = c.headDim();
        if (hd % 2 != 0) throw new IllegalArgumentException("RoPE needs an even head dimension, got " + hd);
        half = hd / 2;
        freq = new float[half];
        for (int j = 0; j < half; j++) {
            float f = (float) (1.0 / Math.pow(c.ropeTheta(), (2 * j) / (float) hd));
            freq[j] = scaled(f, c);
        }
        ensure(Math.max(16, initialPositions));
    }

    /** Linear scaling divides every frequency; llama3 scaling divides only the low ones, smoothly. */
    private static float scaled(float f, LlamaConfig c) {
        String kind = c.ropeScaling() == null ? "none" : c.ropeScaling();
        float factor = c.ropeScaleFactor();
        switch (kind) {
            case "none":
                return f;
            case "linear":
                return f / factor;
            case "llama3": {
                // Llama 3.1's defaults: low_freq_factor 1, high_freq_factor 4
                double low = 1, high = 4, orig = c.ropeOrigContext();
                double wavelen = 2 * Math.PI / f;
                if (wavelen < orig / high) return f;
                if (wavelen > orig / low) return f / factor;
                double smooth = (orig / wavelen - low) / (high - low);
                return (float) ((1 - smooth) * f / factor + smooth * f);
            }
            default:
                throw new IllegalArgumentException("unknown RoPE scaling '" + kind + "'");
        }
    }

    /** Makes positions [0, n) available. Grows by doubling, so a long conversation allocates rarely. */
    void ensure(long n) {
        if (n <= positions) return;
        if (n > Integer.MAX_VALUE / half / 2) throw new IllegalStateException("position " + n + " beyond the RoPE table");
        int np = (int) Math.max(n, Math.min((long) positions * 2, Integer.MAX_VALUE / half / 2));
        float[] nc = java.util.Arrays.copyOf(cos, np * half), ns = java.util.Arrays.copyOf(sin, np * half);
        for (int p = positions; p < np; p++) {
            for (int j = 0; j < half; j++) {
                float angle = p * freq[j];
                nc[p * half + j] = (float) Math.cos(angle);
                ns[p * half + j] = (float) Math.sin(angle);
            }
        }
        cos = nc;
        sin = ns;
        positions = np;
    }

    int positions() {
        return positions;
    }

    /**
     * Writes {@code src[so ..]} rotated to position {@code pos} into {@code dst[dOff ..]}, one head
     * of {@code 2*half} floats in the halves layout. The position must be below {@link #positions()}.
     */
    void rotate(float[] src, int so, float[] dst, int dOff, int pos) {
        int t = pos * half, i = 0;
        float[] c = cos, s = sin;
        if (half >= S.length()) {
            for (int up = S.loopBound(half); i < up; i += S.length()) {
                FloatVector a = FloatVector.fromArray(S, src, so + i), b = FloatVector.fromArray(S, src, so + half + i);
                FloatVector vc = FloatVector.fromArray(S, c, t + i), vs = FloatVector.fromArray(S, s, t + i);
                a.mul(vc).sub(b.mul(vs)).intoArray(dst, dOff + i);
                a.mul(vs).add(b.mul(vc)).intoArray(dst, dOff + half + i);
            }
        }
        for (; i < half; i++) {
            float a = src[so + i], b = src[so + half + i], vc = c[t + i], vs = s[t + i];
            dst[dOff + i] = a * vc - b * vs;
            dst[dOff + half + i] = a * vs + b * vc;
        }
    }

    /**
     * Reorders each of {@code heads} heads at {@code x[off ..]} from interleaved pairs
     * (x0 y0 x1 y1 ...) to halves (x0 x1 ... y0 y1 ...), using {@code tmp} (one head) as scratch.
     */
    static void deinterleave(float[] x, int off, int heads, int headDim, float[] tmp) {
        int h2 = headDim / 2;
        for (int h = 0; h < heads; h++) {
            int o = off + h * headDim;
            for (int j = 0; j < h2; j++) {
                tmp[j] = x[o + 2 * j];
                tmp[h2 + j] = x[o + 2 * j + 1];
            }
            System.arraycopy(tmp, 0, x, o, headDim);
        }
    }
}
