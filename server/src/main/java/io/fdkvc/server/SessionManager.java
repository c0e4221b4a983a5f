package io.fdkvc.server;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.Role;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The server's conversations. A session is found by its {@code X-Session-Id} or, without one,
 * by its transcript: the index maps the fingerprint of each session's processed messages to the
 * session, and a request is matched against the fingerprints of its own message prefixes, longest
 * first. At most {@code maxLive} sessions are held in memory; beyond that the least recently used
 * idle ones leave memory (with a session directory they are already on disk, written after every
 * turn, and come back on their next request; without one they are forgotten).
 *
 * <p>Each session runs its own policy and budget for life: the server's default, or the one its
 * first request chose ({@link PolicyChoice}); a later request that names another gets 409.
 *
 * <p>A session serves one request at a time ({@link Entry#busy}). With a store, a committed turn
 * is written before the request answers its last byte ({@link #commit}), and the session is free
 * again before the client learns the turn ended; a request that arrives while a session is
 * writing waits for the write (at most {@link #FINISH_WAIT_MS}) instead of being refused. A
 * write that fails fails the turn (strict: the session is left at its stored turn) or marks
 * the session unstored (best-effort: the turn stands, the session stays in memory until a later
 * write succeeds). A stored value that cannot be used is reported once (409) and then replaced.
 *
 * <p>All methods synchronise on the manager; store writes happen outside the lock, loading a
 * stored session inside (rare, and bounded by its size).
 */
final class SessionManager {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    /** Longest a request waits for a session that is writing its last turn. */
    static final long FINISH_WAIT_MS = 10_000;

    /** What a failed store write does to the turn. */
    enum StoreMode {
        /** the turn fails (507 out of space, 503 otherwise); the session stays at its stored turn */
        STRICT,
        /** the turn stands; the session is marked unstored and kept in memory; /health says degraded */
        BEST_EFFORT;

        static StoreMode parse(String s) {
            return switch (s) {
                case "strict" -> STRICT;
                case "best-effort" -> BEST_EFFORT;
                default -> throw new io.fdkvc.core.InputException("--session-store-mode must be strict or best-effort, got "
                        + io.fdkvc.core.Untrusted.excerpt(s));
            };
        }
    }

    private final ServedModel model;
    private final SessionStore store; // null: no persistence
    private final SharedSessionStore shared; // the store when other servers share it, else null
    private final StoreMode mode;
    private final int maxLive;
    private final PrintStream log;
    private final Metrics metrics;
    // access order: the first entries are the least recently used
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    // transcript fingerprint -> sessions with that transcript (several clients may hold the same history)
    private final Map<String, java.util.Set<String>> byFingerprint = new HashMap<>();
    private final Map<String, String> refused = new HashMap<>(); // store key -> why, until reported once
    private final java.util.Set<String> setAside = new java.util.HashSet<>(); // store keys whose stored value is ignored until replaced
    private int unstored; // live sessions whose latest turn is not in the store

    /** One session: live (conversation in memory) or stored (on disk only). */
    static final class Entry {
        final String id;
        PolicySpec policy;
        Conversation conversation; // null while stored
        boolean busy;
        Job holder; // the request that made it busy
        boolean finishing; // its committed turn is being written
        boolean unstored; // its latest turn is not in the store (best-effort after a failed write)
        boolean leased; // this server holds its lease in the shared store
        long version; // shared store: the stored version the memory copy is at (the writes so far)
        int turns;
        long evictions;
        String fingerprint; // of the committed transcript
        // figures as of the last committed turn (read by listings without touching a cache the model may be changing)
        long totalEntries, kvBytes;
        int largest, tokens, messages;

        Entry(String id) {
            this.id = id;
        }

        boolean live() { return conversation != null; }
    }

    SessionManager(ServedModel model, SessionStore store, StoreMode mode, int maxLive, PrintStream log, Metrics metrics) {
        this.model = model;
        this.store = store;
        this.shared = store instanceof SharedSessionStore s ? s : null;
        this.mode = mode;
        this.maxLive = maxLive;
        this.log = log;
        this.metrics = metrics;
        if (store != null) open();
    }

    /** The directory store for {@code dir} with this model's fingerprints. */
    static SessionStore directory(ServedModel model, Path dir) {
        return new DirectoryStore(dir, new SessionCodec(model.modelFingerprint(), model.cacheFingerprint(), model.policy()));
    }

    /** The Redis store at {@code uri}, leases of {@code leaseSeconds}, credentials from the environment. */
    static SessionStore redis(ServedModel model, String uri, int leaseSeconds) {
        return new RedisStore(uri, System.getenv(), new SessionCodec(model.modelFingerprint(), model.cacheFingerprint(), model.policy()),
                leaseSeconds);
    }

    boolean persistent() { return store != null; }

    String storeWhere() { return store == null ? null : store.where(); }

    /** Closes a shared store's connections (its leases are given up). */
    void close() {
        if (shared != null) shared.close();
    }

    StoreMode mode() { return mode; }

    /**
     * Indexes the stored sessions. Nothing found there stops the server: every entry that is not
     * a readable session of this model and cache is skipped with one log line (a refused one is
     * kept, and reported to the first request that names its id), and a store that cannot be
     * listed or written is reported.
     */
    private void open() {
        try {
            store.scan(new SessionStore.Found() {
                @Override
                public void session(String key, SessionStore.Stored s) {
                    Entry e = new Entry(s.id());
                    e.policy = s.policy();
                    e.turns = s.turns();
                    e.evictions = s.evictions();
                    stored(e, s.state());
                    entries.put(e.id, e);
                    index(e);
                }

                @Override
                public void skipped(String key, String why) {
                    if (key != null) refused.put(key, why);
                    metrics.storeSkipped();
                    log.println("fdkvc serve: session store: " + why);
                }
            });
        } catch (SessionStore.Unavailable u) {
            log.println("fdkvc serve: session store: " + u.getMessage() + "; starting without its sessions");
        }
        String problem = store.problem();
        if (problem != null) {
            log.println("fdkvc serve: session store: " + problem + (mode == StoreMode.STRICT
                    ? "; every turn will fail with 503 or 507 until it is fixed (--session-store-mode strict)"
                    : "; turns are answered but not stored until it is fixed (--session-store-mode best-effort)"));
        }
    }

    /** Why the store cannot take writes now (null: it can, or there is none); not under the lock, a store may take its timeout. */
    String storeProblem() {
        return store == null ? null : store.problem();
    }

    synchronized int unstoredCount() {
        return unstored;
    }

    private static void stored(Entry e, Conversation.State s) {
        e.fingerprint = fingerprint(s.messages(), s.messages().size());
        long total = 0;
        int largest = 0;
        for (var st : s.cache().streams()) {
            total += st.size();
            largest = Math.max(largest, st.size());
        }
        e.totalEntries = total;
        e.largest = largest;
        e.tokens = s.tokens().length;
        e.messages = s.messages().size();
    }

    /** Takes the figures of a live session that no request is changing. */
    private static void figures(Entry e) {
        Conversation c = e.conversation;
        e.totalEntries = c.cache().totalEntries();
        e.largest = c.cache().maxEntries();
        e.kvBytes = c.cache().bytes();
        e.tokens = c.tokenCount();
        e.messages = c.messages().size();
        e.turns = c.turns();
    }

    /**
     * The session a request continues, marked busy, with its conversation in memory. With an id
     * the named session is used (created when new; restarted when the messages do not continue
     * it); without, the live or stored session whose transcript the messages extend, else a new
     * one. {@code choice} is the request's policy, or null for the session's own (the server's
     * for a new session).
     */
    synchronized Entry acquire(String headerId, List<Message> messages, PolicySpec choice) {
        if (headerId != null) {
            if (!ID.matcher(headerId).matches()) {
                throw ApiError.invalid("X-Session-Id", "X-Session-Id must be 1-128 characters of A-Z a-z 0-9 . _ : -");
            }
            Entry e = entries.get(headerId);
            if (e == null) {
                checkNotRefused(headerId);
                e = new Entry(headerId);
                e.policy = choice != null ? choice : model.policy();
                entries.put(e.id, e);
            }
            awaitFinish(e);
            if (e.busy) throw ApiError.conflict("session " + headerId + " is answering another request");
            try {
                claim(e);
                if (shared == null) checkSamePolicy(e, choice); // a shared session's policy is known once it is loaded
                try {
                    load(e);
                } catch (SessionStore.Refused r) {
                    // reported once; the id is free for a new session from now on
                    forget(e);
                    setAside.add(store.key(headerId));
                    throw refusedConflict(r.getMessage());
                }
                checkSamePolicy(e, choice);
                if (!e.conversation.continuedBy(messages)) {
                    // the client rewrote the history of its named session: start it over, same policy
                    unindex(e);
                    e.conversation = model.newConversation(e.policy);
                    figures(e);
                }
            } catch (RuntimeException x) {
                unclaim(e);
                dropIfEmpty(e);
                throw x;
            }
            e.busy = true;
            return e;
        }
        String[] prefixes = prefixFingerprints(messages);
        if (shared != null) {
            Entry e = acquireShared(prefixes, messages, choice);
            if (e != null) return e;
            return newSession(choice);
        }
        Entry otherPolicy = null;
        for (int k = messages.size() - 1; k >= 1; k--) {
            java.util.Set<String> ids = byFingerprint.get(prefixes[k]);
            if (ids == null) continue;
            for (String id : List.copyOf(ids)) {
                Entry e = entries.get(id);
                if (e == null) continue;
                if (choice != null && !choice.equals(e.policy)) {
                    otherPolicy = e;
                    continue;
                }
                awaitFinish(e);
                if (e.busy || entries.get(id) != e) continue;
                try {
                    load(e);
                } catch (SessionStore.Refused r) {
                    // a client without an id is never locked out by a damaged value: it gets a new session
                    log.println("fdkvc serve: session store: " + r.getMessage() + "; set aside, the conversation starts over");
                    forget(e);
                    setAside.add(store.key(id));
                    continue;
                }
                if (e.conversation.continuedBy(messages)) {
                    e.busy = true;
                    return e;
                }
            }
        }
        if (otherPolicy != null) checkSamePolicy(otherPolicy, choice);
        return newSession(choice);
    }

    private Entry newSession(PolicySpec choice) {
        Entry e = new Entry(UUID.randomUUID().toString());
        e.policy = choice != null ? choice : model.policy();
        e.conversation = model.newConversation(e.policy);
        figures(e);
        entries.put(e.id, e);
        try {
            claim(e);
        } catch (RuntimeException x) {
            forget(e);
            throw x;
        }
        e.busy = true;
        return e;
    }

    /**
     * The session a request without an id continues, found through the shared store's transcript
     * index (longest prefix first) and leased; null when none is found or its value is set aside
     * (a new session then). A session another server is answering gets 409 with Retry-After, so
     * that the client's retry continues it rather than starting over.
     */
    private Entry acquireShared(String[] prefixes, List<Message> messages, PolicySpec choice) {
        String[] longestFirst = new String[Math.max(0, messages.size() - 1)];
        for (int k = messages.size() - 1; k >= 1; k--) longestFirst[messages.size() - 1 - k] = prefixes[k];
        String id;
        try {
            id = shared.lookup(longestFirst);
        } catch (SessionStore.Unavailable u) {
            metrics.storeFailed();
            if (mode == StoreMode.STRICT) throw storeError(u);
            return null;
        }
        if (id == null || setAside.contains(store.key(id))) return null;
        Entry e = entries.get(id);
        if (e == null) {
            e = new Entry(id);
            e.policy = model.policy(); // until its stored value is read
            entries.put(id, e);
        }
        awaitFinish(e);
        if (e.busy) throw ApiError.conflict("session " + ApiError.excerpt(id) + " is answering another request").retryAfter(1);
        try {
            claim(e);
            try {
                load(e);
            } catch (SessionStore.Refused r) {
                // a client without an id is never locked out by a damaged value: it gets a new session
                log.println("fdkvc serve: session store: " + r.getMessage() + "; set aside, the conversation starts over");
                unclaim(e);
                forget(e);
                setAside.add(store.key(id));
                return null;
            }
            checkSamePolicy(e, choice);
        } catch (RuntimeException x) {
            unclaim(e);
            dropIfEmpty(e);
            throw x;
        }
        if (!e.conversation.continuedBy(messages)) {
            unclaim(e);
            return null;
        }
        e.busy = true;
        return e;
    }

    /**
     * Shared store: takes the session's lease (409 with Retry-After while another server holds
     * it) and drops the memory copy when the store holds another version of it (another server
     * advanced or deleted it), so that {@link #load} reads the current one. A store that cannot be
     * reached fails the request (strict) or lets it run on memory unleased (best-effort).
     */
    private void claim(Entry e) {
        if (shared == null) return;
        SharedSessionStore.Lease l;
        long t0 = System.nanoTime();
        try {
            l = shared.lease(e.id);
        } catch (SessionStore.Unavailable u) {
            metrics.storeFailed();
            log.println("fdkvc serve: session store: " + u.getMessage());
            if (mode == StoreMode.STRICT) throw storeError(u);
            return;
        } finally {
            metrics.storeCall(System.nanoTime() - t0);
        }
        if (!l.granted()) {
            metrics.leaseConflict();
            throw leasedElsewhere(e.id, l.retryAfterMs());
        }
        e.leased = true;
        if (l.version() != e.version) {
            if (e.live()) {
                e.conversation = null;
                e.kvBytes = 0;
            }
            if (e.unstored) unstored--;
            e.unstored = false;
            unindex(e);
            e.turns = 0;
            e.evictions = 0;
        }
        e.version = Math.max(0, l.version()); // -1, a value that is not a session: replaced by the next write
    }

    private void unclaim(Entry e) {
        if (shared != null && e.leased) {
            e.leased = false;
            shared.unlease(e.id);
        }
    }

    /** A session that a refused request created leaves no empty entry behind. */
    private void dropIfEmpty(Entry e) {
        if (!e.busy && entries.get(e.id) == e && e.turns == 0 && !e.unstored && (!e.live() || e.conversation.turns() == 0)) {
            entries.remove(e.id);
            unindex(e);
            e.conversation = null;
        }
    }

    /** A session keeps its policy for life: a request that names another is refused. */
    private static void checkSamePolicy(Entry e, PolicySpec choice) {
        if (choice != null && !choice.equals(e.policy)) {
            throw new ApiError(409, "invalid_request_error", PolicyChoice.FIELD, "policy_conflict", "session " + ApiError.excerpt(e.id)
                    + " runs " + e.policy + " for life; the request asks for " + choice + " (start a new session for another policy)");
        }
    }

    /** A stored value refused at start-up answers the first request naming its id, once. */
    private void checkNotRefused(String id) {
        if (store == null) return;
        String why = refused.remove(store.key(id));
        if (why != null) {
            setAside.add(store.key(id));
            throw refusedConflict(why);
        }
    }

    private static ApiError refusedConflict(String why) {
        return new ApiError(409, "invalid_request_error", null, "session_unusable", "the stored session cannot be used: "
                + why + "; it has been set aside: the next request with this id starts the conversation over");
    }

    /** Waits while a session writes its last turn (bounded); the caller holds the lock. */
    private void awaitFinish(Entry e) {
        long deadline = System.nanoTime() + FINISH_WAIT_MS * 1_000_000;
        while (e.finishing) {
            long left = deadline - System.nanoTime();
            if (left <= 0) break;
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException x) {
                Thread.currentThread().interrupt();
                throw ApiError.conflict("session " + e.id + " is storing its last turn");
            }
        }
    }

    /** Drops a session from memory and the index (its stored value, if any, stays until overwritten or deleted). */
    private void forget(Entry e) {
        unindex(e);
        if (e.unstored) unstored--;
        e.unstored = false;
        entries.remove(e.id);
        e.conversation = null;
    }

    /** Brings a stored session into memory. */
    private void load(Entry e) throws SessionStore.Refused {
        if (e.live()) return;
        Conversation c = null;
        if (store != null && !setAside.contains(store.key(e.id))) {
            SessionStore.Stored s;
            long t0 = System.nanoTime();
            try {
                s = store.read(e.id);
            } catch (SessionStore.Unavailable u) {
                metrics.storeFailed();
                throw storeError(u);
            } finally {
                metrics.storeCall(System.nanoTime() - t0);
            }
            if (s != null) {
                // a session runs the policy it was stored with (a shared one may be new to this server)
                c = model.newConversation(s.policy());
                try {
                    c.restore(s.state());
                } catch (RuntimeException x) {
                    throw new SessionStore.Refused("stored session " + store.key(e.id) + " does not fit this server's cache: " + x.getMessage());
                }
                e.policy = s.policy();
                e.turns = s.turns();
                e.evictions = s.evictions();
                if (shared != null) e.version = s.version();
            }
        }
        if (c == null) c = model.newConversation(e.policy);
        e.conversation = c;
        figures(e);
    }

    static ApiError storeError(SessionStore.Unavailable u) {
        return u.full() ? new ApiError(507, "server_error", null, "store_full", u.getMessage() + "; the session is unchanged")
                : new ApiError(503, "server_error", null, "store_unavailable", u.getMessage() + "; the session is unchanged");
    }

    /**
     * Commits a finished turn: with a store, writes it first (outside the lock; requests for the
     * session wait meanwhile), then re-indexes the transcript and frees the session, so that the
     * client's next turn finds it free the moment it learns this one ended. A failed write in
     * strict mode throws the error the client gets, with the session back at its stored turn.
     */
    void commit(Entry e, Job job) {
        SessionStore.Unavailable failed = null;
        SharedSessionStore.Fenced fenced = null;
        if (store != null) {
            synchronized (this) {
                e.finishing = true;
            }
            long t0 = System.nanoTime();
            try {
                if (shared != null) {
                    var m = job.state.messages();
                    SharedSessionStore.Written w = shared.write(e.id, e.policy, e.evictions + job.evicted, job.state, e.version,
                            fingerprint(m, m.size()));
                    e.version = w.version();
                    metrics.stored(w.bytes(), System.nanoTime() - t0);
                } else {
                    long bytes = store.write(e.id, e.policy, e.evictions + job.evicted, job.state);
                    metrics.stored(bytes, System.nanoTime() - t0);
                }
            } catch (SharedSessionStore.Fenced f) {
                fenced = f;
                metrics.storeFenced();
                log.println("fdkvc serve: session store: " + f.getMessage() + "; the turn is not stored");
            } catch (SessionStore.Unavailable u) {
                failed = u;
                metrics.storeFailed();
                log.println("fdkvc serve: session store: " + u.getMessage());
            } catch (RuntimeException x) {
                failed = new SessionStore.Unavailable("cannot store session: " + x, false, x);
                metrics.storeFailed();
                log.println("fdkvc serve: session store: " + failed.getMessage());
            }
        }
        synchronized (this) {
            e.finishing = false;
            try {
                if (fenced != null) {
                    // another server owns the session now: memory is dropped, the next request reads what it stored
                    if (e.turns == 0 && !e.unstored) forget(e);
                    else {
                        e.conversation = null;
                        e.kvBytes = 0;
                        e.version = -1; // unknown: the next lease reloads
                    }
                    throw new ApiError(409, "invalid_request_error", null, "session_fenced", fenced.getMessage()
                            + "; this turn is not stored, resend it").retryAfter(retrySeconds(fenced.retryAfterMs()));
                }
                if (failed != null && mode == StoreMode.STRICT) {
                    // memory goes back to what the store holds: the next request reloads the stored turn
                    if (e.turns == 0 && !e.unstored) forget(e);
                    else {
                        e.conversation = null;
                        e.kvBytes = 0;
                    }
                    throw storeError(failed);
                }
                if (failed == null) setAside.remove(store == null ? null : store.key(e.id));
                unindex(e);
                figures(e);
                e.evictions += job.evicted;
                e.fingerprint = fingerprint(e.conversation.messages(), e.conversation.messages().size());
                index(e);
                boolean was = e.unstored;
                e.unstored = failed != null;
                if (was != e.unstored) unstored += e.unstored ? 1 : -1;
            } finally {
                free(e, job);
                notifyAll();
            }
        }
    }

    /**
     * Ends a request on a session if {@link #commit} has not: frees it (only if this request
     * still holds it) and moves idle sessions beyond the limit out of memory.
     */
    synchronized void release(Entry e, Job job) {
        free(e, job);
        notifyAll();
    }

    private void free(Entry e, Job job) {
        if (!e.busy || e.holder != job) return;
        e.busy = false;
        e.holder = null;
        unclaim(e);
        if (e.live() && e.conversation.turns() == 0 && entries.get(e.id) == e && e.turns == 0 && !e.unstored) {
            // a first request that did not complete leaves no empty session behind
            entries.remove(e.id);
            e.conversation = null;
        }
        evictBeyondLimit();
    }

    /** Marks a session busy for {@code job}. */
    synchronized void hold(Entry e, Job job) {
        e.holder = job;
    }

    private void index(Entry e) {
        byFingerprint.computeIfAbsent(e.fingerprint, f -> new java.util.LinkedHashSet<>()).add(e.id);
    }

    private void unindex(Entry e) {
        if (e.fingerprint != null) {
            java.util.Set<String> ids = byFingerprint.get(e.fingerprint);
            if (ids != null) {
                ids.remove(e.id);
                if (ids.isEmpty()) byFingerprint.remove(e.fingerprint);
            }
        }
        e.fingerprint = null;
    }

    private void evictBeyondLimit() {
        int live = 0;
        for (Entry x : entries.values()) if (x.live()) live++;
        if (live <= maxLive) return;
        List<Entry> lru = new ArrayList<>(entries.values()); // least recently used first
        for (Entry x : lru) {
            if (live <= maxLive) break;
            if (!x.live() || x.busy || x.unstored) continue; // an unstored session's only current state is in memory
            if (shared != null) {
                // the store holds it, and what this server knew of it is re-read at its next lease
                unindex(x);
                entries.remove(x.id);
                x.conversation = null;
            } else if (store != null) {
                // already written after its last turn: only memory is released
                x.conversation = null;
                x.kvBytes = 0;
            } else {
                unindex(x);
                entries.remove(x.id);
                x.conversation = null;
            }
            live--;
        }
    }

    /** A session's figures, read under the manager's lock (as of its last committed turn). */
    record Info(String id, PolicySpec policy, boolean live, boolean busy, int turns, int messages, int tokens, int largest,
                long totalEntries, long evictions, long kvBytes, String problem) {}

    private static Info info(Entry e) {
        return new Info(e.id, e.policy, e.live(), e.busy, e.turns, e.messages, e.tokens, e.largest, e.totalEntries, e.evictions,
                e.kvBytes, null);
    }

    /** A stored session's figures; one this server holds in memory is described from memory. */
    private Info info(SharedSessionStore.Summary s) {
        Entry e = entries.get(s.id());
        if (e != null && (e.busy || e.unstored || e.live() && e.version == s.version())) return info(e);
        return new Info(s.id(), s.policy(), false, false, s.turns(), s.messages(), s.tokens(), s.largest(), s.totalEntries(),
                s.evictions(), 0, s.problem());
    }

    /** One page of the sessions, by id: {@code limit} after {@code after} (null: from the first); {@code more} when others follow. */
    record Listing(List<Info> items, boolean more) {}

    /**
     * What a session's cache holds, for tokens [from, from + limit) of its transcript, between
     * turns (409 while it answers a request); a stored session is brought into memory.
     */
    synchronized tools.jackson.databind.node.ObjectNode cacheView(String id, int from, int limit, boolean perLayer, boolean messages) {
        Entry e = entries.get(id);
        if (e == null && shared != null && ID.matcher(id).matches()) {
            SharedSessionStore.Summary s;
            try {
                s = shared.describe(id);
            } catch (SessionStore.Unavailable u) {
                throw storeError(u);
            }
            if (s != null) {
                e = new Entry(id);
                e.policy = model.policy(); // until its stored value is read
                entries.put(id, e);
            }
        }
        if (e == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
        awaitFinish(e);
        if (e.busy) throw ApiError.conflict("session " + ApiError.excerpt(id) + " is answering a request; its cache is shown between turns");
        if (shared != null && !e.unstored) {
            // another server may have advanced it: show what the store holds
            e.conversation = null;
            e.version = -1;
        }
        try {
            load(e);
        } catch (SessionStore.Refused r) {
            throw refusedConflict(r.getMessage());
        }
        tools.jackson.databind.node.ObjectNode view = CacheView.of(e.conversation, e.evictions, from, limit, perLayer, messages);
        evictBeyondLimit();
        return view;
    }

    /** The sessions in pages by id: those the shared store holds, else those this server knows. */
    synchronized Listing list(String after, int limit) {
        if (shared != null) {
            try {
                SharedSessionStore.Page p = shared.list(after, limit);
                List<Info> out = new ArrayList<>();
                for (SharedSessionStore.Summary s : p.items()) out.add(info(s));
                return new Listing(out, p.more());
            } catch (SessionStore.Unavailable u) {
                throw storeError(u);
            }
        }
        java.util.TreeMap<String, Entry> byId = new java.util.TreeMap<>(entries);
        var tail = after == null ? byId : byId.tailMap(after, false);
        List<Info> out = new ArrayList<>();
        for (Entry e : tail.values()) {
            if (out.size() == limit) return new Listing(out, true);
            out.add(info(e));
        }
        return new Listing(out, false);
    }

    synchronized Info describe(String id) {
        Entry e = entries.get(id);
        if (shared != null && (e == null || !(e.busy || e.unstored))) {
            try {
                SharedSessionStore.Summary s = ID.matcher(id).matches() ? shared.describe(id) : null;
                if (s != null) return info(s);
            } catch (SessionStore.Unavailable u) {
                throw storeError(u);
            }
            e = null; // not in the store (deleted by another server, say): memory is only its cache
        }
        if (e == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
        return info(e);
    }

    /** Removes a session from memory and the store; a stored value refused at start-up or at load is removed too. */
    synchronized void delete(String id) {
        if (shared != null) {
            deleteShared(id);
            return;
        }
        Entry e = entries.get(id);
        boolean wasRefused = store != null && (refused.remove(store.key(id)) != null | setAside.remove(store.key(id)));
        if (e == null && !wasRefused) {
            if (store == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
            try {
                // a value set aside after it was refused is still in the store until now
                if (store.read(id) == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
            } catch (SessionStore.Refused r) {
                // it exists: delete it below
            } catch (SessionStore.Unavailable u) {
                throw storeError(u);
            }
        }
        if (e != null) {
            if (e.busy) throw ApiError.conflict("session " + id + " is answering a request");
            forget(e);
        }
        if (store != null) {
            try {
                store.delete(id);
            } catch (SessionStore.Unavailable u) {
                throw storeError(u);
            }
        }
    }

    /** 409 {@code session_leased}: another server holds the session's lease for {@code retryAfterMs} more. */
    private static ApiError leasedElsewhere(String id, long retryAfterMs) {
        int seconds = retrySeconds(retryAfterMs);
        return new ApiError(409, "invalid_request_error", null, "session_leased", "session " + ApiError.excerpt(id)
                + " is being answered by another server; retry in " + seconds + " s").retryAfter(seconds);
    }

    /** A lease's remaining milliseconds as the whole seconds of a Retry-After header, at least 1. */
    private static int retrySeconds(long retryAfterMs) {
        return (int) Math.max(1, (retryAfterMs + 999) / 1000);
    }

    /** Removes a session from the shared store (unless another server is answering it) and from this server's memory. */
    private void deleteShared(String id) {
        Entry e = entries.get(id);
        if (e != null && e.busy) throw ApiError.conflict("session " + ApiError.excerpt(id) + " is answering a request").retryAfter(1);
        boolean existed;
        try {
            existed = shared.remove(id);
        } catch (SharedSessionStore.LeasedElsewhere l) {
            throw leasedElsewhere(id, l.retryAfterMs());
        } catch (SessionStore.Unavailable u) {
            throw storeError(u);
        }
        boolean known = e != null && e.unstored; // memory is a cache of the store, but for turns the store never took
        if (e != null) forget(e);
        refused.remove(store.key(id));
        setAside.remove(store.key(id));
        if (!existed && !known) throw ApiError.notFound("no session " + ApiError.excerpt(id));
    }

    synchronized int liveCount() {
        int n = 0;
        for (Entry e : entries.values()) if (e.live()) n++;
        return n;
    }

    synchronized int storedCount() {
        return entries.size() - liveCount();
    }

    /** Cache entries and bytes of the live sessions, as of their last turns. */
    synchronized long[] liveCacheFigures() {
        long entriesHeld = 0, bytes = 0;
        for (Entry e : entries.values()) {
            if (e.live()) {
                entriesHeld += e.totalEntries;
                bytes += e.kvBytes;
            }
        }
        return new long[] {entriesHeld, bytes};
    }

    /** SHA-256 of the first {@code k} messages (roles and contents; replies without surrounding white space). */
    static String fingerprint(List<Message> messages, int k) {
        return prefixFingerprints(messages.subList(0, k))[k];
    }

    /** Fingerprints of every prefix: element k covers messages [0, k). */
    static String[] prefixFingerprints(List<Message> messages) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            String[] out = new String[messages.size() + 1];
            out[0] = HexFormat.of().formatHex(((MessageDigest) d.clone()).digest());
            for (int i = 0; i < messages.size(); i++) {
                Message m = messages.get(i);
                String c = m.role() == Role.ASSISTANT ? m.content().strip() : m.content();
                byte[] b = c.getBytes(StandardCharsets.UTF_8);
                d.update((byte) m.role().ordinal());
                d.update(new byte[] {(byte) (b.length >>> 24), (byte) (b.length >>> 16), (byte) (b.length >>> 8), (byte) b.length});
                d.update(b);
                out[i + 1] = HexFormat.of().formatHex(((MessageDigest) d.clone()).digest());
            }
            return out;
        } catch (NoSuchAlgorithmException | CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }
}
