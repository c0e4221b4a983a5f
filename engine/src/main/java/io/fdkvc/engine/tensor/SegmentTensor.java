package io.fdkvc.engine.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * A tensor whose rows are consecutive runs of {@code type().bytes(cols)} bytes in a memory
 * segment (a slice of a memory-mapped model file, or a heap segment in tests). Offsets are longs
 * so that a tensor may lie beyond 2 GiB into a file.
 */
public abstract sealed class SegmentTensor extends FloatTensor
        permits F32SegmentTensor, F16Tensor, BF16Tensor, Q8_0Tensor, Q4_0Tensor, Q4_1Tensor, Q5_1Tensor,
                PreparedXTensor, BlockTensor {
    final MemorySegment seg;
    final int rows, cols;
    final long rowBytes;
    private final GgmlType type;

    SegmentTensor(GgmlType type, MemorySegment seg, int rows, int cols) {
        Objects.requireNonNull(seg, "seg");
        if (rows < 0 || cols < 0) throw new IllegalArgumentException("negative shape " + rows + " x " + cols);
        if (cols % type.blockSize != 0)
            throw new IllegalArgumentException(type + " rows need a multiple of " + type.blockSize + " columns, not " + cols);
        this.type = type;
        this.seg = seg;
        this.rows = rows;
        this.cols = cols;
        this.rowBytes = type.bytes(cols);
        long need = rowBytes * rows;
        if (seg.byteSize() < need)
            throw new IllegalArgumentException(type + " " + rows + " x " + cols + " needs " + need
                    + " bytes, segment has " + seg.byteSize());
    }

    @Override
    public final int rows() {
        return rows;
    }

    @Override
    public final int cols() {
        return cols;
    }

    /** The bytes of all rows. */
    public final MemorySegment segment() {
        return seg.asSlice(0, rowBytes * rows);
    }

    /** Bytes per row. */
    public final long rowBytes() {
        return rowBytes;
    }

    @Override
    public final GgmlType type() {
        return type;
    }

    /** The rearranged copy, made by {@link #prepareDecode} or on the first batch-of-one product. */
    private volatile RowLanes lanes;
    /** Whether this tensor has no copy (its form does not fit it, or the system refused the memory): the row kernel serves it. */
    private volatile boolean refused;

    /** Whether batch-of-one products run on {@link RowLanes}: enabled, a type with a form, a whole group of rows. */
    private boolean laned() {
        return RowLanes.ENABLED && rows >= RowLanes.G && RowLanes.hasForm(type);
    }

    @Override
    public final void prepareDecode() {
        rowLanes();
    }

    /**
     * The {@link RowLanes} copy that this tensor's batch-of-one products run on, made on the first
     * call; null where they run on the row kernel (a type without one, a tensor its form does not
     * fit, fewer rows than a group, the copies switched off or their memory refused).
     */
    final RowLanes rowLanes() {
        RowLanes l = lanes;
        if (l != null || refused || !laned()) return l;
        synchronized (this) {
            if (lanes == null && !refused && !RowLanes.fits(this)) refused = true;   // no copy in this form, no warning: the row kernel serves it
            if (lanes == null && !refused) {
                lanes = RowLanes.of(this);
                // both phases read the copy from now on: the file's pages of these rows leave this
                // process's memory (a mapped file's pages stay in the page cache, and any later
                // read maps them again), so that the weights are held once and not twice
                if (lanes != null && seg.isMapped()) segment().unload();
                if (lanes == null) {
                    refused = true;
                    System.getLogger("io.fdkvc.engine").log(System.Logger.Level.WARNING, "the system refused memory for a " + rows + " x "
                            + cols + " " + type + " matrix's rearranged copy: its decode products run on the row kernel (slower; "
                            + "-Dfdkvc.rowLanes=false makes no copies)");
                }
            }
            return lanes;
        }
    }

    /**
     * From the {@link RowLanes} copy where there is one and rows [r, r + rows) begin a group and
     * end in a whole one: the groups over those rows, whole (up to L - 1 rows past r + rows, which
     * the panel has room for).
     */
    @Override
    final boolean fillPanel(int r, int rows, int from, int to, float[] w, int off) {
        RowLanes l = rowLanes();
        int G = RowLanes.G;
        if (l == null || r % G != 0 || r + rows > l.groupedRows()) return false;
        for (int g = r / G, j = 0; j < rows; g++, j += G) l.fill(g, from, to, w, off + j, PANEL);
        return true;
    }

    /** The byte offset of row {@code row}, after checking that the row exists. */
    final long rowStart(int row) {
        return Objects.checkIndex(row, rows) * rowBytes;
    }
}
