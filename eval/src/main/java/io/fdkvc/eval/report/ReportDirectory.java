package io.fdkvc.eval.report;

import io.fdkvc.core.InputException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Writes a report directory all at once or not at all: the files go to a hidden temporary
 * directory beside the target, which is renamed into place at the end; on any error it is
 * deleted. A reader never sees half a report.
 */
public final class ReportDirectory {
    /** Fills a directory with a report's files. */
    @FunctionalInterface
    public interface Writer {
        void write(Path dir) throws IOException;
    }

    private ReportDirectory() {}

    /**
     * Checks, before any work, that {@code out} can become the report: it does not exist or is an
     * empty directory, and it is not a file.
     *
     * @throws InputException naming {@code option}
     */
    public static void check(Path out, String option) {
        if (Files.exists(out)) {
            if (!Files.isDirectory(out)) throw new InputException(option + ": " + out + " exists and is not a directory");
            if (!isEmpty(out)) throw new InputException(option + ": " + out + " exists and is not empty (choose a new directory)");
        }
        Path parent = out.toAbsolutePath().getParent();
        for (Path p = parent; p != null; p = p.getParent()) {
            if (Files.exists(p)) {
                if (!Files.isDirectory(p)) throw new InputException(option + ": " + p + " is not a directory");
                if (!Files.isWritable(p)) throw new InputException(option + ": " + p + " is not writable");
                break;
            }
        }
    }

    /** Writes the report into {@code out} atomically (see the class comment). */
    public static void write(Path out, String option, Writer writer) {
        try (Pending p = begin(out, option)) {
            try {
                writer.write(p.dir());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the report to " + out + ": " + e.getMessage(), e);
            }
            p.commit();
        }
    }

    /**
     * Starts a report before any work: checks {@code out}, creates its missing parents and the
     * hidden temporary directory beside it now (so a place that cannot be written is found before
     * the run, not after it), and registers it for removal if the JVM stops first (SIGINT,
     * SIGTERM: a shutdown hook deletes every pending directory and the parents the run created).
     * The caller fills {@link Pending#dir()}, then {@link Pending#commit()}s; closing without a
     * commit removes everything.
     *
     * @throws InputException naming {@code option} when {@code out} cannot become the report
     */
    public static Pending begin(Path out, String option) {
        check(out, option);
        Path target = out.toAbsolutePath().normalize();
        Path parent = target.getParent();
        Path createdParent = null;
        try {
            if (!Files.exists(parent)) {
                createdParent = firstMissing(parent);
                Files.createDirectories(parent);
            }
            Pending p = new Pending(out, option, target, createdParent);
            PENDING.add(p);
            p.tmp = Files.createTempDirectory(parent, "." + target.getFileName() + ".tmp-");
            return p;
        } catch (IOException e) {
            if (createdParent != null) deleteEmptyUpTo(parent, createdParent);
            throw new InputException(option + ": " + out + " cannot be written (" + e.getMessage() + ")");
        }
    }

    /** Reports being written now; the shutdown hook removes what is left of them. */
    private static final java.util.Set<Pending> PENDING = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Thread hook = new Thread(() -> {
            for (Pending p : PENDING) p.abandon();
        }, "fdkvc-report-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** A report being written: a temporary directory, renamed into place by {@link #commit()}. */
    public static final class Pending implements AutoCloseable {
        private final Path out, target, createdParent;
        private final String option;
        private Path tmp;
        private boolean done;

        private Pending(Path out, String option, Path target, Path createdParent) {
            this.out = out;
            this.option = option;
            this.target = target;
            this.createdParent = createdParent;
        }

        /** The directory to fill. */
        public Path dir() {
            return tmp;
        }

        /** Moves the filled directory into place. */
        public synchronized void commit() {
            if (done) throw new IllegalStateException("the report was already committed or abandoned");
            try {
                if (Files.isDirectory(target)) Files.delete(target); // empty, checked by begin
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target);
                }
                done = true;
                PENDING.remove(this);
            } catch (FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException e) {
                throw new InputException(option + ": " + out + " appeared while the report was being written");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write the report to " + out + ": " + e.getMessage(), e);
            }
        }

        /** Removes the temporary directory and the parents this report created, unless committed. */
        synchronized void abandon() {
            if (done) return;
            done = true;
            PENDING.remove(this);
            if (tmp != null) deleteTree(tmp);
            if (createdParent != null) deleteEmptyUpTo(target.getParent(), createdParent);
        }

        @Override
        public void close() {
            abandon();
        }
    }

    private static Path firstMissing(Path p) {
        Path missing = p;
        while (missing.getParent() != null && !Files.exists(missing.getParent())) missing = missing.getParent();
        return missing;
    }

    private static void deleteEmptyUpTo(Path from, Path top) {
        for (Path p = from; p != null; p = p.getParent()) {
            try {
                if (!isEmpty(p)) return;
                Files.delete(p);
            } catch (IOException e) {
                return;
            }
            if (p.equals(top)) return;
        }
    }

    private static boolean isEmpty(Path dir) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            return !ds.iterator().hasNext();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Deletes a directory tree (best effort: the report has already failed). */
    public static void deleteTree(Path root) {
        if (!Files.exists(root)) return;
        try (Stream<Path> s = Files.walk(root)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // nothing more to do about a leftover temporary file
                }
            });
        } catch (IOException ignored) {
            // same
        }
    }
}
