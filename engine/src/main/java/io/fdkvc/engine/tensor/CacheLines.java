package io.fdkvc.engine.tensor;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Where a float array's elements sit against the 64-byte cache lines, so that the prefill's
 * scratch (the dequantised panel, the transposed batch) can start its vectors on a line: a
 * 64-byte vector store or load at any other offset touches two lines. The JVM places arrays 8
 * bytes apart and moves them when it collects, and Java has no safe way to read an array's
 * address, so this asks C's {@code memmove(a, a, 0)}, which returns its first argument, through
 * a critical downcall that may take the heap array itself ({@link Linker.Option#critical}).
 * The answer holds until the collector moves the array; a stale one only costs speed, never
 * changes a result, so callers ask once per product. Where the platform has no such call, or
 * native access is denied, every answer is 0.
 */
final class CacheLines {
    static final int LINE = 64;

    private static final MethodHandle MEMMOVE = memmove();

    private CacheLines() {}

    private static MethodHandle memmove() {
        try {
            Linker linker = Linker.nativeLinker();
            return linker.defaultLookup().find("memmove").map(f -> linker.downcallHandle(f,
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG),
                    Linker.Option.critical(true))).orElse(null);
        } catch (RuntimeException e) {   // IllegalCallerException: native access denied to this module
            return null;
        }
    }

    /**
     * The floats in [0, 16) to skip from the start of {@code s} (a heap array's segment or native
     * memory) so that the next one starts a cache line; 0 where the address cannot be known or is
     * not a whole number of floats past a line.
     */
    static int floatsToLine(MemorySegment s) {
        if (MEMMOVE == null) return 0;
        long address;
        try {
            address = ((MemorySegment) MEMMOVE.invokeExact(s, s, 0L)).address();
        } catch (Throwable t) {
            return 0;
        }
        long bytes = (LINE - (address & (LINE - 1))) & (LINE - 1);
        return bytes % Float.BYTES == 0 ? (int) (bytes / Float.BYTES) : 0;
    }

    /** {@link #floatsToLine(MemorySegment)} of {@code a}'s first element, where it is now. */
    static int floatsToLine(float[] a) {
        return floatsToLine(MemorySegment.ofArray(a));
    }
}
