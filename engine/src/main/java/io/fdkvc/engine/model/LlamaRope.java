package io.fdkvc.engine.model;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Rotary position embedding in the "halves" layout: coordinate j of a head is paired with
 * coordinate j + headDim/2. NEOX models (qwen2, qwen3) store heads that way; for llama's
 * interleaved pairs (2j, 2j+1) the forward pass de-interleaves each head of q and k once, right
 * after the projection (see {@link #deinterleave}), so that one vectorised rotation serves both
 * layouts.
 *
 * <p>Frequencies follow llama2.c ({@code 1 / theta^(2j/dims)} in float, angle
 * {@code pos * freq} in float), with the {@link Rope}'s scaling and factors; cos and sin carry its
 * magnitude. With partial rotary ({@code dims} below the head dimension) the pairs are
 * (j, j + dims/2) and the coordinates from dims on pass through unchanged. The cos/sin values
 * come from two bounded tables, never from one sized by the model's declared context (a 1M-token
 * {@code context_length} would cost gigabytes and seconds at load):
 * <ul>
 *   <li>the <em>slot table</em>, positions [0, n) for the largest n asked for, grown by doubling:
 *       with {@code --positions cache} every position is a slot of a stream, below the stream's
 *       capacity (budget + turn, or the size of an unbounded cache);
 *   <li>the <em>window</em>, the positions of the chunk in progress (at most the prefill batch),
 *       recomputed per chunk: with {@code --positions original} a key is rotated once, when it
 *       enters the cache, and a query once, so only the chunk's own positions are needed,
 *       however long the conversation.
 * </ul>
 * Any other position (none in the forward pass) is computed on the spot ({@link #rotateAt}).
 * All three give the same bits for the same position.
 */
final class LlamaRope {
    private static final VectorSpecies<Float> S = FloatVector.SPECIES_PREFERRED;

    private final int half, headDim;
    private final float magnitude;
    private final float[] freq;
    private float[] cos = new float[0];
    private float[] sin = new float[0];
    private int positions;
    private final float[] wCos, wSin;
    private final int windowCap;
    private long windowFrom;
    private int windowLength;
    // or, after windowEach, slot t of the window at position eachPos[t] for t < eachCount
    private final long[] eachPos;
    private int eachCount;


    /**
     * @param rope    frequencies, scaling, magnitude and rotated coordinates ({@link Rope#dims()}
     *                of {@code headDim}; the rest pass through)
     * @param window  most positions of one window (the prefill batch)
     */
    LlamaRope(Rope rope, int headDim, int window) {
        if (headDim % 2 != 0) throw new IllegalArgumentException("RoPE needs an even head dimension, got " + headDim);
        if (rope.dims() > headDim) throw new IllegalArgumentException("RoPE over " + rope.dims() + " of " + headDim + " dimensions");
        if (window < 1) throw new IllegalArgumentException("window must be >= 1");
        this.headDim = headDim;
        half = rope.dims() / 2;
        magnitude = rope.magnitude();
        freq = new float[half];
        for (int j = 0; j < half; j++) freq[j] = rope.frequency(j);
        windowCap = window;
        wCos = new float[window * half];
        wSin = new float[window * half];
        eachPos = new long[window];
        ensure(16);
    }

    /** Makes slots [0, n) available. Grows by doubling, so a long conversation allocates rarely. */
    void ensure(long n) {
        if (n <= positions) return;
        if (n > Integer.MAX_VALUE / half / 2) throw new IllegalStateException("slot " + n + " beyond the RoPE table");
        int np = (int) Math.max(n, Math.min((long) positions * 2, Integer.MAX_VALUE / half / 2));
        float[] nc = java.util.Arrays.copyOf(cos, np * half), ns = java.util.Arrays.copyOf(sin, np * half);
        for (int p = positions; p < np; p++) angles(p, nc, ns, p * half);
        cos = nc;
        sin = ns;
        positions = np;
    }

    /** Slots available in the table. */
    int positions() {
        return positions;
    }

    /** Bytes held by the tables. */
    long bytes() {
        return 4L * (cos.length + sin.length + wCos.length + wSin.length);
    }

    /** cos and sin of position {@code p} for every frequency, at {@code c[o ..]} and {@code s[o ..]}. */
    private void angles(long p, float[] c, float[] s, int o) {
        float fp = (float) p; // as llama2.c: the angle is a float product
        for (int j = 0; j < half; j++) {
            float angle = fp * freq[j];
            c[o + j] = (float) Math.cos(angle) * magnitude;
            s[o + j] = (float) Math.sin(angle) * magnitude;
        }
    }

    /** Makes the window hold positions [from, from + n), n at most the window size. */
    void window(long from, int n) {
        if (n < 1 || n > windowCap) throw new IllegalArgumentException("window of " + n + " positions, limit " + windowCap);
        if (from < 0) throw new IllegalArgumentException("negative position " + from);
        for (int t = 0; t < n; t++) angles(from + t, wCos, wSin, t * half);
        windowFrom = from;
        windowLength = n;
        eachCount = 0;
    }

    /**
     * Makes the window hold positions {@code pos[0 .. n)}, in no order (a batched decode step's
     * tokens, one per conversation); {@link #rotateAt} finds them by a scan of the n positions.
     */
    void windowEach(long[] pos, int n) {
        if (n < 1 || n > windowCap) throw new IllegalArgumentException("window of " + n + " positions, limit " + windowCap);
        for (int t = 0; t < n; t++) {
            if (pos[t] < 0) throw new IllegalArgumentException("negative position " + pos[t]);
            angles(pos[t], wCos, wSin, t * half);
            eachPos[t] = pos[t];
        }
        windowFrom = 0;
        windowLength = 0;
        eachCount = n;
    }

    /** The window's slot for position {@code pos}, or -1. */
    private int windowSlot(long pos) {
        long t = pos - windowFrom;
        if (t >= 0 && t < windowLength) return (int) t;
        for (int i = 0; i < eachCount; i++) if (eachPos[i] == pos) return i;
        return -1;
    }

    /**
     * Writes {@code src[so ..]} rotated to slot {@code pos} into {@code dst[dOff ..]}, one head of
     * {@code 2*half} floats in the halves layout. The slot must be below {@link #positions()}.
     */
    void rotate(float[] src, int so, float[] dst, int dOff, int pos) {
        rotate(src, so, dst, dOff, cos, sin, pos * half);
    }

    /** As {@link #rotate}, at position {@code pos} of any size: from the window when it holds it, else computed here. */
    void rotateAt(float[] src, int so, float[] dst, int dOff, long pos, float[] scratch) {
        int slot = windowSlot(pos);
        if (slot >= 0 || pos < positions) {
            // one call of the vector code, so that it is inlined once into the attention phases
            // (C2's inlining budget; left out of line, its vectors would be boxed on every token)
            boolean w = slot >= 0;
            rotate(src, so, dst, dOff, w ? wCos : cos, w ? wSin : sin, (w ? slot : (int) pos) * half);
        } else {
            // scratch: 2*half floats (cos then sin)
            float[] c = scratch;
            for (int j = 0; j < half; j++) {
                float angle = (float) pos * freq[j];
                c[j] = (float) Math.cos(angle) * magnitude;
                c[half + j] = (float) Math.sin(angle) * magnitude;
            }
            for (int j = 0; j < half; j++) {
                float a = src[so + j], b = src[so + half + j], vc = c[j], vs = c[half + j];
                dst[dOff + j] = a * vc - b * vs;
                dst[dOff + half + j] = a * vs + b * vc;
            }
            passThrough(src, so, dst, dOff);
        }
    }

    /** The coordinates past the rotated ones, unchanged (partial rotary). */
    private void passThrough(float[] src, int so, float[] dst, int dOff) {
        for (int i = 2 * half; i < headDim; i++) dst[dOff + i] = src[so + i];
    }

    private void rotate(float[] src, int so, float[] dst, int dOff, float[] c, float[] s, int t) {
        int i = 0;
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
        passThrough(src, so, dst, dOff);
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
