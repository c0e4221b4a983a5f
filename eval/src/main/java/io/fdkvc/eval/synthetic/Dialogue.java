package io.fdkvc.eval.synthetic;

/**
 * One generated dialogue, flat arrays only (a worker thread fills the same instance for every
 * dialogue it generates). Entry {@code p} (its position) of turn {@code t = p / n} owns
 * {@code keys[p*d ..]}, {@code values[p*d ..]} and {@code entryLabel[p]}.
 */
public final class Dialogue {
    public final GeneratorConfig config;
    /** Keys, T*n rows of d floats. Embeddings are the keys (the spec's default). */
    public final float[] keys;
    /** Values, T*n rows of d floats, unit norm. */
    public final float[] values;
    /** Query rows, T*m rows of d floats. */
    public final float[] queries;
    /** The current topic vector of each turn, T rows of d floats, unit norm. */
    public final float[] topic;
    /** Topic label of each turn. */
    public final int[] turnLabel;
    /** Topic label of each entry, indexed by position (= entry index in the dialogue). */
    public final int[] entryLabel;

    Scenario scenario;
    long seed;

    public Dialogue(GeneratorConfig c) {
        this.config = c;
        int total = c.totalEntries();
        keys = new float[total * c.dim()];
        values = new float[total * c.dim()];
        queries = new float[c.turns() * c.queries() * c.dim()];
        topic = new float[c.turns() * c.dim()];
        turnLabel = new int[c.turns()];
        entryLabel = new int[total];
    }

    public Scenario scenario() { return scenario; }
    public long seed() { return seed; }
}
