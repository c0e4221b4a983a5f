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
 * The copies' memory as the kernel reports it: asked for populated, every page resident when the
 * call returns ({@code mincore}) and none of it in transparent huge pages ({@code
 * /proc/self/smaps}), whatever the host's setting ({@code always} made 2 MiB pages of memory
 * populated before the advice); not populated, no page resident until written. The kernel may
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
            MemorySegment seg = AnonymousMemory.allocate(N, arena, true);
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
            MemorySegment seg = AnonymousMemory.allocate(N, arena, false);
            assertThat(residentPages(seg)).as("resident pages before any write").isZero();
            for (long o = 0; o < N; o += PAGE) seg.set(ValueLayout.JAVA_BYTE, o, (byte) 1);
            assertThat(residentPages(seg)).as("resident pages after a write to each page").isEqualTo(N / PAGE);
            assertThat(mapping(seg.address()).get("AnonHugePages")).as("kB in transparent huge pages").isZero();
        }
    }

    /** The kB fields of the smaps entry whose address range holds {@code address}. */
    static Map<String, Long> mapping(long address) throws IOException {
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
        assertThat(fields).as("an smaps entry for address %x", address).isNotNull();
        return fields;
    }
}
