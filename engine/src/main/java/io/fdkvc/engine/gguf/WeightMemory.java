package io.fdkvc.engine.gguf;

import io.fdkvc.core.InputException;
import io.fdkvc.engine.tensor.AnonymousMemory;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
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
     * {@code n > 0} bytes of ch from offset 0 in new memory that {@code arena} frees
     * ({@link AnonymousMemory}). Read only.
     */
    static MemorySegment copy(FileChannel ch, long n, Arena arena) throws IOException {
        MemorySegment seg = AnonymousMemory.allocate(n, arena, false, AnonymousMemory.Pages.BASE);
        // the system will not give the file's size in private memory (ENOMEM: more than memory
        // and swap, or the address space). The user's choice of placement cannot be met here,
        // which the mapped default would be: bad input, naming the property
        if (seg == null) {
            throw new InputException("system property fdkvc.weights=copied: the system refused " + n + " bytes (" + (n >> 20)
                    + " MiB) of private memory for the model's weights; use fdkvc.weights=mapped (the default), which needs none");
        }
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
}
