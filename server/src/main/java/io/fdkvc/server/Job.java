package io.fdkvc.server;

import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.chat.Reply;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * One chat request handed to the {@link Scheduler}: its reply in progress and the events the
 * HTTP thread waits on (text pieces as they are released, then {@link #END}). The scheduler's
 * thread drives the reply; the HTTP thread only reads events and may {@link Reply#cancel()}.
 */
final class Job {
    static final Object END = new Object();

    final SessionManager.Entry session;
    volatile Reply reply; // set right after construction: the reply reports its text to this job
    final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    /** Set by the scheduler before {@link #END}: committed, the state to persist (or null), and any failure. */
    volatile boolean committed;
    volatile Conversation.State state;
    volatile Throwable failure;
    volatile long evicted;
    /** The client left (its connection closed, or a write failed): the reply is cancelled. */
    volatile boolean gone;
    /** When it was queued (the scheduler's clock). */
    long queuedAt;

    Job(SessionManager.Entry session) {
        this.session = session;
    }

    void text(String piece) {
        events.add(piece);
    }

    void abandon() {
        gone = true;
        Reply r = reply;
        if (r != null) r.cancel();
    }

    void finish() {
        events.add(END);
    }
}
