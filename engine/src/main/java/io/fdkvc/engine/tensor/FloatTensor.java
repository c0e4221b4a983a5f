package io.fdkvc.engine.tensor;

import io.fdkvc.core.InputException;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A read-only row-major matrix of {@code rows x cols} weights, possibly quantised, usually a view
 * of a memory-mapped model file. Rows are the unit of work: a matrix-vector product is one
 * {@link #dot} per row, dequantising in the inner loop.
 */
public abstract class FloatTensor {
    /** Number of rows (output features). */
    public abstract int rows();

    /** Number of columns (input features); a multiple of the type's block size. */
    public abstract int cols();

    public abstract GgmlType type();

    /** Dot product of row {@code row} with {@code x[xOff .. xOff + cols)}. */
    public abstract float dot(int row, float[] x, int xOff);

    /**
     * Makes whatever this tensor's products read in place of its file's weights (the Q4_K, Q6_K
     * and Q8_0 matrices' {@link RowLanes} copies, which the batch-of-one products and the tiled
     * product's panels read), which would otherwise be made on the first product; nothing for the
     * other types. A model loader calls it, so that the cost falls at load and not
     * on the first decoded token.
     */
    public void prepareDecode() {}

    /** Writes row {@code row}, dequantised, to {@code out[off .. off + cols)}. */
    public final void dequantizeRow(int row, float[] out, int off) {
        dequantizeColumns(row, 0, cols(), out, off);
    }

    /**
     * Writes columns [from, to) of row {@code row}, dequantised, to {@code out[off .. off + to - from)};
     * from and to are multiples of the type's block size (the caller's to check: this is the
     * prefill's panel fill, {@link #tiled}).
     */
    abstract void dequantizeColumns(int row, int from, int to, float[] out, int off);

    /**
     * Fills a panel of the tiled product column by column, when this tensor can: row r + j, column
     * k of [from, to) to {@code w[off + (k - from) * PANEL + j]} for j in [0, rows), with {@link
     * #dequantizeColumns}' bits, and returns true; the rows after the range that the fill writes
     * (to at most PANEL) hold finite weights of later rows. False, writing nothing, where it
     * cannot: {@link #tiled} then dequantizes the panel row by row.
     */
    boolean fillPanel(int r, int rows, int from, int to, float[] w, int off) {
        return false;
    }

    /**
     * Batched product for rows {@code [rowFrom, rowTo)} on the calling thread (the caller splits
     * rows over threads): {@code out[outOff + b*outStride + r] = dot(r, x, xOff + b*xStride)} for
     * {@code b} in {@code [0, batch)}, up to rounding. This is the prefill path: each weight row
     * is read and dequantised once per batch instead of once per token.
     *
     * <p>The batch is transposed once per call into tiles of NB batch rows laid out column by
     * column, so that one vector holds column k of NB batch rows; each weight is broadcast against
     * those vectors into an MR x NB block of accumulators held in registers, which needs no
     * horizontal reduction. A tile is two vectors wide, four for larger batches with AVX-512
     * ({@link #NB_WIDE}), one for a batch that fits one vector. The loops are blocked for the
     * caches: {@link #PANEL} weight rows are dequantised at a time into a scratch that stays in L2, and the columns are walked in blocks
     * of {@link #KB}, so that the block of the transposed batch (KB x NB floats per tile, 32 KiB at
     * 64 batch rows) stays in L1 while every row block of the panel runs over it; rows longer than
     * {@link #SPAN} go through the panels one span of columns at a time, so that the span's part of
     * the transposed batch stays in L2 ({@link #tiled}). The accumulators
     * are stored after each column block and reloaded for the next, so each output is still one
     * FMA chain over the columns in order: a fixed order (the same bits in the interpreter and in
     * C2, and whatever the blocking), which differs from {@link #dot}'s lane-wise order in the
     * last bits. A batch of one is plain {@link #dot}.
     */
    public void matmul(int rowFrom, int rowTo, float[] x, int xOff, int xStride, int batch,
                       float[] out, int outOff, int outStride) {
        // decode's products read each weight once: their rows go in streamedRow's order
        if (batch == 1) {
            for (int i = 0; i < rowTo - rowFrom; i++) {
                int r = streamedRow(rowFrom, rowTo, i);
                out[outOff + r] = dot(r, x, xOff);
            }
            return;
        }
        int n = cols();
        if (batch <= SMALL_BATCH) {
            // a few rows (continuous batching's decode step): the tiles would compute NB lanes for
            // a handful of rows; instead each weight row is dequantised once, into L1, and dotted
            // with every batch row
            float[] w = SCRATCH.get().ensure(n, 0).w;
            for (int i = 0; i < rowTo - rowFrom; i++) {
                int r = streamedRow(rowFrom, rowTo, i);
                dequantizeRow(r, w, 0);
                for (int b = 0; b < batch; b++) out[outOff + b * outStride + r] = Simd.dot(w, 0, x, xOff + b * xStride, n);
            }
            return;
        }
        TransposedBatch tb = SCRATCH.get().batch;
        tb.reset(x, xOff, xStride, batch, n);
        tb.transpose(0, n);
        tiled(rowFrom, rowTo, tb, out, outOff, outStride, null);
    }

    /**
     * {@link #matmul} over a batch already transposed (more than {@link #SMALL_BATCH} rows): the
     * same tiled product with the same bits, without the transposition each call of the other
     * form makes. A caller that splits one product into many row ranges, or runs several products
     * on one input, transposes the input once ({@link TransposedBatch}).
     */
    public final void matmul(int rowFrom, int rowTo, TransposedBatch x, float[] out, int outOff, int outStride) {
        if (x.cols != cols()) throw new IllegalArgumentException("a batch of " + x.cols + " columns for a matrix of " + cols());
        tiled(rowFrom, rowTo, x, out, outOff, outStride, null);
    }

    /**
     * {@link #matmul(int, int, TransposedBatch, float[], int, int)} with the output laid out as a
     * transposed batch: row r of this matrix and batch row b to out's column r of batch row b, the
     * same floats, for rows [rowFrom, rowTo). The tiled product's accumulators already hold a
     * block of rows for a tile of batch rows in that layout, so each block goes out as one
     * contiguous copy instead of a scatter into the batch's rows, and a next product that reads the
     * output (the feed-forward's down projection after its up projections) needs no transposition.
     * The lanes past the batch get what the product of x's zero padding gives. {@code out} comes
     * from {@link TransposedBatch#resetOutput} with x's batch and this matrix's rows as columns.
     */
    public final void matmul(int rowFrom, int rowTo, TransposedBatch x, TransposedBatch out) {
        if (x.cols != cols()) throw new IllegalArgumentException("a batch of " + x.cols + " columns for a matrix of " + cols());
        if (out.cols != rows() || out.batch != x.batch) {
            throw new IllegalArgumentException("an output batch of " + out.batch + " x " + out.cols + " for " + x.batch + " rows times a matrix of " + rows() + " rows");
        }
        tiled(rowFrom, rowTo, x, null, 0, 0, out);
    }

    /**
     * The tiled product over rows [rowFrom, rowTo): panels of {@link #PANEL} rows are dequantised
     * and multiplied into their accumulators, column block by column block. Rows longer than
     * {@link #SPAN} (the down projection's 8192 columns) go in spans of SPAN columns, each span
     * through every panel of the range before the next, so that the span's slice of the
     * transposed batch (SPAN x 64 floats) stays in L2 while the panels pass; over whole rows the
     * batch (2 MiB at 8192 columns) was read again for every panel. Each panel then keeps its
     * own accumulators between spans (in memory, as between column blocks), so every output is
     * the same FMA chain in the same column order whatever the spans; with one span, every panel
     * reuses the first panel's. The finished sums go to out's rows, or to {@code outT}'s columns
     * where it is not null.
     */
    private void tiled(int rowFrom, int rowTo, TransposedBatch x, float[] out, int outOff, int outStride, TransposedBatch outT) {
        int n = cols(), nb = x.nb, tiles = x.tiles;
        // one-vector tiles take two row blocks per kernel call (kernels()): their panels
        // hold an even number of blocks, the last one zero rows where the rows run out
        int unit = x.narrow() ? 2 * MR : MR;
        int panel = Math.min(PANEL, (rowTo - rowFrom + unit - 1) / unit * unit), perPanel = panel / MR * tiles * MR * nb;
        boolean spans = n > SPAN;
        int width = spans ? SPAN : n, panels = spans ? (rowTo - rowFrom + panel - 1) / panel : 1;
        Scratch sc = SCRATCH.get().ensure(PANEL * width + LINE_FLOATS, panels * perPanel);
        float[] w = sc.w, acc = sc.acc;
        // the panel starts on a cache line: each of the fill's vector stores then writes one line
        // (PANEL and the spans are whole lines of floats), not two
        int wb = CacheLines.floatsToLine(w);
        for (int k0 = 0; k0 < n; k0 += width) {
            int k1 = Math.min(n, k0 + width), span = k1 - k0;
            for (int r = rowFrom, pi = 0; r < rowTo; r += panel, pi++) {
                int rows = Math.min(panel, rowTo - r), blocks = (rows + unit - 1) / unit * (unit / MR), ao = spans ? pi * perPanel : 0;
                // the panel column by column (row j, column k at w[wb + (k - k0) * PANEL + j]) where
                // the tensor fills it so, else row by row (at w[wb + j * span + k - k0]); the rows
                // that pad the last row block hold zeros or later rows' weights, and their sums are
                // never written out
                int rs = 1, cs = PANEL;
                if (!fillPanel(r, rows, k0, k1, w, wb)) {
                    rs = span;
                    cs = 1;
                    for (int j = 0; j < rows; j++) dequantizeColumns(r + j, k0, k1, w, wb + j * span);
                    java.util.Arrays.fill(w, wb + rows * span, wb + blocks * MR * span, 0f);
                }
                if (k0 == 0) java.util.Arrays.fill(acc, ao, ao + blocks * tiles * MR * nb, 0f);
                kernels(w, wb, rs, cs, k0, k1, blocks, x, acc, ao);
                if (k1 == n) {
                    if (outT == null) scatter(r, rows, x, acc, ao, out, outOff, outStride);
                    else copyOut(r, rows, x, acc, ao, outT);
                }
            }
        }
    }

    /**
     * The kernels over a panel of {@code blocks} row blocks that holds columns [k0, k1), row j's
     * column k at {@code w[wb + j * rs + (k - k0) * cs]} (row by row: rs the span, cs 1; column by
     * column: rs 1, cs {@link #PANEL}): acc[ao + (rb*tiles + t)*MR*nb ..] += the panel times the
     * batch's columns [k0, k1), in column blocks of {@link #KB}.
     */
    private static void kernels(float[] w, int wb, int rs, int cs, int k0, int k1, int blocks, TransposedBatch x, float[] acc, int ao) {
        int n = x.cols, nb = x.nb, tiles = x.tiles;
        float[] xt = x.xt;
        for (int c0 = k0; c0 < k1; c0 += KB) {
            int c1 = Math.min(k1, c0 + KB);
            if (x.narrow()) {
                // one tile of one vector: two row blocks per call (blocks is even here), twelve
                // FMA chains in flight where six would wait on the FMA latency. With one tile,
                // consecutive row blocks are consecutive in acc and in w.
                for (int rb = 0; rb < blocks; rb += 2) {
                    kernelNarrow(w, wb + rb * MR * rs, rs, cs, c0 - k0, c1 - k0, xt, x.shift + k0 * nb, acc, ao + rb * MR * nb);
                }
                continue;
            }
            for (int rb = 0; rb < blocks; rb++) {
                for (int t = 0; t < tiles; t++) {
                    // w holds row rb*MR + j, column k at wb + (rb*MR + j)*rs + (k - k0)*cs; xt's
                    // tile t holds column k at shift + (t*n + k)*nb
                    int a = ao + (rb * tiles + t) * MR * nb, xo = x.shift + (t * n + k0) * nb;
                    if (x.wide && rs == 1 && cs == PANEL) kernelWideColumns(w, wb + rb * MR, c0 - k0, c1 - k0, xt, xo, acc, a);
                    else if (x.wide) kernelWide(w, wb + rb * MR * rs, rs, cs, c0 - k0, c1 - k0, xt, xo, acc, a);
                    else kernel(w, wb + rb * MR * rs, rs, cs, c0 - k0, c1 - k0, xt, xo, acc, a);
                }
            }
        }
    }

    /** acc[ao + (rb*tiles + t)*MR*nb + j*nb + lane] is (row r + rb*MR + j, batch row t*nb + lane): into out. */
    private static void scatter(int r, int rows, TransposedBatch x, float[] acc, int ao, float[] out, int outOff, int outStride) {
        int nb = x.nb, tiles = x.tiles, batch = x.batch;
        for (int rb = 0, blocks = (rows + MR - 1) / MR; rb < blocks; rb++) {
            int mr = Math.min(MR, rows - rb * MR);
            for (int t = 0; t < tiles; t++) {
                int a = ao + (rb * tiles + t) * MR * nb;
                for (int lane = 0, b = t * nb; lane < nb && b < batch; lane++, b++) {
                    int o = outOff + b * outStride + r + rb * MR;
                    for (int j = 0; j < mr; j++) out[o + j] = acc[a + j * nb + lane];
                }
            }
        }
    }

    /**
     * acc's blocks of rows [r, r + rows) into out's columns of the same numbers: each block's MR
     * rows of nb lanes are the columns' lanes of one tile, in order.
     */
    private static void copyOut(int r, int rows, TransposedBatch x, float[] acc, int ao, TransposedBatch out) {
        int nb = x.nb, tiles = x.tiles;
        for (int rb = 0, blocks = (rows + MR - 1) / MR; rb < blocks; rb++) {
            int mr = Math.min(MR, rows - rb * MR);
            for (int t = 0; t < tiles; t++) {
                System.arraycopy(acc, ao + (rb * tiles + t) * MR * nb, out.xt, out.at(t, r + rb * MR), mr * nb);
            }
        }
    }

    /**
     * A batch of more than {@link #SMALL_BATCH} rows laid out for the tiled product: tiles of nb
     * batch rows, column by column, so that one vector holds column k of nb batch rows. Filled by
     * column ranges ({@link #transpose}), which several threads may fill at once, then read by any
     * number of {@link #matmul(int, int, TransposedBatch, float[], int, int)} calls until the next
     * {@link #reset}. The source rows must not change in between. Or the output of tiled products
     * ({@link #resetOutput}), which write it by column ranges instead.
     */
    public static final class TransposedBatch {
        private float[] xt = new float[0];
        private float[] src;
        private int srcOff, stride, batch, cols, nb, tiles;
        /** Floats before the first tile: the tiles start on a cache line ({@link CacheLines}). */
        private int shift;
        private boolean wide;

        /** Whether the tiles are one vector wide (a batch that fits one vector). */
        boolean narrow() {
            return nb == Simd.L;
        }

        /** Takes rows x[xOff + b * xStride ..] of {@code cols} floats, b < batch; copies nothing yet. */
        public void reset(float[] x, int xOff, int xStride, int batch, int cols) {
            layOut(batch, cols);
            this.src = x;
            this.srcOff = xOff;
            this.stride = xStride;
        }

        /**
         * Makes this the output of a tiled product ({@link FloatTensor#matmul(int, int,
         * TransposedBatch, TransposedBatch)}) of {@code batch} rows times a matrix of {@code cols}
         * rows, in the layout {@link #reset} gives a batch of that size (which then has no source to
         * {@link #transpose}). The products fill it; it holds what they wrote until the next reset.
         */
        public void resetOutput(int batch, int cols) {
            layOut(batch, cols);
            this.src = null;
        }

        /** The array that holds the tiles; {@link #at} indexes it. */
        public float[] data() {
            return xt;
        }

        /** Tiles of {@link #lanes} batch rows. */
        public int tiles() {
            return tiles;
        }

        /** Batch rows per tile: the floats each column holds side by side in a tile (a whole number of vectors). */
        public int lanes() {
            return nb;
        }

        /** Index in {@link #data} of column {@code col}'s first lane in tile {@code tile}: its lanes follow, then the next column's. */
        public int at(int tile, int col) {
            return shift + (tile * cols + col) * nb;
        }

        private void layOut(int batch, int cols) {
            if (batch <= SMALL_BATCH) throw new IllegalArgumentException("a batch of " + batch + " rows takes the small-batch path");
            // four vectors of batch rows per tile where there are registers for 6 x 4
            // accumulators (AVX-512's 32) and the batch fills more than two vectors: per column,
            // 4 loads and 6 broadcasts feed 24 FMAs instead of 2 and 6 feeding 12
            wide = WIDE && batch > NB;
            // a batch that fits one vector (9-16 rows with AVX-512: a decode step of up to 16
            // conversations, a short prefill chunk) in tiles of one vector: in tiles of two, half
            // of every FMA multiplied padding
            nb = wide ? NB_WIDE : batch <= Simd.L ? Simd.L : NB;
            tiles = (batch + nb - 1) / nb;
            if (xt.length < tiles * cols * nb + LINE_FLOATS) xt = new float[tiles * cols * nb + LINE_FLOATS];
            // the kernels' four loads of a column then read one line each (nb is 16 floats or
            // more where they are wide), not two
            shift = CacheLines.floatsToLine(xt);
            this.batch = batch;
            this.cols = cols;
        }

        /**
         * xt[shift + (tile*n + k)*nb + j] = x[batch row tile*nb + j][k] for k in [from, to), zero beyond the
         * batch. In blocks of {@link #TRANSPOSE_BLOCK} columns, each batch row's part of the block
         * read in order: the block's source (nb rows of 256 bytes) and its destination (16 KiB at
         * 64 batch rows) stay in L1 together. Whole rows at a time, each row's n strided writes
         * touched n cache lines and thrashed L1; column by column with one 16-lane gather per
         * column and vector of rows, a 64 x 2048 batch took 266 us against 40 us in blocks
         * (and 64 x 8192 1030 against 174 us) on the EPYC Zen 5 (kernels.TransposeBench).
         */
        public void transpose(int from, int to) {
            if (src == null) throw new IllegalStateException("a product's output batch has no rows to transpose");
            float[] x = src, t = xt;
            int n = cols;
            for (int tile = 0; tile < tiles; tile++) {
                int b0 = tile * nb, m = Math.min(nb, batch - b0), base = shift + tile * n * nb;
                for (int k0 = from; k0 < to; k0 += TRANSPOSE_BLOCK) {
                    int k1 = Math.min(to, k0 + TRANSPOSE_BLOCK);
                    for (int j = 0; j < nb; j++) {
                        int p = base + k0 * nb + j;
                        if (j < m) {
                            for (int k = k0, s = srcOff + (b0 + j) * stride; k < k1; k++, p += nb) t[p] = x[s + k];
                        } else {
                            for (int k = k0; k < k1; k++, p += nb) t[p] = 0f;
                        }
                    }
                }
            }
        }

        /** Columns per block of {@link #transpose}. */
        static final int TRANSPOSE_BLOCK = 64;
    }

    /** Weight rows per kernel call; batch rows per tile (two vectors, or four with {@link #WIDE}). */
    static final int MR = 6, NB = 2 * Simd.L, NB_WIDE = 4 * Simd.L;

    /**
     * Whether the 6 x 4-vector kernel runs: only with 16 float lanes (AVX-512, which has 32 vector
     * registers; AVX2's 16 would spill its 24 accumulators).
     */
    static final boolean WIDE = Simd.L >= 16;

    /**
     * Weight rows dequantised at a time (a multiple of MR): 48 rows of 2048 floats are 384 KiB,
     * in L2 beside the transposed batch. Columns per block: 128 columns of 64 batch rows are the
     * 32 KiB of L1 the kernel streams for every row block of the panel.
     */
    static final int PANEL = 48, KB = 128;

    /**
     * Rows per group of the row-lane copies ({@link RowLanes}, one row per float lane): a product
     * over a row range that starts on a multiple of it (and ends on one, or at the last row)
     * reads the copies' groups whole, in decode and in the prefill's panels. RowLanes takes its
     * group from here: the other way round, this class's initialisation would start RowLanes',
     * which reads a subclass's constants before they are set.
     */
    public static final int ROW_GROUP = Simd.L;

    /** Floats in a cache line: the room the scratch keeps to start on one. */
    static final int LINE_FLOATS = CacheLines.LINE / Float.BYTES;

    /**
     * Columns per span of {@link #tiled} (a multiple of every block size): 2048 columns of 64
     * batch rows are 512 KiB, in L2 with a panel of 48 such rows. Rows of at most this length
     * take {@link #tiled}'s whole-row panels. 1024 and 4096 measured the same within the noise.
     */
    static final int SPAN = 2048;

    /**
     * Weight streams a decode product (a batch of up to {@link #SMALL_BATCH} rows) reads at once:
     * the range is cut into this many parts, visited in turn. Its rows are short (576 to 8192
     * weights) and each is read once, from memory, so how many streams the hardware prefetchers
     * follow best decides the speed, and that differs between CPUs and between kernels. Two here
     * (Q8_0's kernel reads two rows per pass, one from each stream); the k-quants' and Q5_0's batch
     * of one, which reads one row per pass, has its own count ({@code PreparedXTensor.ROW_STREAMS},
     * one), and on {@link RowLanes} copies (Q4_K, Q6_K, Q8_0) the groups are read in order, Q8_0's
     * two at a time from the two halves of the range. A whole decode pass over the Llama-3.2-1B files' weights at two threads, paired pass by
     * pass in one JVM (docs/benchmarks.md): on an AMD EPYC Zen 5, one stream 1.36x four on Q4_K_M
     * and 0.66x on Q8_0, two 1.30x and 1.14x; on an Intel Xeon with AVX-512 (one thread), two
     * 0.86-0.99x four. The system property {@code fdkvc.streams} (1 to 16), when set, is the count
     * for every type, for a host that measures otherwise. Each row's result is the same float
     * whatever the order.
     */
    static final int STREAMS = streams(System.getProperty("fdkvc.streams"), 2);

    /**
     * The count of streams from {@code fdkvc.streams}' value, {@code byDefault} when it is unset
     * (null); refuses anything but a whole number from 1 to 16.
     */
    static int streams(String property, int byDefault) {
        if (property == null) return byDefault;
        try {
            int n = Integer.parseInt(property.strip());
            if (n >= 1 && n <= 16) return n;
        } catch (NumberFormatException e) {
            // refused below
        }
        // bad input, not a fault: the CLI reports it in one line with exit status 2 (it reaches the
        // top as the cause of the class's initialisation error)
        throw new InputException("system property fdkvc.streams must be a whole number from 1 to 16, got '" + property + "'");
    }

    /**
     * Reads the system properties that choose the decode kernels and their copies' memory ({@code
     * fdkvc.rowLanes}, {@code fdkvc.int8Activations}, {@code fdkvc.hugePages}) on the calling thread: a bad value throws its {@link InputException}
     * (in the class's initialisation error) here, where a caller can report it.
     */
    public static void checkKernelProperties() {
        boolean read = RowLanes.ENABLED || RowLanes.INT8_ACTIVATIONS;   // the first read initialises RowLanes, which parses all three
    }

    /** A boolean system property's value: "true" or "false" (any case), {@code byDefault} when unset. */
    static boolean flag(String name, String property, boolean byDefault) {
        if (property == null) return byDefault;
        String v = property.strip();
        if (v.equalsIgnoreCase("true")) return true;
        if (v.equalsIgnoreCase("false")) return false;
        throw new InputException("system property " + name + " must be true or false, got '" + property + "'");
    }

    /** {@link #streamedRow(int, int, int, int)} with {@link #STREAMS} streams. */
    static int streamedRow(int rowFrom, int rowTo, int i) {
        return streamedRow(rowFrom, rowTo, i, STREAMS);
    }

    /**
     * The row a decode product over [rowFrom, rowTo) visits at its step i: the range's
     * {@code streams} parts of q rows in turn (with two: rowFrom, rowFrom + q, rowFrom + 1,
     * rowFrom + q + 1, ...), then the rows left over, in order. Each row once.
     */
    static int streamedRow(int rowFrom, int rowTo, int i, int streams) {
        int q = (rowTo - rowFrom) / streams;
        return i < streams * q ? rowFrom + i / streams + (i % streams) * q : rowFrom + i;
    }

    /**
     * Up to this many batch rows {@link #matmul} does not run the tiled kernel, whose NB lanes
     * would mostly be padding: the types with a {@link RowLanes} copy read each group of rows
     * once for the whole batch ({@link RowLanes#product}), the others dot each dequantised weight
     * row with every batch row.
     */
    static final int SMALL_BATCH = 8;

    /**
     * Whether {@link #matmul} at this batch takes the tiled path, which reads a transposed batch:
     * a caller that runs it over many row ranges can transpose once ({@link TransposedBatch}).
     */
    public static boolean transposesBatch(int batch) {
        return batch > SMALL_BATCH;
    }

    /** Per-thread scratch of {@link #matmul}: allocated on a thread's first chunk, then reused. */
    private static final class Scratch {
        float[] w = new float[0], acc = new float[0];
        final TransposedBatch batch = new TransposedBatch();

        Scratch ensure(int wLen, int accLen) {
            if (w.length < wLen) w = new float[wLen];
            if (acc.length < accLen) acc = new float[accLen];
            return this;
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * acc[ao + j*NB ..] += sum_{k in [k0, k1)} w[wo + j*n + k*cs] * xt[xo + k*NB ..] for the MR rows
     * j (n the row stride, cs the column stride: either layout of {@link #kernels}), with the MR x 2
     * accumulators in registers: loaded, one FMA per weight and vector in column order, stored.
     * Written out row by row because a helper returning vectors that C2 does not inline would box
     * them. C2 hoists the range checks of x's loads (the loop counter times a constant) out of the
     * loop and keeps one per weight load (k*cs, a scale it does not know): one compare and branch
     * beside four FMAs, which measured the same as the row-by-row layout's kernel whose checks it
     * hoisted (`kernels.GemmBench`, within the runs' spread). The accumulators are addressed as ao plus constants
     * rather than through one offset variable per row: six more integers live across the loop
     * spilled x86's general registers and cost the wide kernel a quarter of its speed.
     */
    private static void kernel(float[] w, int wo, int n, int cs, int k0, int k1, float[] xt, int xo, float[] acc, int ao) {
        VectorSpecies<Float> F = Simd.F;
        int L = Simd.L;
        FloatVector c00 = FloatVector.fromArray(F, acc, ao), c01 = FloatVector.fromArray(F, acc, ao + L);
        FloatVector c10 = FloatVector.fromArray(F, acc, ao + NB), c11 = FloatVector.fromArray(F, acc, ao + NB + L);
        FloatVector c20 = FloatVector.fromArray(F, acc, ao + 2 * NB), c21 = FloatVector.fromArray(F, acc, ao + 2 * NB + L);
        FloatVector c30 = FloatVector.fromArray(F, acc, ao + 3 * NB), c31 = FloatVector.fromArray(F, acc, ao + 3 * NB + L);
        FloatVector c40 = FloatVector.fromArray(F, acc, ao + 4 * NB), c41 = FloatVector.fromArray(F, acc, ao + 4 * NB + L);
        FloatVector c50 = FloatVector.fromArray(F, acc, ao + 5 * NB), c51 = FloatVector.fromArray(F, acc, ao + 5 * NB + L);
        int w0 = wo, w1 = w0 + n, w2 = w1 + n, w3 = w2 + n, w4 = w3 + n, w5 = w4 + n;
        for (int k = k0; k < k1; k++) {
            int p = xo + k * NB, q = k * cs;
            FloatVector v0 = FloatVector.fromArray(F, xt, p), v1 = FloatVector.fromArray(F, xt, p + L);
            FloatVector b = FloatVector.broadcast(F, w[w0 + q]);
            c00 = v0.fma(b, c00); c01 = v1.fma(b, c01);
            b = FloatVector.broadcast(F, w[w1 + q]);
            c10 = v0.fma(b, c10); c11 = v1.fma(b, c11);
            b = FloatVector.broadcast(F, w[w2 + q]);
            c20 = v0.fma(b, c20); c21 = v1.fma(b, c21);
            b = FloatVector.broadcast(F, w[w3 + q]);
            c30 = v0.fma(b, c30); c31 = v1.fma(b, c31);
            b = FloatVector.broadcast(F, w[w4 + q]);
            c40 = v0.fma(b, c40); c41 = v1.fma(b, c41);
            b = FloatVector.broadcast(F, w[w5 + q]);
            c50 = v0.fma(b, c50); c51 = v1.fma(b, c51);
        }
        c00.intoArray(acc, ao); c01.intoArray(acc, ao + L);
        c10.intoArray(acc, ao + NB); c11.intoArray(acc, ao + NB + L);
        c20.intoArray(acc, ao + 2 * NB); c21.intoArray(acc, ao + 2 * NB + L);
        c30.intoArray(acc, ao + 3 * NB); c31.intoArray(acc, ao + 3 * NB + L);
        c40.intoArray(acc, ao + 4 * NB); c41.intoArray(acc, ao + 4 * NB + L);
        c50.intoArray(acc, ao + 5 * NB); c51.intoArray(acc, ao + 5 * NB + L);
    }

    /**
     * {@link #kernel} with one vector of batch rows (nb = L) over two row blocks: 12 weight rows,
     * consecutive in w and in acc, twelve accumulators.
     */
    private static void kernelNarrow(float[] w, int wo, int n, int cs, int k0, int k1, float[] xt, int xo, float[] acc, int ao) {
        VectorSpecies<Float> F = Simd.F;
        int L = Simd.L;
        FloatVector c0 = FloatVector.fromArray(F, acc, ao), c1 = FloatVector.fromArray(F, acc, ao + L), c2 = FloatVector.fromArray(F, acc, ao + 2 * L);
        FloatVector c3 = FloatVector.fromArray(F, acc, ao + 3 * L), c4 = FloatVector.fromArray(F, acc, ao + 4 * L), c5 = FloatVector.fromArray(F, acc, ao + 5 * L);
        FloatVector c6 = FloatVector.fromArray(F, acc, ao + 6 * L), c7 = FloatVector.fromArray(F, acc, ao + 7 * L), c8 = FloatVector.fromArray(F, acc, ao + 8 * L);
        FloatVector c9 = FloatVector.fromArray(F, acc, ao + 9 * L), c10 = FloatVector.fromArray(F, acc, ao + 10 * L), c11 = FloatVector.fromArray(F, acc, ao + 11 * L);
        int w0 = wo, w1 = w0 + n, w2 = w1 + n, w3 = w2 + n, w4 = w3 + n, w5 = w4 + n;
        int w6 = w5 + n, w7 = w6 + n, w8 = w7 + n, w9 = w8 + n, w10 = w9 + n, w11 = w10 + n;
        for (int k = k0; k < k1; k++) {
            int q = k * cs;
            FloatVector v = FloatVector.fromArray(F, xt, xo + k * L);
            c0 = v.fma(FloatVector.broadcast(F, w[w0 + q]), c0);
            c1 = v.fma(FloatVector.broadcast(F, w[w1 + q]), c1);
            c2 = v.fma(FloatVector.broadcast(F, w[w2 + q]), c2);
            c3 = v.fma(FloatVector.broadcast(F, w[w3 + q]), c3);
            c4 = v.fma(FloatVector.broadcast(F, w[w4 + q]), c4);
            c5 = v.fma(FloatVector.broadcast(F, w[w5 + q]), c5);
            c6 = v.fma(FloatVector.broadcast(F, w[w6 + q]), c6);
            c7 = v.fma(FloatVector.broadcast(F, w[w7 + q]), c7);
            c8 = v.fma(FloatVector.broadcast(F, w[w8 + q]), c8);
            c9 = v.fma(FloatVector.broadcast(F, w[w9 + q]), c9);
            c10 = v.fma(FloatVector.broadcast(F, w[w10 + q]), c10);
            c11 = v.fma(FloatVector.broadcast(F, w[w11 + q]), c11);
        }
        c0.intoArray(acc, ao); c1.intoArray(acc, ao + L); c2.intoArray(acc, ao + 2 * L);
        c3.intoArray(acc, ao + 3 * L); c4.intoArray(acc, ao + 4 * L); c5.intoArray(acc, ao + 5 * L);
        c6.intoArray(acc, ao + 6 * L); c7.intoArray(acc, ao + 7 * L); c8.intoArray(acc, ao + 8 * L);
        c9.intoArray(acc, ao + 9 * L); c10.intoArray(acc, ao + 10 * L); c11.intoArray(acc, ao + 11 * L);
    }

    /**
     * {@link #kernelWide} on a panel laid out column by column (row j, column k at {@code w[wo + j +
     * k * PANEL]}, as the {@link RowLanes} copies fill it): the weights read at one index stepped by
     * the constant PANEL plus the constants 0 .. 5, so that C2 checks their range once for the
     * loop, as it does x's; with the strides as parameters it keeps a compare and branch per weight.
     * A second copy of the kernel on purpose: one kernel with constant strides for both layouts
     * would need the other types' rows transposed into the panel, which cost them 30-45% of their
     * speed (docs/benchmarks.md, "A prefill kernel with constant strides"). Each output is the same
     * FMA chain in the same column order as kernelWide's, so the bits are the same.
     */
    private static void kernelWideColumns(float[] w, int wo, int k0, int k1, float[] xt, int xo, float[] acc, int ao) {
        VectorSpecies<Float> F = Simd.F;
        int L = Simd.L, NB = NB_WIDE;
        FloatVector c00 = FloatVector.fromArray(F, acc, ao), c01 = FloatVector.fromArray(F, acc, ao + L), c02 = FloatVector.fromArray(F, acc, ao + 2 * L), c03 = FloatVector.fromArray(F, acc, ao + 3 * L);
        FloatVector c10 = FloatVector.fromArray(F, acc, ao + NB), c11 = FloatVector.fromArray(F, acc, ao + NB + L), c12 = FloatVector.fromArray(F, acc, ao + NB + 2 * L), c13 = FloatVector.fromArray(F, acc, ao + NB + 3 * L);
        FloatVector c20 = FloatVector.fromArray(F, acc, ao + 2 * NB), c21 = FloatVector.fromArray(F, acc, ao + 2 * NB + L), c22 = FloatVector.fromArray(F, acc, ao + 2 * NB + 2 * L), c23 = FloatVector.fromArray(F, acc, ao + 2 * NB + 3 * L);
        FloatVector c30 = FloatVector.fromArray(F, acc, ao + 3 * NB), c31 = FloatVector.fromArray(F, acc, ao + 3 * NB + L), c32 = FloatVector.fromArray(F, acc, ao + 3 * NB + 2 * L), c33 = FloatVector.fromArray(F, acc, ao + 3 * NB + 3 * L);
        FloatVector c40 = FloatVector.fromArray(F, acc, ao + 4 * NB), c41 = FloatVector.fromArray(F, acc, ao + 4 * NB + L), c42 = FloatVector.fromArray(F, acc, ao + 4 * NB + 2 * L), c43 = FloatVector.fromArray(F, acc, ao + 4 * NB + 3 * L);
        FloatVector c50 = FloatVector.fromArray(F, acc, ao + 5 * NB), c51 = FloatVector.fromArray(F, acc, ao + 5 * NB + L), c52 = FloatVector.fromArray(F, acc, ao + 5 * NB + 2 * L), c53 = FloatVector.fromArray(F, acc, ao + 5 * NB + 3 * L);
        for (int k = k0, p = xo + k0 * NB, q = wo + k0 * PANEL; k < k1; k++, p += NB, q += PANEL) {
            FloatVector v0 = FloatVector.fromArray(F, xt, p), v1 = FloatVector.fromArray(F, xt, p + L);
            FloatVector v2 = FloatVector.fromArray(F, xt, p + 2 * L), v3 = FloatVector.fromArray(F, xt, p + 3 * L);
            FloatVector b = FloatVector.broadcast(F, w[q]);
            c00 = v0.fma(b, c00); c01 = v1.fma(b, c01); c02 = v2.fma(b, c02); c03 = v3.fma(b, c03);
            b = FloatVector.broadcast(F, w[q + 1]);
            c10 = v0.fma(b, c10); c11 = v1.fma(b, c11); c12 = v2.fma(b, c12); c13 = v3.fma(b, c13);
            b = FloatVector.broadcast(F, w[q + 2]);
            c20 = v0.fma(b, c20); c21 = v1.fma(b, c21); c22 = v2.fma(b, c22); c23 = v3.fma(b, c23);
            b = FloatVector.broadcast(F, w[q + 3]);
            c30 = v0.fma(b, c30); c31 = v1.fma(b, c31); c32 = v2.fma(b, c32); c33 = v3.fma(b, c33);
            b = FloatVector.broadcast(F, w[q + 4]);
            c40 = v0.fma(b, c40); c41 = v1.fma(b, c41); c42 = v2.fma(b, c42); c43 = v3.fma(b, c43);
            b = FloatVector.broadcast(F, w[q + 5]);
            c50 = v0.fma(b, c50); c51 = v1.fma(b, c51); c52 = v2.fma(b, c52); c53 = v3.fma(b, c53);
        }
        c00.intoArray(acc, ao); c01.intoArray(acc, ao + L); c02.intoArray(acc, ao + 2 * L); c03.intoArray(acc, ao + 3 * L);
        c10.intoArray(acc, ao + NB); c11.intoArray(acc, ao + NB + L); c12.intoArray(acc, ao + NB + 2 * L); c13.intoArray(acc, ao + NB + 3 * L);
        c20.intoArray(acc, ao + 2 * NB); c21.intoArray(acc, ao + 2 * NB + L); c22.intoArray(acc, ao + 2 * NB + 2 * L); c23.intoArray(acc, ao + 2 * NB + 3 * L);
        c30.intoArray(acc, ao + 3 * NB); c31.intoArray(acc, ao + 3 * NB + L); c32.intoArray(acc, ao + 3 * NB + 2 * L); c33.intoArray(acc, ao + 3 * NB + 3 * L);
        c40.intoArray(acc, ao + 4 * NB); c41.intoArray(acc, ao + 4 * NB + L); c42.intoArray(acc, ao + 4 * NB + 2 * L); c43.intoArray(acc, ao + 4 * NB + 3 * L);
        c50.intoArray(acc, ao + 5 * NB); c51.intoArray(acc, ao + 5 * NB + L); c52.intoArray(acc, ao + 5 * NB + 2 * L); c53.intoArray(acc, ao + 5 * NB + 3 * L);
    }

    /** {@link #kernel} with four vectors of batch rows (NB_WIDE): 24 accumulators in registers. */
    private static void kernelWide(float[] w, int wo, int n, int cs, int k0, int k1, float[] xt, int xo, float[] acc, int ao) {
        VectorSpecies<Float> F = Simd.F;
        int L = Simd.L, NB = NB_WIDE;
        FloatVector c00 = FloatVector.fromArray(F, acc, ao), c01 = FloatVector.fromArray(F, acc, ao + L), c02 = FloatVector.fromArray(F, acc, ao + 2 * L), c03 = FloatVector.fromArray(F, acc, ao + 3 * L);
        FloatVector c10 = FloatVector.fromArray(F, acc, ao + NB), c11 = FloatVector.fromArray(F, acc, ao + NB + L), c12 = FloatVector.fromArray(F, acc, ao + NB + 2 * L), c13 = FloatVector.fromArray(F, acc, ao + NB + 3 * L);
        FloatVector c20 = FloatVector.fromArray(F, acc, ao + 2 * NB), c21 = FloatVector.fromArray(F, acc, ao + 2 * NB + L), c22 = FloatVector.fromArray(F, acc, ao + 2 * NB + 2 * L), c23 = FloatVector.fromArray(F, acc, ao + 2 * NB + 3 * L);
        FloatVector c30 = FloatVector.fromArray(F, acc, ao + 3 * NB), c31 = FloatVector.fromArray(F, acc, ao + 3 * NB + L), c32 = FloatVector.fromArray(F, acc, ao + 3 * NB + 2 * L), c33 = FloatVector.fromArray(F, acc, ao + 3 * NB + 3 * L);
        FloatVector c40 = FloatVector.fromArray(F, acc, ao + 4 * NB), c41 = FloatVector.fromArray(F, acc, ao + 4 * NB + L), c42 = FloatVector.fromArray(F, acc, ao + 4 * NB + 2 * L), c43 = FloatVector.fromArray(F, acc, ao + 4 * NB + 3 * L);
        FloatVector c50 = FloatVector.fromArray(F, acc, ao + 5 * NB), c51 = FloatVector.fromArray(F, acc, ao + 5 * NB + L), c52 = FloatVector.fromArray(F, acc, ao + 5 * NB + 2 * L), c53 = FloatVector.fromArray(F, acc, ao + 5 * NB + 3 * L);
        int w0 = wo, w1 = w0 + n, w2 = w1 + n, w3 = w2 + n, w4 = w3 + n, w5 = w4 + n;
        for (int k = k0; k < k1; k++) {
            int p = xo + k * NB, q = k * cs;
            FloatVector v0 = FloatVector.fromArray(F, xt, p), v1 = FloatVector.fromArray(F, xt, p + L);
            FloatVector v2 = FloatVector.fromArray(F, xt, p + 2 * L), v3 = FloatVector.fromArray(F, xt, p + 3 * L);
            FloatVector b = FloatVector.broadcast(F, w[w0 + q]);
            c00 = v0.fma(b, c00); c01 = v1.fma(b, c01); c02 = v2.fma(b, c02); c03 = v3.fma(b, c03);
            b = FloatVector.broadcast(F, w[w1 + q]);
            c10 = v0.fma(b, c10); c11 = v1.fma(b, c11); c12 = v2.fma(b, c12); c13 = v3.fma(b, c13);
            b = FloatVector.broadcast(F, w[w2 + q]);
            c20 = v0.fma(b, c20); c21 = v1.fma(b, c21); c22 = v2.fma(b, c22); c23 = v3.fma(b, c23);
            b = FloatVector.broadcast(F, w[w3 + q]);
            c30 = v0.fma(b, c30); c31 = v1.fma(b, c31); c32 = v2.fma(b, c32); c33 = v3.fma(b, c33);
            b = FloatVector.broadcast(F, w[w4 + q]);
            c40 = v0.fma(b, c40); c41 = v1.fma(b, c41); c42 = v2.fma(b, c42); c43 = v3.fma(b, c43);
            b = FloatVector.broadcast(F, w[w5 + q]);
            c50 = v0.fma(b, c50); c51 = v1.fma(b, c51); c52 = v2.fma(b, c52); c53 = v3.fma(b, c53);
        }
        c00.intoArray(acc, ao); c01.intoArray(acc, ao + L); c02.intoArray(acc, ao + 2 * L); c03.intoArray(acc, ao + 3 * L);
        c10.intoArray(acc, ao + NB); c11.intoArray(acc, ao + NB + L); c12.intoArray(acc, ao + NB + 2 * L); c13.intoArray(acc, ao + NB + 3 * L);
        c20.intoArray(acc, ao + 2 * NB); c21.intoArray(acc, ao + 2 * NB + L); c22.intoArray(acc, ao + 2 * NB + 2 * L); c23.intoArray(acc, ao + 2 * NB + 3 * L);
        c30.intoArray(acc, ao + 3 * NB); c31.intoArray(acc, ao + 3 * NB + L); c32.intoArray(acc, ao + 3 * NB + 2 * L); c33.intoArray(acc, ao + 3 * NB + 3 * L);
        c40.intoArray(acc, ao + 4 * NB); c41.intoArray(acc, ao + 4 * NB + L); c42.intoArray(acc, ao + 4 * NB + 2 * L); c43.intoArray(acc, ao + 4 * NB + 3 * L);
        c50.intoArray(acc, ao + 5 * NB); c51.intoArray(acc, ao + 5 * NB + L); c52.intoArray(acc, ao + 5 * NB + 2 * L); c53.intoArray(acc, ao + 5 * NB + 3 * L);
    }
}
