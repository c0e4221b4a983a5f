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
 *   <li>{@link #COPIED} (llama.cpp's {@code --no-mmap}): the file read once into anonymous
 *       memory, which on Linux is 2 MiB-aligned and advised for transparent huge pages
 *       ({@code madvise(MADV_HUGEPAGE)}, honoured where {@code
 *       /sys/kernel/mm/transparent_hugepage/enabled} is {@code always} or {@code madvise}). A
 *       decode step reads every weight once, from memory; in 2 MiB pages the walk of the
 *       weights takes a TLB miss per 2 MiB instead of per 4 KiB, and the memory is not the page
 *       cache's to drop. It costs the read at load (a fraction of a second per GiB from the page
 *       cache) and the file's size in private memory per process. docs/benchmarks.md measures
 *       what it gains per host.</li>
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

    /** Two MiB: the x86-64 and arm64 transparent huge page. */
    static final long HUGE_PAGE = 2L << 20;

    /**
     * {@code n > 0} bytes of ch from offset 0 in new memory that {@code arena} frees: anonymous,
     * huge-page-aligned and advised where the platform has {@code mmap} and {@code madvise} (Linux),
     * else the arena's own allocation. Read only.
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
        private static final int PROT_READ_WRITE = 0x1 | 0x2, MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20, MADV_HUGEPAGE = 14;
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
            if (MMAP == null) return arena.allocate(n, 64);
            // one huge page more than needed, so that an aligned start fits; unmapped whole on close
            long len = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE;
            MemorySegment raw;
            try {
                raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, len, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
            } catch (Throwable t) {
                throw new IllegalStateException("mmap of " + len + " bytes failed", t);
            }
            if (raw.address() == -1L) throw new OutOfMemoryError("cannot map " + len + " bytes of anonymous memory for a model's weights");
            long start = (raw.address() + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
            MemorySegment base = raw.reinterpret(len, arena, s -> unmap(s, len));
            MemorySegment seg = base.asSlice(start - raw.address(), n);
            try {
                // advice only: where huge pages are off the kernel refuses it or ignores it, and
                // the memory works the same in 4 KiB pages
                int ignored = (int) MADVISE.invokeExact(MemorySegment.ofAddress(start), len - HUGE_PAGE, MADV_HUGEPAGE);
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
