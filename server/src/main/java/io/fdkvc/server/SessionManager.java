package io.fdkvc.server;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.tokenizer.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.ChatTemplate.Role;
import java.io.IOException;
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
 * <p>A session serves one request at a time ({@link Entry#busy}). All methods synchronise on the
 * manager; loading a stored session happens inside, which is rare and bounded by its size.
 */
final class SessionManager {
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

    private final ServedModel model;
    private final SessionStore store; // null: no persistence
    private final int maxLive;
    private final PrintStream log;
    // access order: the first entries are the least recently used
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    // transcript fingerprint -> sessions with that transcript (several clients may hold the same history)
    private final Map<String, java.util.Set<String>> byFingerprint = new HashMap<>();
    private final Map<String, String> refused = new HashMap<>(); // file name -> why

    /** One session: live (conversation in memory) or stored (on disk only). */
    static final class Entry {
        final String id;
        PolicySpec policy;
        Conversation conversation; // null while stored
        boolean busy;
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

    SessionManager(ServedModel model, Path dir, int maxLive, PrintStream log) throws IOException {
        this.model = model;
        this.maxLive = maxLive;
        this.log = log;
        this.store = dir == null ? null : new SessionStore(dir, model.modelFingerprint(), model.cacheFingerprint(), model.policy());
        if (store != null) scan();
    }

    boolean persistent() { return store != null; }

    /** Indexes the stored sessions; files from another model or configuration are refused (logged, kept, never read as ours). */
    private void scan() throws IOException {
        for (Path f : store.files()) {
            try {
                SessionStore.Stored s = store.read(f);
                if (!store.file(s.id()).getFileName().equals(f.getFileName())) {
                    throw new SessionStore.Refused("stored session " + f.getFileName() + " does not belong to its id");
                }
                Entry e = new Entry(s.id());
                e.policy = s.policy();
                e.turns = s.turns();
                e.evictions = s.evictions();
                stored(e, s.state());
                entries.put(e.id, e);
                index(e);
            } catch (SessionStore.Refused r) {
                refused.put(f.getFileName().toString(), r.getMessage());
                log.println("fdkvc serve: " + r.getMessage() + "; not used");
            }
        }
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
            if (e.busy) throw ApiError.conflict("session " + headerId + " is answering another request");
            checkSamePolicy(e, choice);
            load(e);
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
                if (e == null || e.busy) continue;
                if (choice != null && !choice.equals(e.policy)) {
                    otherPolicy = e;
                    continue;
                }
                load(e);
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

    private void checkNotRefused(String id) {
        if (store == null) return;
        String why = refused.get(store.file(id).getFileName().toString());
        if (why != null) throw ApiError.conflict(why);
    }

    /** Brings a stored session into memory. */
    private void load(Entry e) {
        if (e.live()) return;
        if (store == null) {
            e.conversation = model.newConversation(e.policy);
            return;
        }
        Path f = store.file(e.id);
        Conversation c = model.newConversation(e.policy);
        try {
            if (java.nio.file.Files.exists(f)) {
                SessionStore.Stored s = store.read(f);
                c.restore(s.state());
                e.turns = s.turns();
                e.evictions = s.evictions();
            }
            e.conversation = c;
            figures(e);
        } catch (SessionStore.Refused r) {
            throw ApiError.conflict(r.getMessage());
        } catch (IOException io) {
            throw new IllegalStateException("cannot read stored session " + f.getFileName() + ": " + io.getMessage(), io);
        }
        e.conversation = c;
    }

    /**
     * Ends a request on a session: after a committed turn, writes it (with a session directory)
     * and re-indexes its transcript; then frees it and moves idle sessions beyond the limit out
     * of memory.
     */
    void release(Entry e, Job job) {
        if (job != null) {
            synchronized (job) {
                if (job.released) return; // released before its last chunk was sent
                job.released = true;
            }
        }
        IOException failed = null;
        if (job != null && job.committed && store != null && job.state != null) {
            try {
                store.write(e.id, e.policy, e.evictions + job.evicted, job.state);
            } catch (IOException io) {
                failed = io;
            }
        }
        synchronized (this) {
            if (job != null && job.committed) {
                unindex(e);
                figures(e);
                e.evictions += job.evicted;
                e.fingerprint = fingerprint(e.conversation.messages(), e.conversation.messages().size());
                index(e);
            }
            e.busy = false;
            if (e.live() && e.conversation.turns() == 0 && entries.get(e.id) == e && e.turns == 0) {
                // a first request that did not complete leaves no empty session behind
                entries.remove(e.id);
                e.conversation = null;
            }
            evictBeyondLimit();
        }
        if (failed != null) log.println("fdkvc serve: cannot store session: " + failed.getMessage());
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
            if (!x.live() || x.busy) continue;
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
    synchronized tools.jackson.databind.node.ObjectNode cacheView(String id, int from, int limit, boolean perLayer) {
        Entry e = get(id);
        if (e.busy) throw ApiError.conflict("session " + ApiError.excerpt(id) + " is answering a request; its cache is shown between turns");
        load(e);
        tools.jackson.databind.node.ObjectNode r = CacheView.of(e.conversation, e.evictions, from, limit, perLayer);
        evictBeyondLimit();
        return r;
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

    private Entry get(String id) {
        Entry e = entries.get(id);
        if (e == null) throw ApiError.notFound("no session " + ApiError.excerpt(id));
        return e;
    }

    synchronized void delete(String id) throws IOException {
        Entry e = get(id);
        if (e.busy) throw ApiError.conflict("session " + id + " is answering a request");
        entries.remove(id);
        unindex(e);
        e.conversation = null;
        if (store != null) store.delete(id);
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
