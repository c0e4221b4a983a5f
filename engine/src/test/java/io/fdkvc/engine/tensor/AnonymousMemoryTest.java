package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The copies' memory as the kernel reports it ({@code /proc/self/smaps}): asked for populated, all
 * of it resident when the call returns and none of it in transparent huge pages, whatever the
 * host's setting ({@code always} made 2 MiB pages of memory populated before the advice); not
 * populated, nothing resident until written.
 */
class AnonymousMemoryTest {
    private static final long N = 8L << 20; // four 2 MiB extents, at least three of them aligned

    @Test
    void populatedMemoryIsResidentAndInBasePages() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "Linux's /proc/self/smaps");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg = AnonymousMemory.allocate(N, arena, true);
            assertThat(seg).isNotNull();
            Map<String, Long> m = mapping(seg.address());
            assertThat(m.get("Rss")).as("resident kB").isEqualTo(N >> 10);
            assertThat(m.get("AnonHugePages")).as("kB in transparent huge pages").isZero();
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
            assertThat(mapping(seg.address()).get("Rss")).as("resident kB before any write").isZero();
            for (long o = 0; o < N; o += 4096) seg.set(ValueLayout.JAVA_BYTE, o, (byte) 1);
            Map<String, Long> m = mapping(seg.address());
            assertThat(m.get("Rss")).as("resident kB after a write to each page").isEqualTo(N >> 10);
            assertThat(m.get("AnonHugePages")).as("kB in transparent huge pages").isZero();
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
