package io.fdkvc.eval.dialogue;

import java.util.Arrays;
import java.util.Objects;

/**
 * One turn of a dialogue: one cache entry of the simulation.
 *
 * @param speaker "USER" or "SYSTEM", or null where the corpus has none (TIAGE)
 * @param text    the utterance, never blank
 * @param topic   the turn's service (SGD) or domain (MultiWOZ); null when unlabelled (TIAGE, and
 *                MultiWOZ turns that act on no domain)
 * @param refs    indices of the earlier turns this turn needs (SGD), ascending, each below the turn's own index
 * @param shift   TIAGE's label: -1 first turn, 1 an annotated topic shift at this turn, 0 none (0 elsewhere)
 * @param needs   SGD's {@code needs}: one array per value the turn needs, listing every earlier turn
 *                that said it (most recent first, each below the turn's own index); empty elsewhere
 */
public record Utterance(String speaker, String text, String topic, int[] refs, int shift, int[][] needs) {
    private static final int[] NONE = new int[0];
    private static final int[][] NO_NEEDS = new int[0][];

    public Utterance {
        Objects.requireNonNull(text, "text");
        refs = refs == null ? NONE : refs.clone();
        if (needs == null) {
            needs = NO_NEEDS;
        } else {
            int[][] copy = new int[needs.length][];
            for (int k = 0; k < needs.length; k++) copy[k] = needs[k].clone();
            needs = copy;
        }
    }

    /** An utterance without {@code needs}. */
    public Utterance(String speaker, String text, String topic, int[] refs, int shift) {
        this(speaker, text, topic, refs, shift, null);
    }

    /** An utterance with no references and no shift label. */
    public static Utterance of(String speaker, String text, String topic) {
        return new Utterance(speaker, text, topic, NONE, 0);
    }

    @Override
    public int[] refs() {
        return refs.clone();
    }

    @Override
    public int[][] needs() {
        int[][] out = new int[needs.length][];
        for (int k = 0; k < needs.length; k++) out[k] = needs[k].clone();
        return out;
    }

    /** Number of needed values, without copying. */
    public int needCount() {
        return needs.length;
    }

    /** The turns that said needed value k (most recent first), without copying: do not modify. */
    int[] needTurns(int k) {
        return needs[k];
    }

    /** Whether the speaker is the system (the model writes these turns). */
    public boolean bySystem() {
        return "SYSTEM".equals(speaker);
    }

    /** Number of references, without copying. */
    public int refCount() {
        return refs.length;
    }

    /** Reference k, without copying. */
    public int ref(int k) {
        return refs[k];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Utterance u && Objects.equals(speaker, u.speaker) && text.equals(u.text)
                && Objects.equals(topic, u.topic) && Arrays.equals(refs, u.refs) && shift == u.shift && Arrays.deepEquals(needs, u.needs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(speaker, text, topic, Arrays.hashCode(refs), shift, Arrays.deepHashCode(needs));
    }

    @Override
    public String toString() {
        return "Utterance[" + speaker + ", " + text + ", topic=" + topic + ", refs=" + Arrays.toString(refs) + ", shift=" + shift + ", needs=" + Arrays.deepToString(needs) + "]";
    }
}
