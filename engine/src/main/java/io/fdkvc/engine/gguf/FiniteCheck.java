package io.fdkvc.engine.gguf;

import io.fdkvc.core.Untrusted;
import io.fdkvc.engine.ModelFormatException;
import io.fdkvc.engine.tensor.GgmlType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Refuses weights that are NaN or infinite, naming the tensor, before a model runs: such weights
 * make every logit NaN and the sampler print {@code <unk>} forever.
 *
 * <p>What is scanned: every floating-point number a tensor stores, and nothing else. F32, F16 and
 * BF16 tensors are scanned whole; a quantized block's integer quants are finite by construction,
 * so only its f16 scales are read (Q4_0 and Q8_0: d; Q4_K: d and dmin; Q6_K: d), 2 to 4 bytes of
 * every 18 to 210. The cost is one pass over the mapped file's pages, which the first token touches
 * anyway; docs/limits.md has the measurement. A NaN is found by its exponent bits alone: whole
 * tensors are tested a vector at a time, and only a vector that holds a hit is searched element
 * by element.
 */
public final class FiniteCheck {
    private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt F32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final VectorSpecies<Integer> IV = IntVector.SPECIES_PREFERRED;
    private static final VectorSpecies<Short> SV = ShortVector.SPECIES_PREFERRED;

    private FiniteCheck() {}

    /** Checks every tensor of {@code f} this engine reads. */
    public static void check(GgufFile f) {
        for (GgufTensorInfo t : f.tensorInfos().values()) {
            if (t.type() == null) continue; // not read, so not run
            long bad = firstNonFinite(t.type(), f.tensorData(t.name()));
            if (bad >= 0) {
                throw new ModelFormatException(Untrusted.line("GGUF file " + f.path() + ": tensor '" + Untrusted.excerpt(t.name())
                        + "' holds a NaN or infinite value (element " + bad + " of " + t.type()
                        + " data); the file is damaged or was written from diverged weights"));
            }
        }
    }

    /** Checks a float array (a llama2.c checkpoint's weights); {@code what} names it in the error. */
    public static void check(float[] a, String what) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) throw new ModelFormatException(what + ": weight " + i + " is " + a[i] + "; the file is damaged");
        }
    }

    /**
     * The index of the first element (its block's first element for a quantized type) whose
     * stored floating-point value is NaN or infinite, or -1.
     */
    static long firstNonFinite(GgmlType type, MemorySegment data) {
        long n = data.byteSize();
        switch (type) {
            case F32 -> {
                long off = 0;
                long vectorEnd = n - n % IV.vectorByteSize();
                for (; off < vectorEnd; off += IV.vectorByteSize()) { // whole vectors; the rare hit is located below
                    IntVector v = IntVector.fromMemorySegment(IV, data, off, ByteOrder.LITTLE_ENDIAN);
                    if (v.and(0x7F800000).eq(0x7F800000).anyTrue()) break;
                }
                for (; off + 4 <= n; off += 4) {
                    if ((data.get(F32, off) & 0x7F800000) == 0x7F800000) return off / 4;
                }
            }
            case F16, BF16 -> {
                short mask = type == GgmlType.F16 ? (short) 0x7C00 : (short) 0x7F80;
                long off = 0;
                long vectorEnd = n - n % SV.vectorByteSize();
                for (; off < vectorEnd; off += SV.vectorByteSize()) {
                    ShortVector v = ShortVector.fromMemorySegment(SV, data, off, ByteOrder.LITTLE_ENDIAN);
                    if (v.and(mask).eq(mask).anyTrue()) break;
                }
                for (; off + 2 <= n; off += 2) {
                    if ((data.get(F16, off) & mask) == mask) return off / 2;
                }
            }
            case Q4_0, Q8_0 -> {
                return scales(data, type, 0, -1);
            }
            case Q4_K -> {
                return scales(data, type, 0, 2);
            }
            case Q6_K -> {
                return scales(data, type, 208, -1);
            }
        }
        return -1;
    }

    /** Scans the f16 scale at {@code first} (and at {@code second} when >= 0) of every block. */
    private static long scales(MemorySegment data, GgmlType type, int first, int second) {
        long n = data.byteSize(), bb = type.blockBytes;
        for (long b = 0, off = 0; off + bb <= n; b++, off += bb) {
            if ((data.get(F16, off + first) & 0x7C00) == 0x7C00) return b * type.blockSize;
            if (second >= 0 && (data.get(F16, off + second) & 0x7C00) == 0x7C00) return b * type.blockSize;
        }
        return -1;
    }
}
