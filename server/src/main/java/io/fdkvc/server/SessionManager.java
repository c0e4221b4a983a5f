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

    boolean persistent() { return store != null; }

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

    /** Why the store cannot take writes now (null: it can, or there is none) and how many sessions are not stored. */
    synchronized String storeProblem() {
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
            checkSamePolicy(e, choice);
            try {
                load(e);
            } catch (SessionStore.Refused r) {
                // reported once; the id is free for a new session from now on
                forget(e);
                setAside.add(store.key(headerId));
                throw refusedConflict(r.getMessage());
            }
            if (!e.conversation.continuedBy(messages)) {
                // the client rewrote the history of its named session: start it over, same policy
                unindex(e);
                e.conversation = model.newConversation(e.policy);
                figures(e);
            }
            e.busy = true;
            return e;
        }
        String[] prefixes = prefixFingerprints(messages);
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
        Entry e = new Entry(UUID.randomUUID().toString());
        e.policy = choice != null ? choice : model.policy();
        e.conversation = model.newConversation(e.policy);
        figures(e);
        entries.put(e.id, e);
        e.busy = true;
        return e;
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
        Conversation c = model.newConversation(e.policy);
        if (store != null && !setAside.contains(store.key(e.id))) {
            SessionStore.Stored s;
            try {
                s = store.read(e.id);
            } catch (SessionStore.Unavailable u) {
                throw storeError(u);
            }
            if (s != null) {
                try {
                    c.restore(s.state());
                } catch (RuntimeException x) {
                    throw new SessionStore.Refused("stored session " + store.key(e.id) + " does not fit this server's cache: " + x.getMessage());
                }
                e.turns = s.turns();
                e.evictions = s.evictions();
            }
        }
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
        if (store != null) {
            synchronized (this) {
                e.finishing = true;
            }
            long t0 = System.nanoTime();
            try {
                long bytes = store.write(e.id, e.policy, e.evictions + job.evicted, job.state);
                metrics.stored(bytes, System.nanoTime() - t0);
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
            if (store != null) {
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
                long totalEntries, long evictions, long kvBytes) {}

    private static Info info(Entry e) {
        return new Info(e.id, e.policy, e.live(), e.busy, e.turns, e.messages, e.tokens, e.largest, e.totalEntries, e.evictions,
                e.kvBytes);
    }

    /**
     * What a session's cache holds, for tokens [from, from + limit) of its transcript, between
     * turns (409 while it answers a request); a stored session is brought into memory.
     */
    synchronized tools.jackson.databind.node.ObjectNode cacheView(String id, int from, int limit, boolean perLayer, boolean messages) {
        Entry e = entries.get(id);
        if (e == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
        awaitFinish(e);
        if (e.busy) throw ApiError.conflict("session " + ApiError.excerpt(id) + " is answering a request; its cache is shown between turns");
        try {
            load(e);
        } catch (SessionStore.Refused r) {
            throw refusedConflict(r.getMessage());
        }
        tools.jackson.databind.node.ObjectNode view = CacheView.of(e.conversation, e.evictions, from, limit, perLayer, messages);
        evictBeyondLimit();
        return view;
    }

    synchronized List<Info> list() {
        List<Info> out = new ArrayList<>();
        for (Entry e : entries.values()) out.add(info(e));
        return out;
    }

    synchronized Info describe(String id) {
        Entry e = entries.get(id);
        if (e == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
        return info(e);
    }

    /** Removes a session from memory and the store; a stored value refused at start-up or at load is removed too. */
    synchronized void delete(String id) {
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
