package io.fdkvc.eval.fidelity;

import io.fdkvc.engine.template.ChatTemplate;
import java.util.List;

/**
 * One conversation of a fidelity file, as written: its turns (token ids, text, or chat messages)
 * and its probes. {@link TokenizedConversation#of} turns it into the tokens the model is fed.
 *
 * @param id     the conversation's id (unique in its file)
 * @param turns  its turns, in order
 * @param probes spans whose next-token NLL is measured on their own
 */
public record ConversationScript(String id, List<Turn> turns, List<Probe> probes) {
    public ConversationScript {
        turns = List.copyOf(turns);
        probes = List.copyOf(probes);
    }

    /** A turn as the file gives it. */
    public sealed interface Turn {}

    /** Token ids, fed as given (the first turn carries BOS if the model wants one). */
    public record Ids(int[] ids) implements Turn {}

    /** Text, tokenised with the model's tokenizer (BOS before the first turn when the model adds one). */
    public record Text(String text) implements Turn {}

    /** A chat message, rendered through the model's chat template as {@code chat} renders it. */
    public record Message(ChatTemplate.Message message) implements Turn {}

    /**
     * A span of one turn's tokens, {@code [start, end)} offsets into that turn.
     *
     * @param label what the span is (a name), for the report
     */
    public record Probe(int turn, int start, int end, String label) {}
}
