package io.fdkvc.server;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;
import java.io.IOException;

/**
 * Where sessions are kept between turns and across restarts. Every store keeps the
 * {@link SessionCodec} form, keyed by session id, and the semantics around it live once, in
 * {@link SessionManager}: a turn is acknowledged only after its write returned, a failed write
 * fails the turn (or, best-effort, marks the session unstored and keeps it in memory), and an
 * entry that is not a readable session of this model and cache is skipped, never fatal.
 *
 * <p>A store only moves bytes and reports what went wrong: {@link Refused} for a value this
 * server will not use, {@link Unavailable} for a store that cannot be read or written now.
 */
interface SessionStore {
    /** What a stored session holds. */
    record Stored(String id, PolicySpec policy, int turns, long evictions, Conversation.State state, long version) {
        /** A value of a store without versions (one server writes it). */
        Stored(String id, PolicySpec policy, int turns, long evictions, Conversation.State state) {
            this(id, policy, turns, evictions, state, 0);
        }

        /** The same value, read at {@code version} ({@link SharedSessionStore}). */
        Stored at(long v) {
            return new Stored(id, policy, turns, evictions, state, v);
        }
    }

    /** A stored value this server refuses (another model or configuration, damaged, not a session). */
    final class Refused extends Exception {
        Refused(String message) {
            super(message);
        }
    }

    /** The store cannot be read or written now; {@code full}: it is out of space. */
    final class Unavailable extends IOException {
        private final boolean full;

        Unavailable(String message, boolean full, Throwable cause) {
            super(message, cause);
            this.full = full;
        }

        boolean full() { return full; }
    }

    /** Receives what {@link #scan} finds. */
    interface Found {
        void session(String key, Stored s);

        /** An entry that is not a usable session; {@code key} is null when it can never be named by an id. */
        void skipped(String key, String why);
    }

    /** Reports every stored session and every entry skipped (one call each); never fails on one bad entry. */
    void scan(Found found) throws Unavailable;

    /** The key a session is stored under (what {@link Found} reports). */
    String key(String id);

    /** The stored session of {@code id}, or null when none is stored. */
    Stored read(String id) throws Unavailable, Refused;

    /** Stores a session's state, replacing what was stored; returns the bytes written. Nothing is half-written on failure. */
    long write(String id, PolicySpec policy, long evictions, Conversation.State s) throws Unavailable;

    /** Removes whatever is stored under {@code id}'s key, a refused value included. */
    void delete(String id) throws Unavailable;

    /** Why writes cannot succeed now (not writable, no space left), or null: probed at start-up and by {@code /health}. */
    String problem();

    /** Where the store is, for log lines. */
    String where();
}
