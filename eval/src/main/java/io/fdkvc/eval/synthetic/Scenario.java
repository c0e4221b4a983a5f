package io.fdkvc.eval.synthetic;

import io.fdkvc.core.InputException;
import io.fdkvc.eval.Ids;
import java.util.List;

/**
 * The five multi-turn scenarios of the synthetic benchmark (docs/evaluation.md, "The generator").
 * Each one fixes, per turn, a topic label and how the turn's topic vector is made from the
 * dialogue's base topics.
 */
public enum Scenario {
    TOPIC_SHIFT("topic-shift", "topic A, then an abrupt switch to B at T/2"),
    GRADUAL_DRIFT("gradual-drift", "the topic moves smoothly from A to B"),
    MIXED_TOPICS("mixed-topics", "segments of 2-4 turns on one of 3 interleaved topics"),
    STABLE_TOPIC("stable-topic", "one topic throughout"),
    TOPIC_RETURN("topic-return", "A, then B, then back to A (thirds)");

    /** Topics interleaved by {@link #MIXED_TOPICS}. */
    public static final int MIXED_TOPIC_COUNT = 3;

    private final String id;
    private final String description;

    Scenario(String id, String description) {
        this.id = id;
        this.description = description;
    }

    /** The name used on the command line and in reports. */
    public String id() {
        return id;
    }

    public String description() {
        return description;
    }

    /** Whether the scenario has topic changes (adaptation is defined) and more than one topic. */
    public boolean hasTopicChanges() {
        return this != STABLE_TOPIC;
    }

    /** Base topic vectors the scenario needs. */
    int baseTopics() {
        return switch (this) {
            case STABLE_TOPIC -> 1;
            case MIXED_TOPICS -> MIXED_TOPIC_COUNT;
            default -> 2;
        };
    }

    /**
     * @param option the option the name came from, for the error message
     * @throws InputException naming {@code option} for an unknown name
     */
    public static Scenario fromId(String id, String option) {
        return Ids.find(values(), Scenario::id, id, option, "scenario");
    }

    public static List<String> ids() {
        return Ids.of(values(), Scenario::id);
    }
}
