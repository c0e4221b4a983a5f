package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The copies' memory as the kernel reports it: in base pages and asked for populated, every page
 * resident when the call returns ({@code mincore}) and none of it in transparent huge pages
 * ({@code /proc/self/smaps}), whatever the host's setting ({@code always} made 2 MiB pages of
 * memory populated before the advice); not populated, no page resident until written. In huge
 * pages: on a 2 MiB boundary, resident, and in 2 MiB pages where the host offers them. The kernel may
 * merge the mapping with a neighbour of the same flags (another copy still mapped in this JVM),
 * so smaps' totals are the merged area's: they are read for the huge pages only, which such a
 * neighbour, advised alike, has none of either.
 */
class AnonymousMemoryTest {
    private static final long N = 8L << 20, PAGE = 4096; // four 2 MiB extents, at least three of them aligned

    /** Pages of seg that are resident, by {@code mincore}. */
    static long residentPages(MemorySegment seg) {
        Linker linker = Linker.nativeLinker();
        MethodHandle mincore = linker.downcallHandle(linker.defaultLookup().find("mincore").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        long pages = seg.byteSize() / PAGE;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment vec = arena.allocate(pages);
            int rc = (int) mincore.invokeExact(seg, seg.byteSize(), vec);
            assertThat(rc).as("mincore's result").isZero();
            long resident = 0;
            for (long i = 0; i < pages; i++) resident += vec.get(ValueLayout.JAVA_BYTE, i) & 1;
            return resident;
        } catch (Throwable t) {
            if (t instanceof AssertionError e) throw e;
            throw new IllegalStateException("mincore failed", t);
        }
    }

    @Test
    void populatedMemoryIsResidentAndInBasePages() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "Linux's /proc/self/smaps");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = AnonymousMemory.allocate(N, arena, true, AnonymousMemory.Pages.BASE);
            assertThat(seg).isNotNull();
            assertThat(residentPages(seg)).as("resident pages").isEqualTo(N / PAGE);
            assertThat(mapping(seg.address()).get("AnonHugePages")).as("kB in transparent huge pages").isZero();
            // the memory is zeroed and writable end to end
            assertThat(seg.get(ValueLayout.JAVA_LONG, 0)).isZero();
            seg.set(ValueLayout.JAVA_LONG, N - 8, -1L);
            assertThat(seg.get(ValueLayout.JAVA_LONG, N - 8)).isEqualTo(-1L);
        }
    }

    @Test
    void memoryNotPopulatedComesWithItsWrites() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "Linux's /proc/self/smaps");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = AnonymousMemory.allocate(N, arena, false, AnonymousMemory.Pages.BASE);
            assertThat(residentPages(seg)).as("resident pages before any write").isZero();
            for (long o = 0; o < N; o += PAGE) seg.set(ValueLayout.JAVA_BYTE, o, (byte) 1);
            assertThat(residentPages(seg)).as("resident pages after a write to each page").isEqualTo(N / PAGE);
            assertThat(mapping(seg.address()).get("AnonHugePages")).as("kB in transparent huge pages").isZero();
        }
    }

    @Test
    void hugePagesStartOnABoundaryAndAreHugeWhereTheHostOffersThem() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "Linux's /proc/self/smaps");
        long address;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = AnonymousMemory.allocate(N, arena, true, AnonymousMemory.Pages.HUGE);
            assertThat(seg).isNotNull();
            address = seg.address();
            assertThat(seg.byteSize()).isEqualTo(N);
            assertThat(address % AnonymousMemory.HUGE_PAGE).as("the start's offset in its 2 MiB").isZero();
            assertThat(residentPages(seg)).as("resident pages").isEqualTo(N / PAGE);
            // the advised range is a mapping of its own (the reserve around it is not advised, so
            // the kernel merges it with no neighbour): its huge pages are this memory's
            if (hostOffersHugePages()) {
                assertThat(mapping(address).get("AnonHugePages")).as("kB in transparent huge pages").isGreaterThanOrEqualTo(2048L);
            }
            assertThat(seg.get(ValueLayout.JAVA_LONG, 0)).isZero();
            seg.set(ValueLayout.JAVA_LONG, N - 8, -1L);
            assertThat(seg.get(ValueLayout.JAVA_LONG, N - 8)).isEqualTo(-1L);
        }
        // closed, the whole reservation is unmapped
        assertThat(find(address)).as("an smaps entry for the freed memory").isNull();
    }

    @Test
    void lessThanAHugePageIsReservedAsIs() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = AnonymousMemory.allocate(3 * PAGE, arena, true, AnonymousMemory.Pages.HUGE);
            assertThat(seg.byteSize()).isEqualTo(3 * PAGE);
            assertThat(seg.address() % PAGE).isZero();
            assertThat(residentPages(seg)).isEqualTo(3);
        }
    }

    /** Whether the kernel's transparent huge pages are {@code always} or {@code madvise}. */
    static boolean hostOffersHugePages() throws IOException {
        Path setting = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");
        if (!Files.isReadable(setting)) return false;
        String s = Files.readString(setting);
        return s.contains("[always]") || s.contains("[madvise]");
    }

    /** The kB fields of the smaps entry whose address range holds {@code address}. */
    static Map<String, Long> mapping(long address) throws IOException {
        Map<String, Long> fields = find(address);
        assertThat(fields).as("an smaps entry for address %x", address).isNotNull();
        return fields;
    }

    /** {@link #mapping}, or null where no mapping holds {@code address}. */
    static Map<String, Long> find(long address) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/self/smaps"));
        Map<String, Long> fields = null;
        for (String line : lines) {
            int dash = line.indexOf('-'), space = line.indexOf(' ');
            if (dash > 0 && space > dash && line.substring(0, dash).chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
                if (fields != null) break; // the next mapping's header
                long start = Long.parseUnsignedLong(line.substring(0, dash), 16), end = Long.parseUnsignedLong(line.substring(dash + 1, space), 16);
                if (Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0) fields = new HashMap<>();
            } else if (fields != null && line.endsWith(" kB")) {
                String[] kv = line.split(":\\s+");
                fields.put(kv[0], Long.parseLong(kv[1].substring(0, kv[1].length() - 3).trim()));
            }
        }
        return fields;
    }
}
