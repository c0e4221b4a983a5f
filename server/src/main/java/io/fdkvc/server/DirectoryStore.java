package io.fdkvc.server;

import io.fdkvc.core.InputException;
import io.fdkvc.core.policy.PolicySpec;
import io.fdkvc.engine.chat.Conversation;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Sessions in a directory, one file per session, named by the SHA-256 of its id (ids never reach
 * the file system as given), holding the {@link SessionCodec} form.
 *
 * <p>Writes are atomic: the file is written under a temporary name in the same directory (exactly
 * as large as the encoded session), forced to disk, renamed over the old one, and the directory
 * is forced, so a crash at any point leaves the previous version or the new one. A write that
 * fails at any step removes its temporary file.
 */
final class DirectoryStore implements SessionStore {
    static final String SUFFIX = ".session";
    private static final String TMP = SUFFIX + ".tmp";

    private final Path dir;
    private final SessionCodec codec;
    private volatile long lastSize = 64 * 1024; // a write needs about this much free space

    DirectoryStore(Path dir, SessionCodec codec) {
        this.dir = dir;
        this.codec = codec;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new InputException("--session-dir " + dir + ": cannot create the directory (" + reason(e) + ")");
        }
        if (!Files.isDirectory(dir)) throw new InputException("--session-dir " + dir + ": not a directory");
    }

    /** The file of a session: the hex SHA-256 of its id. */
    Path file(String id) {
        return dir.resolve(key(id));
    }

    @Override
    public String key(String id) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(("fdkvc-session\0" + id).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h) + SUFFIX;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String where() {
        return dir.toString();
    }

    @Override
    public void scan(Found found) throws Unavailable {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) entry(p, found);
        } catch (IOException | java.nio.file.DirectoryIteratorException e) {
            throw new Unavailable("cannot list the session directory " + dir + ": " + reason(e), false, e);
        }
    }

    private void entry(Path p, Found found) {
        String name = p.getFileName().toString();
        if (name.contains(TMP)) {
            // the temporary file of a write that was interrupted: ours, and never the stored version
            try {
                Files.deleteIfExists(p);
                found.skipped(null, "removed " + name + ", left by an interrupted write");
            } catch (IOException e) {
                found.skipped(null, "cannot remove " + name + ", left by an interrupted write (" + reason(e) + ")");
            }
            return;
        }
        if (!name.endsWith(SUFFIX)) {
            found.skipped(null, "skipped " + name + ": not a session file");
            return;
        }
        if (!Files.isRegularFile(p)) {
            found.skipped(name, "skipped " + name + ": not a regular file");
            return;
        }
        try {
            SessionStore.Stored s = codec.decode(Files.readAllBytes(p), name);
            if (!key(s.id()).equals(name)) {
                found.skipped(name, "skipped " + name + ": it holds another session's id, not the one its name is derived from");
                return;
            }
            found.session(name, s);
        } catch (Refused r) {
            found.skipped(name, "skipped " + r.getMessage());
        } catch (IOException | OutOfMemoryError e) {
            found.skipped(name, "skipped " + name + ": cannot read it (" + reason(e) + ")");
        }
    }

    @Override
    public Stored read(String id) throws Unavailable, Refused {
        Path f = file(id);
        String name = f.getFileName().toString();
        if (!Files.exists(f)) return null;
        if (!Files.isRegularFile(f)) throw new Refused("stored session " + name + " is not a regular file");
        byte[] all;
        try {
            all = Files.readAllBytes(f);
        } catch (java.nio.file.NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new Unavailable("cannot read stored session " + name + ": " + reason(e), false, e);
        }
        Stored s = codec.decode(all, name);
        if (!s.id().equals(id)) throw new Refused("stored session " + name + " holds another session's id");
        return s;
    }

    @Override
    public long write(String id, PolicySpec policy, long evictions, Conversation.State s) throws Unavailable {
        SessionCodec.Encoded e = codec.encode(id, policy, evictions, s);
        Path target = file(id);
        Path tmp = dir.resolve(target.getFileName() + ".tmp" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer bb = ByteBuffer.wrap(e.buf(), 0, e.n());
                while (bb.hasRemaining()) ch.write(bb);
                ch.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException x) {
            String removed = "";
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException y) {
                removed = "; its temporary file could not be removed either (" + reason(y) + ")";
            }
            String why = x instanceof java.nio.file.AtomicMoveNotSupportedException ? "the directory does not support atomic renames" : reason(x);
            throw new Unavailable("cannot store session in " + dir + ": " + why + removed, full(x), x);
        }
        forceDirectory();
        lastSize = e.n();
        return e.n();
    }

    /** Makes the rename itself durable (a crash of the machine, not only of the process). */
    private void forceDirectory() {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException | UnsupportedOperationException ignored) {
            // some file systems cannot open a directory for syncing; the rename is still atomic
        }
    }

    @Override
    public void delete(String id) throws Unavailable {
        try {
            Files.deleteIfExists(file(id));
        } catch (IOException e) {
            throw new Unavailable("cannot delete stored session " + file(id).getFileName() + ": " + reason(e), false, e);
        }
    }

    @Override
    public String problem() {
        if (!Files.isDirectory(dir)) return "the session directory " + dir + " does not exist";
        if (!Files.isWritable(dir)) return "the session directory " + dir + " is not writable";
        try {
            long free = Files.getFileStore(dir).getUsableSpace();
            if (free < lastSize) return "the session directory " + dir + " is out of space (" + free + " bytes free, a session takes " + lastSize + ")";
        } catch (IOException e) {
            return "the session directory " + dir + " cannot be examined (" + reason(e) + ")";
        }
        return null;
    }

    private static boolean full(Throwable t) {
        for (; t != null; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && (m.contains("No space left") || m.contains("Disk quota exceeded"))) return true;
        }
        return false;
    }

    /** The operating system's reason without the path the exception repeats. */
    static String reason(Throwable e) {
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) return f.getReason();
        if (e instanceof java.nio.file.NoSuchFileException) return "no such file";
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
