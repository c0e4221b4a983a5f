package io.fdkvc.eval.dialogue;

import java.util.List;

/** A dialogue as read from a corpus file; turn i is the cache entry at position i. */
public record Dialogue(String id, List<Utterance> turns) {
    public Dialogue {
        turns = List.copyOf(turns);
    }

    public int size() {
        return turns.size();
    }

    public Utterance turn(int i) {
        return turns.get(i);
    }
}
