package io.fdkvc.engine.tensor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** Hand-built blocks with known scales and quants, decoded values worked out by hand. */
class BlockDecodeTest {
    private static float[] row(GgmlType t, byte[] bytes, int cols) {
        FloatTensor v = Tensors.view(t, MemorySegment.ofArray(bytes), 1, cols);
        float[] out = new float[cols + 3];
        v.dequantizeRow(0, out, 3);   // at an offset, to check it is honoured
        float[] r = new float[cols];
        System.arraycopy(out, 3, r, 0, cols);
        return r;
    }

    /** dot with the unit vector e_i picks element i: checks the fused kernel lane by lane. */
    private static float[] viaDot(GgmlType t, byte[] bytes, int cols) {
        FloatTensor v = Tensors.view(t, MemorySegment.ofArray(bytes), 1, cols);
        float[] r = new float[cols];
        float[] x = new float[cols + 5];
        for (int i = 0; i < cols; i++) {
            x[5 + i] = 1;
            r[i] = v.dot(0, x, 5);
            x[5 + i] = 0;
        }
        return r;
    }

    /** x + 0 turns -0 into +0: a dot with a unit vector sums +0 products into a -0 element. */
    private static float[] plusZero(float[] a) {
        float[] r = a.clone();
        for (int i = 0; i < r.length; i++) r[i] += 0f;
        return r;
    }

    @Test
    void q8_0() {
        byte[] b = new byte[34];
        b[0] = 0x00;
        b[1] = 0x38;   // f16 0x3800 = 0.5
        for (int i = 0; i < 32; i++) b[2 + i] = (byte) (i * 7 - 100);
        float[] expect = new float[32];
        for (int i = 0; i < 32; i++) expect[i] = 0.5f * (i * 7 - 100);
        assertThat(row(GgmlType.Q8_0, b, 32)).containsExactly(expect);
        assertThat(viaDot(GgmlType.Q8_0, b, 32)).containsExactly(plusZero(expect));
        assertThat(expect[0]).isEqualTo(-50f);
        assertThat(expect[31]).isEqualTo(58.5f);
    }

    @Test
    void q4_0LowNibblesFirstHalfHighNibblesSecond() {
        byte[] b = new byte[18];
        b[1] = 0x40;   // f16 0x4000 = 2.0
        for (int j = 0; j < 16; j++) b[2 + j] = (byte) (j | (15 - j) << 4);
        float[] expect = new float[32];
        for (int j = 0; j < 16; j++) {
            expect[j] = (j - 8) * 2f;          // low nibble j
            expect[16 + j] = (7 - j) * 2f;     // high nibble 15 - j, minus 8
        }
        assertThat(row(GgmlType.Q4_0, b, 32)).containsExactly(expect);
        assertThat(viaDot(GgmlType.Q4_0, b, 32)).containsExactly(plusZero(expect));
        assertThat(expect[0]).isEqualTo(-16f);
        assertThat(expect[16]).isEqualTo(14f);
    }

    @Test
    void q4_kPackedScalesAndMins() {
        int[] sc = {1, 2, 3, 63, 17, 33, 48, 5};
        int[] mn = {0, 1, 2, 3, 60, 31, 16, 40};
        // packed by hand: bytes 0-3 = sc[0..3] | (sc[4..7] >> 4) << 6, bytes 4-7 = mn[0..3] | (mn[4..7] >> 4) << 6,
        // bytes 8-11 = (sc[4..7] & 15) | (mn[4..7] & 15) << 4
        int[] packed = {0x41, 0x82, 0xC3, 0x3F, 0xC0, 0x41, 0x42, 0x83, 0xC1, 0xF1, 0x00, 0x85};
        byte[] b = new byte[144];
        b[1] = 0x3C;   // d = 1.0
        b[3] = 0x38;   // dmin = 0.5
        for (int i = 0; i < 12; i++) b[4 + i] = (byte) packed[i];
        for (int i = 0; i < 128; i++) b[16 + i] = (byte) ((i % 16) | (15 - i % 13) << 4);
        for (int j = 0; j < 8; j++) assertThat(Reference.scaleMinK4(b, 4, j)).containsExactly(sc[j], mn[j]);

        float[] expect = new float[256];
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                int byt = 32 * c + l;
                int lo = byt % 16, hi = 15 - byt % 13;
                expect[64 * c + l] = 1.0f * sc[2 * c] * lo - 0.5f * mn[2 * c];
                expect[64 * c + 32 + l] = 1.0f * sc[2 * c + 1] * hi - 0.5f * mn[2 * c + 1];
            }
        assertThat(row(GgmlType.Q4_K, b, 256)).containsExactly(expect);
        assertThat(viaDot(GgmlType.Q4_K, b, 256)).containsExactly(plusZero(expect));
        // element 224 = chunk 3, second sub-block (7: scale 5, min 40), high nibble of byte 96:
        // 15 - 96 % 13 = 10 -> 5 * 10 - 0.5 * 40 = 30
        assertThat(expect[224]).isEqualTo(30f);
        // element 128 = chunk 2, first sub-block (4: scale 17, min 60), low nibble of byte 64 = 0 -> -30
        assertThat(expect[128]).isEqualTo(-30f);
    }

    @Test
    void q6_kHandPickedElements() {
        byte[] b = new byte[210];
        b[0] = 0x5A;          // ql[0]: low 10 (element 0), high 5 (element 64)
        b[32] = 0x3C;         // ql[32]: low 12 (element 32), high 3 (element 96)
        b[128] = (byte) 0xE4; // qh[0] = 11 10 01 00: element 0 -> 0, 32 -> 1, 64 -> 2, 96 -> 3
        b[192] = -3;          // scale of elements 0..15
        b[194] = 7;           // 32..47
        b[196] = 100;         // 64..79
        b[198] = -128;        // 96..111
        b[64] = 0x21;         // ql[64] is the second half's ql[0]: element 128 low 1, element 192 high 2
        b[160] = 0x0F;        // second half's qh[0]: element 128 -> 3, element 160 -> 3
        b[200] = 2;           // scale of elements 128..143
        Reference.putHalf(b, 208, 0.25f);
        float[] y = row(GgmlType.Q6_K, b, 256);
        assertThat(y[0]).isEqualTo(0.25f * -3 * (10 - 32));          // 16.5
        assertThat(y[32]).isEqualTo(0.25f * 7 * ((12 | 1 << 4) - 32));  // -7
        assertThat(y[64]).isEqualTo(0.25f * 100 * ((5 | 2 << 4) - 32)); // 125
        assertThat(y[96]).isEqualTo(0.25f * -128 * ((3 | 3 << 4) - 32)); // -608
        assertThat(y[128]).isEqualTo(0.25f * 2 * ((1 | 3 << 4) - 32));  // 8.5
        assertThat(new float[] {y[0], y[32], y[64], y[96], y[128]}).containsExactly(16.5f, -7f, 125f, -608f, 8.5f);
        // an element with all-zero bits: q = -32, scale 0 -> 0; element 1 uses scale -3: ql[1] = 0, qh bits 0 -> -32 * -3 * 0.25 = 24
        assertThat(y[1]).isEqualTo(24f);
        assertThat(y).containsExactly(Reference.decode(GgmlType.Q6_K, b, 0, 256));
        assertThat(viaDot(GgmlType.Q6_K, b, 256)).containsExactly(plusZero(y));
    }

    @Test
    void f16EveryBitPatternMatchesTheJdkConversion() {
        // 1024 rows of 64 halves: every finite pattern once, checked through dequantizeRow and,
        // lane by lane, through the vectorised dot
        int cols = 64;
        byte[] b = new byte[65536 * 2];
        for (int h = 0; h < 65536; h++) {
            b[2 * h] = (byte) h;
            b[2 * h + 1] = (byte) (h >> 8);
        }
        FloatTensor t = Tensors.view(GgmlType.F16, MemorySegment.ofArray(b), 65536 / cols, cols);
        float[] out = new float[cols];
        float[] x = new float[cols];
        for (int r = 0; r < 65536 / cols; r++) {
            t.dequantizeRow(r, out, 0);
            boolean finiteRow = true;
            for (int i = 0; i < cols; i++) {
                float expect = Float.float16ToFloat((short) (r * cols + i));
                assertThat(Float.floatToRawIntBits(out[i])).as("half %04x", r * cols + i).isEqualTo(Float.floatToRawIntBits(expect));
                finiteRow &= Float.isFinite(expect);
            }
            if (!finiteRow) continue;   // 0 * inf would poison the unit-vector trick
            for (int i = 0; i < cols; i++) {
                x[i] = 1;
                float expect = Float.float16ToFloat((short) (r * cols + i));
                // -0 * 1 + (+0 products) = +0: compare values, not bits
                assertThat(t.dot(r, x, 0)).as("half %04x", r * cols + i).isEqualTo(expect == 0 ? 0f : expect);
                x[i] = 0;
            }
        }
    }

    @Test
    void f16InfinityAndNanThroughTheVectorPath() {
        int cols = 32;
        for (int h : new int[] {0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF}) {
            byte[] b = new byte[cols * 2];
            b[2 * 5] = (byte) h;
            b[2 * 5 + 1] = (byte) (h >> 8);
            float[] x = new float[cols];
            x[5] = 1;
            float got = Tensors.view(GgmlType.F16, MemorySegment.ofArray(b), 1, cols).dot(0, x, 0);
            float expect = Float.float16ToFloat((short) h);
            if (Float.isNaN(expect)) assertThat(got).isNaN();
            else assertThat(got).isEqualTo(expect);
        }
    }

    @Test
    void bf16IsTheUpperHalfOfAFloat() {
        int[] bits = {0x3F80, 0xC040, 0x7F80, 0x0001, 0x4049};
        float[] expect = {1f, -3f, Float.POSITIVE_INFINITY, Float.intBitsToFloat(0x00010000), Float.intBitsToFloat(0x40490000)};
        byte[] b = new byte[bits.length * 2];
        for (int i = 0; i < bits.length; i++) {
            b[2 * i] = (byte) bits[i];
            b[2 * i + 1] = (byte) (bits[i] >> 8);
        }
        assertThat(row(GgmlType.BF16, b, bits.length)).containsExactly(expect);
        assertThat(expect[4]).isCloseTo(3.140625f, within(0f));
    }

    @Test
    void bf16RoundsToNearestEven() {
        assertThat(Quantizer.floatToBf16(Float.intBitsToFloat(0x3F808000))).isEqualTo((short) 0x3F80);  // tie, even stays
        assertThat(Quantizer.floatToBf16(Float.intBitsToFloat(0x3F818000))).isEqualTo((short) 0x3F82);  // tie, odd rounds up
        assertThat(Quantizer.floatToBf16(Float.intBitsToFloat(0x3F808001))).isEqualTo((short) 0x3F81);  // above the tie
        assertThat(Float.isNaN(BF16Tensor.bf16ToFloat(Quantizer.floatToBf16(Float.NaN)))).isTrue();
    }

    @Test
    void viewsCheckTheirShape() {
        byte[] b = new byte[34 * 2];
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Tensors.view(GgmlType.Q8_0, MemorySegment.ofArray(b), 3, 32))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs 102 bytes");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Tensors.view(GgmlType.Q8_0, MemorySegment.ofArray(b), 1, 48))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiple of 32");
        FloatTensor t = Tensors.view(GgmlType.Q8_0, MemorySegment.ofArray(b), 2, 32);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> t.dot(2, new float[32], 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }
}
