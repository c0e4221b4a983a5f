package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.Ids;

/**
 * The three dialogue corpora of {@code shared/data/dialogues} and the question each one answers.
 * The headline metric is the one the paired improvement and the budget sweep report.
 */
public enum Dataset {
    /** Schema-Guided Dialogue: per-turn service and needed-context references. */
    SGD("sgd", Metric.NEEDED_CONTEXT_RECALL),
    /** TIAGE: per-turn human topic-shift labels on open-domain chit-chat. */
    TIAGE("tiage", Metric.POST_SHIFT_SHARE),
    /** MultiWOZ 2.1: per-turn domain. */
    MULTIWOZ("multiwoz", Metric.CURRENT_TOPIC_PRECISION);

    private final String id;
    private final Metric headline;

    Dataset(String id, Metric headline) {
        this.id = id;
        this.headline = headline;
    }

    /** The name used on the command line and as the scenario of result rows. */
    public String id() {
        return id;
    }

    public Metric headline() {
        return headline;
    }

    /** @throws InputException naming {@code --dataset} for an unknown name */
    public static Dataset parse(String name) {
        return Ids.find(values(), Dataset::id, name, "dataset", "dataset");
    }
}
