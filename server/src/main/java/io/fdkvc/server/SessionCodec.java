package io.fdkvc.server;

import io.fdkvc.core.cache.StreamSnapshot;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.template.ChatTemplate.Message;
import io.fdkvc.engine.template.ChatTemplate.Role;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The stored form of a session, the same for every {@link SessionStore}: versioned, checksummed,
 * and naming the model, the cache configuration and the session id it belongs to.
 *
 * <p>Format, little-endian, version 2: magic {@code "FDKVCSES"}, version, then strings (u32 length
 * + UTF-8): the model fingerprint, the cache fingerprint (headroom, positions, template), the
 * session id; the session's policy: name, budget, parameter count and each parameter's name and
 * value (as text); the turn count and evictions so far; the transcript's messages (role byte +
 * string), token ids and turn marks ({@link Conversation#turnMarks()}); the cache: shape, policy
 * name and budget, next position and update count, and per stream its entries (keys, values,
 * embedding norms, positions, c, rho, h, logit bias, costs) and its policy's exported state. Last,
 * a CRC-32C of everything before it. A reader checks magic, version and CRC before it parses
 * anything, and refuses a value written for another model or cache configuration with a message
 * naming both.
 *
 * <p>Version 1, written when the whole server ran one policy, has no policy section and no turn
 * marks, and its cache fingerprint starts with that policy ({@link ServedModel#policyFingerprint}):
 * such a value is read as a session of the server's default policy when that is the policy it was
 * written with.
 */
final class SessionCodec {
    static final byte[] MAGIC = "FDKVCSES".getBytes(StandardCharsets.US_ASCII);
    static final int VERSION = 2;

    private final String modelFingerprint;
    private final String cacheFingerprint;
    private final PolicySpec defaultPolicy;

    /** @param defaultPolicy the policy of version-1 values (the server's own) */
    SessionCodec(String modelFingerprint, String cacheFingerprint, PolicySpec defaultPolicy) {
        this.modelFingerprint = modelFingerprint;
        this.cacheFingerprint = cacheFingerprint;
        this.defaultPolicy = defaultPolicy;
    }

    /** The encoded session: {@code buf[0, n)}. */
    record Encoded(byte[] buf, int n) {}

    Encoded encode(String id, PolicySpec policy, long evictions, Conversation.State s) {
        Writer w = new Writer();
        w.bytes(MAGIC);
        w.i32(VERSION);
        w.str(modelFingerprint);
        w.str(cacheFingerprint);
        w.str(id);
        writePolicy(w, policy);
        w.i32(s.turns());
        w.i64(evictions);
        w.i32(s.messages().size());
        for (Message m : s.messages()) {
            w.u8(m.role().ordinal());
            w.str(m.content());
        }
        w.ints(s.tokens());
        w.ints(s.turnMarks());
        KvCache.Snapshot c = s.cache();
        w.i32(c.layers());
        w.i32(c.kvHeads());
        w.i32(c.headDim());
        w.str(c.policy());
        w.i32(c.budget());
        w.i64(c.nextPosition());
        w.i64(c.updates());
        for (int i = 0; i < c.streams().length; i++) {
            StreamSnapshot st = c.streams()[i];
            w.i32(st.size());
            w.i32(st.scored());
            w.floats(st.keys());
            w.floats(st.values());
            w.doubles(st.embeddingNorms());
            w.longs(st.positions());
            w.doubles(st.c());
            w.doubles(st.rho());
            w.doubles(st.h());
            w.floats(st.logitBias());
            w.ints(st.costs());
            w.doubles(c.policyStates()[i]);
        }
        CRC32C crc = new CRC32C();
        crc.update(w.buf, 0, w.n);
        w.i64(crc.getValue());
        return new Encoded(w.buf, w.n);
    }

    private static void writePolicy(Writer w, PolicySpec policy) {
        w.str(policy.kind().name());
        w.i32(policy.budget());
        Map<String, Object> values = policy.parameterValues();
        w.i32(values.size());
        for (Map.Entry<String, Object> e : values.entrySet()) {
            w.str(e.getKey());
            w.str(String.valueOf(e.getValue()));
        }
    }

    /** Version of the {@link #summary} form. */
    private static final int SUMMARY_VERSION = 1;

    /**
     * A session's figures for listings, kept beside its value by a shared store so that a listing
     * does not decode every cache: version, the policy section, turns, messages, tokens, largest
     * stream, total entries, evictions.
     */
    byte[] summary(PolicySpec policy, long evictions, Conversation.State s) {
        Writer w = new Writer();
        w.u8(SUMMARY_VERSION);
        writePolicy(w, policy);
        long total = 0;
        int largest = 0;
        for (StreamSnapshot st : s.cache().streams()) {
            total += st.size();
            largest = Math.max(largest, st.size());
        }
        w.i32(s.turns());
        w.i32(s.messages().size());
        w.i32(s.tokens().length);
        w.i32(largest);
        w.i64(total);
        w.i64(evictions);
        return java.util.Arrays.copyOf(w.buf, w.n);
    }

    /** Reads {@link #summary}; a value that cannot be read is a summary with its problem named. */
    SharedSessionStore.Summary readSummary(String id, byte[] s) {
        String name = "the summary of session " + id;
        try {
            if (s.length == 0) throw new SessionStore.Refused(name + " is missing (the stored value is not a session)");
            ByteBuffer b = ByteBuffer.wrap(s).order(ByteOrder.LITTLE_ENDIAN);
            Reader r = new Reader(b, s.length);
            int v = r.u8();
            if (v != SUMMARY_VERSION) throw new SessionStore.Refused(name + " has version " + v + ", this server reads " + SUMMARY_VERSION);
            PolicySpec policy = policy(r, name);
            var out = new SharedSessionStore.Summary(id, policy, r.i32(), r.i32(), r.i32(), r.i32(), r.i64(), r.i64(), null, 0);
            if (r.remaining() != 0) throw new SessionStore.Refused(name + " has trailing bytes");
            return out;
        } catch (SessionStore.Refused e) {
            return new SharedSessionStore.Summary(id, null, 0, 0, 0, 0, 0, 0, e.getMessage(), 0);
        } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
            return new SharedSessionStore.Summary(id, null, 0, 0, 0, 0, 0, 0, name + " is malformed: " + e.getMessage(), 0);
        }
    }

    /**
     * Decodes a stored session, or throws {@link SessionStore.Refused} naming why it cannot be
     * used; {@code name} is what the messages call it (a file name, a key).
     */
    SessionStore.Stored decode(byte[] all, String name) throws SessionStore.Refused {
        if (all.length < MAGIC.length + 4 + 8) throw new SessionStore.Refused("stored session " + name + " is truncated");
        for (int i = 0; i < MAGIC.length; i++) {
            if (all[i] != MAGIC[i]) throw new SessionStore.Refused("stored session " + name + " is not an fdkvc session file");
        }
        ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
        b.position(MAGIC.length);
        int version = b.getInt();
        if (version != 1 && version != VERSION) {
            throw new SessionStore.Refused("stored session " + name + " has format version " + version + ", this server reads 1 and " + VERSION);
        }
        CRC32C crc = new CRC32C();
        crc.update(all, 0, all.length - 8);
        if (crc.getValue() != b.getLong(all.length - 8)) throw new SessionStore.Refused("stored session " + name + " is damaged (CRC mismatch)");
        try {
            Reader r = new Reader(b, all.length - 8);
            String model = r.str(), cache = r.str();
            if (!model.equals(modelFingerprint)) {
                throw new SessionStore.Refused("stored session " + name + " was written for another model (" + model + "; this server: "
                        + modelFingerprint + ")");
            }
            String expected = version == 1 ? defaultPolicy + ";" + cacheFingerprint : cacheFingerprint;
            if (!cache.equals(expected)) {
                throw new SessionStore.Refused("stored session " + name + " was written with another cache configuration (" + cache
                        + "; this server: " + expected + ")");
            }
            String id = r.str();
            PolicySpec policy = version == 1 ? defaultPolicy : policy(r, name);
            int turns = r.i32();
            long evictions = r.i64();
            int nm = r.count(1 + 4);
            List<Message> messages = new ArrayList<>(nm);
            Role[] roles = Role.values();
            for (int i = 0; i < nm; i++) {
                int role = r.u8();
                if (role >= roles.length) throw new SessionStore.Refused("stored session " + name + " has an unknown role " + role);
                messages.add(new Message(roles[role], r.str()));
            }
            int[] tokens = r.ints();
            int[] marks = version == 1 ? new int[0] : r.ints();
            int layers = r.i32(), kvHeads = r.i32(), headDim = r.i32();
            String cachePolicy = r.str();
            int cacheBudget = r.i32();
            long next = r.i64(), updates = r.i64();
            if (layers < 1 || kvHeads < 1 || headDim < 1 || (long) layers * kvHeads > r.remaining()) {
                throw new SessionStore.Refused("stored session " + name + " has a bad cache shape");
            }
            int n = layers * kvHeads;
            StreamSnapshot[] streams = new StreamSnapshot[n];
            double[][] states = new double[n][];
            for (int i = 0; i < n; i++) {
                int size = r.i32(), scored = r.i32();
                streams[i] = new StreamSnapshot(headDim, headDim, 0, size, scored, r.floats(), r.floats(), new float[0], r.doubles(),
                        r.longs(), r.doubles(), r.doubles(), r.doubles(), r.floats(), r.ints());
                states[i] = r.doubles();
            }
            if (r.remaining() != 0) throw new SessionStore.Refused("stored session " + name + " has trailing bytes");
            KvCache.Snapshot snap = new KvCache.Snapshot(layers, kvHeads, headDim, cachePolicy, cacheBudget, streams, states, next, updates);
            if (!snap.policy().equals(policy.name()) || snap.budget() != policy.budget()) {
                throw new SessionStore.Refused("stored session " + name + " has a cache of " + snap.policy() + "/" + snap.budget()
                        + " under the policy " + policy);
            }
            return new SessionStore.Stored(id, policy, turns, evictions, new Conversation.State(messages, tokens, turns, snap, marks));
        } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
            throw new SessionStore.Refused("stored session " + name + " is malformed: " + e.getMessage());
        }
    }

    /** The policy section of a version-2 value, validated as a registry spec. */
    private static PolicySpec policy(Reader r, String name) throws SessionStore.Refused {
        String policy = r.str();
        int budget = r.i32();
        int n = r.count(8);
        Map<String, Object> params = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) params.put(r.str(), r.str());
        try {
            return PolicyRegistry.spec(policy, budget, params);
        } catch (io.fdkvc.core.InputException e) {
            throw new SessionStore.Refused("stored session " + name + " has a policy this server cannot run (" + e.getMessage() + ")");
        }
    }

    /** A growable little-endian byte buffer. */
    private static final class Writer {
        byte[] buf = new byte[1 << 16];
        int n;
        private ByteBuffer view = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);

        private ByteBuffer room(long k) {
            if (n + k > buf.length) {
                long cap = Math.max(2L * buf.length, n + k);
                if (cap > Integer.MAX_VALUE - 16) throw new IllegalStateException("session too large to store");
                buf = java.util.Arrays.copyOf(buf, (int) cap);
                view = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN);
            }
            view.position(n);
            n += (int) k;
            return view;
        }

        void bytes(byte[] b) { room(b.length).put(b); }
        void u8(int v) { room(1).put((byte) v); }
        void i32(int v) { room(4).putInt(v); }
        void i64(long v) { room(8).putLong(v); }
        void str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            i32(b.length);
            bytes(b);
        }
        void ints(int[] a) { i32(a.length); room(4L * a.length).asIntBuffer().put(a); }
        void floats(float[] a) { i32(a.length); room(4L * a.length).asFloatBuffer().put(a); }
        void doubles(double[] a) { i32(a.length); room(8L * a.length).asDoubleBuffer().put(a); }
        void longs(long[] a) { i32(a.length); room(8L * a.length).asLongBuffer().put(a); }
    }

    /** Reads what {@link Writer} wrote, checking every length against the bytes left. */
    private static final class Reader {
        private final ByteBuffer b;
        private final int end;

        Reader(ByteBuffer b, int end) {
            this.b = b;
            this.end = end;
        }

        int remaining() { return end - b.position(); }

        private void need(long k) {
            if (k < 0 || k > remaining()) throw new IllegalArgumentException("a length runs past the end of the file");
        }

        int u8() { need(1); return b.get() & 0xff; }
        int i32() { need(4); return b.getInt(); }
        long i64() { need(8); return b.getLong(); }

        /** A count of items of at least {@code min} bytes each. */
        int count(int min) {
            int k = i32();
            need((long) k * min);
            return k;
        }

        String str() {
            int k = count(1);
            String s = new String(b.array(), b.position(), k, StandardCharsets.UTF_8);
            b.position(b.position() + k);
            return s;
        }

        int[] ints() {
            int[] a = new int[count(4)];
            b.slice().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(a);
            b.position(b.position() + 4 * a.length);
            return a;
        }

        float[] floats() {
            float[] a = new float[count(4)];
            b.slice().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(a);
            b.position(b.position() + 4 * a.length);
            return a;
        }

        double[] doubles() {
            double[] a = new double[count(8)];
            b.slice().order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(a);
            b.position(b.position() + 8 * a.length);
            return a;
        }

        long[] longs() {
            long[] a = new long[count(8)];
            b.slice().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(a);
            b.position(b.position() + 8 * a.length);
            return a;
        }
    }
}
