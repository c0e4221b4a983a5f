package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * {@link CacheLines}: the floats to a cache line from where a segment starts, checked on native
 * memory whose address is known, and on heap arrays, whose address is not.
 */
class CacheLinesTest {
    private static final boolean LINUX = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux");

    /** A segment k bytes past a line: 16 - k/4 floats to the next (0 on one), none where k is no whole float. */
    @Property(tries = 64)
    void nativeMemoryAtAKnownOffsetFromALine(@ForAll @IntRange(min = 0, max = 127) int k) {
        Assumptions.assumeTrue(LINUX, "the address is known through libc's memmove");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment lines = arena.allocate(256, 64);
            int expected = k % 4 != 0 ? 0 : (64 - k % 64) % 64 / 4;
            assertThat(CacheLines.floatsToLine(lines.asSlice(k))).as("%d bytes past a line", k).isEqualTo(expected);
        }
    }

    /** Each array's answer is within a line, and the element it names is the first on a line. */
    @Test
    void heapArraysStartWithinALineOfOne() {
        Assumptions.assumeTrue(LINUX, "the address is known through libc's memmove");
        int[] seen = new int[16];
        for (int i = 0; i < 200; i++) {
            float[] a = new float[1 + i];
            int s = CacheLines.floatsToLine(a);
            assertThat(s).isBetween(0, 15);
            seen[s]++;
        }
        // the JVM places arrays 8 bytes apart: 200 arrays of growing lengths do not all start alike
        assertThat(java.util.Arrays.stream(seen).filter(c -> c > 0).count()).isGreaterThan(1);
    }
}
