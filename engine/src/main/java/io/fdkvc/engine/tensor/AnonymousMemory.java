package io.fdkvc.engine.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Private memory for weights held apart from their file ({@code engine.gguf.WeightMemory}'s copy,
 * {@link RowLanes}'s rearranged copies): anonymous, page-aligned and zeroed, through {@code mmap}
 * where the platform has it (Linux), else the arena's own allocation. Its pages are the caller's
 * choice ({@link Pages}): base pages whatever the host's setting for transparent huge pages, or
 * 2 MiB pages where the host offers them.
 */
public final class AnonymousMemory {
    private static final int PROT_READ_WRITE = 0x1 | 0x2, MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20, MADV_HUGEPAGE = 14, MADV_NOHUGEPAGE = 15, MADV_POPULATE_WRITE = 23;
    /** A base page's size, and a transparent huge page's, on x86-64 and on arm64 with 4 KiB base pages. */
    static final long PAGE = 4096, HUGE_PAGE = 2L << 20;
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

    private AnonymousMemory() {}

    /** The pages asked for ({@code madvise}: advice, which a kernel without them ignores). */
    public enum Pages {
        /**
         * Base pages ({@code MADV_NOHUGEPAGE}), so that a host whose transparent huge pages are
         * {@code always} behaves as one whose are {@code madvise}.
         */
        BASE,
        /**
         * 2 MiB pages where the host's transparent huge pages are {@code madvise} or {@code always}
         * ({@code MADV_HUGEPAGE}); the memory starts on a 2 MiB boundary, so that every whole 2 MiB
         * of it can be one page. A pass over 800 MB of copies then takes a TLB entry per 2 MiB
         * instead of per 4 KiB. On the EPYC Zen 5 VM, the 1B Q4_K_M file loaded twice in one JVM
         * (docs/benchmarks.md, "The row-lane copies in 2 MiB pages"), its prefill ran 1.02-1.08x
         * and its decode 1.01-1.05x (medians of four JVMs) in 2 MiB pages.
         */
        HUGE
    }

    /**
     * {@code n > 0} bytes that {@code arena} frees, in {@code pages}, or null when the system refuses
     * them (mmap's ENOMEM: more than memory and swap, or the address space). {@code populate}: the
     * pages are made in the call ({@code MADV_POPULATE_WRITE}, Linux 5.14 and later; on an older
     * kernel the first write of each page makes it). On the EPYC Zen 5 VM (a throwaway C loop over
     * 217 MB, three runs each) that took 0.033 s, and a write to every page after it 0.28-0.29 s,
     * against 0.56-0.58 s for those writes with no pages made first: the VM's host still takes a
     * fault at each first write, so populating halves the cost rather than removing it. The
     * advice on the pages comes first: pages made before it (by {@code MAP_POPULATE} in the mmap
     * call, as this did once) are huge pages on a host whose transparent huge pages are {@code
     * always}, and {@code MADV_NOHUGEPAGE} does not split them. In {@link Pages#HUGE} at least 2
     * MiB, the mapping reserves 2 MiB more address space than it uses (never made into pages) to
     * start on a 2 MiB boundary; less than 2 MiB could hold no huge page and is reserved as is.
     */
    public static MemorySegment allocate(long n, Arena arena, boolean populate, Pages pages) {
        if (MMAP == null) return arena.allocate(n, PAGE);
        boolean align = pages == Pages.HUGE && n >= HUGE_PAGE;
        long len = align ? n + HUGE_PAGE : n;
        MemorySegment raw;
        try {
            raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, len, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("mmap of " + len + " bytes failed", t);
        }
        if (raw.address() == -1L) return null;   // MAP_FAILED
        MemorySegment whole = raw.reinterpret(len, arena, s -> unmap(s, len));
        long skip = align ? -raw.address() & (HUGE_PAGE - 1) : 0;
        MemorySegment seg = whole.asSlice(skip, n);
        advise(seg, n, pages == Pages.HUGE ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        if (populate) advise(seg, n, MADV_POPULATE_WRITE);
        return seg;
    }

    /**
     * {@code madvise}, its result ignored: it is advice only. A kernel without transparent huge
     * pages refuses {@code MADV_NOHUGEPAGE} (the memory is in base pages anyway), one older than
     * 5.14 {@code MADV_POPULATE_WRITE} (the pages then come with the first writes).
     */
    private static void advise(MemorySegment seg, long n, int advice) {
        try {
            int ignored = (int) MADVISE.invokeExact(seg, n, advice);
        } catch (Throwable t) {
            throw new IllegalStateException("madvise failed", t);
        }
    }

    private static void unmap(MemorySegment s, long len) {
        try {
            int ignored = (int) MUNMAP.invokeExact(s, len);
        } catch (Throwable t) {
            throw new IllegalStateException("munmap failed", t);
        }
    }
}
