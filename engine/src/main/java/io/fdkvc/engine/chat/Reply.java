package io.fdkvc.engine.chat;

import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.sampling.Sampler;
import io.fdkvc.engine.session.Session;
import io.fdkvc.engine.template.ChatTemplate.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One request in progress on a {@link Conversation}: the prompt extension still to feed, then the
 * reply token by token. It is a small state machine so that a scheduler can interleave many:
 * {@link #prefill} feeds prompt chunks; each decode step feeds {@link #pendingToken()} (alone with
 * {@link #decodeAlone()}, or in a batch with other conversations, then {@link #fed}); when
 * {@link #done()}, {@link #commit()} ends the dialogue turn (the policy runs) and adds the
 * messages and the reply to the transcript. {@link #rollback()} instead leaves the conversation
 * exactly as it was before the request: its cache, transcript and policy state.
 *
 * <p>Rollback. While no policy update has run since the request began, the request's cache
 * entries are all in the turn in progress and are simply dropped ({@link KvCache#discardPending}).
 * Before the first update inside the request (a prompt or reply longer than the turn headroom),
 * the cache is snapshotted as of its last update, which is the state at the request's start; a
 * rollback restores it.
 *
 * <p>The generation follows {@code fdkvc chat} exactly: a stop token ends the reply without being
 * fed; the token that completes a stop text or reaches the limit is fed without logits; the reply
 * text starts without the space its first token carries.
 *
 * <p>Not thread-safe, except {@link #cancel()}, which any thread may call.
 */
public final class Reply {
    private final Conversation conversation;
    private final Session session;
    private final KvCache cache;
    private final List<Message> added;
    private final int[] prompt;
    private final int cachedTokens;
    private final Sampler sampler;
    private final ReplyText text;
    private final ChatFormat format;
    private final int maxTokens;
    private final Consumer<String> onText;
    private final IntList replyTokens = new IntList(64);
    private final StringBuilder content = new StringBuilder();

    private int fed;                 // prompt tokens fed
    private int pending = -1;        // reply token the next decode step feeds
    private boolean pendingIsLast;   // fed without logits, then the reply is done
    private boolean atStart = true;
    private boolean done;
    private boolean closed;          // committed or rolled back
    private FinishReason finish;
    private KvCache.Snapshot rollbackPoint;
    private volatile boolean cancelled;
    private long evicted;            // entries the policy evicted during this request (all streams)

    Reply(Conversation conversation, List<Message> added, int[] prompt, int cachedTokens, GenerationParams p,
          Consumer<String> onText) {
        this.conversation = conversation;
        this.session = conversation.session();
        this.cache = session.cache();
        this.added = List.copyOf(added);
        this.prompt = prompt;
        this.cachedTokens = cachedTokens;
        this.format = conversation.format();
        this.sampler = new Sampler(session.model().config().vocabSize(), p.temperature(), 0, p.topP(), p.seed());
        List<String> stops = new ArrayList<>(format.stopStrings());
        stops.addAll(p.stop());
        this.text = new ReplyText(format.replyDecoder(), stops);
        this.maxTokens = p.maxTokens();
        this.onText = onText == null ? s -> {} : onText;
    }

    public Conversation conversation() { return conversation; }
    /** Prompt tokens of this request: the transcript it continues plus its extension. */
    public int promptTokens() { return cachedTokens + prompt.length; }
    /** Prompt tokens that were already processed (the transcript continued), not recomputed. */
    public int cachedTokens() { return cachedTokens; }
    /** Reply tokens produced so far. */
    public int completionTokens() { return replyTokens.size(); }
    /** Prompt tokens still to feed. */
    public int prefillRemaining() { return prompt.length - fed; }
    public boolean prefilling() { return fed < prompt.length; }
    public boolean done() { return done; }
    public FinishReason finishReason() { return finish; }
    /** The reply text released so far (all of it once done). */
    public String content() { return content.toString(); }
    public boolean cancelled() { return cancelled; }
    /** Entries the policy evicted during this request, all streams together (complete after {@link #commit()}). */
    public long evicted() { return evicted; }

    /** Asks the driver to stop; it then rolls back. Any thread. */
    public void cancel() { cancelled = true; }

    /**
     * Feeds up to {@code maxTokens} prompt tokens; after the last one samples the reply's first
     * token (so that {@link #pendingToken()} or {@link #done()} tells what comes next).
     */
    public void prefill(int maxTokens) {
        check(prefilling(), "prefill after the prompt");
        if (maxTokens < 1) throw new IllegalArgumentException("maxTokens must be >= 1");
        int n = Math.min(maxTokens, prompt.length - fed);
        int end = fed + n;
        float[] logits = null;
        while (fed < end) {
            int room = ensureHeadroom();
            int k = Math.min(end - fed, room);
            logits = session.feed(prompt, fed, k, fed + k == prompt.length);
            fed += k;
        }
        if (!prefilling()) accept(sampler.sample(logits));
    }

    /** The reply token the next decode step must feed, or -1 when none (prefilling or done). */
    public int pendingToken() {
        return done || prefilling() ? -1 : pending;
    }

    /** Whether the next decode step needs the logits (false for the reply's last token). */
    public boolean pendingWantsLogits() {
        return !pendingIsLast;
    }

    /**
     * Makes room for at least one token in the turn in progress: when the headroom is used up,
     * snapshots the cache for rollback (once per request) and runs the policy on the chunk, as
     * {@link Session} does for a long turn. Returns the headroom.
     */
    public int ensureHeadroom() {
        if (cache.headroom() == 0) {
            if (rollbackPoint == null) rollbackPoint = cache.snapshot();
            evicted += cache.endTurn().evicted();
        }
        return cache.headroom();
    }

    /** One decode step of this reply alone, through the session (the same arithmetic as {@code fdkvc chat}). */
    public void decodeAlone() {
        int t = pendingToken();
        check(t >= 0, "no token to feed");
        ensureHeadroom();
        if (pendingIsLast) {
            session.append(t);
            fed(null);
        } else {
            fed(session.feed(t));
        }
    }

    /**
     * Records that {@link #pendingToken()} was fed (by {@link #decodeAlone()} or a batched step,
     * after {@link #ensureHeadroom()}), with its logits when {@link #pendingWantsLogits()}; samples
     * the next token.
     */
    public void fed(float[] logits) {
        check(pendingToken() >= 0, "no token was pending");
        if (pendingIsLast) {
            finishText();
            return;
        }
        accept(sampler.sample(logits));
    }

    private void accept(int next) {
        if (format.isStopToken(next)) {
            finish = FinishReason.STOP;
            finishText();
            return;
        }
        replyTokens.add(next);
        String piece = text.add(next);
        if (atStart && !piece.isEmpty()) {
            piece = piece.stripLeading();
            atStart = piece.isEmpty();
        }
        emit(piece);
        pending = next;
        if (text.stopped() || replyTokens.size() == maxTokens) {
            pendingIsLast = true;
            finish = text.stopped() ? FinishReason.STOP : FinishReason.LENGTH;
        }
    }

    private void finishText() {
        String rest = text.finish();
        if (atStart) rest = rest.stripLeading();
        emit(rest);
        done = true;
        pending = -1;
    }

    private void emit(String piece) {
        if (piece.isEmpty()) return;
        content.append(piece);
        onText.accept(piece);
    }

    /** Runs the request to its end on the calling thread (prefill in model-batch chunks, then decode); stops early when cancelled. */
    public void runToEnd() {
        while (!done && !cancelled) {
            if (prefilling()) prefill(session.model().maxBatch());
            else decodeAlone();
        }
    }

    /** Ends the dialogue turn (the policy runs) and adds the request's messages and the reply to the transcript. */
    public Session.TurnStats commit() {
        check(done, "commit before the reply is done");
        check(!closed, "reply already closed");
        closed = true;
        Session.TurnStats st = session.endTurn();
        evicted += st.evicted();
        int[] all = new int[prompt.length + replyTokens.size()];
        System.arraycopy(prompt, 0, all, 0, prompt.length);
        System.arraycopy(replyTokens.toArray(), 0, all, prompt.length, replyTokens.size());
        conversation.committed(this, added, Message.assistant(content.toString()), all, prompt.length);
        return st;
    }

    /** Leaves the conversation as it was before this request (cache, policy state, transcript). */
    public void rollback() {
        check(!closed, "reply already closed");
        closed = true;
        if (rollbackPoint != null) cache.restore(rollbackPoint);
        else cache.discardPending();
        session.endTurn(); // nothing is pending: only resets the session's per-turn counters
        conversation.rolledBack(this);
    }

    private static void check(boolean ok, String what) {
        if (!ok) throw new IllegalStateException(what);
    }
}
