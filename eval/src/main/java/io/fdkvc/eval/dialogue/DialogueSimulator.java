package io.fdkvc.eval.dialogue;

import io.fdkvc.core.cache.KvStream;
import io.fdkvc.core.policy.Policy;
import io.fdkvc.core.policy.Turn;

/**
 * Plays a dialogue through one policy, one utterance per turn, and records what the cache holds
 * when each turn arrives, before that turn's own update: the context the turn could read.
 *
 * <p>Each utterance is one entry: key = value = its unit sentence embedding, cost = its token
 * count, position = its turn index. The turn's single query row is its own embedding scaled by
 * sqrt(d) / temperature: core computes logits as q.k / sqrt(d), so the logits become
 * cos(query, entry) / temperature, which turns cosine similarity into a peaked attention. The
 * query embedding (FD-KVC's topical similarity) is the unscaled embedding.
 */
public final class DialogueSimulator {
    private DialogueSimulator() {}

    /**
     * @return {@code cached[t][j]}: whether turn j's entry is in the cache when turn t arrives
     *         (always false for j >= t)
     */
    public static boolean[][] run(EmbeddedDialogue d, Policy policy, double temperature) {
        if (!(temperature > 0) || Double.isInfinite(temperature)) throw new IllegalArgumentException("temperature must be > 0 and finite, got " + temperature);
        int n = d.size();
        int dim = d.dimension();
        // Every entry costs >= 1 token, so a bounded cache holds at most budget entries plus the turn's one.
        int capacity = policy.unbounded() ? n : (int) Math.min(n, (long) policy.budget() + 1);
        KvStream stream = new KvStream(dim, dim, 0, Math.max(1, capacity), policy.unbounded());
        float[] emb = d.embeddings();
        int[] tokens = d.tokens();
        float[] query = new float[dim];
        float[] queryEmbedding = new float[dim];
        float scale = (float) (Math.sqrt(dim) / temperature);
        Turn turn = new Turn(dim, dim);
        boolean[][] cached = new boolean[n][n];
        for (int t = 0; t < n; t++) {
            boolean[] row = cached[t];
            long[] pos = stream.positions();
            for (int i = 0; i < stream.size(); i++) row[(int) pos[i]] = true;
            stream.append(t, emb, t * dim, emb, t * dim, null, 0, tokens[t]);
            for (int k = 0; k < dim; k++) {
                queryEmbedding[k] = emb[t * dim + k];
                query[k] = queryEmbedding[k] * scale;
            }
            turn.set(query, 1, queryEmbedding);
            policy.endTurn(stream, turn);
        }
        return cached;
    }
}
