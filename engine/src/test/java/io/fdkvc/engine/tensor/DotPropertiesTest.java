package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Over random well-formed rows of every type: dequantizeRow equals the independent scalar
 * decoder exactly, and the fused dot equals the dot of the decoded row (within float rounding).
 */
class DotPropertiesTest {

    @Property(tries = 300)
    void dotEqualsDecodeThenDot(@ForAll GgmlType type, @ForAll @IntRange(min = 1, max = 4) int rows,
                                @ForAll @IntRange(min = 1, max = 9) int blocks, @ForAll @IntRange(min = 0, max = 7) int xOff,
                                @ForAll long seed, @ForAll boolean offHeap) {
        Random r = new Random(seed);
        if (type.blockSize == 256) blocks = 1 + blocks % 3;
        else if (type.blockSize == 1) blocks = 1 + r.nextInt(70);   // odd lengths exercise the scalar tails
        int cols = blocks * type.blockSize;
        byte[] bytes = Reference.randomRows(type, r, rows, blocks);
        // a segment that starts at an odd address inside a bigger one: views must not rely on alignment
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment seg;
            if (offHeap) {
                seg = arena.allocate(bytes.length + 3).asSlice(3, bytes.length);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, seg, 0, bytes.length);
            } else {
                seg = MemorySegment.ofArray(bytes);
            }
            FloatTensor t = Tensors.view(type, seg, rows, cols);
            assertThat(t.rows()).isEqualTo(rows);
            assertThat(t.cols()).isEqualTo(cols);
            assertThat(t.type()).isEqualTo(type);
            float[] x = new float[xOff + cols];
            for (int i = 0; i < x.length; i++) x[i] = (float) r.nextGaussian();
            for (int row = 0; row < rows; row++) {
                float[] ref = Reference.decode(type, bytes, (int) (row * type.bytes(cols)), cols);
                float[] got = new float[cols + 1];
                t.dequantizeRow(row, got, 1);
                for (int i = 0; i < cols; i++)
                    assertThat(got[1 + i]).as("%s row %d element %d", type, row, i).isEqualTo(ref[i]);
                double exact = 0, mag = 0;
                for (int i = 0; i < cols; i++) {
                    exact += (double) ref[i] * x[xOff + i];
                    mag += Math.abs((double) ref[i] * x[xOff + i]);
                }
                float dot = t.dot(row, x, xOff);
                // float accumulation over cols terms: error within a few ulps of the magnitude per term
                assertThat((double) dot).as("%s row %d", type, row).isCloseTo(exact, org.assertj.core.api.Assertions.within(2e-6 * mag + 1e-30));
            }
        }
    }

    /**
     * The prefill's panels take column ranges of long rows (FloatTensor.tiled): any range of
     * whole blocks is exactly that slice of the independent decoder's row, written at the given
     * offset, and nothing else of the output is touched.
     */
    @Property(tries = 300)
    void columnRangesAreSlicesOfTheRow(@ForAll GgmlType type, @ForAll @IntRange(min = 1, max = 9) int blocks,
                                       @ForAll @IntRange(min = 0, max = 8) int from, @ForAll @IntRange(min = 0, max = 8) int to,
                                       @ForAll @IntRange(min = 0, max = 7) int off, @ForAll long seed) {
        Random r = new Random(seed);
        int b0 = Math.min(from, to) % blocks, b1 = Math.max(b0 + 1, Math.max(from, to) % (blocks + 1));
        int qk = type.blockSize, cols = blocks * qk, rows = 2;
        byte[] bytes = Reference.randomRows(type, r, rows, blocks);
        FloatTensor t = Tensors.view(type, MemorySegment.ofArray(bytes), rows, cols);
        for (int row = 0; row < rows; row++) {
            float[] ref = Reference.decode(type, bytes, (int) (row * type.bytes(cols)), cols);
            float[] got = new float[off + cols + 3];
            java.util.Arrays.fill(got, Float.NaN);
            t.dequantizeColumns(row, b0 * qk, b1 * qk, got, off);
            for (int i = 0; i < got.length; i++) {
                int c = i - off + b0 * qk;
                if (i >= off && c < b1 * qk) assertThat(got[i]).as("%s row %d column %d", type, row, c).isEqualTo(ref[c]);
                else assertThat(got[i]).as("%s: element %d outside the range written", type, i).isNaN();
            }
        }
    }

    @Property(tries = 50)
    void f32ArrayTensorAgreesWithTheSegmentOne(@ForAll @IntRange(min = 1, max = 5) int rows, @ForAll @IntRange(min = 1, max = 100) int cols,
                                               @ForAll @IntRange(min = 0, max = 9) int offset, @ForAll long seed) {
        Random r = new Random(seed);
        float[] data = new float[offset + rows * cols];
        for (int i = 0; i < data.length; i++) data[i] = (float) r.nextGaussian();
        F32Tensor a = new F32Tensor(data, offset, rows, cols);
        float[] slice = java.util.Arrays.copyOfRange(data, offset, data.length);
        FloatTensor s = Tensors.view(GgmlType.F32, MemorySegment.ofArray(Quantizer.quantize(GgmlType.F32, slice)), rows, cols);
        float[] x = new float[cols];
        for (int i = 0; i < cols; i++) x[i] = (float) r.nextGaussian();
        for (int row = 0; row < rows; row++) {
            float[] ra = new float[cols], rs = new float[cols];
            a.dequantizeRow(row, ra, 0);
            s.dequantizeRow(row, rs, 0);
            assertThat(ra).containsExactly(rs);
            assertThat(ra).containsExactly(java.util.Arrays.copyOfRange(data, offset + row * cols, offset + (row + 1) * cols));
            int from = r.nextInt(cols), to = from + 1 + r.nextInt(cols - from);
            float[] part = new float[to - from];
            a.dequantizeColumns(row, from, to, part, 0);
            assertThat(part).containsExactly(java.util.Arrays.copyOfRange(ra, from, to));
            double exact = 0, mag = 0;
            for (int i = 0; i < cols; i++) {
                exact += (double) ra[i] * x[i];
                mag += Math.abs((double) ra[i] * x[i]);
            }
            assertThat((double) a.dot(row, x, 0)).isCloseTo(exact, org.assertj.core.api.Assertions.within(2e-6 * mag + 1e-30));
            assertThat((double) s.dot(row, x, 0)).isCloseTo(exact, org.assertj.core.api.Assertions.within(2e-6 * mag + 1e-30));
        }
    }
}
