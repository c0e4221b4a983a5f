package io.fdkvc.engine.tensor;

import static io.fdkvc.engine.tensor.Simd.L;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;

/**
 * A quantised matrix's weights rearranged for the batch-of-one product: groups of {@link Simd#L}
 * consecutive rows, one row per vector lane, so that one vector of products holds L rows' sums
 * and each x is broadcast once for L rows. The row kernels ({@link Q4_KTensor}, {@link
 * Q6_KTensor}, {@link Q8_0Tensor}) load x as a whole vector per L weights of one row: 1 KiB of x
 * per super-block of 144 or 210 weight bytes, whose loads on the AMD EPYC Zen 5 kept the weights'
 * reads from memory from overlapping with the arithmetic, and at 8192 columns (32 KiB of x a row)
 * left too little of L1 for the weights. Here an x is a 4-byte broadcast shared by L rows, the
 * blocks' headers are read L at a time, and each group's L sums leave in one vector store, with
 * no fold per row. llama.cpp's CPU backend does the like (Q4_K and Q8_0 rows repacked four or
 * eight at a time for its integer kernels, into a copy of the weights it makes at load).
 *
 * <p>The types with a rearranged form are the ones {@link #of} knows (Q4_K, Q6_K, Q8_0). The
 * copy is made by {@link FloatTensor#prepareDecode} (a model loader calls it), else on a
 * tensor's first batch-of-one product ({@link SegmentTensor#rowLanes}), into memory of its own
 * that is freed when the tensor is no longer reachable; rows after the last whole group stay
 * with the row kernel, and so does a tensor whose copy the system refuses (a warning says so,
 * once per tensor). The prefill's tiled product fills its panels from the copy too ({@link
 * #fill}), wherever a panel's rows begin a group, so that both phases read the weights from one
 * copy and the file's pages of these tensors are not read again once it is made. Q8_0's group
 * sums are the same float products as its row kernel's, added in another order (they differ in
 * the last bits); Q4_K's and Q6_K's multiply x rounded to 8 bits per 256 columns, as llama.cpp's
 * kernels do ({@link #INT8_ACTIVATIONS}; the rows after the last whole group, on the row kernel,
 * keep x in floats). Either way a row's result does not depend on how the rows are split over
 * threads (a group is always summed whole, by each thread whose range it overlaps).
 */
abstract sealed class RowLanes permits Int8RowLanes, Q8_0RowLanes {
    /** Rows per group: one per float lane ({@link FloatTensor#ROW_GROUP}). */
    static final int G = FloatTensor.ROW_GROUP;

    /**
     * Whether batch-of-one products of the types that have a rearranged form run on it: where the
     * vectors suit it (8 or 16 float lanes, whose byte loads {@link Simd#B} then hold L bytes, one
     * per row of a group), unless {@code fdkvc.rowLanes=false}.
     */
    static final boolean ENABLED = L >= 8 && FloatTensor.flag("fdkvc.rowLanes", System.getProperty("fdkvc.rowLanes"), true);

    /**
     * The copies' pages: 2 MiB where the host's transparent huge pages allow them (each decode
     * step and each prefill reads every copy through, and in base pages a pass over the 1B files'
     * copies takes a TLB miss every 4 KiB: docs/benchmarks.md, "The row-lane copies in 2 MiB
     * pages"); base pages with the system property {@code fdkvc.hugePages=false}.
     */
    static final AnonymousMemory.Pages PAGES = FloatTensor.flag("fdkvc.hugePages", System.getProperty("fdkvc.hugePages"), true)
            ? AnonymousMemory.Pages.HUGE : AnonymousMemory.Pages.BASE;

    /**
     * Whether the Q4_K and Q6_K kernels multiply in integers, as llama.cpp's CPU kernels do: x
     * rounded to integers in [-127, 127] with one float scale per super-block of 256 (llama.cpp's
     * Q8_K, {@link Int8RowLanes#roundToBytes}), each 4- or 6-bit weight times its x in a 16-bit lane, the
     * sub-blocks' sums exact in integers and scaled in floats. Unless {@code
     * fdkvc.int8Activations=false}, which keeps x in floats: the products exact, about 1.5 times
     * the arithmetic per weight.
     */
    static final boolean INT8_ACTIVATIONS = FloatTensor.flag("fdkvc.int8Activations", System.getProperty("fdkvc.int8Activations"), true);

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

    /** Whether {@code type} has a rearranged form ({@link #of}). */
    static boolean hasForm(GgmlType type) {
        return switch (type) {
            case Q4_K, Q6_K, Q8_0 -> true;
            default -> false;
        };
    }

    /**
     * Whether {@code t} (of a type that {@link #hasForm has a form}) can take it: Q8_0's pairs of
     * blocks need an even number of blocks a row, and the scales that Q8_0's and Q4_K's kernels
     * widen from f16 bits ({@link Q8_0RowLanes#group}) need to be finite.
     */
    static boolean fits(SegmentTensor t) {
        return switch (t.type()) {
            case Q8_0 -> t.cols() % Q8_0RowLanes.QK == 0 && finiteHalves(t, Q8_0Tensor.BLOCK, 1);
            case Q4_K -> finiteHalves(t, Q4_KTensor.BLOCK, 2);
            default -> true;
        };
    }

    /**
     * Whether the first {@code count} f16 values of every block of {@code bytes} bytes in {@code
     * t}'s rows (its scales) are finite (exponent bits not all ones): the kernels widen them from
     * their bits in registers, where an infinity or a NaN would come out finite.
     */
    static boolean finiteHalves(SegmentTensor t, int bytes, int count) {
        MemorySegment s = t.segment();
        for (long p = 0, end = s.byteSize(); p < end; p += bytes) {
            for (int i = 0; i < count; i++) {
                if ((s.get(ValueLayout.JAVA_SHORT_UNALIGNED, p + 2L * i) & 0x7C00) == 0x7C00) return false;
            }
        }
        return true;
    }

    /**
     * The whole groups of {@code t}'s rows, rearranged into memory of their own; null when the
     * system refuses it. Only for a tensor that {@link #fits} its type's form.
     */
    static RowLanes of(SegmentTensor t) {
        return switch (t.type()) {
            case Q4_K -> rearrange(t, Q4_KRowLanes.BLOCK, Q4_KRowLanes.GROUP_BLOCK, Q4_KRowLanes::rowBlock, Q4_KRowLanes::new);
            case Q6_K -> rearrange(t, Q6_KRowLanes.BLOCK, Q6_KRowLanes.GROUP_BLOCK, Q6_KRowLanes.rowBlocks(), Q6_KRowLanes::new);
            case Q8_0 -> rearrange(t, Q8_0RowLanes.BLOCK, Q8_0RowLanes.GROUP_BLOCK, Q8_0RowLanes::rowBlock, Q8_0RowLanes::new);
            default -> throw new IllegalArgumentException(t.type() + " has no rearranged form");
        };
    }

    final MemorySegment seg;
    final int cols, groups, blocks, qk, groupBlock;

    /**
     * A copy of {@code rows} x {@code cols} weights in blocks of {@code qk} columns, {@code
     * groupBlock} bytes per group and block.
     */
    RowLanes(MemorySegment seg, int rows, int cols, int qk, int groupBlock) {
        this.seg = seg;
        this.cols = cols;
        this.groups = rows / G;
        this.blocks = cols / qk;
        this.qk = qk;
        this.groupBlock = groupBlock;
    }

    /** One row's block, {@code src[p ..]} in the file's layout, into lane k of a group-block at {@code dst[q ..]}. */
    @FunctionalInterface
    interface RowBlock {
        void rearrange(byte[] src, int p, byte[] dst, int q, int k);
    }

    /** A type's copy over the memory {@link #rearrange} filled. */
    @FunctionalInterface
    interface Copy {
        RowLanes over(MemorySegment seg, int rows, int cols);
    }

    /**
     * The whole groups of {@code t}'s rows in the layout {@code rowBlock} writes, {@code groupBlock}
     * bytes per group and block of {@code block} bytes, in memory of their own ({@link #memory}),
     * as {@code copy} makes it; null when the system refuses the memory. Each group's L rows are copied to heap memory whole, its
     * group-blocks assembled there and copied out whole: element by element between the mapped
     * file and the copy, the 1B Q4_K_M file's took seconds more.
     */
    static RowLanes rearrange(SegmentTensor t, int block, int groupBlock, RowBlock rowBlock, Copy copy) {
        int groups = t.rows() / G, blocks = (int) (t.rowBytes() / block);
        int rowBytes = Math.toIntExact(t.rowBytes());
        MemorySegment src = t.segment(), dst = memory((long) groups * blocks * groupBlock);
        if (dst == null) return null;
        byte[] inb = new byte[G * rowBytes], outb = new byte[blocks * groupBlock];
        MemorySegment in = MemorySegment.ofArray(inb), out = MemorySegment.ofArray(outb);
        for (int g = 0; g < groups; g++) {
            MemorySegment.copy(src, (long) g * G * rowBytes, in, 0, inb.length);
            for (int b = 0; b < blocks; b++) {
                for (int k = 0; k < G; k++) rowBlock.rearrange(inb, k * rowBytes + b * block, outb, b * groupBlock, k);
            }
            MemorySegment.copy(out, 0, dst, (long) g * outb.length, outb.length);
        }
        return copy.over(dst, t.rows(), t.cols());
    }

    /**
     * {@code n} bytes of private memory, zeroed, freed once the copy is unreachable ({@link
     * AnonymousMemory}), in 2 MiB pages where the host offers them ({@link #PAGES}); null when the
     * system refuses them. A copy of at least 2 MiB has memory of its own, made in the call; a
     * smaller one (every matrix of the 135M shape) could hold no huge page alone, so in 2 MiB
     * pages the small copies share slabs ({@link #SLAB} bytes, each copy on a page of its own
     * start), whose pages come with the copies' writes and which are freed when all their copies
     * are unreachable and, for the slab still being cut, once the next one replaces it: until
     * then its written pages stay, at most 32 MiB.
     */
    static MemorySegment memory(long n) {
        try {
            if (PAGES == AnonymousMemory.Pages.HUGE && n < AnonymousMemory.HUGE_PAGE) {
                synchronized (RowLanes.class) {
                    if (slab == null || slabUsed + n > slab.byteSize()) {
                        slab = AnonymousMemory.allocate(SLAB, Arena.ofAuto(), false, PAGES);
                        slabUsed = 0;
                        if (slab == null) return null;
                    }
                    MemorySegment seg = slab.asSlice(slabUsed, n);
                    slabUsed = (slabUsed + n + AnonymousMemory.PAGE - 1) & -AnonymousMemory.PAGE;
                    return seg;
                }
            }
            return AnonymousMemory.allocate(n, Arena.ofAuto(), true, PAGES);
        } catch (OutOfMemoryError e) {
            return null;   // a platform without mmap: the arena's allocation failed
        }
    }

    /** The slab small copies are cut from ({@link #memory}), and the bytes of it already cut. */
    private static MemorySegment slab;
    private static long slabUsed;
    /** A slab's bytes (sixteen 2 MiB pages). */
    static final long SLAB = 32L << 20;

    /** Rows in whole groups. */
    final int groupedRows() {
        return groups * G;
    }

    /**
     * x prepared for one copy's kernel (per thread, reused; grown on a thread's first larger call):
     * x in the kernel's order or its scales ({@code xq}), sums of x over sub-blocks ({@code xs}),
     * x rounded to integers ({@code xr}, {@link Int8RowLanes#roundToBytes}) and those paired two to an int
     * ({@code xi}, {@link Int8RowLanes#pairs}), and one group's sums.
     */
    static final class Prepared {
        float[] xq = new float[0], xs = new float[0];
        int[] xr = new int[0], xi = new int[0];
        final float[] group = new float[G];
    }

    /** Per thread, one {@link Prepared} per batch row (grown to the largest batch the thread has run). */
    private static final ThreadLocal<Prepared[]> PREPARED = ThreadLocal.withInitial(() -> new Prepared[] {new Prepared()});

    /** This thread's first {@code batch} {@link Prepared}, made where missing. */
    private static Prepared[] preparedBatch(int batch) {
        Prepared[] ps = PREPARED.get();
        if (ps.length < batch) {
            ps = java.util.Arrays.copyOf(ps, batch);
            for (int b = 0; b < batch; b++) if (ps[b] == null) ps[b] = new Prepared();
            PREPARED.set(ps);
        }
        return ps;
    }

    /** This thread's first {@link Prepared} with x[xOff ..] prepared for this copy's kernel. */
    private Prepared prepared(float[] x, int xOff) {
        return prepared(PREPARED.get()[0], x, xOff);
    }

    /** {@code p}, grown for this copy where needed, with x[xOff ..] prepared for its kernel. */
    private Prepared prepared(Prepared p, float[] x, int xOff) {
        if (p.xq.length < cols) {
            p.xq = new float[cols];
            p.xr = new int[cols];
            p.xi = new int[cols / 2];
        }
        if (p.xs.length < cols / 16) p.xs = new float[cols / 16];
        prepare(x, xOff, p);
        return p;
    }

    /**
     * The product with one batch row (decode) or a few at once (a short prompt's prefill chunk,
     * continuous batching's decode step, up to {@link FloatTensor#SMALL_BATCH}): {@code
     * out[outOff + b * outStride + r]} = row r dotted with batch row b ({@code x[xOff + b *
     * xStride ..]}) for the rows r in [from, to) that lie in whole groups; returns the first row
     * it left for the row kernel ({@code from} when it wrote none). Each group is read from memory
     * once for the whole batch (the other batch rows find it in L1 or L2) and every batch row's
     * outputs have the bits of its product alone ({@link #groups}).
     */
    final int product(int from, int to, float[] x, int xOff, int xStride, int batch, float[] out, int outOff, int outStride) {
        int end = Math.min(to, groupedRows());
        if (from >= end) return from;
        Prepared[] ps = preparedBatch(batch);
        for (int b = 0; b < batch; b++) prepared(ps[b], x, xOff + b * xStride);
        rows(from, end, ps, batch, out, outOff, outStride);
        return end;
    }

    /** Row {@code row} (in a whole group) dotted with x[xOff ..]: its group summed whole. */
    final float dot(int row, float[] x, int xOff) {
        Prepared p = prepared(x, xOff);
        group(row / G, p, p.group, 0);
        return p.group[row % G];
    }

    /** x[xOff ..] as this copy's kernel reads it, into p (at most cols floats of xq, cols / 16 of xs, cols / 2 ints of xi). */
    abstract void prepare(float[] x, int xOff, Prepared p);

    /** The L dot products of group g's rows with x prepared by {@link #prepare}, to dst[dstOff ..]. */
    abstract void group(int g, Prepared p, float[] dst, int dstOff);

    /**
     * Group g's L rows, columns [from, to) (multiples of the block's columns), dequantised with the
     * bits of the file type's {@link FloatTensor#dequantizeColumns}, column by column: row
     * {@code g * L + lane}, column k to {@code w[off + (k - from) * stride + lane]}. The tiled
     * product's panel fill ({@link FloatTensor#fillPanel}): one vector store per column of L rows,
     * from the copy the decode reads, so that a prefill reads the weights' bytes from the same
     * memory as the decode and not from the file as well.
     */
    final void fill(int g, int from, int to, float[] w, int off, int stride) {
        long base = ((long) g * blocks + from / qk) * groupBlock;
        for (int b = from / qk, o = off; b < to / qk; b++, base += groupBlock, o += qk * stride) fillBlock(base, w, o, stride);
    }

    /** {@link #fill} of the group-block at byte {@code base} of the copy: its column c to {@code w[o + c * stride ..]}. */
    abstract void fillBlock(long base, float[] w, int o, int stride);

    /**
     * out[outOff + b * outStride + r] for the batch rows b (x prepared in {@code ps[b]}) and the
     * rows r in [from, to) (to at most {@link #groupedRows}): the groups wholly in range in pairs
     * ({@link #pair}, groups w0 + i and w0 + q + i: two streams; for several batch rows {@link
     * #groups} of each, every batch row before the next group) and the odd one alone; a group the
     * range cuts at either end is summed whole and only its rows in range are written.
     */
    private void rows(int from, int to, Prepared[] ps, int batch, float[] out, int outOff, int outStride) {
        int w0 = (from + G - 1) / G, w1 = Math.max(w0, to / G), q = (w1 - w0) / 2;
        if (batch == 1) {
            for (int i = 0; i < q; i++) pair(w0 + i, w0 + q + i, ps[0], out, outOff + (w0 + i) * G, outOff + (w0 + q + i) * G);
            if (w0 + 2 * q < w1) group(w1 - 1, ps[0], out, outOff + (w1 - 1) * G);
        } else {
            for (int i = 0; i < q; i++) {
                groups(w0 + i, ps, batch, out, outOff + (w0 + i) * G, outStride);
                groups(w0 + q + i, ps, batch, out, outOff + (w0 + q + i) * G, outStride);
            }
            if (w0 + 2 * q < w1) groups(w1 - 1, ps, batch, out, outOff + (w1 - 1) * G, outStride);
        }
        for (int b = 0, o = outOff; b < batch; b++, o += outStride) {
            if (from % G != 0) cut(from / G, from, to, ps[b], out, o);
            if (to % G != 0 && to / G >= w0) cut(to / G, from, to, ps[b], out, o);
        }
    }

    /**
     * Group g dotted with each of the batch's rows (x prepared in {@code ps[b]}) into {@code
     * dst[dstOff + b * dstStride ..]}, each with {@link #group}'s bits: two batch rows at a time
     * ({@link #group2}), the odd one alone; the group read from memory for the first and from the
     * caches for the rest.
     */
    private void groups(int g, Prepared[] ps, int batch, float[] dst, int dstOff, int dstStride) {
        int b = 0;
        for (; b + 1 < batch; b += 2) group2(g, ps[b], ps[b + 1], dst, dstOff + b * dstStride, dstOff + (b + 1) * dstStride);
        if (b < batch) group(g, ps[b], dst, dstOff + b * dstStride);
    }

    /**
     * Group g for two batch rows (x prepared in p0 and p1), to {@code dst[o0 ..]} and {@code
     * dst[o1 ..]}, each with {@link #group}'s bits: a type whose kernel can share its work on the
     * weights between batch rows (unpacking, conversion) writes its own.
     */
    void group2(int g, Prepared p0, Prepared p1, float[] dst, int o0, int o1) {
        group(g, p0, dst, o0);
        group(g, p1, dst, o1);
    }

    /** Group g summed whole into {@code p.group}, its rows in [from, to) copied to out. */
    private void cut(int g, int from, int to, Prepared p, float[] out, int outOff) {
        group(g, p, p.group, 0);
        for (int r = Math.max(from, g * G), e = Math.min(to, g * G + G); r < e; r++) out[outOff + r] = p.group[r - g * G];
    }

    /**
     * Groups g and h at once, to {@code dst[gOff ..]} and {@code dst[hOff ..]}, each with {@link
     * #group}'s bits: a type whose kernel gains from reading two streams of weights writes its own.
     */
    void pair(int g, int h, Prepared p, float[] dst, int gOff, int hOff) {
        group(g, p, dst, gOff);
        group(h, p, dst, hOff);
    }
}
