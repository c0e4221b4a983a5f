package io.fdkvc.eval.dialogue;

import java.util.HashSet;
import java.util.Set;

/**
 * The per-dialogue value of each metric, computed from the dialogue's annotations and
 * {@code cached[t][j]} (turn j cached when turn t arrives, see {@link DialogueSimulator}). Every
 * value lies in [0, 1] and is NaN when the dialogue offers no case of the metric (no reference, no
 * annotated shift with three turns after it...); the bootstrap skips NaN, and the result row's n
 * counts the dialogues that had a value.
 */
public final class DialogueMetrics {
    /** "Far" references reach at least this many turns back. */
    public static final int FAR = 6;
    /** TIAGE: the post-shift share is read when the third turn after a shift arrives. */
    public static final int TURNS_AFTER_SHIFT = 3;

    private DialogueMetrics() {}

    /** Which references a recall counts. */
    public enum RefScope { ALL, FAR, RETURN, SYSTEM }

    /** The value of {@code m}; {@code budget} (tokens) matters only to {@link Metric#CACHE_FILL}. */
    public static double value(Metric m, Dialogue d, boolean[][] cached, int[] tokens, long budget) {
        return switch (m) {
            case NEEDED_CONTEXT_RECALL -> neededContextRecall(d, cached, RefScope.ALL);
            case NEEDED_VALUE_RECALL_ANY -> neededValueRecallAny(d, cached, false);
            case NEEDED_CONTEXT_RECALL_SYSTEM -> neededContextRecall(d, cached, RefScope.SYSTEM);
            case NEEDED_VALUE_RECALL_ANY_SYSTEM -> neededValueRecallAny(d, cached, true);
            case NEEDED_CONTEXT_RECALL_FAR -> neededContextRecall(d, cached, RefScope.FAR);
            case NEEDED_CONTEXT_RECALL_RETURN -> neededContextRecall(d, cached, RefScope.RETURN);
            case CURRENT_TOPIC_PRECISION -> currentTopicPrecision(d, cached, tokens);
            case TOPIC_DIVERSITY -> topicDiversity(d, cached);
            case POST_SHIFT_SHARE -> postShiftShare(d, cached, tokens);
            case CACHE_FILL -> cacheFill(d, cached, tokens, budget);
        };
    }

    /**
     * Mean over turns 1.. of (cached tokens when the turn arrives) / min(budget, tokens of all
     * earlier turns): 1 for a cache that holds all it may (up to the slack of whole utterances),
     * near 0 for one that forgets everything.
     */
    public static double cacheFill(Dialogue d, boolean[][] cached, int[] tokens, long budget) {
        double sum = 0;
        int turns = 0;
        long said = 0;
        for (int t = 1; t < d.size(); t++) {
            said += tokens[t - 1];
            long held = 0;
            for (int j = 0; j < t; j++) if (cached[t][j]) held += tokens[j];
            sum += (double) held / Math.min(budget, said);
            turns++;
        }
        return turns == 0 ? Double.NaN : sum / turns;
    }

    /**
     * Of all references (turn t needs turn j) in scope, the share whose turn j is cached when turn
     * t arrives, pooled over the dialogue's turns (each reference counts once, so a turn with many
     * references weighs more). RETURN: references of the turns in a segment (maximal run of one
     * service) whose service an earlier segment already had, i.e. the dialogue came back to it.
     * SYSTEM: references of the system turns (the turns the model writes).
     */
    public static double neededContextRecall(Dialogue d, boolean[][] cached, RefScope scope) {
        boolean[] inReturn = scope == RefScope.RETURN ? returnTurns(d) : null;
        long needed = 0, held = 0;
        for (int t = 0; t < d.size(); t++) {
            if (inReturn != null && !inReturn[t]) continue;
            Utterance u = d.turn(t);
            if (scope == RefScope.SYSTEM && !u.bySystem()) continue;
            for (int k = 0; k < u.refCount(); k++) {
                int j = u.ref(k);
                if (scope == RefScope.FAR && t - j < FAR) continue;
                needed++;
                if (cached[t][j]) held++;
            }
        }
        return needed == 0 ? Double.NaN : (double) held / needed;
    }

    /**
     * Of the values the turns need (SGD {@code needs}; over the system turns only when
     * {@code systemOnly}), the share with at least one of the turns that said the value cached
     * when the turn arrives, pooled over the dialogue's turns like the recall. NaN without any
     * needed value.
     */
    public static double neededValueRecallAny(Dialogue d, boolean[][] cached, boolean systemOnly) {
        long needed = 0, held = 0;
        for (int t = 0; t < d.size(); t++) {
            Utterance u = d.turn(t);
            if (systemOnly && !u.bySystem()) continue;
            for (int k = 0; k < u.needCount(); k++) {
                needed++;
                for (int j : u.needTurns(k)) {
                    if (cached[t][j]) {
                        held++;
                        break;
                    }
                }
            }
        }
        return needed == 0 ? Double.NaN : (double) held / needed;
    }

    /** Turns of segments that return to a topic an earlier segment already had. */
    static boolean[] returnTurns(Dialogue d) {
        int n = d.size();
        boolean[] out = new boolean[n];
        Set<String> finished = new HashSet<>(); // topics of the segments before the current one
        boolean returning = false;
        for (int t = 0; t < n; t++) {
            String topic = d.turn(t).topic();
            if (t > 0 && !java.util.Objects.equals(topic, d.turn(t - 1).topic())) {
                finished.add(d.turn(t - 1).topic());
                returning = topic != null && finished.contains(topic);
            }
            out[t] = returning;
        }
        return out;
    }

    /**
     * Mean over turns of the share of cached tokens whose topic is the current turn's. Turns
     * without a topic label, and turns that find the cache empty (the first turn, or a budget
     * below one utterance), have no precision and are left out.
     */
    public static double currentTopicPrecision(Dialogue d, boolean[][] cached, int[] tokens) {
        double sum = 0;
        int turns = 0;
        for (int t = 1; t < d.size(); t++) {
            String topic = d.turn(t).topic();
            if (topic == null) continue;
            long all = 0, on = 0;
            for (int j = 0; j < t; j++) {
                if (!cached[t][j]) continue;
                all += tokens[j];
                if (topic.equals(d.turn(j).topic())) on += tokens[j];
            }
            if (all == 0) continue;
            sum += (double) on / all;
            turns++;
        }
        return turns == 0 ? Double.NaN : sum / turns;
    }

    /**
     * Mean over turns of (distinct topics among the cached turns) / (distinct topics among all
     * earlier turns); unlabelled turns count in neither, and a turn with no labelled earlier turn
     * is left out. An empty cache scores 0: nothing of any topic is held.
     */
    public static double topicDiversity(Dialogue d, boolean[][] cached) {
        double sum = 0;
        int turns = 0;
        Set<String> seen = new HashSet<>();
        Set<String> held = new HashSet<>();
        for (int t = 1; t < d.size(); t++) {
            String prev = d.turn(t - 1).topic();
            if (prev != null) seen.add(prev);
            if (seen.isEmpty()) continue;
            held.clear();
            for (int j = 0; j < t; j++) {
                String topic = d.turn(j).topic();
                if (cached[t][j] && topic != null) held.add(topic);
            }
            sum += (double) held.size() / seen.size();
            turns++;
        }
        return turns == 0 ? Double.NaN : sum / turns;
    }

    /**
     * TIAGE: for each annotated shift at turn s that is still the last shift when turn
     * s + 3 arrives (no shift at s+1 or s+2) and where that turn exists, the share of the cached
     * tokens said at turn s or later; mean over those shifts. A shift that finds the cache empty
     * has no share and is left out.
     */
    public static double postShiftShare(Dialogue d, boolean[][] cached, int[] tokens) {
        double sum = 0;
        int shifts = 0;
        int n = d.size();
        for (int s = 1; s + TURNS_AFTER_SHIFT < n; s++) {
            if (d.turn(s).shift() != 1) continue;
            boolean last = true;
            for (int k = 1; k < TURNS_AFTER_SHIFT; k++) last &= d.turn(s + k).shift() != 1;
            if (!last) continue;
            int t = s + TURNS_AFTER_SHIFT;
            long all = 0, after = 0;
            for (int j = 0; j < t; j++) {
                if (!cached[t][j]) continue;
                all += tokens[j];
                if (j >= s) after += tokens[j];
            }
            if (all == 0) continue;
            sum += (double) after / all;
            shifts++;
        }
        return shifts == 0 ? Double.NaN : sum / shifts;
    }
}
