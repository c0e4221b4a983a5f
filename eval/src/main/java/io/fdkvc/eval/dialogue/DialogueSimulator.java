package io.fdkvc.eval.dialogue;

import io.fdkvc.core.policy.Policy;

/**
 * Plays a dialogue through a memory, one utterance per turn, and records what the memory holds
 * when each turn arrives, before that turn is added: the context the turn could read.
 */
public final class DialogueSimulator {
    private DialogueSimulator() {}

    /**
     * @return {@code cached[t][j]}: whether turn j is kept when turn t arrives (always false for j >= t)
     */
    public static boolean[][] run(EmbeddedDialogue d, ConversationMemory memory) {
        int n = d.size();
        boolean[][] cached = new boolean[n][n];
        for (int t = 0; t < n; t++) {
            memory.kept(cached[t]);
            for (int j = t; j < n; j++) {
                if (cached[t][j]) throw new IllegalStateException("memory claims to keep turn " + j + " before it was added (turn " + t + ")");
            }
            memory.add(t);
        }
        return cached;
    }

    /** A policy as the memory ({@link PolicyMemory}): one utterance per entry. */
    public static boolean[][] run(EmbeddedDialogue d, Policy policy, double temperature) {
        return run(d, new PolicyMemory(d, policy, temperature));
    }
}
