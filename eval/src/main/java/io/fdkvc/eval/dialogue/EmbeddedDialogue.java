package io.fdkvc.eval.dialogue;

/**
 * A dialogue with what the simulation needs of each utterance: its unit embedding (row i of
 * {@code embeddings} at {@code i * dimension}) and its token count, the entry's budget cost.
 */
public record EmbeddedDialogue(Dialogue dialogue, int dimension, float[] embeddings, int[] tokens) {
    public EmbeddedDialogue {
        if (tokens.length != dialogue.size()) throw new IllegalArgumentException("one token count per turn expected");
        if (embeddings.length != dialogue.size() * dimension) throw new IllegalArgumentException("one embedding per turn expected");
        for (int t : tokens) {
            if (t < 1) throw new IllegalArgumentException("every utterance costs at least one token, got " + t);
        }
    }

    public int size() {
        return tokens.length;
    }

    /** Sum of the token counts: the budget that keeps the whole dialogue. */
    public long totalTokens() {
        long s = 0;
        for (int t : tokens) s += t;
        return s;
    }
}
