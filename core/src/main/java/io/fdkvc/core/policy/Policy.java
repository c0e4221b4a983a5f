package io.fdkvc.core.policy;

import io.fdkvc.core.cache.KvStream;

/**
 * An eviction policy bound to one stream. Instances carry per-stream state (FD-KVC's learning
 * rate, scratch buffers), so each stream gets its own instance from a {@link PolicySpec}.
 *
 * <p>Protocol: during a turn the caller appends the turn's entries to the stream; then it calls
 * {@link #endTurn} once, which scores the entries, evicts (logging each removal on the stream),
 * leaves at most {@link #budget()} entries for a bounded policy, writes the eq. 9 logit bias of
 * every entry into {@link KvStream#logitBias()} and marks the stream scored.
 */
public interface Policy {

    /** The registry name this instance was created under. */
    String name();

    /** Entries kept after a turn (ignored by {@code full}). */
    int budget();

    /** Whether the stream may grow without bound (only {@code full}). */
    default boolean unbounded() {
        return false;
    }

    /** Whether {@link KvStream#logitBias()} can be non-zero (FD-KVC with beta > 0). */
    default boolean modulatesAttention() {
        return false;
    }

    /** Updates scores, evicts and inserts the turn's entries. See the class comment. */
    void endTurn(KvStream stream, Turn turn);

    /**
     * Packing of a cost budget (on by default): after the policy evicts to its budget, the
     * evicted entries that still fit are readmitted, best-ranked first by the policy's own
     * ranking ({@link Ranker#evictToBudget}). It matters only with costed entries (a token budget
     * over utterances); with unit costs nothing is ever readmitted. Off: the paper's setting.
     * A policy that never evicts to a budget ignores it.
     */
    default void setPacking(boolean on) {}

    /** Whether packing is on (see {@link #setPacking}); false for a policy that never evicts to a budget. */
    default boolean packing() {
        return false;
    }

    /** FD-KVC's learning rate after the last turn (eq. 7); 0 for policies without one. */
    default double alpha() {
        return 0;
    }

    /** FD-KVC's convergence loss of the last turn (eq. 6); 0 for policies without one. */
    default double loss() {
        return 0;
    }

    /**
     * The instance's own state beyond its stream (FD-KVC: alpha and the last loss), for
     * persistence and rollback; empty for a policy whose state lives entirely in the stream's
     * scores. A policy with any other state carried from turn to turn must override both methods.
     */
    default double[] exportState() {
        return new double[0];
    }

    /** Puts back what {@link #exportState()} returned (same policy, same parameters). */
    default void restoreState(double[] state) {
        if (state.length != 0) {
            throw new IllegalArgumentException(name() + " keeps no state, got " + state.length + " values");
        }
    }
}
