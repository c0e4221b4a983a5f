package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The tiled product's blocking (panels of weight rows, column blocks, narrow and wide tiles,
 * partial tiles, zero-padded row blocks) must not change a result: every output is one FMA chain
 * over the dequantised row's columns in order, so it equals, bit for bit, the scalar chain
 * {@code acc = fma(w[k], x[k], acc)} from +0. Shapes span more than one panel and column block,
 * row ranges that are not a multiple of the row block, and batches on both sides of each tile
 * width.
 */
class MatmulTilingTest {
    @ParameterizedTest
    @ValueSource(ints = {9, 17, 31, 32, 33, 47, 64, 65, 133})
    void everyOutputIsTheColumnOrderFmaChain(int batch) {
        check(batch, FloatTensor.KB * 2 + 64, GgmlType.F32, GgmlType.Q8_0);
    }

    /**
     * Rows longer than {@link FloatTensor#SPAN} go through the panels span by span, with each
     * panel's sums kept between spans: still the one chain in column order, for every weight
     * type (each dequantises column ranges of its own), with a last span shorter than the others.
     */
    @ParameterizedTest
    @ValueSource(ints = {9, 33, 65})
    void longRowsInSpansAreTheSameChain(int batch) {
        check(batch, FloatTensor.SPAN * 2 + 512, GgmlType.values());
    }

    /**
     * A batch that fits one vector takes one-vector tiles, two row blocks per kernel call: a panel
     * whose rows fill an odd number of row blocks gets a block of zero rows. Over the rows in range
     * (all but the first five and the last): 107 rows are panels of 8, 8 and 2 blocks; 49 rows 8
     * blocks and one of a single row (padded to two); 66 rows 8 blocks and 3 full ones (padded to 4).
     */
    @ParameterizedTest
    @ValueSource(ints = {9, 12, 16})
    void oneVectorTilesInPairsOfRowBlocks(int batch) {
        for (int rows : new int[] {FloatTensor.PANEL * 2 + 17, FloatTensor.PANEL + 7, FloatTensor.PANEL + 24}) {
            check(batch, FloatTensor.KB * 2 + 64, rows, GgmlType.F32, GgmlType.Q8_0);
        }
    }

    /**
     * The types with {@link RowLanes} fill their panels column by column from the copy where a
     * panel's rows begin a group and end within the whole groups, and row by row elsewhere: 113
     * rows are seven groups and one row, so a range from row 0 or 16 ends in a panel the copy
     * cannot fill (its last row has no group), one to row 100 ends in the middle of a group (the
     * fill writes the group's rows past the range), and one from row 5 never starts a group.
     * Spans and every tile width included.
     */
    @ParameterizedTest
    @ValueSource(ints = {9, 33, 65})
    void panelsFilledFromTheRowLanesAreTheSameChain(int batch) {
        int rows = FloatTensor.PANEL * 2 + 17;
        for (int[] range : new int[][] {{0, rows}, {16, 100}, {16, rows}, {5, 100}}) {
            for (int cols : new int[] {FloatTensor.KB * 4, FloatTensor.SPAN * 2 + 512}) {
                check(batch, cols, rows, range[0], range[1], GgmlType.Q4_K, GgmlType.Q6_K, GgmlType.Q8_0);
            }
        }
    }

    private static void check(int batch, int cols, GgmlType... types) {
        check(batch, cols, FloatTensor.PANEL * 2 + 17, types);
    }

    private static void check(int batch, int cols, int rows, GgmlType... types) {
        check(batch, cols, rows, 5, rows - 1, types);
    }

    private static void check(int batch, int cols, int rows, int from, int to, GgmlType... types) {
        for (GgmlType type : types) {
            Random r = new Random(batch * 7L + type.ordinal());
            float[] wf = new float[rows * cols];
            for (int i = 0; i < wf.length; i++) wf[i] = (float) r.nextGaussian();
            FloatTensor t = Tensors.view(type, MemorySegment.ofArray(Quantizer.quantize(type, wf)), rows, cols);
            int xOff = 3, xStride = cols + 5, outOff = 1, outStride = rows + 2;
            float[] x = new float[xOff + batch * xStride];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            float[] out = new float[outOff + batch * outStride];
            t.matmul(from, to, x, xOff, xStride, batch, out, outOff, outStride);
            float[] w = new float[cols];
            for (int row = 0; row < rows; row++) {
                t.dequantizeRow(row, w, 0);
                for (int b = 0; b < batch; b++) {
                    float got = out[outOff + b * outStride + row];
                    if (row < from || row >= to) {
                        assertThat(got).as("rows outside the range stay untouched").isZero();
                        continue;
                    }
                    float acc = 0f;
                    for (int k = 0; k < cols; k++) acc = Math.fma(w[k], x[xOff + b * xStride + k], acc);
                    assertThat(Float.floatToRawIntBits(got)).as("%s row %d batch row %d of %d", type, row, b, batch)
                            .isEqualTo(Float.floatToRawIntBits(acc));
                }
            }
        }
    }
}
