package io.fdkvc.server;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;
import java.util.List;

/**
 * A session store that several servers use at once ({@link RedisStore}). Besides the values it
 * holds what a single server keeps in memory: the transcript index, and which server is working
 * on which session. {@link SessionManager} uses it so that any server can continue any
 * conversation and two servers never both advance one:
 *
 * <ul>
 *   <li>a request {@link #lease leases} its session first (a lease with a time to live, renewed
 *       by the store while it is held); a session leased by another server is answered 409 with
 *       {@code Retry-After};</li>
 *   <li>the lease reports the stored version (the number of writes so far): a server whose
 *       in-memory copy is at another version reloads it, so memory is only a cache of the store;</li>
 *   <li>a {@link #write write} names the version it continues and is {@link Fenced refused} when
 *       the stored one is another or another server holds the lease.</li>
 * </ul>
 */
interface SharedSessionStore extends SessionStore, AutoCloseable {
    /** A lease: granted with the stored version (0: nothing stored, -1: a value that is not a session), or held elsewhere. */
    record Lease(boolean granted, long version, long retryAfterMs) {
        static Lease granted(long version) { return new Lease(true, version, 0); }
        static Lease heldElsewhere(long ms) { return new Lease(false, 0, ms); }
    }

    /** A write that went through: its size and the session's new version. */
    record Written(long bytes, long version) {}

    /** A write refused because it does not continue what is stored, or another server holds the lease. */
    final class Fenced extends Exception {
        private final long retryAfterMs;

        Fenced(String message, long retryAfterMs) {
            super(message);
            this.retryAfterMs = retryAfterMs;
        }

        long retryAfterMs() { return retryAfterMs; }
    }

    /** A delete refused because another server is working on the session. */
    final class LeasedElsewhere extends Exception {
        private final long retryAfterMs;

        LeasedElsewhere(long retryAfterMs) {
            super("the session is leased by another server");
            this.retryAfterMs = retryAfterMs;
        }

        long retryAfterMs() { return retryAfterMs; }
    }

    /**
     * A stored session's figures as of its last write, for listings; {@code problem} is non-null
     * (and the figures zero) when its value cannot be summarised.
     */
    record Summary(String id, PolicySpec policy, int turns, int messages, int tokens, int largest, long totalEntries, long evictions,
                   String problem, long version) {
        Summary at(long v) {
            return new Summary(id, policy, turns, messages, tokens, largest, totalEntries, evictions, problem, v);
        }
    }

    /** One page of the stored sessions, by id; {@code more}: ids follow the last one. */
    record Page(List<Summary> items, boolean more) {}

    /** Takes (or renews) the lease of {@code id} for this server. */
    Lease lease(String id) throws Unavailable;

    /** Gives the lease up (a store that cannot be reached lets it expire). */
    void unlease(String id);

    /**
     * Stores a session's state as the write after version {@code expected}, with its transcript
     * fingerprint indexed (the one of its previous write dropped).
     */
    Written write(String id, PolicySpec policy, long evictions, Conversation.State s, long expected, String fingerprint)
            throws Unavailable, Fenced;

    /** The session whose committed transcript has the first of {@code fingerprints} that is indexed, or null. */
    String lookup(String[] fingerprints) throws Unavailable;

    /** Removes a session (its value, index entry and lease); false when nothing was stored. */
    boolean remove(String id) throws Unavailable, LeasedElsewhere;

    /** Up to {@code limit} stored sessions with ids after {@code after} (null: from the first). */
    Page list(String after, int limit) throws Unavailable;

    /** The figures of a stored session, or null when none is stored. */
    Summary describe(String id) throws Unavailable;

    @Override
    void close();
}
