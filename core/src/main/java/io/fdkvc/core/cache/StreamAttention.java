package io.fdkvc.core.cache;

import io.fdkvc.core.math.VectorMath;

/** Softmax attention of one query over the first entries of a stream. */
public final class StreamAttention {
    private StreamAttention() {}

    /**
     * Writes to {@code out[0..count)} the softmax over entries {@code [0, count)} of
     * {@code q . k_i / sqrt(d)}, plus each entry's eq. 9 logit bias when {@code modulated}.
     */
    public static void weights(KvStream s, int count, float[] q, int qOff, boolean modulated, double[] out) {
        if (count == 0) return;
        int d = s.keyDim();
        VectorMath.logits(q, qOff, s.keys(), count, d, 1.0 / Math.sqrt(d), out);
        if (modulated) {
            float[] bias = s.logitBias();
            for (int i = 0; i < count; i++) out[i] += bias[i];
        }
        VectorMath.softmaxInPlace(out, count);
    }
}
