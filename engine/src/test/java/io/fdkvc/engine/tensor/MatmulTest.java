package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fdkvc.core.InputException;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import jdk.incubator.vector.FloatVector;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The batched product (prefill) against an independent reference: the scalar decoder's rows
 * ({@link Reference}) times each batch row, summed in double. The batched kernel runs one FMA
 * chain per output over the dequantised row's columns in order, while {@link FloatTensor#dot}
 * sums lane-wise (and per block, scale applied per block, for quantised types), so the two differ
 * in rounding only: the bound is a few float ulps of the sum of |w x| per column.
 */
class MatmulTest {
    @ParameterizedTest
    @EnumSource(GgmlType.class)
    void batchedProductIsEveryRowTimesEveryBatchRow(GgmlType type) {
        Random r = new Random(type.ordinal() * 31 + 5);
        int rows = 19, blocks = Math.max(1, 288 / type.blockSize), cols = blocks * type.blockSize;
        byte[] bytes = Reference.randomRows(type, r, rows, blocks);
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
        // batch rows: a plain dot, partial tiles, and more than one tile of NB
        for (int batch : new int[] {1, 2, 3, 4, 5, 6, 7, FloatTensor.NB + 3}) {
            int xOff = 5, xStride = cols + 3, outOff = 2, outStride = rows + 4, from = 1, to = rows - 1;
            float[] x = new float[xOff + batch * xStride];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            float[] out = new float[outOff + batch * outStride];
            t.matmul(from, to, x, xOff, xStride, batch, out, outOff, outStride);
            for (int b = 0; b < batch; b++) {
                for (int row = 0; row < rows; row++) {
                    float got = out[outOff + b * outStride + row];
                    if (row < from || row >= to) {
                        assertThat(got).as("rows outside the range stay untouched").isZero();
                        continue;
                    }
                    float[] w = Reference.decode(type, bytes, (int) (row * type.bytes(cols)), cols);
                    // a batch of up to SMALL_BATCH rows multiplies Q4_K's and Q6_K's grouped rows
                    // by x rounded to 8 bits, as a row's dot does (the batch-of-one kernel)
                    boolean grouped = row < rows / Simd.L * Simd.L;
                    double[] xk = Reference.multiplied(type, x, xOff + b * xStride, cols, batch <= FloatTensor.SMALL_BATCH && grouped);
                    double[] xd = Reference.multiplied(type, x, xOff + b * xStride, cols, grouped);
                    double exact = 0, mag = 0, exactDot = 0;
                    for (int i = 0; i < cols; i++) {
                        exact += w[i] * xk[i];
                        mag += Math.abs(w[i] * xk[i]);
                        exactDot += w[i] * xd[i];
                    }
                    double tol = 4 * cols * Math.ulp((float) mag) + 1e-30;
                    assertThat((double) got).as("%s row %d batch row %d of %d", type, row, b, batch).isCloseTo(exact, org.assertj.core.data.Offset.offset(tol));
                    assertThat((double) t.dot(row, x, xOff + b * xStride)).as("%s dot of row %d", type, row).isCloseTo(exactDot, org.assertj.core.data.Offset.offset(2 * tol));
                }
            }
        }
    }

    /**
     * A batch of one is decode's product: whatever the kernel does with several rows at a time
     * (Q8_0 reads two weight rows per pass over x; the rows are visited as interleaved streams,
     * {@link FloatTensor#STREAMS}, or one for the prepared types), each output must be the very float
     * {@link FloatTensor#dot} gives, so that a token's logits do not depend on how the rows were
     * split over threads. Ranges with odd and even ends, and the single-block column case.
     */
    @ParameterizedTest
    @EnumSource(GgmlType.class)
    void batchOfOneIsDotBitForBit(GgmlType type) {
        Random r = new Random(type.ordinal() * 17 + 3);
        for (int blocks : new int[] {1, 3, Math.max(2, 576 / type.blockSize)}) {
            int rows = 23, cols = blocks * type.blockSize;
            byte[] bytes = Reference.randomRows(type, r, rows, blocks);
            FloatTensor t = Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
            float[] x = new float[cols + 3];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            // ranges whose length is a multiple of the streams and ones that leave 1-3 rows over
            for (int[] range : new int[][] {{0, rows}, {1, rows}, {2, 7}, {3, 4}, {4, 20}, {5, 22}, {6, 9}}) {
                float[] out = new float[rows + 2];
                java.util.Arrays.fill(out, Float.NaN);
                t.matmul(range[0], range[1], x, 3, cols, 1, out, 2, rows);
                for (int row = 0; row < rows; row++) {
                    if (row < range[0] || row >= range[1]) {
                        assertThat(out[2 + row]).as("%s row %d outside [%d, %d) untouched", type, row, range[0], range[1]).isNaN();
                        continue;
                    }
                    assertThat(Float.floatToRawIntBits(out[2 + row])).as("%s %d blocks row %d of [%d, %d)", type, blocks, row, range[0], range[1])
                            .isEqualTo(Float.floatToRawIntBits(t.dot(row, x, 3)));
                }
            }
        }
    }

    /**
     * A few batch rows at once (a short prompt's prefill, continuous batching's decode step, up to
     * {@link FloatTensor#SMALL_BATCH}) give every batch row the very floats of its product alone:
     * a conversation's logits do not depend on which others decode beside it, nor a prompt's on
     * how it was cut into chunks. Ranges that cut groups at either end, with a tail past the last
     * whole group, and strided batch rows and outputs. The types whose small batches run on their
     * {@link RowLanes} copy; the others dot dequantised rows, whose sums differ from their batch
     * of one's in the last bits.
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q6_K", "Q8_0"})
    void smallBatchRowsAreEachABatchOfOneBitForBit(GgmlType type) {
        assertThat(RowLanes.ENABLED).as("row lanes on (AVX-512 or AVX2 float vectors)").isTrue();
        Random r = new Random(type.ordinal() * 13 + 7);
        int rows = 2 * Simd.L + 5, blocks = Math.max(2, 512 / type.blockSize), cols = blocks * type.blockSize;
        byte[] bytes = Reference.randomRows(type, r, rows, blocks);
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
        for (int batch = 2; batch <= FloatTensor.SMALL_BATCH; batch++) {
            int xOff = 3, xStride = cols + 5, outOff = 1, outStride = rows + 2;
            float[] x = new float[xOff + batch * xStride];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            for (int[] range : new int[][] {{0, rows}, {1, rows - 1}, {3, 2 * Simd.L + 1}, {Simd.L, rows}}) {
                float[] out = new float[outOff + batch * outStride];
                java.util.Arrays.fill(out, Float.NaN);
                t.matmul(range[0], range[1], x, xOff, xStride, batch, out, outOff, outStride);
                for (int b = 0; b < batch; b++) {
                    float[] one = new float[rows];
                    t.matmul(range[0], range[1], x, xOff + b * xStride, cols, 1, one, 0, rows);
                    for (int row = range[0]; row < range[1]; row++) {
                        assertThat(Float.floatToRawIntBits(out[outOff + b * outStride + row])).as("%s batch %d row %d of batch row %d, range [%d, %d)",
                                type, batch, row, b, range[0], range[1]).isEqualTo(Float.floatToRawIntBits(one[row]));
                    }
                }
            }
        }
    }

    /** The decode products' row order visits every row of the range exactly once, whatever its ends and its count of streams. */
    @Property(tries = 300)
    void streamedRowsAreAPermutationOfTheRange(@ForAll @IntRange(min = 0, max = 5000) int from,
                                               @ForAll @IntRange(min = 0, max = 300) int length,
                                               @ForAll @IntRange(min = 1, max = 16) int streams) {
        boolean[] seen = new boolean[length];
        for (int i = 0; i < length; i++) {
            int r = FloatTensor.streamedRow(from, from + length, i, streams);
            assertThat(r).isBetween(from, from + length - 1);
            assertThat(seen[r - from]).as("row %d visited twice", r).isFalse();
            seen[r - from] = true;
        }
    }

    /**
     * fdkvc.streams: unset is the caller's default (two for the products in general, one for the
     * prepared types' batch of one); a whole number from 1 to 16 is taken for every type; anything
     * else is refused, naming the property. Two streams: rows 0, q, 1, q + 1, ..., the rest in order.
     */
    @Test
    void streamsPropertyIsValidated() {
        assertThat(FloatTensor.streams(null, 2)).isEqualTo(2);
        assertThat(FloatTensor.streams(null, 1)).isEqualTo(1);
        assertThat(FloatTensor.STREAMS).isEqualTo(2);
        assertThat(PreparedXTensor.ROW_STREAMS).isEqualTo(1);
        assertThat(FloatTensor.streams("1", 2)).isEqualTo(1);
        assertThat(FloatTensor.streams(" 16 ", 1)).isEqualTo(16);
        int[] order = new int[7];
        for (int i = 0; i < 7; i++) order[i] = FloatTensor.streamedRow(10, 17, i, 2);
        assertThat(order).containsExactly(10, 13, 11, 14, 12, 15, 16);
        for (int i = 0; i < 7; i++) order[i] = FloatTensor.streamedRow(10, 17, i, 1);
        assertThat(order).containsExactly(10, 11, 12, 13, 14, 15, 16);
        for (String bad : new String[] {"0", "17", "-2", "four", "", "2.5"}) {
            assertThatThrownBy(() -> FloatTensor.streams(bad, 2)).isInstanceOf(InputException.class)
                    .hasMessageContaining("fdkvc.streams").hasMessageContaining("'" + bad + "'");
        }
    }

    /** The scalar twin of the lane fold is the same fold: the same bits for any lane values. */
    @Test
    void scalarLaneFoldEqualsTheVectorFold() {
        Random r = new Random(3);
        float[] a = new float[Simd.L];
        for (int k = 0; k < 10_000; k++) {
            for (int i = 0; i < a.length; i++) a[i] = (float) (r.nextGaussian() * Math.pow(2, r.nextInt(40) - 20));
            float v = Simd.sum(FloatVector.fromArray(Simd.F, a, 0));
            assertThat(Float.floatToRawIntBits(Simd.sum(a.clone(), 0))).isEqualTo(Float.floatToRawIntBits(v));
        }
    }
}
