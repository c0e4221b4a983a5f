package io.fdkvc.core.cache;

/**
 * A copy of everything a {@link KvStream} holds, trimmed to its entries: keys, values,
 * embeddings (empty when the stream uses its keys), embedding norms, positions, the policy scores
 * c, rho, h, the eq. 9 logit bias and the costs, plus how many entries were scored. Taken with
 * {@link KvStream#snapshot()}, put back with {@link KvStream#restore}; what persistence writes
 * and what a cancelled request rolls back to.
 *
 * <p>The arrays are owned by the snapshot (copies); the record checks that their lengths agree
 * with {@code size} and the dimensions, so a snapshot read back from a file cannot be misread.
 */
public record StreamSnapshot(int keyDim, int valueDim, int embeddingDim, int size, int scored,
                             float[] keys, float[] values, float[] embeddings, double[] embeddingNorms,
                             long[] positions, double[] c, double[] rho, double[] h, float[] logitBias, int[] costs) {
    public StreamSnapshot {
        if (keyDim < 1 || valueDim < 0 || embeddingDim < 0) {
            throw new IllegalArgumentException("bad snapshot dimensions " + keyDim + "/" + valueDim + "/" + embeddingDim);
        }
        if (size < 0 || scored < 0 || scored > size) {
            throw new IllegalArgumentException("bad snapshot size " + size + " (scored " + scored + ")");
        }
        check("keys", keys.length, (long) size * keyDim);
        check("values", values.length, (long) size * valueDim);
        check("embeddings", embeddings.length, (long) size * embeddingDim);
        check("embeddingNorms", embeddingNorms.length, size);
        check("positions", positions.length, size);
        check("c", c.length, size);
        check("rho", rho.length, size);
        check("h", h.length, size);
        check("logitBias", logitBias.length, size);
        check("costs", costs.length, size);
        for (int i = 1; i < size; i++) {
            if (positions[i] <= positions[i - 1]) {
                throw new IllegalArgumentException("snapshot positions must increase: " + positions[i] + " after " + positions[i - 1]);
            }
        }
        for (int i = 0; i < size; i++) {
            if (costs[i] < 1) throw new IllegalArgumentException("snapshot cost " + costs[i] + " at entry " + i);
        }
    }

    private static void check(String what, int length, long expected) {
        if (length != expected) {
            throw new IllegalArgumentException("snapshot " + what + " has " + length + " values, expected " + expected);
        }
    }
}
