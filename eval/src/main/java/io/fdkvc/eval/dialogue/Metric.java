package io.fdkvc.eval.dialogue;

import java.util.List;

/** The dialogue metrics, by the name they carry in the result rows. All but cache_fill are "higher is better". */
public enum Metric {
    /** SGD: of the earlier turns a turn needs, the share still cached when the turn arrives. */
    NEEDED_CONTEXT_RECALL("needed_context_recall"),
    /**
     * SGD: of the values the turns need ({@code needs}), the share with at least one of the turns
     * that said them cached when the turn arrives: an older mention counts too.
     */
    NEEDED_VALUE_RECALL_ANY("needed_value_recall_any"),
    /** The same over references six or more turns back. */
    NEEDED_CONTEXT_RECALL_FAR("needed_context_recall_far"),
    /** The same over the turns of a segment that returns to a service the dialogue left earlier. */
    NEEDED_CONTEXT_RECALL_RETURN("needed_context_recall_return"),
    /** needed_context_recall over the system turns alone: the turns the model writes. */
    NEEDED_CONTEXT_RECALL_SYSTEM("needed_context_recall_system"),
    /** needed_value_recall_any over the system turns alone. */
    NEEDED_VALUE_RECALL_ANY_SYSTEM("needed_value_recall_any_system"),
    /** SGD, MultiWOZ: share of the cached tokens on the current turn's service or domain. */
    CURRENT_TOPIC_PRECISION("current_topic_precision"),
    /** SGD, MultiWOZ: distinct services/domains cached over those seen so far. */
    TOPIC_DIVERSITY("topic_diversity"),
    /** TIAGE: share of the cached tokens said at or after the last shift, three turns after it. */
    POST_SHIFT_SHARE("post_shift_share"),
    /**
     * Every dataset: how much of what it may hold the cache holds (cached tokens over the smaller
     * of the budget and the tokens said so far). Not a goal but a guard: a policy that forgets
     * everything scores perfectly on a share metric, and this shows it.
     */
    CACHE_FILL("cache_fill");

    /**
     * The metrics reported at every budget of the sweep too (table, CSV as {@code METRIC@30%},
     * plot), headline first: those the goals are stated in.
     */
    public static List<Metric> sweepOf(Dataset d) {
        return switch (d) {
            case SGD -> List.of(NEEDED_CONTEXT_RECALL, NEEDED_VALUE_RECALL_ANY, NEEDED_CONTEXT_RECALL_FAR,
                    NEEDED_CONTEXT_RECALL_SYSTEM, NEEDED_VALUE_RECALL_ANY_SYSTEM, CACHE_FILL);
            case MULTIWOZ -> List.of(CURRENT_TOPIC_PRECISION, CACHE_FILL);
            case TIAGE -> List.of(POST_SHIFT_SHARE, CACHE_FILL);
        };
    }

    /** The metrics on which policies are compared pairwise (paired bootstrap), at every budget. */
    public static List<Metric> pairedOf(Dataset d) {
        return switch (d) {
            case SGD -> List.of(NEEDED_CONTEXT_RECALL, NEEDED_VALUE_RECALL_ANY, NEEDED_CONTEXT_RECALL_SYSTEM, NEEDED_VALUE_RECALL_ANY_SYSTEM);
            case MULTIWOZ -> List.of(CURRENT_TOPIC_PRECISION);
            case TIAGE -> List.of(POST_SHIFT_SHARE);
        };
    }

    private final String id;

    Metric(String id) {
        this.id = id;
    }

    public String id() {
        return id;
    }

    /** The metrics a dataset's annotations support, headline first. */
    public static List<Metric> of(Dataset d) {
        return switch (d) {
            case SGD -> List.of(NEEDED_CONTEXT_RECALL, NEEDED_VALUE_RECALL_ANY, NEEDED_CONTEXT_RECALL_FAR, NEEDED_CONTEXT_RECALL_RETURN,
                    NEEDED_CONTEXT_RECALL_SYSTEM, NEEDED_VALUE_RECALL_ANY_SYSTEM, CURRENT_TOPIC_PRECISION, TOPIC_DIVERSITY, CACHE_FILL);
            case MULTIWOZ -> List.of(CURRENT_TOPIC_PRECISION, TOPIC_DIVERSITY, CACHE_FILL);
            case TIAGE -> List.of(POST_SHIFT_SHARE, CACHE_FILL);
        };
    }
}
