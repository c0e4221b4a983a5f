package io.fdkvc.core.policy.dialogue;

import io.fdkvc.core.param.Check;
import io.fdkvc.core.param.Doc;

/**
 * The parameters of {@code fdkvc-dialogue} ({@link DialoguePolicy}). Validated at construction;
 * nothing is clamped. The defaults were chosen on the train splits (docs/evaluation-dialogues.md).
 */
public record DialogueParams(
        @Doc(value = "share of the budget kept for the most recent entries, whatever their scores", range = "[0,1]") double recent,
        @Doc(value = "decay per turn of the relevance channel rho and of the attention channel c", range = "(0,1]") double gamma,
        @Doc(value = "weight of the decayed cumulative attention c / max c (FD-KVC's first channel)", range = ">= 0") double wc,
        @Doc(value = "weight of the relevance channel rho: decayed sum of cos(entry, turn) over the embeddings (lexical features in dialogues)", range = ">= 0") double wrho,
        @Doc(value = "weight of novelty: the share of an entry's (positive) embedding mass that no newer cached entry repeats", range = ">= 0") double wnovel,
        @Doc(value = "weight of a speaker match between an entry and the next turn (dialogue feature layout only)", range = ">= 0") double wspeaker) {

    /**
     * Chosen on sgd-train (600 dialogues) by {@code fdkvc tune --dataset sgd}: the best objective
     * among points with recent >= 0.25 (a design constraint for the engine, where the newest
     * tokens are the local context), near ties (within 0.001) broken by far recall
     * (docs/evaluation-dialogues.md, "fdkvc-dialogue").
     */
    public static final DialogueParams DEFAULTS = new DialogueParams(0.25, 0.85, 0.0, 1.0, 3.0, 0.0);

    public DialogueParams {
        Check.inClosed("recent", recent, 0, 1);
        Check.inOpenClosed("gamma", gamma, 0, 1);
        Check.atLeast("wc", wc, 0);
        Check.atLeast("wrho", wrho, 0);
        Check.atLeast("wnovel", wnovel, 0);
        Check.atLeast("wspeaker", wspeaker, 0);
    }
}
