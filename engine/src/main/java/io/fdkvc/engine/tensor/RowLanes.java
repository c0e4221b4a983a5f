package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.L;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;

/**
 * A k-quant matrix's weights rearranged for the batch-of-one product: groups of {@link Simd#L}
 * consecutive rows, one row per vector lane, so that one vector of products holds L rows' sums
 * and each x is broadcast once for L rows. The row kernels ({@link Q4_KTensor}, {@link
 * Q6_KTensor}) load x as a whole vector per L weights of one row: 1 KiB of x per super-block of
 * 144 or 210 weight bytes, whose loads on the AMD EPYC Zen 5 kept the weights' reads from memory
 * from overlapping with the arithmetic, and at 8192 columns (32 KiB of x a row) left too little
 * of L1 for the weights. Here an x is a 4-byte broadcast shared by L rows, the super-blocks'
 * headers are read L at a time, and each group's L sums leave in one vector store, with no fold
 * per row. llama.cpp's CPU backend does the like (Q4_K rows repacked eight at a time for its
 * integer kernels, into a copy of the weights it makes at load).
 *
 * <p>The copy is made by {@link FloatTensor#prepareDecode} (a model loader calls it), else on a
 * tensor's first batch-of-one product, into memory of its own that is
 * freed when the tensor is no longer reachable; rows after the last whole group stay with the
 * row kernel, and so does a tensor whose copy the system refuses (a warning says so, once per
 * tensor). A group's sums are the same float products as the row kernel's, added in another
 * order: they differ from its results in the last bits, and do not depend on how the rows are
 * split over threads (a group is always summed whole, by each thread whose range it overlaps).
 */
abstract sealed class RowLanes permits Q4_KRowLanes, Q6_KRowLanes {
    /** Rows per group: one per float lane. */
    static final int G = L;
    static final int QK = 256;

    /**
     * Whether batch-of-one products of the types that have a rearranged form run on it: where the
     * vectors suit it (8 or 16 float lanes, whose byte loads {@link Simd#B} then hold L bytes, one
     * per row of a group), unless {@code fdkvc.rowLanes=false}.
     */
    static final boolean ENABLED = L >= 8 && FloatTensor.flag("fdkvc.rowLanes", System.getProperty("fdkvc.rowLanes"), true);

    /** Little-endian ints and floats in a byte array: the group-blocks' assembly ({@link #rearrange}). */
    static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    static final VarHandle FLOATS = MethodHandles.byteArrayViewVarHandle(float[].class, ByteOrder.LITTLE_ENDIAN);

    /**
     * 2^-8m for entry 8v + 4n + m of a super-block's x in both layouts' order (byte m of int v,
     * nibble n), as a vector (L is a multiple of 4): x carries the factor that masking byte m in
     * place puts on its weight.
     */
    static final FloatVector BYTE_SCALE;
    static {
        float[] s = new float[L];
        for (int i = 0; i < L; i++) s[i] = PreparedXTensor.SCALE[i & 3];
        BYTE_SCALE = FloatVector.fromArray(Simd.F, s, 0);
    }

    final MemorySegment seg;
    final int cols, groups, blocks;

    RowLanes(MemorySegment seg, int rows, int cols) {
        this.seg = seg;
        this.cols = cols;
        this.groups = rows / G;
        this.blocks = cols / QK;
    }

    /** One row's super-block, {@code src[p ..]} in the file's layout, into lane k of a group-block, dst. */
    @FunctionalInterface
    interface RowBlock {
        void rearrange(byte[] src, int p, byte[] dst, int k);
    }

    /**
     * The whole groups of {@code t}'s rows in the layout {@code rowBlock} writes, {@code groupBlock}
     * bytes per group and super-block of {@code block} bytes, in memory of their own ({@link
     * #memory}); null when the system refuses it. Each group-block is assembled in heap memory
     * from its rows' super-blocks and copied out whole: element by element between the mapped
     * file and the copy, the 1B Q4_K_M file's took seconds more.
     */
    static MemorySegment rearrange(SegmentTensor t, int block, int groupBlock, RowBlock rowBlock) {
        int groups = t.rows() / G, blocks = t.cols() / QK;
        MemorySegment src = t.segment(), dst = memory((long) groups * blocks * groupBlock);
        if (dst == null) return null;
        long rowBytes = t.rowBytes();
        byte[] inb = new byte[G * block], outb = new byte[groupBlock];
        MemorySegment in = MemorySegment.ofArray(inb), out = MemorySegment.ofArray(outb);
        for (int g = 0; g < groups; g++) {
            for (int b = 0; b < blocks; b++) {
                for (int k = 0; k < G; k++) MemorySegment.copy(src, (long) (g * G + k) * rowBytes + (long) b * block, in, (long) k * block, block);
                for (int k = 0; k < G; k++) rowBlock.rearrange(inb, k * block, outb, k);
                MemorySegment.copy(out, 0, dst, ((long) g * blocks + b) * groupBlock, groupBlock);
            }
        }
        return dst;
    }

    /**
     * {@code n} bytes of private memory, made in the call and freed once the copy is unreachable
     * ({@link AnonymousMemory}); null when the system refuses them.
     */
    static MemorySegment memory(long n) {
        try {
            return AnonymousMemory.allocate(n, Arena.ofAuto(), true);
        } catch (OutOfMemoryError e) {
            return null;   // a platform without mmap: the arena's allocation failed
        }
    }

    /** Rows in whole groups. */
    final int groupedRows() {
        return groups * G;
    }

    /** x[xOff ..] in the kernel's order to xq, and the sums its kernel reads to xs. */
    abstract void prepare(float[] x, int xOff, float[] xq, float[] xs);

    /** The L dot products of group g's rows with x prepared by {@link #prepare}, to dst[dstOff ..]. */
    abstract void group(int g, float[] xq, float[] xs, float[] dst, int dstOff);

    /**
     * out[outOff + r] for the rows r in [from, to) that lie in whole groups: each group that
     * overlaps the range is summed whole and only its rows in range are written.
     */
    final void rows(int from, int to, float[] xq, float[] xs, float[] out, int outOff, float[] group) {
        int g0 = from / G, g1 = Math.min(groups, (to + G - 1) / G);
        for (int g = g0; g < g1; g++) {
            int r0 = g * G;
            if (r0 >= from && r0 + G <= to) {
                group(g, xq, xs, out, outOff + r0);
            } else {
                group(g, xq, xs, group, 0);
                for (int r = Math.max(from, r0), e = Math.min(to, r0 + G); r < e; r++) out[outOff + r] = group[r - r0];
            }
        }
    }
}
