package io.fdkvc.engine.gguf;

import io.fdkvc.core.InputException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Locale;

/**
 * Where a model file's bytes live while it is open.
 *
 * <ul>
 *   <li>{@link #MAPPED} (the default, as llama.cpp's): the file memory-mapped, read only. Pages
 *       come from the page cache, are shared with every other process that maps the file, and
 *       load lazily; the kernel maps them in 4 KiB pages.</li>
 *   <li>{@link #COPIED} (llama.cpp's {@code --no-mmap}, {@code -lm none}): the file read once
 *       into private anonymous memory, in base pages ({@code madvise(MADV_NOHUGEPAGE)} on Linux,
 *       so that a host whose transparent huge pages are {@code always} behaves alike). On the
 *       EPYC Zen 5 host a decode step over the 1B Q8_0 file ran 1.12-1.17x faster from it than
 *       from the mapped file, paired over four rounds; advised for 2 MiB pages instead, the same
 *       copy ran at either 1.2x or 0.85x, from one JVM to the next (docs/benchmarks.md). It costs
 *       the read at load (a fraction of a second per GiB from the page cache) and the file's size
 *       in private memory per process.</li>
 * </ul>
 *
 * The system property {@code fdkvc.weights} ({@code mapped} or {@code copied}) chooses it for
 * every file a process opens; {@link GgufFile#open(java.nio.file.Path, WeightMemory)} for one.
 */
public enum WeightMemory {
    MAPPED,
    COPIED;

    /** The property's choice ({@link #MAPPED} when it is unset), read at each call. */
    public static WeightMemory configured() {
        return parse(System.getProperty("fdkvc.weights"));
    }

    /** {@code fdkvc.weights}'s value (null: unset, the default); anything else is bad input. */
    static WeightMemory parse(String property) {
        if (property == null) return MAPPED;
        return switch (property.strip().toLowerCase(Locale.ROOT)) {
            case "mapped" -> MAPPED;
            case "copied" -> COPIED;
            default -> throw new InputException("system property fdkvc.weights must be 'mapped' or 'copied', got '" + property + "'");
        };
    }

    /**
     * {@code n > 0} bytes of ch from offset 0 in new memory that {@code arena} frees: anonymous
     * and page-aligned, in base pages, where the platform has {@code mmap} and {@code madvise}
     * (Linux), else the arena's own allocation. Read only.
     */
    static MemorySegment copy(FileChannel ch, long n, Arena arena) throws IOException {
        MemorySegment seg = Anonymous.allocate(n, arena);
        // FileChannel reads at most 2 GiB a call: fill the segment one slice of 1 GiB at a time
        for (long off = 0; off < n; ) {
            long len = Math.min(1L << 30, n - off);
            ByteBuffer buf = seg.asSlice(off, len).asByteBuffer();
            while (buf.hasRemaining()) {
                if (ch.read(buf, off + buf.position()) < 0) throw new IOException("the file ended at byte " + (off + buf.position()) + " while being read");
            }
            off += len;
        }
        return seg.asReadOnly();
    }

    /** mmap / madvise / munmap through the FFM linker, where libc has them. */
    private static final class Anonymous {
        private static final int PROT_READ_WRITE = 0x1 | 0x2, MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20, MADV_NOHUGEPAGE = 15;
        private static final MethodHandle MMAP, MADVISE, MUNMAP;

        static {
            MethodHandle mmap = null, madvise = null, munmap = null;
            if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                Linker linker = Linker.nativeLinker();
                var libc = linker.defaultLookup();
                var mm = libc.find("mmap");
                var ma = libc.find("madvise");
                var mu = libc.find("munmap");
                if (mm.isPresent() && ma.isPresent() && mu.isPresent()) {
                    mmap = linker.downcallHandle(mm.get(), FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                    madvise = linker.downcallHandle(ma.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                    munmap = linker.downcallHandle(mu.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
                }
            }
            MMAP = mmap;
            MADVISE = madvise;
            MUNMAP = munmap;
        }

        static MemorySegment allocate(long n, Arena arena) {
            if (MMAP == null) return arena.allocate(n, 4096);
            MemorySegment raw;
            try {
                raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, n, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
            } catch (Throwable t) {
                throw new IllegalStateException("mmap of " + n + " bytes failed", t);
            }
            // MAP_FAILED: the system will not give the file's size in private memory (ENOMEM: more
            // than memory and swap, or the address space). The user's choice of placement cannot
            // be met here, which the mapped default would be: bad input, naming the property
            if (raw.address() == -1L) {
                throw new InputException("system property fdkvc.weights=copied: the system refused " + n + " bytes (" + (n >> 20)
                        + " MiB) of private memory for the model's weights; use fdkvc.weights=mapped (the default), which needs none");
            }
            MemorySegment seg = raw.reinterpret(n, arena, s -> unmap(s, n));
            try {
                // advice only: a kernel without transparent huge pages refuses it, and the
                // memory is in base pages anyway
                int ignored = (int) MADVISE.invokeExact(seg, n, MADV_NOHUGEPAGE);
            } catch (Throwable t) {
                throw new IllegalStateException("madvise failed", t);
            }
            return seg;
        }

        private static void unmap(MemorySegment s, long len) {
            try {
                int ignored = (int) MUNMAP.invokeExact(s, len);
            } catch (Throwable t) {
                throw new IllegalStateException("munmap failed", t);
            }
        }
    }
}
