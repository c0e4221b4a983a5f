package io.fdkvc.server;

import io.fdkvc.core.cache.StreamSnapshot;
import io.fdkvc.core.policy.PolicyRegistry;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.cache.KvCache;
import io.fdkvc.engine.chat.Conversation;
import io.fdkvc.engine.tokenizer.ChatTemplate.Message;
import io.fdkvc.engine.tokenizer.ChatTemplate.Role;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * Sessions on disk, one file per session, named by the SHA-256 of its id (ids never reach the
 * file system as given).
 *
 * <p>Format, little-endian, version 2: magic {@code "FDKVCSES"}, version, then strings (u32 length
 * + UTF-8): the model fingerprint, the cache fingerprint (headroom, positions, template), the
 * session id; the session's policy: name, budget, parameter count and each parameter's name and
 * value (as text); the turn count and evictions so far; the transcript's messages (role byte +
 * string), token ids and turn marks ({@link Conversation#turnMarks()}); the cache: shape, policy
 * name and budget, next position and update count, and per stream its entries (keys, values,
 * embedding norms, positions, c, rho, h, logit bias, costs) and its policy's exported state. Last,
 * a CRC-32C of everything before it. A reader checks magic, version and CRC before it parses
 * anything, and refuses a file written for another model or cache configuration with a message
 * naming both.
 *
 * <p>Version 1, written when the whole server ran one policy, has no policy section and no turn
 * marks, and its cache fingerprint starts with that policy ({@link ServedModel#policyFingerprint}):
 * such a file is read as a session of the server's default policy when that is the policy it was
 * written with.
 *
 * <p>Writes are atomic: the file is written under a temporary name in the same directory, forced
 * to disk, and renamed over the old one, so a crash leaves the previous version.
 */
final class SessionStore {
    static final byte[] MAGIC = "FDKVCSES".getBytes(StandardCharsets.US_ASCII);
    static final int VERSION = 2;
    static final String SUFFIX = ".session";

    private final Path dir;
    private final String modelFingerprint;
    private final String cacheFingerprint;
    private final PolicySpec defaultPolicy;

    /** @param defaultPolicy the policy of version-1 files (the server's own) */
    SessionStore(Path dir, String modelFingerprint, String cacheFingerprint, PolicySpec defaultPolicy) throws IOException {
        this.dir = dir;
        this.modelFingerprint = modelFingerprint;
        this.cacheFingerprint = cacheFingerprint;
        this.defaultPolicy = defaultPolicy;
        Files.createDirectories(dir);
    }

    Path dir() { return dir; }

    /** The file of a session: the hex SHA-256 of its id. */
    Path file(String id) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(("fdkvc-session\0" + id).getBytes(StandardCharsets.UTF_8));
            return dir.resolve(HexFormat.of().formatHex(h) + SUFFIX);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What a stored session holds. */
    record Stored(String id, PolicySpec policy, int turns, long evictions, Conversation.State state) {}

    /** A file this server refuses (another model or configuration, or damaged). */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message);
        }
    }

    void write(String id, PolicySpec policy, long evictions, Conversation.State s) throws IOException {
        Writer w = new Writer();
        w.bytes(MAGIC);
        w.i32(VERSION);
        w.str(modelFingerprint);
        w.str(cacheFingerprint);
        w.str(id);
        w.str(policy.kind().name());
        w.i32(policy.budget());
        Map<String, Object> values = policy.parameterValues();
        w.i32(values.size());
        for (Map.Entry<String, Object> e : values.entrySet()) {
            w.str(e.getKey());
            w.str(String.valueOf(e.getValue()));
        }
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

        Path target = file(id);
        Path tmp = dir.resolve(target.getFileName() + ".tmp" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer bb = ByteBuffer.wrap(w.buf, 0, w.n);
            while (bb.hasRemaining()) ch.write(bb);
            ch.force(true);
        } catch (IOException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.deleteIfExists(tmp);
            throw new IOException("the session directory " + dir + " does not support atomic renames", e);
        }
    }

    /** Reads a stored session, or throws {@link Refused} naming why it cannot be used. */
    Stored read(Path file) throws IOException, Refused {
        byte[] all = Files.readAllBytes(file);
        String name = file.getFileName().toString();
        if (all.length < MAGIC.length + 4 + 8) throw new Refused("stored session " + name + " is truncated");
        for (int i = 0; i < MAGIC.length; i++) {
            if (all[i] != MAGIC[i]) throw new Refused("stored session " + name + " is not an fdkvc session file");
        }
        ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
        b.position(MAGIC.length);
        int version = b.getInt();
        if (version != 1 && version != VERSION) {
            throw new Refused("stored session " + name + " has format version " + version + ", this server reads 1 and " + VERSION);
        }
        CRC32C crc = new CRC32C();
        crc.update(all, 0, all.length - 8);
        if (crc.getValue() != b.getLong(all.length - 8)) throw new Refused("stored session " + name + " is damaged (CRC mismatch)");
        try {
            Reader r = new Reader(b, all.length - 8);
            String model = r.str(), cache = r.str();
            if (!model.equals(modelFingerprint)) {
                throw new Refused("stored session " + name + " was written for another model (" + model + "; this server: "
                        + modelFingerprint + ")");
            }
            String expected = version == 1 ? defaultPolicy + ";" + cacheFingerprint : cacheFingerprint;
            if (!cache.equals(expected)) {
                throw new Refused("stored session " + name + " was written with another cache configuration (" + cache
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
                if (role >= roles.length) throw new Refused("stored session " + name + " has an unknown role " + role);
                messages.add(new Message(roles[role], r.str()));
            }
            int[] tokens = r.ints();
            int[] marks = version == 1 ? new int[0] : r.ints();
            int layers = r.i32(), kvHeads = r.i32(), headDim = r.i32();
            String cachePolicy = r.str();
            int cacheBudget = r.i32();
            long next = r.i64(), updates = r.i64();
            if (layers < 1 || kvHeads < 1 || headDim < 1 || (long) layers * kvHeads > r.remaining()) {
                throw new Refused("stored session " + name + " has a bad cache shape");
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
            if (r.remaining() != 0) throw new Refused("stored session " + name + " has trailing bytes");
            KvCache.Snapshot snap = new KvCache.Snapshot(layers, kvHeads, headDim, cachePolicy, cacheBudget, streams, states, next, updates);
            if (!snap.policy().equals(policy.name()) || snap.budget() != policy.budget()) {
                throw new Refused("stored session " + name + " has a cache of " + snap.policy() + "/" + snap.budget()
                        + " under the policy " + policy);
            }
            return new Stored(id, policy, turns, evictions, new Conversation.State(messages, tokens, turns, snap, marks));
        } catch (IllegalArgumentException | java.nio.BufferUnderflowException e) {
            throw new Refused("stored session " + name + " is malformed: " + e.getMessage());
        }
    }

    /** The policy section of a version-2 file, validated as a request's choice is. */
    private static PolicySpec policy(Reader r, String name) throws Refused {
        String policy = r.str();
        int budget = r.i32();
        int n = r.count(8);
        Map<String, Object> params = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) params.put(r.str(), r.str());
        try {
            return PolicyRegistry.spec(policy, budget, params);
        } catch (io.fdkvc.core.InputException e) {
            throw new Refused("stored session " + name + " has a policy this server cannot run (" + e.getMessage() + ")");
        }
    }

    /** Every session file in the directory (temporary files of interrupted writes are removed). */
    List<Path> files() throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                String n = p.getFileName().toString();
                if (n.endsWith(SUFFIX)) out.add(p);
                else if (n.contains(SUFFIX + ".tmp")) Files.deleteIfExists(p);
            }
        }
        return out;
    }

    void delete(String id) throws IOException {
        Files.deleteIfExists(file(id));
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
