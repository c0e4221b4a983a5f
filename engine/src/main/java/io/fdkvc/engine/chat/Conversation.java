package io.fdkvc.engine.chat;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.Role;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A chat conversation with transcript continuity over a bounded cache. Clients of a chat API
 * send the whole history with every request; the conversation keeps the messages it has
 * processed (its own replies as it wrote them) and their token ids, and a request whose messages
 * extend that transcript only feeds the new messages. A turn therefore costs its own tokens
 * whatever the length of the conversation, and memory stays at the cache's budget.
 *
 * <p>A new conversation's history, however long, is fed in chunks through the same turn
 * machinery (each chunk of {@code maxTurnTokens} ends like a turn), so it stays bounded too.
 *
 * <p>One request at a time ({@link #begin}); its {@link Reply} either commits (the transcript and
 * cache hold the whole reply) or rolls back (they hold none of it). Not thread-safe.
 */
public final class Conversation {
    private final Session session;
    private final ChatFormat format;
    private final List<Message> messages = new ArrayList<>();
    private IntList tokens = new IntList(256);
    // per committed turn, where its prompt and its reply begin in the tokens (pairs); the first
    // turns of a transcript restored without them (an older session file) have none
    private IntList turnMarks = new IntList(16);
    private int turns;
    private Reply inProgress;

    public Conversation(Session session, ChatFormat format) {
        this.session = session;
        this.format = format;
    }

    public Session session() { return session; }
    public KvCache cache() { return session.cache(); }
    public ChatFormat format() { return format; }
    /** Requests committed so far. */
    public int turns() { return turns; }
    /** The messages processed: requests' messages and the replies, in order. */
    public List<Message> messages() { return List.copyOf(messages); }
    /** Tokens processed (prompts and fed reply tokens). */
    public int tokenCount() { return tokens.size(); }
    /** The processed token ids. */
    public int[] tokens() { return tokens.toArray(); }
    /**
     * Where each marked turn begins: pairs (first prompt token, first reply token) into
     * {@link #tokens()}, for the last {@code length / 2} committed turns (the earlier
     * {@link #unmarkedTurns()} were restored without marks).
     */
    public int[] turnMarks() { return turnMarks.toArray(); }
    /** Committed turns before the first marked one. */
    public int unmarkedTurns() { return turns - turnMarks.size() / 2; }
    /** Whether a request is in progress. */
    public boolean busy() { return inProgress != null; }

    /**
     * Whether {@code request} continues this conversation: it starts with exactly the transcript's
     * messages (replies compared without surrounding white space, which clients may trim) and
     * adds at least one. An empty conversation is continued by any request.
     */
    public boolean continuedBy(List<Message> request) {
        if (request.size() <= messages.size()) return false;
        for (int i = 0; i < messages.size(); i++) {
            if (!same(messages.get(i), request.get(i))) return false;
        }
        return true;
    }

    static boolean same(Message a, Message b) {
        if (a.role() != b.role()) return false;
        return a.role() == Role.ASSISTANT ? a.content().strip().equals(b.content().strip()) : a.content().equals(b.content());
    }

    /**
     * Starts a request: validates its messages, checks that they continue the transcript and
     * prepares the tokens of the new messages. Nothing is fed yet.
     *
     * @param onText receives the reply's text as it is released (may be null)
     * @throws InputException when the messages are malformed or do not continue the conversation
     */
    public Reply begin(List<Message> request, GenerationParams params, Consumer<String> onText) {
        if (inProgress != null) throw new IllegalStateException("a request is already in progress");
        format.validate(request);
        if (!continuedBy(request)) {
            throw new InputException("messages: they do not continue this session's conversation (its " + messages.size()
                    + " messages must come first, unchanged)");
        }
        int from = messages.size();
        int[] extension = format.extension(request, from);
        Reply r = new Reply(this, request.subList(from, request.size()), extension, tokens.size(), params, onText);
        inProgress = r;
        return r;
    }

    void committed(Reply r, List<Message> added, Message reply, int[] fed, int promptLength) {
        if (r != inProgress) throw new IllegalStateException("not the request in progress");
        messages.addAll(added);
        messages.add(reply);
        turnMarks.add(tokens.size());
        turnMarks.add(tokens.size() + promptLength);
        tokens.addAll(fed);
        turns++;
        inProgress = null;
    }

    void rolledBack(Reply r) {
        if (r != inProgress) throw new IllegalStateException("not the request in progress");
        inProgress = null;
    }

    /** What persistence stores; taken between requests. */
    public State state() {
        if (inProgress != null) throw new IllegalStateException("a request is in progress");
        return new State(List.copyOf(messages), tokens.toArray(), turns, cache().snapshot(), turnMarks.toArray());
    }

    /** Puts back a stored state (same model, format and policy); the cache checks its own shape and policy. */
    public void restore(State s) {
        if (inProgress != null) throw new IllegalStateException("a request is in progress");
        cache().restore(s.cache());
        messages.clear();
        messages.addAll(s.messages());
        tokens = new IntList(s.tokens());
        turnMarks = new IntList(s.turnMarks());
        turns = s.turns();
    }

    /**
     * A conversation between requests.
     *
     * @param messages the transcript's messages
     * @param tokens   the transcript's token ids
     * @param turns    requests committed
     * @param cache    the cache as of the last turn
     * @param turnMarks {@link #turnMarks()}: ascending token indices, two per marked turn, for at most
     *                 {@code turns} turns
     */
    public record State(List<Message> messages, int[] tokens, int turns, KvCache.Snapshot cache, int[] turnMarks) {
        public State {
            messages = List.copyOf(messages);
            if (turns < 0) throw new IllegalArgumentException("turns < 0");
            if (turnMarks.length % 2 != 0 || turnMarks.length / 2 > turns) {
                throw new IllegalArgumentException(turnMarks.length + " turn marks for " + turns + " turns");
            }
            for (int i = 0; i < turnMarks.length; i++) {
                if (turnMarks[i] < (i == 0 ? 0 : turnMarks[i - 1]) || turnMarks[i] > tokens.length) {
                    throw new IllegalArgumentException("turn mark " + turnMarks[i] + " out of order or past the " + tokens.length + " tokens");
                }
            }
            if (cache.nextPosition() != tokens.length) {
                throw new IllegalArgumentException("transcript of " + tokens.length + " tokens but the cache is at position "
                        + cache.nextPosition());
            }
        }

        /** A state without turn marks (stored before they were kept). */
        public State(List<Message> messages, int[] tokens, int turns, KvCache.Snapshot cache) {
            this(messages, tokens, turns, cache, new int[0]);
        }
    }
}
