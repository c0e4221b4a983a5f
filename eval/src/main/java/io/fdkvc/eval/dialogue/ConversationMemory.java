package io.fdkvc.eval.dialogue;

/**
 * A memory as an application uses one: it is given a dialogue's utterances one at a time, in
 * order, and says which of them it keeps. The evaluation reads what it keeps when each turn
 * arrives, before the turn is added ({@link DialogueSimulator#run(EmbeddedDialogue, ConversationMemory)}),
 * so a cache policy ({@link PolicyMemory}), LangChain4j's window memories
 * ({@link LangChain4jMemory}) and any other chat memory are measured the same way.
 */
public interface ConversationMemory {

    /** Adds turn {@code t} of the dialogue; turns come in order 0, 1, 2, ... */
    void add(int t);

    /** Sets {@code kept[j]} for every earlier turn j the memory holds now; leaves the others as they are. */
    void kept(boolean[] kept);

    /** Makes one memory per dialogue and token budget. */
    interface Factory {
        /**
         * A new, empty memory for {@code d} that keeps at most {@code budgetTokens} tokens (by the
         * dialogue's own token counts, {@link EmbeddedDialogue#tokens()}), unless it is unbounded.
         */
        ConversationMemory open(EmbeddedDialogue d, int budgetTokens, double temperature);

        /** Whether it may keep everything whatever the budget ({@code full}): cache_fill then has no budget bound. */
        default boolean unbounded() {
            return false;
        }
    }
}
