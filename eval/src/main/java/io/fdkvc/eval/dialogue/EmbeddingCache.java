package io.fdkvc.eval.dialogue;

import io.fdkvc.core.InputException;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleConsumer;

/**
 * Sentence embeddings and token counts on disk, so that only the first run over a corpus pays for
 * the model. One compact binary file per corpus file and model (see {@link #file}) in the cache directory;
 * each record is keyed by the first 128 bits of SHA-256(model name, NUL, text), so a different
 * model or a changed text never reads a stale vector, and a collision is out of reach (about
 * 2^-100 for a million texts).
 *
 * <p>File layout, big-endian: the 8 bytes {@code FDKVCEMB}, int version (1), the model name
 * (modified UTF-8, as {@link DataOutputStream#writeUTF}), int dimension, int count, then per
 * record: long key high, long key low, int token count, dimension floats. Files are written to a
 * temporary file and moved into place, so a run that is stopped leaves either the old or the new
 * file, never half of one; long embedding runs save a checkpoint every {@value #CHECKPOINT} texts.
 */
public final class EmbeddingCache {
    private static final byte[] MAGIC = "FDKVCEMB".getBytes(StandardCharsets.US_ASCII);
    private static final int VERSION = 1;
    /** Texts per call to the embedder: large enough to keep every worker busy, small enough to report progress. */
    static final int BATCH = 256;
    /** Newly embedded texts between two saves. */
    static final int CHECKPOINT = 4096;

    private final Path dir;
    private final Embedder embedder;
    private final Map<String, Store> stores = new HashMap<>();

    public EmbeddingCache(Path dir, Embedder embedder) {
        this.dir = dir;
        this.embedder = embedder;
    }

    /** {@code ~/.cache/fdkvc/embeddings}. */
    public static Path defaultDir() {
        // the system property fdkvc.cache.dir moves the whole cache (the tests point it into target/)
        String dir = System.getProperty("fdkvc.cache.dir");
        if (dir != null && !dir.isBlank()) return Path.of(dir, "embeddings");
        return Path.of(System.getProperty("user.home"), ".cache", "fdkvc", "embeddings");
    }

    /**
     * The cache file of a corpus named {@code name} (e.g. the data file's name) for this
     * embedder's model: {@code NAME.MODELHASH.emb}, so that two models never share a file.
     */
    public Path file(String name) {
        Key m = key("", embedder.modelName());
        return dir.resolve(name.replaceAll("[^A-Za-z0-9._-]", "_") + "." + String.format("%016x", m.hi()).substring(0, 8) + ".emb");
    }

    /**
     * Embeddings (row i of {@link Table#vectors()} at {@code i * dimension}) and token counts of
     * {@code texts}, embedding the ones the cache lacks and saving them.
     *
     * @param progress receives the fraction of the missing texts embedded so far, from 0 to 1
     * @throws InputException for a corrupt cache file or a text without any token
     */
    public Table lookup(String name, List<String> texts, DoubleConsumer progress) {
        Store store = stores.computeIfAbsent(name, n -> load(file(n)));
        int dim = embedder.dimension();
        Key[] keys = new Key[texts.size()];
        Map<Key, String> missing = new java.util.LinkedHashMap<>();
        for (int i = 0; i < keys.length; i++) {
            keys[i] = key(embedder.modelName(), texts.get(i));
            if (!store.index.containsKey(keys[i])) missing.putIfAbsent(keys[i], texts.get(i));
        }
        if (!missing.isEmpty()) embedMissing(name, store, missing, progress);
        progress.accept(1.0);
        float[] vectors = new float[keys.length * dim];
        int[] tokens = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            int at = store.index.get(keys[i]);
            System.arraycopy(store.vectors, at * dim, vectors, i * dim, dim);
            tokens[i] = store.tokens[at];
        }
        return new Table(dim, vectors, tokens);
    }

    /** What {@link #lookup} returns: row i belongs to text i. */
    public record Table(int dimension, float[] vectors, int[] tokens) {}

    private void embedMissing(String name, Store store, Map<Key, String> missing, DoubleConsumer progress) {
        List<Key> keys = new ArrayList<>(missing.keySet());
        List<String> texts = new ArrayList<>(missing.values());
        int sinceSave = 0;
        for (int from = 0; from < texts.size(); from += BATCH) {
            int to = Math.min(texts.size(), from + BATCH);
            List<String> batch = texts.subList(from, to);
            float[][] v = embedder.embed(batch);
            if (v.length != batch.size()) throw new IllegalStateException(embedder.modelName() + " returned " + v.length + " embeddings for " + batch.size() + " texts");
            for (int k = 0; k < batch.size(); k++) {
                String text = batch.get(k);
                int tokens = embedder.tokenCount(text);
                if (tokens < 1) throw new InputException("utterance '" + text + "' has no " + embedder.modelName() + " token, so it cannot cost anything against a token budget");
                store.add(keys.get(from + k), tokens, checkedUnit(v[k], text));
            }
            sinceSave += batch.size();
            if (sinceSave >= CHECKPOINT) {
                save(file(name), store);
                sinceSave = 0;
            }
            progress.accept((double) to / texts.size());
        }
        save(file(name), store);
    }

    private float[] checkedUnit(float[] v, String text) {
        if (v.length != embedder.dimension()) throw new IllegalStateException(embedder.modelName() + " returned " + v.length + " dimensions, expected " + embedder.dimension());
        double n = 0;
        for (float x : v) n += (double) x * x;
        // Attention logits are cosine / temperature only if keys and queries are unit vectors.
        if (!(Math.abs(Math.sqrt(n) - 1) < 1e-3)) throw new IllegalStateException(embedder.modelName() + " returned a vector of norm " + Math.sqrt(n) + " for '" + text + "'");
        return v;
    }

    static Key key(String model, String text) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(model.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) 0);
            byte[] h = sha.digest(text.getBytes(StandardCharsets.UTF_8));
            ByteBuffer b = ByteBuffer.wrap(h);
            return new Key(b.getLong(), b.getLong());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    record Key(long hi, long lo) {}

    /** The records of one cache file, in memory. */
    private final class Store {
        final Map<Key, Integer> index = new HashMap<>();
        long[] hi = new long[0];
        long[] lo = new long[0];
        int[] tokens = new int[0];
        float[] vectors = new float[0];
        int count;

        void add(Key k, int tokenCount, float[] v) {
            int dim = embedder.dimension();
            if (count == hi.length) {
                int cap = Math.max(1024, count * 2);
                hi = Arrays.copyOf(hi, cap);
                lo = Arrays.copyOf(lo, cap);
                tokens = Arrays.copyOf(tokens, cap);
                vectors = Arrays.copyOf(vectors, cap * dim);
            }
            hi[count] = k.hi();
            lo[count] = k.lo();
            tokens[count] = tokenCount;
            System.arraycopy(v, 0, vectors, count * dim, dim);
            index.put(k, count);
            count++;
        }
    }

    private Store load(Path file) {
        Store s = new Store();
        if (!Files.exists(file)) return s;
        int dim = embedder.dimension();
        try {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
            byte[] magic = new byte[MAGIC.length];
            b.get(magic);
            if (!Arrays.equals(magic, MAGIC)) throw corrupt(file, "not an fdkvc embedding cache");
            int version = b.getInt();
            if (version != VERSION) throw corrupt(file, "version " + version + ", expected " + VERSION);
            byte[] name = new byte[Short.toUnsignedInt(b.getShort())];
            b.get(name);
            String model = new String(name, StandardCharsets.UTF_8);
            if (!model.equals(embedder.modelName())) throw corrupt(file, "holds model '" + model + "', expected '" + embedder.modelName() + "'");
            int fileDim = b.getInt();
            if (fileDim != dim) throw corrupt(file, "dimension " + fileDim + ", expected " + dim);
            int count = b.getInt();
            long recordBytes = 8L + 8 + 4 + 4L * dim;
            if (count < 0 || b.remaining() != count * recordBytes) {
                throw corrupt(file, count + " records announced, " + b.remaining() + " bytes left (truncated?)");
            }
            float[] v = new float[dim];
            for (int r = 0; r < count; r++) {
                Key k = new Key(b.getLong(), b.getLong());
                int tokens = b.getInt();
                if (tokens < 1) throw corrupt(file, "record " + r + " has token count " + tokens);
                for (int d = 0; d < dim; d++) v[d] = b.getFloat();
                s.add(k, tokens, v);
            }
            return s;
        } catch (BufferUnderflowException e) {
            throw corrupt(file, "truncated header");
        } catch (IOException e) {
            throw new InputException("embedding cache " + file + ": cannot read: " + e.getMessage(), e);
        }
    }

    private static InputException corrupt(Path file, String why) {
        return new InputException("embedding cache " + file + ": " + why + "; delete it to rebuild");
    }

    private void save(Path file, Store s) {
        int dim = embedder.dimension();
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), file.getFileName().toString(), ".tmp");
            try {
                write(tmp, s, dim);
                try {
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp); // only still there when writing or moving failed
            }
        } catch (IOException e) {
            throw new InputException("embedding cache " + file + ": cannot write: " + e.getMessage(), e);
        }
    }

    private void write(Path tmp, Store s, int dim) throws IOException {
        try (OutputStream os = Files.newOutputStream(tmp);
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(os, 1 << 16))) {
            out.write(MAGIC);
            out.writeInt(VERSION);
            out.writeUTF(embedder.modelName());
            out.writeInt(dim);
            out.writeInt(s.count);
            for (int r = 0; r < s.count; r++) {
                out.writeLong(s.hi[r]);
                out.writeLong(s.lo[r]);
                out.writeInt(s.tokens[r]);
                for (int d = 0; d < dim; d++) out.writeFloat(s.vectors[r * dim + d]);
            }
        }
    }
}
