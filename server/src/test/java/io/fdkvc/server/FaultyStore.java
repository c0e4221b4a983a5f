package io.fdkvc.server;

import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;

/**
 * A session store that fails on demand, in process: the directory store underneath, with writes
 * refused as a full or read-only file system refuses them. The full and read-only cases run
 * through it always, and on real tmpfs mounts too where the kernel allows mounting.
 */
final class FaultyStore implements SessionStore {
    enum Fault { NONE, FULL, READ_ONLY }

    private final SessionStore inner;
    volatile Fault fault = Fault.NONE;

    FaultyStore(SessionStore inner) {
        this.inner = inner;
    }

    @Override
    public void scan(Found found) throws Unavailable {
        inner.scan(found);
    }

    @Override
    public String key(String id) {
        return inner.key(id);
    }

    @Override
    public Stored read(String id) throws Unavailable, Refused {
        return inner.read(id);
    }

    @Override
    public long write(String id, PolicySpec policy, long evictions, Conversation.State s) throws Unavailable {
        fail();
        return inner.write(id, policy, evictions, s);
    }

    @Override
    public void delete(String id) throws Unavailable {
        fail();
        inner.delete(id);
    }

    private void fail() throws Unavailable {
        switch (fault) {
            case FULL -> throw new Unavailable("cannot store session in " + where() + ": No space left on device", true, null);
            case READ_ONLY -> throw new Unavailable("cannot store session in " + where() + ": Read-only file system", false, null);
            case NONE -> { }
        }
    }

    @Override
    public String problem() {
        return switch (fault) {
            case FULL -> "the session directory " + where() + " is out of space (0 bytes free)";
            case READ_ONLY -> "the session directory " + where() + " is not writable";
            case NONE -> inner.problem();
        };
    }

    @Override
    public String where() {
        return inner.where();
    }
}
