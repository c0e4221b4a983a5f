package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The tiled product over a batch transposed once ({@link FloatTensor.TransposedBatch}, the
 * prefill's shared input) against the same product that transposes per call: the transposition
 * filled in several column ranges and the rows split into several calls must give the very same
 * floats, and rows outside the calls' ranges stay untouched. The same product written into a
 * transposed batch (the feed-forward's gate and up) holds the same floats, in columns.
 */
class TransposedBatchTest {
    @Property(tries = 40)
    void aSharedTranspositionGivesTheSameBitsAsOnePerCall(@ForAll @IntRange(min = 9, max = 140) int batch,
                                                          @ForAll @IntRange(min = 1, max = 9) int pieces,
                                                          @ForAll @IntRange(min = 1, max = 7) int calls,
                                                          @ForAll @IntRange(min = 0, max = 5) int typeIndex,
                                                          @ForAll long seed) {
        GgmlType type = new GgmlType[] {GgmlType.F32, GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q5_0, GgmlType.BF16}[typeIndex];
        Random r = new Random(seed);
        int rows = 37, blocks = Math.max(1, 512 / type.blockSize), cols = blocks * type.blockSize;
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(Reference.randomRows(type, r, rows, blocks)), rows, cols);
        int xOff = 3, xStride = cols + 5;
        float[] x = new float[xOff + batch * xStride];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();

        float[] expected = new float[batch * rows];
        t.matmul(0, rows, x, xOff, xStride, batch, expected, 0, rows);

        FloatTensor.TransposedBatch shared = new FloatTensor.TransposedBatch();
        shared.reset(x, xOff, xStride, batch, cols);
        // the column ranges out of order, as two threads may fill them
        for (int p = pieces - 1; p >= 0; p--) shared.transpose(cols * p / pieces, cols * (p + 1) / pieces);
        float[] got = new float[batch * rows];
        java.util.Arrays.fill(got, Float.NaN);
        int from = 1, to = rows - 2;
        for (int c = 0; c < calls; c++) {
            t.matmul(from + (to - from) * c / calls, from + (to - from) * (c + 1) / calls, shared, got, 0, rows);
        }
        for (int b = 0; b < batch; b++) {
            for (int row = 0; row < rows; row++) {
                float g = got[b * rows + row];
                if (row < from || row >= to) assertThat(g).as("row %d outside the calls", row).isNaN();
                else assertThat(Float.floatToRawIntBits(g)).as("%s batch row %d, row %d", type, b, row)
                        .isEqualTo(Float.floatToRawIntBits(expected[b * rows + row]));
            }
        }
    }

    @Property(tries = 40)
    void aProductIntoATransposedBatchHoldsTheRowProductsFloats(@ForAll @IntRange(min = 9, max = 140) int batch,
                                                              @ForAll @IntRange(min = 1, max = 7) int calls,
                                                              @ForAll @IntRange(min = 0, max = 5) int typeIndex,
                                                              @ForAll long seed) {
        GgmlType type = new GgmlType[] {GgmlType.F32, GgmlType.Q8_0, GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q5_0, GgmlType.BF16}[typeIndex];
        Random r = new Random(seed);
        int rows = 37 + r.nextInt(60), blocks = Math.max(1, 512 / type.blockSize), cols = blocks * type.blockSize;
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(Reference.randomRows(type, r, rows, blocks)), rows, cols);
        float[] x = new float[batch * cols];
        for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
        float[] expected = new float[batch * rows];
        t.matmul(0, rows, x, 0, cols, batch, expected, 0, rows);

        FloatTensor.TransposedBatch in = new FloatTensor.TransposedBatch(), out = new FloatTensor.TransposedBatch();
        in.reset(x, 0, cols, batch, cols);
        in.transpose(0, cols);
        out.resetOutput(batch, rows);
        java.util.Arrays.fill(out.data(), Float.NaN);
        int from = 2, to = rows - 3;
        for (int c = 0; c < calls; c++) t.matmul(from + (to - from) * c / calls, from + (to - from) * (c + 1) / calls, in, out);
        int lanes = out.lanes();
        assertThat(out.tiles()).isEqualTo((batch + lanes - 1) / lanes);
        for (int b = 0; b < out.tiles() * lanes; b++) {
            for (int row = 0; row < rows; row++) {
                float g = out.data()[out.at(b / lanes, row) + b % lanes];
                if (row < from || row >= to) assertThat(g).as("row %d outside the calls", row).isNaN();
                else if (b >= batch) assertThat(g).as("padding lane %d, row %d", b, row).isZero();
                else assertThat(Float.floatToRawIntBits(g)).as("%s batch row %d, row %d", type, b, row)
                        .isEqualTo(Float.floatToRawIntBits(expected[b * rows + row]));
            }
        }
    }

    @Property(tries = 10)
    void refusesAMismatchedBatch(@ForAll @IntRange(min = 1, max = 8) int small) {
        FloatTensor.TransposedBatch shared = new FloatTensor.TransposedBatch();
        assertThatThrownBy(() -> shared.reset(new float[64 * 8], 0, 64, small, 64))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("small-batch");
        float[] w = new float[4 * 64];
        FloatTensor t = Tensors.view(GgmlType.F32, MemorySegment.ofArray(w), 4, 64);
        shared.reset(new float[32 * 48], 0, 32, 48, 32);
        assertThatThrownBy(() -> t.matmul(0, 4, shared, new float[4 * 48], 0, 4))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("32 columns for a matrix of 64");
        FloatTensor.TransposedBatch in = new FloatTensor.TransposedBatch(), out = new FloatTensor.TransposedBatch();
        in.reset(new float[64 * 48], 0, 64, 48, 64);
        out.resetOutput(48, 5);
        assertThatThrownBy(() -> t.matmul(0, 4, in, out)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("output batch of 48 x 5").hasMessageContaining("4 rows");
        assertThatThrownBy(() -> out.transpose(0, 5)).isInstanceOf(IllegalStateException.class);
    }
}
