package io.fdkvc.core.spec;

import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.reference.CoreDriver;
import io.fdkvc.core.reference.SpecReference.EntryState;
import io.fdkvc.core.reference.SpecReference.NewEntry;
import io.fdkvc.core.reference.SpecReference.TurnInput;
import io.fdkvc.core.reference.SpecReference.TurnOutput;
import java.util.List;
import java.util.Map;

/** Small builders for hand-written traces. */
final class Fixtures {
    private Fixtures() {}

    static float[] v(float... xs) {
        return xs;
    }

    static NewEntry entry(float[] key, float[] embedding) {
        return new NewEntry(key, embedding);
    }

    static NewEntry entry(float[] key) {
        return new NewEntry(key, null);
    }

    static TurnInput turn(float[][] queries, float[] queryEmbedding, NewEntry... entries) {
        return new TurnInput(queries, queryEmbedding, List.of(entries));
    }

    static float[][] rows(float[]... rows) {
        return rows;
    }

    /** A driver for {@code name} over d = 4 with room for turns of up to 8 entries. */
    static CoreDriver driver(String name, int budget, Map<String, ?> params) {
        return new CoreDriver(PolicyRegistry.spec(name, budget, params), 4, 8);
    }

    static EntryState at(TurnOutput out, long position) {
        return out.entries().stream().filter(e -> e.position() == position).findFirst()
                .orElseThrow(() -> new AssertionError("position " + position + " not in the cache: " + out.positions()));
    }

    static double weightSum(TurnOutput out) {
        return out.entries().stream().mapToDouble(EntryState::weight).sum();
    }
}
